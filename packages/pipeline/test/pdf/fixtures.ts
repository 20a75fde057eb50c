import { existsSync } from "node:fs"
import { createCanvas, GlobalFonts } from "@napi-rs/canvas"
import { type PDFDocument as Doc, degrees, PDFDocument, type PDFFont, StandardFonts } from "pdf-lib"
import { expect } from "vitest"
import type { ParseInput, ParseOutput } from "../../src/parsing/Backend.ts"
import { goldenExpectation, parseInput } from "../support.ts"

export const input = (fileName: string, bytes: Uint8Array, overrides: Partial<ParseInput> = {}): ParseInput =>
  parseInput(fileName, bytes, {
    contentType: "application/pdf",
    tools: { libreOffice: undefined, tempDir: "/nonexistent" },
    ...overrides,
  })

/** A word or line expected on a page, with its box in points (top-left origin) as the backend must report it. */
export interface Placed {
  readonly page: number
  readonly text: string
  readonly x: number
  readonly y: number
  readonly width: number
  readonly height: number
}

const letter: [number, number] = [612, 792]
const a4: [number, number] = [595.28, 841.89]

/** The drawn width: pdf-lib's own measure applies kerning, which its drawText does not. */
const widthOf = (font: PDFFont, text: string, size: number): number =>
  [...text].reduce((sum, ch) => sum + font.widthOfTextAtSize(ch, size), 0)

const setMetadata = (doc: Doc) => {
  doc.setTitle("Quarterly Report")
  doc.setAuthor("Jane Example")
  doc.setSubject("Fixture for the PDF backend")
  doc.setKeywords(["report", "fixture"])
  doc.setCreator("dxs tests")
  doc.setProducer("pdf-lib")
  doc.setCreationDate(new Date("2024-03-01T10:00:00.000Z"))
  doc.setModificationDate(new Date("2024-03-02T16:30:00.000Z"))
}

/**
 * Three pages with a text layer: Letter (heading, two paragraphs, a table row with a wide gap, a word drawn
 * in two halves, a word drawn twice to look bold), A4, and a Letter page turned to landscape (/Rotate 90)
 * whose text is drawn rotated so that it reads left to right on screen.
 */
export const textPdf = async (): Promise<{
  readonly bytes: Uint8Array
  readonly placed: ReadonlyArray<Placed>
}> => {
  const doc = await PDFDocument.create()
  setMetadata(doc)
  const regular = await doc.embedFont(StandardFonts.Helvetica)
  const bold = await doc.embedFont(StandardFonts.HelveticaBold)
  const placed: Array<Placed> = []
  /** Records where upright text with its baseline at (x, baseline) in PDF user space must be found. */
  const place = (page: number, text: string, x: number, baseline: number, size: number, font: PDFFont) => {
    const height = doc.getPage(page - 1).getHeight()
    placed.push({
      page,
      text,
      x,
      y: height - baseline - size,
      width: widthOf(font, text, size),
      height: size,
    })
  }
  const draw = (page: number, text: string, x: number, baseline: number, size: number, font: PDFFont) => {
    doc.getPage(page - 1).drawText(text, { x, y: baseline, size, font })
    place(page, text, x, baseline, size, font)
  }

  const first = doc.addPage(letter)
  draw(1, "Quarterly Report", 72, 700, 24, bold)
  draw(1, "The effective date of this agreement is 1 March 2024.", 72, 660, 12, regular)
  draw(1, "The term is two years from the effective date.", 72, 645, 12, regular)
  draw(1, "Governing law: the State of Delaware.", 72, 630, 12, regular)
  draw(1, "Payment terms are thirty days.", 72, 590, 12, regular)
  draw(1, "Total", 72, 540, 12, regular)
  draw(1, "1,234.56 EUR", 400, 540, 12, regular)
  // One word drawn in two halves (pdf.js reports one item), one drawn twice a hair apart to look bold.
  first.drawText("Net", { x: 72, y: 520, size: 12, font: regular })
  first.drawText("work", { x: 72 + widthOf(regular, "Net", 12), y: 520, size: 12, font: regular })
  place(1, "Network", 72, 520, 12, regular)
  draw(1, "Signed", 72, 500, 12, bold)
  first.drawText("Signed", { x: 72.3, y: 500, size: 12, font: bold })

  doc.addPage(a4)
  draw(2, "Page two heading", 72, 760, 18, bold)
  draw(2, "Second page body with known words: alpha beta gamma.", 72, 730, 11, regular)

  const landscape = doc.addPage(letter)
  landscape.setRotation(degrees(90))
  const heading = "Landscape heading on a rotated page"
  landscape.drawText(heading, { x: 100, y: 50, size: 18, font: bold, rotate: degrees(90) })
  // On screen (792 × 612) a user-space point (ux, uy) is at (uy, ux): the baseline starts at (50, 100).
  placed.push({ page: 3, text: heading, x: 50, y: 100 - 18, width: widthOf(bold, heading, 18), height: 18 })

  return { bytes: await doc.save({ useObjectStreams: false }), placed }
}

const dejaVu = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
/** The OCR fixture needs a real font: DejaVu Sans (Debian's fonts-dejavu-core). */
export const haveFont =
  existsSync(dejaVu) && GlobalFonts.registerFromPath(dejaVu, "PDF Fixture Sans") !== null

export const scannedLines = [
  "INVOICE NUMBER 2024-117",
  "Issued by Northwind Traders Ltd",
  "Total amount due 1,234.56 EUR",
  "Payment within 30 days of receipt",
] as const

