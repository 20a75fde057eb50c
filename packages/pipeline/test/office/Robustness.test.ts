import { existsSync, readdirSync, readFileSync, statSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { ParseFailure } from "../../src/parsing/Backend.ts"
import { backendFor } from "../../src/parsing/Registry.ts"
import { parseWith } from "../support.ts"
import { inputOf } from "./fixtures.ts"

/**
 * Real and malformed third-party files (../shared/corpus, never copied here): every Office file must end
 * in pages or a ParseFailure, within 60 s, never in another exception.
 */

const corpus = new URL("../../../../../shared/corpus/robustness/", import.meta.url).pathname
const folders = ["docling/docx", "docling/pptx", "docling/xlsx", "python-docx", "python-pptx", "openpyxl"]
const officeFile = /\.(docx|pptx|xlsx|xlsm)$/iu
const perFileMs = 60_000

const filesUnder = (dir: string): Array<string> =>
  readdirSync(dir)
    .sort()
    .flatMap((name) => {
      const path = join(dir, name)
      return statSync(path).isDirectory() ? filesUnder(path) : officeFile.test(name) ? [path] : []
    })

type Outcome =
  | { kind: "processed"; pages: number }
  | { kind: "failed"; reason: string }
  | { kind: "error"; error: string }

const parseFile = async (path: string): Promise<Outcome> => {
  const name = path.slice(path.lastIndexOf("/") + 1)
  const backend = backendFor(name)
  if (!backend) return { kind: "error", error: `no backend for ${name}` }
  try {
    const output = await parseWith(backend, inputOf(name, new Uint8Array(readFileSync(path))))
    expect(output.pages.map((p) => p.number)).toEqual(output.pages.map((_, i) => i + 1))
    for (const page of output.pages) expect(typeof page.text).toBe("string")
    return { kind: "processed", pages: output.pages.length }
  } catch (error) {
    if (error instanceof ParseFailure) return { kind: "failed", reason: error.reason }
    return { kind: "error", error: error instanceof Error ? (error.stack ?? error.message) : String(error) }
  }
}

describe.each(folders)("office corpus %s", (folder) => {
  const dir = join(corpus, folder)
  const present = existsSync(dir)
  if (!present) console.warn(`office corpus: ${dir} is absent, skipping its robustness test`)

  it.skipIf(!present)(
    "ends every file in pages or a ParseFailure, within 60 s each",
    async () => {
      const files = filesUnder(dir)
      expect(files.length).toBeGreaterThan(0)
      const failed: Array<string> = []
      const errors: Array<string> = []
      const slow: Array<string> = []
      let processed = 0
      for (const file of files) {
        const started = performance.now()
        const outcome = await parseFile(file)
        const ms = performance.now() - started
        const relative = file.slice(dir.length + 1)
        if (ms > perFileMs) slow.push(`${relative} (${Math.round(ms)} ms)`)
        if (outcome.kind === "processed") processed++
        else if (outcome.kind === "failed") failed.push(`${relative}: ${outcome.reason}`)
        else errors.push(`${relative}: ${outcome.error}`)
      }
      console.log(
        [
          `${folder}: ${processed} processed, ${failed.length} failed`,
          ...failed.map((f) => `  failed ${f}`),
        ].join("\n"),
      )
      expect(errors).toEqual([])
      expect(slow).toEqual([])
    },
    30 * 60_000,
  )
})
