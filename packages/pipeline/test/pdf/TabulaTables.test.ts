/**
 * The labelled whole-page tables of tabula-java's test PDFs (../shared/corpus/labelled/tables-tabula, read-only,
 * not in the repository), scored with the set's own scorer (score.mjs: cell-level F1): at least 0.8 with
 * either engine, and both engines find the same tables. Skipped when the corpus is absent.
 */
import { existsSync, readFileSync } from "node:fs"
import * as path from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { tableGrid } from "@dxs/domain/Tables"
import { describe, expect, it } from "vitest"
import { type PdfEngine, pdfEngines } from "../../src/parsing/Backend.ts"
import { pdfBackend } from "../../src/parsing/Pdf.ts"
import { parseWith } from "../support.ts"
import { input } from "./fixtures.ts"

const dir = path.resolve(
  fileURLToPath(new URL("../../../../", import.meta.url)),
  "../shared/corpus/labelled/tables-tabula",
)
const manifestPath = path.join(dir, "expected.jsonl")
const present = existsSync(manifestPath)
if (!present) console.warn(`no labelled tables under ${dir}: the tabula tables test is skipped`)

interface Expected {
  readonly file: string
  readonly page: number
}

interface Scorer {
  score(manifest: ReadonlyArray<unknown>, predictions: ReadonlyArray<unknown>): ReadonlyArray<unknown>
  summarise(results: ReadonlyArray<unknown>): {
    readonly f1: number
    readonly found: number
    readonly n: number
  }
}

const predictions = async (engine: PdfEngine, manifest: ReadonlyArray<Expected>) => {
  const out: Array<{ file: string; page: number; tables: Array<Array<Array<string>>> }> = []
  for (const file of [...new Set(manifest.map((e) => e.file))]) {
    const bytes = new Uint8Array(readFileSync(path.join(dir, file)))
    const parsed = await parseWith(
      pdfBackend,
      input(file, bytes, { tools: { libreOffice: undefined, tempDir: "/tmp", pdfEngine: engine } }),
    )
    for (const p of parsed.pages) out.push({ file, page: p.number, tables: (p.tables ?? []).map(tableGrid) })
  }
  return out
}

describe.skipIf(!present)("tabula-java's labelled whole-page tables", () => {
  it("are found with a mean cell F1 of at least 0.8, the same by both engines", async () => {
    const manifest = readFileSync(manifestPath, "utf8")
      .split("\n")
      .filter((l) => l.trim() !== "")
      .map((l) => JSON.parse(l) as Expected)
    const scorer = (await import(pathToFileURL(path.join(dir, "score.mjs")).href)) as Scorer
    const found = await Promise.all(pdfEngines.map((engine) => predictions(engine, manifest)))
    for (const predicted of found) {
      const summary = scorer.summarise(scorer.score(manifest, predicted))
      expect(summary.found).toBe(summary.n)
      expect(summary.f1).toBeGreaterThanOrEqual(0.8)
    }
    expect(found[1]).toEqual(found[0])
  }, 120_000)
})