/**
 * A "scanned" Letter page: a 200 dpi image of black text on white, covering the page, and no text layer;
 * then a page with a real text layer, then a blank page with only a tiny image stretched into a rule (which
 * must not be OCR'd). `placed` holds the ink boxes of the scanned words, in points.
 */
export const scannedPdf = async (): Promise<{
  readonly bytes: Uint8Array
  readonly placed: ReadonlyArray<Placed>
}> => {
  const dpi = 200
  const [w, h] = letter
  const canvas = createCanvas(Math.round((w * dpi) / 72), Math.round((h * dpi) / 72))
  const g = canvas.getContext("2d")
  g.fillStyle = "#ffffff"
  g.fillRect(0, 0, canvas.width, canvas.height)
  g.fillStyle = "#000000"
  g.font = `44px "PDF Fixture Sans"`
  const placed: Array<Placed> = []
  const pt = 72 / dpi
  scannedLines.forEach((line, i) => {
    const baseline = 300 + i * 110
    let x = 200
    for (const word of line.split(" ")) {
      const m = g.measureText(word)
      g.fillText(word, x, baseline)
      placed.push({
        page: 1,
        text: word,
        x: (x - m.actualBoundingBoxLeft) * pt,
        y: (baseline - m.actualBoundingBoxAscent) * pt,
        width: (m.actualBoundingBoxLeft + m.actualBoundingBoxRight) * pt,
        height: (m.actualBoundingBoxAscent + m.actualBoundingBoxDescent) * pt,
      })
      x += g.measureText(`${word} `).width
    }
  })

  const doc = await PDFDocument.create()
  setMetadata(doc)
  const scan = await doc.embedPng(canvas.toBuffer("image/png"))
  doc.addPage(letter).drawImage(scan, { x: 0, y: 0, width: w, height: h })
  const font = await doc.embedFont(StandardFonts.Helvetica)
  doc.addPage(letter).drawText("Appendix with a real text layer.", { x: 72, y: 700, size: 12, font })
  const dot = createCanvas(24, 23)
  dot.getContext("2d").fillRect(0, 0, 24, 23)
  const rule = await doc.embedPng(dot.toBuffer("image/png"))
  doc.addPage(letter).drawImage(rule, { x: 72, y: 700, width: 468, height: 1 })
  return { bytes: await doc.save({ useObjectStreams: false }), placed }
}

/** One page of the given size in points with one line of text. */
export const pagePdf = async (width: number, height: number): Promise<Uint8Array> => {
  const doc = await PDFDocument.create()
  setMetadata(doc)
  const font = await doc.embedFont(StandardFonts.Helvetica)
  doc.addPage([width, height]).drawText("Large format drawing", { x: 36, y: height - 72, size: 36, font })
  return doc.save({ useObjectStreams: false })
}

/** Words, for comparing OCR text without caring about spacing and line breaks. */
export const words = (text: string): Array<string> => text.split(/\s+/).filter((w) => w !== "")

/** Share of `expected` words found in `actual` (each occurrence counted once). */
export const wordRecall = (expected: string, actual: string): number => {
  const pool = new Map<string, number>()
  for (const w of words(actual)) pool.set(w, (pool.get(w) ?? 0) + 1)
  const wanted = words(expected)
  let found = 0
  for (const w of wanted) {
    const left = pool.get(w) ?? 0
    if (left > 0) {
      found++
      pool.set(w, left - 1)
    }
  }
  return wanted.length === 0 ? 1 : found / wanted.length
}

const goldenDir = new URL("./golden/", import.meta.url)

/** What a golden file holds: the whole output (layout included), or the failure reason. */
export const goldenRecord = (outcome: ParseOutput | { readonly failure: string }) =>
  "failure" in outcome
    ? outcome
    : {
        parser: outcome.parser,
        metadata: outcome.metadata,
        pages: outcome.pages.map((p) => ({
          number: p.number,
          width: p.width,
          height: p.height,
          unit: p.unit,
          text: p.text,
          layout: p.layout,
        })),
      }

/**
 * Compares with golden/<name>.json; UPDATE_GOLDEN=1 rewrites it (review the diff). OCR'd pages are compared
 * by their words (95% of the golden words found, about as many boxes): tesseract's output may move by a
 * character between CPUs (SIMD or not); everything else must be equal.
 */
export const expectGolden = async (
  name: string,
  outcome: ParseOutput | { readonly failure: string },
): Promise<void> => {
  const actual = goldenRecord(outcome)
  const stored = await goldenExpectation(new URL(`${name}.json`, goldenDir), actual)
  if (stored === undefined) return
  const expected = stored as ReturnType<typeof goldenRecord>
  if ("failure" in expected || "failure" in actual) {
    expect(actual).toEqual(expected)
    return
  }
  const ocrPages = new Set((expected.metadata as { ocr_pages?: Array<number> }).ocr_pages ?? [])
  const loose = (r: typeof expected) => ({
    ...r,
    pages: r.pages.map((p) => (ocrPages.has(p.number) ? { ...p, text: "(OCR)", layout: [] } : p)),
  })
  expect(JSON.parse(JSON.stringify(loose(actual)))).toEqual(loose(expected))
  for (const page of expected.pages.filter((p) => ocrPages.has(p.number))) {
    const got = actual.pages.find((p) => p.number === page.number)!
    expect(wordRecall(page.text, got.text), `OCR words of page ${page.number}`).toBeGreaterThanOrEqual(0.95)
    expect(Math.abs(got.layout.length - page.layout.length)).toBeLessThanOrEqual(
      Math.ceil(page.layout.length * 0.1),
    )
  }
}
