/**
 * OCR comparison: tesseract.js with its English model (the service's engine) against PaddleOCR's PP-OCRv4
 * models run by onnxruntime-node (`ocr/Paddle.ts`), both offline, in one process:
 * (a) the first pages of text PDFs (Kleister NDAs) drawn as images at 150 and 300 dpi by poppler's
 *     `pdftoppm`, read by each engine: character error rate against the page's own text layer (read by the
 *     PDF backend; whitespace collapsed), and pages per second;
 * (b) scanned receipts read by each engine and extracted by the local extractor: SROIE F1 per field (the
 *     held-back fifth by default; tesseract's texts come from bench:extract's cache when it has them).
 * PaddleOCR's packages (about 320 MB) are installed apart from the workspace, by `pnpm bench:ocr:install`;
 * without them only tesseract.js is measured, and the script says how to install them.
 * Usage: pnpm bench:ocr [--pages N] [--all-receipts]
 */
import { execFileSync } from "node:child_process"
import { existsSync, mkdtempSync, readdirSync, readFileSync } from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { backendFor, defaultLimits } from "@dxs/pipeline"
import { ocrPng, terminateOcr } from "@dxs/pipeline/parsing/Ocr"
import { Effect } from "effect"
import { labelled, openCorpus } from "./extract/Corpus.ts"
import { benchReceipts } from "./extract/Receipts.ts"
import { paddleInstalled, paddleOcr } from "./ocr/Paddle.ts"

const args = process.argv.slice(2)
const pageCount = Number(args[args.indexOf("--pages") + 1] ?? 6) || 6
const allReceipts = args.includes("--all-receipts")

/** Edit distance of two strings (two rows of the table). */
const levenshtein = (a: string, b: string): number => {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const current = [i]
    for (let j = 1; j <= b.length; j++)
      current.push(
        Math.min(previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1), previous[j]! + 1, current[j - 1]! + 1),
      )
    previous = current
  }
  return previous[b.length]!
}

const flat = (s: string) => s.replace(/\s+/g, " ").trim()

const truthOf = async (file: string): Promise<string> => {
  const out = await Effect.runPromise(
    backendFor(file)!.parse({
      bytes: readFileSync(file),
      fileName: path.basename(file),
      contentType: "application/pdf",
      limits: defaultLimits,
      tools: { libreOffice: undefined, tempDir: os.tmpdir() },
    }),
  )
  return out.pages[0]?.text ?? ""
}

const withPaddle = paddleInstalled()

const engines: Record<string, (image: Uint8Array) => Promise<string>> = {
  "tesseract.js": async (png: Uint8Array) => (await Effect.runPromise(ocrPng(png))).text,
  ...(withPaddle ? { paddleocr: paddleOcr } : {}),
}

const pdfPages = async () => {
  const dir = path.join(labelled, "kleister-nda-train/documents")
  if (!existsSync(dir)) return console.log(`no PDFs at ${dir}: no page comparison`)
  const files = readdirSync(dir)
    .filter((f) => f.endsWith(".pdf"))
    .sort()
    .slice(0, pageCount)
    .map((f) => path.join(dir, f))
  const tmp = mkdtempSync(path.join(os.tmpdir(), "dxs-bench-ocr-"))
  for (const dpi of [150, 300]) {
    const images = files.map((file, i) => {
      const prefix = path.join(tmp, `${dpi}-${i}`)
      execFileSync("pdftoppm", ["-f", "1", "-l", "1", "-r", String(dpi), "-png", "-singlefile", file, prefix])
      return readFileSync(`${prefix}.png`)
    })
    const truths = await Promise.all(files.map(truthOf))
    for (const [name, read] of Object.entries(engines)) {
      await read(images[0]!) // warm-up: the engine's start is not a page's cost
      let edits = 0
      let chars = 0
      const t = performance.now()
      const texts: Array<string> = []
      for (const image of images) texts.push(await read(image))
      const seconds = (performance.now() - t) / 1000
      texts.forEach((text, i) => {
        edits += levenshtein(flat(text), flat(truths[i]!))
        chars += flat(truths[i]!).length
      })
      console.log(
        `  ${String(dpi).padStart(3)} dpi  ${name.padEnd(13)} CER ${((100 * edits) / chars).toFixed(2)} %  ${(images.length / seconds).toFixed(2)} pages/s (${images.length} pages, ${chars} characters)`,
      )
    }
  }
}

const receipts = async () => {
  const options = { limit: Number.POSITIVE_INFINITY, showErrors: undefined, heldBackOnly: !allReceipts }
  const corpora = [
    ["tesseract.js", openCorpus(true)],
    ...(withPaddle
      ? [
          [
            "paddleocr",
            openCorpus(true, { name: "paddleocr", read: async (f) => [await paddleOcr(readFileSync(f))] }),
          ] as const,
        ]
      : []),
  ] as const
  for (const [name, corpus] of corpora) {
    console.log(`\nreceipts read by ${name}:`)
    await benchReceipts(corpus, options)
    const { parsed, parseMs } = corpus.stats()
    if (parsed > 0)
      console.log(
        `  OCR: ${parsed} receipts in ${(parseMs / 1000).toFixed(1)} s = ${((1000 * parsed) / parseMs).toFixed(2)} receipts/s`,
      )
    await corpus.close()
  }
}

const main = async () => {
  if (!withPaddle)
    console.log(
      "PaddleOCR is not installed (about 320 MB, apart from the workspace): `pnpm bench:ocr:install` installs it; tesseract.js alone is measured.\n",
    )
  console.log("text PDF pages as images (truth: the PDF's text layer):")
  try {
    await pdfPages()
  } catch (e) {
    console.log(`  no page comparison: ${(e as Error).message} (Debian: apt-get install poppler-utils)`)
  }
  await receipts()
  await terminateOcr()
}

main().catch((e) => {
  console.error(e)
  process.exitCode = 1
})
