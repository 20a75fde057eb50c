/**
 * Parse benchmark, end to end: N text PDFs (default: the 40 Kleister NDAs) uploaded through the REST API to
 * a running `dxs start` (a child process with default settings, over a fresh database), timed from the
 * first upload until every document is `Processed`, against poppler's `pdftotext` on the same files in the
 * same run (one process per file, file after file). Prints pages per second of the first batch after
 * start-up, then of the median of the next batches (each into a new project) against the median pdftotext
 * run, and their ratio (target ≥ 0.5), then: the same with `dxs start api` + two `dxs start worker` over one PostgreSQL, OCR
 * pages per second of scanned pages through the API, the worker's peak resident memory (VmHWM) with its
 * parse pool, and the PDF backend alone in this process (no API, no database, no threads).
 *
 * Usage: pnpm bench:parse [DIR_WITH_PDFS]
 * Environment: BENCH_MAX_FILES (default 40), BENCH_BATCHES (timed batches after the first, and pdftotext
 * runs; default 3), BENCH_DATABASE_URL (a PostgreSQL server where the benchmark may create and drop
 * databases; default postgres://postgres@127.0.0.1:5432/test, else embedded PostgreSQL in a temporary
 * DATA_DIR, and then no two-worker figure).
 */
import { execFileSync, spawnSync } from "node:child_process"
import { existsSync, readdirSync, readFileSync } from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { backendFor, defaultLimits, type ParseInput } from "@dxs/pipeline"
import { Effect } from "effect"
import { peakOf, seconds, type Timed, uploadAndWait, withDxs } from "./common/server.ts"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..")
const pdfDir = path.resolve(
  process.argv[2] ?? path.join(root, "../shared/corpus/labelled/kleister-nda-train/documents"),
)
const ocrDirs = ["ocr", "tiff", "webp"].map((d) =>
  path.join(root, "../shared/corpus/robustness/docling", d, "sources"),
)
const MAX_FILES = Number(process.env.BENCH_MAX_FILES ?? 40)
/** Timed batches of the text PDFs through a running dxs (after the first), and pdftotext runs. */
const BATCHES = Math.max(1, Number(process.env.BENCH_BATCHES ?? 3))

// ---------------------------------------------------------------------------------------------------------
// Baselines

const popplerRun = (files: ReadonlyArray<string>): Timed => {
  let pages = 0
  const t0 = process.hrtime.bigint()
  for (const f of files) {
    const text = execFileSync("pdftotext", [f, "-"], { maxBuffer: 256 * 1024 * 1024, encoding: "utf8" })
    pages += text.split("\f").length - 1
  }
  return { files: files.length, pages, seconds: seconds(t0), failed: 0 }
}

const input = (file: string): ParseInput => ({
  bytes: readFileSync(file),
  fileName: path.basename(file),
  contentType: "application/octet-stream",
  limits: defaultLimits,
  tools: { libreOffice: undefined, tempDir: os.tmpdir() },
})

/** Today's in-process figure: the PDF backend alone, file after file, in this thread. */
const backendOnly = async (files: ReadonlyArray<string>): Promise<Timed> => {
  const pdf = backendFor("x.pdf")
  if (!pdf) throw new Error("no PDF backend registered")
  await Effect.runPromise(pdf.parse(input(files[0]!)))
  let pages = 0
  let failed = 0
  const t0 = process.hrtime.bigint()
  for (const f of files) {
    try {
      pages += (await Effect.runPromise(pdf.parse(input(f)))).pages.length
    } catch {
      failed += 1
    }
  }
  return { files: files.length, pages, seconds: seconds(t0), failed }
}

const rate = (t: Timed) => t.pages / t.seconds
/** The run of median speed (of an odd number of runs, the middle one). */
const median = (runs: ReadonlyArray<Timed>): Timed =>
  [...runs].sort((a, b) => rate(a) - rate(b))[Math.floor(runs.length / 2)]!
