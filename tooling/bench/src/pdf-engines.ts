/**
 * PDF engine benchmark: backend-only pages per second of PDFium and pdf.js on the same text PDFs in one
 * process (each engine warmed up first, then timed over every file; the best of `--rounds` rounds), with
 * poppler's `pdftotext` alongside when it is installed, and how far the two engines' page texts agree.
 * Usage: pnpm bench:pdf-engines [DIR_WITH_PDFS] [--files N] [--rounds N]
 *   (default: the first 40 of ../shared/corpus/labelled/kleister-nda-train/documents, 2 rounds)
 */
import { execFileSync, spawnSync } from "node:child_process"
import { existsSync, readdirSync, readFileSync } from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { defaultLimits, type ParseInput, type ParseOutput, type PdfEngine } from "@dxs/pipeline"
import { terminateOcr } from "@dxs/pipeline/parsing/Ocr"
import { pdfiumEngine } from "@dxs/pipeline/parsing/Pdfium"
import { pdfjsEngine } from "@dxs/pipeline/parsing/PdfJs"
import { Effect } from "effect"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..")
const args = process.argv.slice(2)
const option = (name: string, fallback: number): number => {
  const at = args.indexOf(name)
  const value = at >= 0 ? Number(args[at + 1]) : fallback
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a whole number of at least 1`)
  return value
}
const positional = args.filter((a, i) => !a.startsWith("--") && !args[i - 1]?.startsWith("--"))
const pdfDir = path.resolve(
  positional[0] ?? path.join(root, "../shared/corpus/labelled/kleister-nda-train/documents"),
)
const maxFiles = option("--files", 40)
const rounds = option("--rounds", 2)

const engines: ReadonlyArray<{
  readonly name: PdfEngine
  readonly parse: (input: ParseInput) => Effect.Effect<ParseOutput, unknown>
}> = [
  { name: "pdfium", parse: pdfiumEngine.parse },
  { name: "pdfjs", parse: pdfjsEngine.parse },
]

const input = (file: string, bytes: Uint8Array, engine: PdfEngine): ParseInput => ({
  bytes,
  fileName: path.basename(file),
  contentType: "application/pdf",
  limits: defaultLimits,
  tools: { libreOffice: undefined, tempDir: os.tmpdir(), pdfEngine: engine },
})

const seconds = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e9

interface Run {
  readonly pages: number
  readonly failed: number
  readonly seconds: number
  readonly outputs: ReadonlyArray<ParseOutput | undefined>
}

const runEngine = async (
  engine: (typeof engines)[number],
  files: ReadonlyArray<{ readonly file: string; readonly bytes: Uint8Array }>,
): Promise<Run> => {
  let pages = 0
  let failed = 0
  const outputs: Array<ParseOutput | undefined> = []
  const start = process.hrtime.bigint()
  for (const { file, bytes } of files) {
    try {
      const output = await Effect.runPromise(engine.parse(input(file, bytes, engine.name)))
      pages += output.pages.length
      outputs.push(output)
    } catch {
      failed += 1
      outputs.push(undefined)
    }
  }
  return { pages, failed, seconds: seconds(start), outputs }
}

const rate = (pages: number, s: number) => `${(pages / s).toFixed(1)} pages/s`

const main = async () => {
  if (!existsSync(pdfDir)) {
    console.log(`no PDF folder at ${pdfDir}: nothing to measure`)
    return
  }
  const files = readdirSync(pdfDir)
    .filter((f) => f.toLowerCase().endsWith(".pdf"))
    .sort()
    .slice(0, maxFiles)
    .map((f) => path.join(pdfDir, f))
    .map((file) => ({ file, bytes: new Uint8Array(readFileSync(file)) }))
  if (files.length === 0) {
    console.log(`no PDF in ${pdfDir}: nothing to measure`)
    return
  }
  console.log(`${files.length} PDFs from ${pdfDir}, best of ${rounds} rounds, one process, backend only`)

  if (spawnSync("pdftotext", ["-v"]).error === undefined) {
    execFileSync("pdftotext", [files[0]!.file, "-"], { stdio: ["ignore", "ignore", "ignore"] })
    let best = Infinity
    let pages = 0
    for (let r = 0; r < rounds; r++) {
      pages = 0
      const start = process.hrtime.bigint()
      for (const { file } of files) {
        const text = execFileSync("pdftotext", [file, "-"], {
          maxBuffer: 256 * 1024 * 1024,
          encoding: "utf8",
        })
        pages += text.split("\f").length - 1
      }
      best = Math.min(best, seconds(start))
    }
    console.log(
      `  pdftotext (a process per file): ${pages} pages in ${best.toFixed(2)} s = ${rate(pages, best)}`,
    )
  } else {
    console.log("  pdftotext is not installed (Debian: apt-get install poppler-utils): not measured")
  }

  const best = new Map<PdfEngine, Run>()
  for (const engine of engines)
    await Effect.runPromise(engine.parse(input(files[0]!.file, files[0]!.bytes, engine.name)))
  for (let r = 0; r < rounds; r++) {
    for (const engine of engines) {
      const run = await runEngine(engine, files)
      const previous = best.get(engine.name)
      if (previous === undefined || run.seconds < previous.seconds) best.set(engine.name, run)
    }
  }
  for (const engine of engines) {
    const run = best.get(engine.name)!
    const ocr = run.outputs.reduce((n, o) => n + ((o?.metadata.ocr_pages as Array<number>)?.length ?? 0), 0)
    console.log(
      `  ${engine.name.padEnd(6)} ${run.pages} pages in ${run.seconds.toFixed(2)} s = ${rate(run.pages, run.seconds)} (${run.failed} failed, ${ocr} pages OCR'd)`,
    )
  }
  const pdfium = best.get("pdfium")!
  const pdfjs = best.get("pdfjs")!
  console.log(
    `  pdfium/pdfjs: ${(pdfium.pages / pdfium.seconds / (pdfjs.pages / pdfjs.seconds)).toFixed(2)}×`,
  )

  // How far the texts agree, page by page.
  let same = 0
  let whitespace = 0
  const different: Array<string> = []
  files.forEach(({ file }, i) => {
    const a = pdfium.outputs[i]?.pages ?? []
    const b = pdfjs.outputs[i]?.pages ?? []
    for (let p = 0; p < Math.max(a.length, b.length); p++) {
      const x = a[p]?.text ?? ""
      const y = b[p]?.text ?? ""
      if (x === y) same++
      else if (x.replace(/\s+/g, "") === y.replace(/\s+/g, "")) whitespace++
      else different.push(`${path.basename(file)} page ${p + 1}`)
    }
  })
  console.log(
    `page texts: ${same} identical, ${whitespace} differ only in whitespace (line breaks, spaces), ${different.length} differ in words`,
  )
  for (const d of different.slice(0, 10)) console.log(`  differs: ${d}`)
}

main()
  .catch((e) => {
    console.error(e)
    process.exitCode = 1
  })
  .finally(() => terminateOcr())
