/**
 * Golden outputs for the text-like backends (text, HTML, e-mail, audio): a parse output is reduced to a
 * readable JSON record and compared with `<dir>/golden/<name>.json`. UPDATE_GOLDEN=1 rewrites the files;
 * review the diff before committing it.
 */
import { createHash } from "node:crypto"
import { expect } from "vitest"
import type { ParseOutput } from "../../src/parsing/Backend.ts"
import { expectGoldenRecord, parseInput } from "../support.ts"

export const input = parseInput

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

export const expectGolden = (dir: URL, name: string, output: ParseOutput): Promise<void> =>
  expectGoldenRecord(new URL(`golden/${name}.json`, dir), goldenRecord(output))

export { failureReason } from "../support.ts"