const line = (label: string, t: Timed) =>
  `  ${label.padEnd(46)} ${String(t.pages).padStart(4)} pages in ${t.seconds.toFixed(2).padStart(6)} s = ${rate(t).toFixed(1).padStart(6)} pages/s${t.failed > 0 ? ` (${t.failed} failed)` : ""}`

// ---------------------------------------------------------------------------------------------------------

const main = async () => {
  if (!existsSync(pdfDir)) {
    console.log(`no PDF folder at ${pdfDir}: nothing to measure`)
    return
  }
  if (spawnSync("pdftotext", ["-v"]).error) {
    console.log(
      "pdftotext is not installed: install poppler-utils (Debian/Ubuntu: apt-get update && apt-get install -y poppler-utils); no baseline to compare with, nothing measured",
    )
    return
  }
  const files = readdirSync(pdfDir)
    .filter((f) => f.toLowerCase().endsWith(".pdf"))
    .sort()
    .slice(0, MAX_FILES)
    .map((f) => path.join(pdfDir, f))
  const images = ocrDirs
    .filter((d) => existsSync(d))
    .flatMap((d) =>
      readdirSync(d)
        .filter((f) => /\.(pdf|png|jpe?g|tiff?|webp)$/i.test(f))
        .sort()
        .map((f) => path.join(d, f)),
    )
  console.log(`text PDFs: ${files.length} files from ${pdfDir}`)

  // Warm up the page cache and pdftotext.
  execFileSync("pdftotext", ["-layout", files[0]!, "-"], { stdio: ["ignore", "ignore", "ignore"] })
  const poppler = median(Array.from({ length: BATCHES }, () => popplerRun(files)))
  console.log(line(`pdftotext (one process per file, median of ${BATCHES}):`, poppler))

  await withDxs(0, async (server, [worker]) => {
    // The first batch after start-up also pays for compiling the server's code paths (JIT); a running
    // service is past that, so the ratio is taken on the batches after it (each into a new project).
    const cold = await uploadAndWait(server, files)
    console.log(line("dxs start, first batch after start:", cold))
    console.log(
      `  (the last upload was answered after ${(cold.uploaded ?? 0).toFixed(2)} s; ratio ${(rate(cold) / rate(poppler)).toFixed(2)})`,
    )
    const batches: Array<Timed> = []
    for (let i = 0; i < BATCHES; i++) batches.push(await uploadAndWait(server, files))
    const text = median(batches)
    console.log(line(`dxs start, next batches (median of ${BATCHES}):`, text))
    console.log(`  (the last upload was answered after ${(text.uploaded ?? 0).toFixed(2)} s)`)
    console.log(`  ratio dxs/pdftotext: ${(rate(text) / rate(poppler)).toFixed(2)} (target >= 0.50)`)
    const textPeak = peakOf(worker!)
    if (images.length > 0)
      console.log(line(`OCR through the API (${images.length} files):`, await uploadAndWait(server, images)))
    console.log(
      `  peak RSS (VmHWM) of the dxs process: ${textPeak.toFixed(0)} MB after the text PDFs, ${peakOf(worker!).toFixed(0)} MB after OCR`,
    )
  })
  const scaled = await withDxs(2, async (server, workers) => {
    const text = await uploadAndWait(server, files)
    console.log(
      `${line("api + 2 workers, first batch after start:", text)}  ratio ${(rate(text) / rate(poppler)).toFixed(2)}`,
    )
    console.log(
      `  peak RSS (VmHWM) of the workers: ${workers.map((w) => peakOf(w).toFixed(0)).join(" MB, ")} MB`,
    )
    return true
  })
  if (!scaled) console.log("  api + 2 workers: skipped (no PostgreSQL server at BENCH_DATABASE_URL)")
  console.log(line("PDF backend alone, in-process:", await backendOnly(files)))
}

main()
  .catch((e) => {
    console.error(e)
    process.exitCode = 1
  })
  .finally(async () => {
    const ocr = await import("@dxs/pipeline/parsing/Ocr").catch(() => undefined)
    await (ocr as { terminateOcr?: () => Promise<void> } | undefined)?.terminateOcr?.()
  })
