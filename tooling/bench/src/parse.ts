/**
 * Parse benchmark: text-PDF pages per second of our PDF backend against poppler's `pdftotext` on the
 * same files in the same run (printed as a ratio; target ≥ 0.5), plus OCR pages per second and peak memory.
 * Usage: pnpm bench:parse [DIR_WITH_PDFS]   (default: ../shared/corpus/labelled/kleister-nda-train/documents)
 */
import { execFileSync, spawnSync } from "node:child_process"
import { existsSync, readdirSync, readFileSync } from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { backendFor, defaultLimits, type ParseInput } from "@dxs/pipeline"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..")
const pdfDir = path.resolve(
  process.argv[2] ?? path.join(root, "../shared/corpus/labelled/kleister-nda-train/documents"),
)
const ocrDirs = ["ocr", "tiff", "webp"].map((d) =>
  path.join(root, "../shared/corpus/robustness/docling", d, "sources"),
)
const MAX_FILES = Number(process.env.BENCH_MAX_FILES ?? 40)

const input = (file: string): ParseInput => ({
  bytes: readFileSync(file),
  fileName: path.basename(file),
  contentType: "application/octet-stream",
  limits: defaultLimits,
  tools: { libreOffice: undefined, tempDir: os.tmpdir() },
})

const seconds = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e9
let peakRss = 0
const sample = () => {
  peakRss = Math.max(peakRss, process.memoryUsage().rss)
}
const timer = setInterval(sample, 20)

const main = async () => {
  if (!existsSync(pdfDir)) {
    console.log(`no PDF folder at ${pdfDir}: nothing to measure`)
    return
  }
  if (spawnSync("pdftotext", ["-v"]).error) {
    console.log(
      "pdftotext is not installed (Debian: apt-get install poppler-utils): no baseline to compare with",
    )
    return
  }
  const files = readdirSync(pdfDir)
    .filter((f) => f.toLowerCase().endsWith(".pdf"))
    .sort()
    .slice(0, MAX_FILES)
    .map((f) => path.join(pdfDir, f))
  const pdf = backendFor("x.pdf")
  if (!pdf) throw new Error("no PDF backend registered")

  // Warm up both (JIT, font data, page cache) on the first file.
  execFileSync("pdftotext", ["-layout", files[0]!, "-"], { stdio: ["ignore", "ignore", "ignore"] })
  await pdf.parse(input(files[0]!))

  let popplerPages = 0
  const t0 = process.hrtime.bigint()
  for (const f of files) {
    const text = execFileSync("pdftotext", [f, "-"], { maxBuffer: 256 * 1024 * 1024, encoding: "utf8" })
    popplerPages += text.split("\f").length - 1
  }
  const popplerSeconds = seconds(t0)

  let ourPages = 0
  let failed = 0
  const t1 = process.hrtime.bigint()
  for (const f of files) {
    try {
      ourPages += (await pdf.parse(input(f))).pages.length
    } catch {
      failed += 1
    }
  }
  const ourSeconds = seconds(t1)
  const popplerRate = popplerPages / popplerSeconds
  const ourRate = ourPages / ourSeconds
  console.log(`text PDFs: ${files.length} files from ${pdfDir}`)
  console.log(
    `  pdftotext: ${popplerPages} pages in ${popplerSeconds.toFixed(2)} s = ${popplerRate.toFixed(1)} pages/s`,
  )
  console.log(
    `  dxs pdf:   ${ourPages} pages in ${ourSeconds.toFixed(2)} s = ${ourRate.toFixed(1)} pages/s (${failed} failed)`,
  )
  console.log(`  ratio dxs/pdftotext: ${(ourRate / popplerRate).toFixed(2)} (target >= 0.50)`)

  const images = ocrDirs
    .filter((d) => existsSync(d))
    .flatMap((d) =>
      readdirSync(d)
        .filter((f) => /\.(png|jpe?g|tiff?|webp)$/i.test(f))
        .map((f) => path.join(d, f)),
    )
    .slice(0, 5)
  if (images.length > 0) {
    const image = backendFor(images[0]!)
    if (image) {
      let pages = 0
      const t2 = process.hrtime.bigint()
      for (const f of images) pages += (await image.parse(input(f))).pages.length
      const s = seconds(t2)
      console.log(`OCR: ${pages} pages in ${s.toFixed(2)} s = ${(pages / s).toFixed(2)} pages/s`)
    }
  }
  sample()
  console.log(`peak RSS: ${(peakRss / 1024 / 1024).toFixed(0)} MB`)
}

main()
  .catch((e) => {
    console.error(e)
    process.exitCode = 1
  })
  .finally(async () => {
    clearInterval(timer)
    const ocr = await import("@dxs/pipeline/parsing/Ocr").catch(() => undefined)
    await (ocr as { terminateOcr?: () => Promise<void> } | undefined)?.terminateOcr?.()
  })
