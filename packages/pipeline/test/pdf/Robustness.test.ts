/**
 * Real third-party PDFs (../shared/corpus, read-only, not in the repository): invalid, password-protected,
 * signed, right-to-left, scanned, odd fonts. Each must end in pages or a ParseFailure within 120 s, never
 * another exception (with the default engine, PDFium, and pdf.js as its fallback). Also: on text PDFs the
 * text agrees with poppler's pdftotext when it is installed, and PDFium's page texts are pdf.js's.
 */
import { execFileSync, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, describe, expect, it } from "vitest"
import { ParseFailure, type ParseOutput } from "../../src/parsing/Backend.ts"
import { terminateOcr } from "../../src/parsing/Ocr.ts"
import { pdfBackend } from "../../src/parsing/Pdf.ts"
import { pdfiumEngine } from "../../src/parsing/Pdfium.ts"
import { pdfjsEngine } from "../../src/parsing/PdfJs.ts"
import { parseWith } from "../support.ts"
import { input, wordRecall } from "./fixtures.ts"

const corpus = path.resolve(fileURLToPath(new URL("../../../../", import.meta.url)), "../shared/corpus")
const folders = ["robustness/pdf-parse", "robustness/docling/pdf", "robustness/docling/pdf_password"]

const pdfsUnder = (dir: string): Array<string> =>
  fs.existsSync(dir)
    ? fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
        const full = path.join(dir, entry.name)
        if (entry.isDirectory()) return pdfsUnder(full)
        return entry.name.toLowerCase().endsWith(".pdf") ? [full] : []
      })
    : []

const files = folders.flatMap((folder) => pdfsUnder(path.join(corpus, folder))).sort()
if (files.length === 0) console.warn(`no PDF corpus under ${corpus}: the PDF robustness tests are skipped`)

/**
 * A parse that has not ended by then hangs. Not a speed limit: a file of five A3 drawings, every page OCR'd
 * at 300 dpi, takes about 30 s of a core while the package's other test files share the machine (the image
 * corpus's scans, which take as long, have the same limit).
 */
const limitMs = 120_000

const parseWithin = (file: string, ms: number): Promise<ParseOutput | ParseFailure> => {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no outcome within ${ms / 1000} s`)), ms)
  })
  const parsed = parseWith(pdfBackend, input(path.basename(file), fs.readFileSync(file))).catch(
    (e: unknown) => {
      if (e instanceof ParseFailure) return e
      throw e
    },
  )
  return Promise.race([parsed, timeout]).finally(() => clearTimeout(timer))
}

afterAll(() => terminateOcr())

describe.skipIf(files.length === 0)("PDF robustness corpus", () => {
  for (const file of files) {
    it(`${path.relative(corpus, file)} ends in pages or a ParseFailure`, {
      timeout: limitMs + 5_000,
    }, async () => {
      const outcome = await parseWithin(file, limitMs)
      if (outcome instanceof ParseFailure) {
        expect(outcome.reason).toMatch(/^(not a valid PDF file|the PDF )/)
        return
      }
      expect(outcome.pages.length).toBeGreaterThan(0)
      outcome.pages.forEach((page, i) => {
        expect(page.number).toBe(i + 1)
        for (const item of page.layout) {
          expect(Number.isFinite(item.x + item.y + item.width + item.height), item.text).toBe(true)
        }
      })
      expect(outcome.metadata.page_count).toBe(outcome.pages.length)
    })
  }

  it.skipIf(!files.some((f) => f.endsWith("password-123456.pdf")))(
    "says that a password-protected PDF is encrypted",
    async () => {
      const outcome = await parseWithin(files.find((f) => f.endsWith("password-123456.pdf"))!, limitMs)
      expect(outcome).toEqual(new ParseFailure({ reason: "the PDF is encrypted with a password" }))
    },
  )
})

const textPdfs = path.join(corpus, "labelled/kleister-nda-train/documents")
const havePdftotext = spawnSync("pdftotext", ["-v"]).error === undefined
const sample = fs.existsSync(textPdfs) ? fs.readdirSync(textPdfs).sort().slice(0, 5) : []

describe.skipIf(!havePdftotext || sample.length === 0)("PDF text against poppler's pdftotext", () => {
  it("finds the same words on real text PDFs", async () => {
    for (const name of sample) {
      const file = path.join(textPdfs, name)
      const output = await parseWith(pdfBackend, input(name, fs.readFileSync(file)))
      const ours = output.pages.map((p) => p.text).join("\n")
      const theirs = execFileSync("pdftotext", ["-q", "-enc", "UTF-8", file, "-"], { encoding: "utf8" })
      expect(wordRecall(theirs, ours), name).toBeGreaterThanOrEqual(0.98)
      expect(wordRecall(ours, theirs), name).toBeGreaterThanOrEqual(0.98)
    }
  })
})

describe.skipIf(sample.length === 0)("PDFium against pdf.js", () => {
  it("gives the same page texts (words, spaces and line breaks) on real text PDFs", async () => {
    for (const name of sample) {
      const bytes = fs.readFileSync(path.join(textPdfs, name))
      const pdfium = await parseWith(pdfiumEngine, input(name, bytes))
      const pdfjs = await parseWith(pdfjsEngine, input(name, bytes))
      expect(pdfium.parser, name).toBe("pdfium")
      expect(
        pdfium.pages.map((p) => p.text),
        name,
      ).toEqual(pdfjs.pages.map((p) => p.text))
    }
  })
})
