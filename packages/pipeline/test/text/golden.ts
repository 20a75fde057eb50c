/**
 * Golden outputs for the text-like backends (text, HTML, e-mail, audio): a parse output is reduced to a
 * readable JSON record and compared with `<dir>/golden/<name>.json`. UPDATE_GOLDEN=1 rewrites the files;
 * review the diff before committing it.
 */
import { createHash } from "node:crypto"
import * as fs from "node:fs/promises"
import { expect } from "vitest"
import {
  type Backend,
  defaultLimits,
  ParseFailure,
  type ParseInput,
  type ParseOutput,
} from "../../src/parsing/Backend.ts"

export const input = (
  fileName: string,
  bytes: Uint8Array,
  overrides: Partial<ParseInput> = {},
): ParseInput => ({
  bytes,
  fileName,
  contentType: "application/octet-stream",
  limits: defaultLimits,
  tools: { libreOffice: undefined, tempDir: "/nonexistent" },
  ...overrides,
})

export const sha256 = (bytes: Uint8Array): string => createHash("sha256").update(bytes).digest("hex")

/** Every page of a text-like format: numbered from 1, no size, no layout. */
export const expectTextPages = (output: ParseOutput): void => {
  output.pages.forEach((page, i) => {
    expect(page).toMatchObject({ number: i + 1, width: null, height: null, unit: null, layout: [] })
  })
}

export const goldenRecord = (output: ParseOutput) => ({
  parser: output.parser,
  metadata: output.metadata,
  pages: output.pages.map((p) => ({ number: p.number, text: p.text })),
  ...(output.attachments
    ? {
        attachments: output.attachments.map((a) => ({
          fileName: a.fileName,
          contentType: a.contentType,
          size: a.bytes.length,
          sha256: sha256(a.bytes),
        })),
      }
    : {}),
})

export const expectGolden = async (dir: URL, name: string, output: ParseOutput): Promise<void> => {
  const file = new URL(`golden/${name}.json`, dir)
  const actual = `${JSON.stringify(goldenRecord(output), null, 2)}\n`
  if (process.env.UPDATE_GOLDEN === "1") {
    await fs.mkdir(new URL("golden/", dir), { recursive: true })
    await fs.writeFile(file, actual)
    return
  }
  const expected = await fs.readFile(file, "utf8").catch(() => {
    throw new Error(`no golden output ${file.pathname}: run with UPDATE_GOLDEN=1 and review it`)
  })
  expect(JSON.parse(actual)).toEqual(JSON.parse(expected))
}

/** The ParseFailure reason of a parse that must fail. */
export const failureReason = async (backend: Backend, parseInput: ParseInput): Promise<string> => {
  const error = await backend.parse(parseInput).then(
    () => undefined,
    (e: unknown) => e,
  )
  expect(error).toBeInstanceOf(ParseFailure)
  return (error as ParseFailure).reason
}
