/**
 * Table benchmark, end to end: tabula-java's labelled PDFs (../shared/corpus/labelled/tables-tabula) uploaded
 * through the REST API of a running `dxs start` (over a fresh database), every page's `tables` read back with
 * GET …/pages/{n}/ and scored by the set's own scorer (score.mjs: cell-level F1, the best-matching table per
 * expected table, one global shift allowed). Prints the scorer's figures per table kind (lattice: ruled,
 * stream: unruled) for the whole-page tables, the target (mean table F1 ≥ 0.8) with PASS or FAIL, and for
 * information the tables inside the tabula tests' hand-measured areas (the system still reads whole pages).
 * Also times the parse, from the first upload until every document is Processed, against poppler's
 * `pdftotext` on the same files in the same run.
 *
 * Usage: pnpm bench:tables [DIR] (default ../shared/corpus/labelled/tables-tabula)
 * Environment: BENCH_DATABASE_URL, as bench:parse.
 */
import { execFileSync, spawnSync } from "node:child_process"
import { existsSync, readdirSync, readFileSync } from "node:fs"
import * as path from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { api, seconds, uploadAndWait, withDxs } from "./common/server.ts"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..")
const dir = path.resolve(process.argv[2] ?? path.join(root, "../shared/corpus/labelled/tables-tabula"))
const TARGET = 0.8

interface Prediction {
  readonly file: string
  readonly page: number
  readonly tables: ReadonlyArray<ReadonlyArray<ReadonlyArray<string>>>
}

interface Summary {
  readonly f1: number
  readonly found: number
  readonly n: number
}

interface Scorer {
  score(manifest: ReadonlyArray<unknown>, predictions: ReadonlyArray<Prediction>): ReadonlyArray<unknown>
  report(results: ReadonlyArray<unknown>, log: (line: string) => void, perTable: boolean): Summary
}

const jsonl = (file: string): Array<unknown> =>
  readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l))

const main = async () => {
  const manifestFile = path.join(dir, "expected.jsonl")
  if (!existsSync(manifestFile)) {
    console.log(`no labelled tables at ${dir}: nothing to measure`)
    return
  }
  const scorer = (await import(pathToFileURL(path.join(dir, "score.mjs")).href)) as Scorer
  const files = readdirSync(dir)
    .filter((f) => f.toLowerCase().endsWith(".pdf"))
    .sort()
    .map((f) => path.join(dir, f))
  console.log(`${files.length} PDFs from ${dir}`)

  let poppler: number | undefined
  if (!spawnSync("pdftotext", ["-v"]).error) {
    const t0 = process.hrtime.bigint()
    for (const f of files) execFileSync("pdftotext", [f, "-"], { stdio: ["ignore", "ignore", "ignore"] })
    poppler = seconds(t0)
  }

  const predictions = await withDxs(0, async (server) => {
    const parsed = await uploadAndWait(server, files)
    const pages = parsed.documents.reduce((n, d) => n + d.page_count, 0)
    console.log(
      `  parsed through the API: ${parsed.files} files, ${pages} pages in ${parsed.seconds.toFixed(2)} s${
        poppler === undefined
          ? ""
          : ` (pdftotext, text only: ${poppler.toFixed(2)} s; ratio ${(poppler / parsed.seconds).toFixed(2)})`
      }${parsed.failed > 0 ? `, ${parsed.failed} failed` : ""}`,
    )
    const out: Array<Prediction> = []
    for (const d of parsed.documents)
      for (let n = 1; n <= d.page_count; n++) {
        const page = (await api(server, `/projects/${parsed.projectId}/documents/${d.id}/pages/${n}/`)) as {
          readonly tables: ReadonlyArray<{ readonly rows: ReadonlyArray<ReadonlyArray<string>> }>
        }
        out.push({ file: d.file_name, page: n, tables: page.tables.map((t) => t.rows) })
      }
    return out
  })
  if (predictions === undefined) throw new Error("the server did not start")
  const found = predictions.reduce((n, p) => n + p.tables.length, 0)
  console.log(`  tables found: ${found} on ${predictions.length} pages\n`)

  console.log("whole-page tables (the system is given only the PDF):")
  const whole = scorer.report(
    scorer.score(jsonl(manifestFile), predictions),
    (l) => console.log(`  ${l}`),
    true,
  )
  const areaFile = path.join(dir, "expected-area.jsonl")
  if (existsSync(areaFile)) {
    console.log(
      "\nfor information, tables the tabula tests read inside hand-measured areas (read here from whole pages):",
    )
    scorer.report(scorer.score(jsonl(areaFile), predictions), (l) => console.log(`  ${l}`), true)
  }
  console.log(
    `\nmean table F1 on whole pages: ${whole.f1.toFixed(3)} (target >= ${TARGET}): ${whole.f1 >= TARGET ? "PASS" : "FAIL"}`,
  )
}

main().catch((e) => {
  console.error(e)
  process.exitCode = 1
})
