import { randomBytes } from "node:crypto"
import { realpathSync } from "node:fs"
import { createRequire } from "node:module"
import { PDFDocument } from "pdf-lib"
import sharp from "sharp"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  defaultLimits,
  type LayoutItem,
  ParseFailure,
  type ParseInput,
  type ParseOutput,
  type PdfEngine,
  pdfEngines,
} from "../../src/parsing/Backend.ts"
import { terminateOcr } from "../../src/parsing/Ocr.ts"
import { pdfBackend, pdfEngineOf } from "../../src/parsing/Pdf.ts"
import { pdfDate, pdfiumEngine, pdfiumHeapBytes } from "../../src/parsing/Pdfium.ts"
import { backendFor } from "../../src/parsing/Registry.ts"
import { renderPageImage, runParse } from "../../src/parsing/Runner.ts"
import { parseWith, renderWith } from "../support.ts"
import {
  input as anyEngineInput,
  expectGolden,
  haveFont,
  type Placed,
  pagePdf,
  scannedLines,
  scannedPdf,
  textPdf,
  wordRecall,
} from "./fixtures.ts"

const nativePush = Array.prototype.push
const nativeParse = JSON.parse

const failureOf = async (promise: Promise<unknown>): Promise<string> => {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  )
  expect(error).toBeInstanceOf(ParseFailure)
  return (error as ParseFailure).reason
}

/** The parser name each engine reports (OCR adds "+tesseract.js"). */
const parserOf: Record<PdfEngine, string> = { pdfium: "pdfium", pdfjs: "pdfjs-dist" }

/**
 * The golden files hold pdf.js's output. PDFium's must be the same in everything but the parser's name (text,
 * line breaks, layout boxes to the hundredth of a point, metadata): it is compared with the name swapped.
 */
const asGolden = <A extends ParseOutput | { readonly failure: string }>(outcome: A): A =>
  "parser" in outcome ? { ...outcome, parser: outcome.parser.replace(/^pdfium/u, "pdfjs-dist") } : outcome

/** The layout item of `placed` on its page: the item with the same text, else the one containing it. */
const itemFor = (output: ParseOutput, placed: Placed): LayoutItem | undefined => {
  const layout = output.pages[placed.page - 1]!.layout
  return layout.find((i) => i.text === placed.text) ?? layout.find((i) => i.text.includes(placed.text))
}

const expectBox = (item: LayoutItem | undefined, placed: Placed, tolerance: number) => {
  expect(item, placed.text).toBeDefined()
  const { x, y, width, height } = item!
  for (const [key, got, want] of [
    ["x", x, placed.x],
    ["y", y, placed.y],
    ["width", width, placed.width],
    ["height", height, placed.height],
  ] as const) {
    // Widths may differ by a hair: pdf.js measures standard fonts with its own metrics.
    const allowed = key === "width" ? tolerance + want * 0.005 : tolerance
    expect(Math.abs(got - want), `${placed.text}: ${key} ${got} vs ${want}`).toBeLessThanOrEqual(allowed)
  }
}

let text: Awaited<ReturnType<typeof textPdf>>

/** The page texts of the whole fixture (the same from either engine). */
let parsedTexts: Array<string>

beforeAll(async () => {
  text = await textPdf()
  const output = await parseWith(pdfBackend, anyEngineInput("report.pdf", text.bytes))
  parsedTexts = output.pages.map((p) => p.text)
})

afterAll(() => terminateOcr())

for (const engine of pdfEngines) {
  /** A parse input that asks for this engine. */
  const input = (fileName: string, bytes: Uint8Array, overrides: Partial<ParseInput> = {}): ParseInput => {
    const base = anyEngineInput(fileName, bytes, overrides)
    return { ...base, tools: { ...base.tools, pdfEngine: engine } }
  }
  let parsed: ParseOutput

  beforeAll(async () => {
    parsed = await parseWith(pdfBackend, input("report.pdf", text.bytes))
  })

  describe(`PDF backend (${engine}): text layer`, () => {
    it("is the registry's backend for .pdf files", () => {
      expect(backendFor("Report.PDF")).toBe(pdfBackend)
    })

    it("matches the golden output (text, layout, metadata)", async () => {
      await expectGolden("report.pdf", asGolden(parsed))
    })

    it("reads the document metadata", () => {
      expect(parsed.parser).toBe(parserOf[engine])
      expect(parsed.metadata).toEqual({
        title: "Quarterly Report",
        author: "Jane Example",
        subject: "Fixture for the PDF backend",
        keywords: "report fixture",
        creator: "dxs tests",
        producer: "pdf-lib",
        creation_date: "2024-03-01T10:00:00.000Z",
        modification_date: "2024-03-02T16:30:00.000Z",
        pdf_version: "1.7",
        encrypted: false,
        page_count: 3,
        page_width: 612,
        page_height: 792,
        ocr_pages: [],
      })
    })

    it("gives each page its size in points, rotation applied", () => {
      expect(parsed.pages.map((p) => [p.number, p.width, p.height, p.unit])).toEqual([
        [1, 612, 792, "pt"],
        [2, 595.28, 841.89, "pt"],
        [3, 792, 612, "pt"],
      ])
    })

    it("rebuilds the text line by line: gaps become spaces, split words join, bold overprint counts once", () => {
      expect(parsed.pages[0]!.text).toBe(
        [
          "Quarterly Report",
          "The effective date of this agreement is 1 March 2024.",
          "The term is two years from the effective date.",
          "Governing law: the State of Delaware.",
          "",
          "Payment terms are thirty days.",
          "",
          "Total 1,234.56 EUR",
          "Network",
          "Signed",
        ].join("\n"),
      )
      expect(parsed.pages[1]!.text).toBe(
        "Page two heading\nSecond page body with known words: alpha beta gamma.",
      )
      expect(parsed.pages[2]!.text).toBe("Landscape heading on a rotated page")
    })

    it("places every drawn text where it was drawn (top-left origin, points)", () => {
      for (const placed of text.placed) expectBox(itemFor(parsed, placed), placed, 0.5)
    })

    it("fails with a clear reason beyond the page limit", async () => {
      const limits = { ...defaultLimits, maxPages: 2 }
      expect(await failureOf(parseWith(pdfBackend, input("report.pdf", text.bytes, { limits })))).toBe(
        "the PDF has 3 pages; the limit is 2",
      )
    })

    it.runIf(engine === "pdfjs")(
      "puts back the native Array.prototype.push and JSON that pdf.js's polyfills replace",
      () => {
        expect(Array.prototype.push).toBe(nativePush)
        expect(JSON.parse).toBe(nativeParse)
      },
    )

    it("does not change the caller's bytes (pdf.js may take over the buffer it is given)", async () => {
      const copy = new Uint8Array(text.bytes)
      await parseWith(pdfBackend, input("report.pdf", copy))
      expect(copy.byteLength).toBe(text.bytes.byteLength)
      expect(Buffer.from(copy).equals(Buffer.from(text.bytes))).toBe(true)
    })

    it("accepts a Node Buffer", async () => {
      const output = await parseWith(pdfBackend, input("report.pdf", Buffer.from(text.bytes)))
      expect(output.pages).toHaveLength(3)
    })
  })

  describe(`PDF backend (${engine}): broken and protected files`, () => {
    it("refuses what is not a PDF", async () => {
      expect(await failureOf(parseWith(pdfBackend, input("empty.pdf", new Uint8Array())))).toBe(
        "not a valid PDF file: the file is empty",
      )
      expect(
        await failureOf(parseWith(pdfBackend, input("notes.pdf", new TextEncoder().encode("just text")))),
      ).toBe("not a valid PDF file: there is no %PDF header")
      const junk = new TextEncoder().encode(`%PDF-1.7\n${"garbage ".repeat(200)}`)
      expect(await failureOf(parseWith(pdfBackend, input("junk.pdf", junk)))).toMatch(
        /^not a valid PDF file: /,
      )
    })

    it("reads what it can of a truncated PDF, or fails with a reason", async () => {
      for (const share of [0.3, 0.6, 0.9]) {
        const cut = text.bytes.slice(0, Math.floor(text.bytes.length * share))
        const outcome = await parseWith(pdfBackend, input("cut.pdf", cut)).then(
          (output) => output,
          (e: unknown) => {
            expect(e).toBeInstanceOf(ParseFailure)
            return { failure: (e as ParseFailure).reason }
          },
        )
        await expectGolden(`truncated-${share * 100}.pdf`, asGolden(outcome))
      }
    })
  })

  describe(`PDF backend (${engine}): renderPage`, () => {
    it("renders a page to a PNG at 150 dpi", async () => {
      const png = await renderWith(pdfBackend, input("report.pdf", text.bytes), 1)
      expect([...png.subarray(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])
      const meta = await sharp(png).metadata()
      expect([meta.format, meta.width, meta.height]).toEqual(["png", 1275, 1650])
      // Ink on white: the darkest pixel is dark, most of the page is white.
      const stats = await sharp(png).greyscale().stats()
      expect(stats.channels[0]!.min).toBeLessThan(60)
      expect(stats.channels[0]!.mean).toBeGreaterThan(230)
    })

    it("renders a rotated page upright, and caps a large page at 2000 pixels", async () => {
      const rotated = await sharp(await renderWith(pdfBackend, input("report.pdf", text.bytes), 3)).metadata()
      expect([rotated.width, rotated.height]).toEqual([1650, 1275])
      const poster = await pagePdf(2384, 3370)
      const big = await sharp(await renderWith(pdfBackend, input("a0.pdf", poster), 1)).metadata()
      expect(big.height).toBe(2000)
      expect(Math.abs(big.width! - (2000 * 2384) / 3370)).toBeLessThanOrEqual(1)
    })

    it("fails for a page that does not exist, or a file that is not a PDF", async () => {
      const doc = input("report.pdf", text.bytes)
      for (const n of [0, 4, 1.5]) {
        expect(await failureOf(renderWith(pdfBackend, doc, n))).toBe(
          `page ${n} does not exist: the PDF has 3 pages`,
        )
      }
      expect(await failureOf(renderWith(pdfBackend, input("x.pdf", new Uint8Array([1, 2, 3])), 1))).toMatch(
        /^not a valid PDF file/,
      )
    })

    it.runIf(engine === "pdfjs")("uses the one copy of @napi-rs/canvas that pdf.js loads itself", () => {
      const ours = createRequire(import.meta.url).resolve("@napi-rs/canvas")
      const pdfjs = createRequire(createRequire(import.meta.url).resolve("pdfjs-dist/legacy/build/pdf.mjs"))
      expect(realpathSync(pdfjs.resolve("@napi-rs/canvas"))).toBe(realpathSync(ours))
    })
  })

  describe.skipIf(!haveFont)(`PDF backend (${engine}): pages without a text layer (OCR)`, () => {
    let scanned: Awaited<ReturnType<typeof scannedPdf>>
    let output: ParseOutput

    beforeAll(async () => {
      scanned = await scannedPdf()
      output = await parseWith(pdfBackend, input("scan.pdf", scanned.bytes))
    })

    it("OCRs the image-only page, and only that page", () => {
      expect(output.parser).toBe(`${parserOf[engine]}+tesseract.js`)
      expect(output.metadata.ocr_pages).toEqual([1])
      expect(output.pages[1]!.text).toBe("Appendix with a real text layer.")
      expect(output.pages[2]!.text).toBe("")
    })

    it("recognises the scanned words", () => {
      const page = output.pages[0]!
      expect(wordRecall(scannedLines.join("\n"), page.text)).toBeGreaterThanOrEqual(0.95)
      expect(page.text.split("\n").filter((l) => l !== "")).toEqual([...scannedLines])
    })

    it("gives OCR'd words in points, where they are on the page, with a confidence", () => {
      const page = output.pages[0]!
      expect([page.width, page.height, page.unit]).toEqual([612, 792, "pt"])
      for (const placed of scanned.placed) {
        const item = page.layout.find((i) => i.text === placed.text)
        expectBox(item, placed, 3)
        expect(item!.confidence).toBeGreaterThan(60)
      }
    })

    it("matches the golden output", async () => {
      await expectGolden("scan.pdf", asGolden(output))
    })
  })
}

describe("PDF backend in the parsing thread (the production path)", () => {
  it("parses and renders in a worker thread under limits, as in the same thread, with PDFium by default", async () => {
    const file = { bytes: text.bytes, fileName: "report.pdf", contentType: "application/pdf" }
    const output = await runParse(file, { libreOffice: undefined })
    expect(output.parser).toBe("pdfium")
    expect(output).toEqual({
      ...(await parseWith(pdfBackend, anyEngineInput("report.pdf", text.bytes))),
      attachments: [],
    })
    const png = await renderPageImage(file, 2, { libreOffice: undefined })
    const meta = await sharp(png).metadata()
    expect([meta.format, meta.width, meta.height]).toEqual(["png", 1240, 1754])
  })
})

describe("PDF engine choice", () => {
  const saved = process.env.PDF_ENGINE
  afterAll(() => {
    if (saved === undefined) delete process.env.PDF_ENGINE
    else process.env.PDF_ENGINE = saved
  })

  it("is PDFium unless PDF_ENGINE=pdfjs; the input's own choice comes first", () => {
    const plain = anyEngineInput("report.pdf", new Uint8Array())
    delete process.env.PDF_ENGINE
    expect(pdfEngineOf(plain)).toBe("pdfium")
    process.env.PDF_ENGINE = "pdfjs"
    expect(pdfEngineOf(plain)).toBe("pdfjs")
    expect(pdfEngineOf({ ...plain, tools: { ...plain.tools, pdfEngine: "pdfium" } })).toBe("pdfium")
    process.env.PDF_ENGINE = "pdfium"
    expect(pdfEngineOf(plain)).toBe("pdfium")
  })
})

describe("PDFium engine", () => {
  const withEngine = (fileName: string, bytes: Uint8Array): ParseInput => {
    const base = anyEngineInput(fileName, bytes)
    return { ...base, tools: { ...base.tools, pdfEngine: "pdfium" } }
  }

  it("falls back to pdf.js for a file it refuses (a truncated file without its trailer)", async () => {
    const cut = text.bytes.slice(0, Math.floor(text.bytes.length * 0.9))
    const refused = await parseWith(pdfiumEngine, withEngine("cut.pdf", cut)).catch((e: unknown) => e)
    expect((refused as Error).name).toBe("PdfiumRefused")
    const output = await parseWith(pdfBackend, withEngine("cut.pdf", cut))
    expect(output.parser).toBe("pdfjs-dist")
    expect(output.metadata.repaired).toBeDefined()
    expect(output.pages.map((p) => p.text)).toEqual(parsedTexts)
    const png = await renderWith(pdfBackend, withEngine("cut.pdf", cut), 1)
    expect((await sharp(png).metadata()).width).toBe(1275)
  })

  it("gives back the wasm heap: parsing and rendering a 1 MB file 20 times does not grow it", async () => {
    // Noise does not compress: the file is about as large as the image, and each parse copies it into the heap.
    const doc = await PDFDocument.create()
    const side = 600
    const noise = randomBytes(side * side * 3)
    const png = await sharp(noise, { raw: { width: side, height: side, channels: 3 } })
      .png()
      .toBuffer()
    const page = doc.addPage([612, 792])
    page.drawImage(await doc.embedPng(png), { x: 0, y: 0, width: 612, height: 792 })
    page.drawText("Noise with a caption long enough to count as a text layer", { x: 36, y: 36, size: 12 })
    const bytes = await doc.save()
    expect(bytes.length).toBeGreaterThan(1_000_000)
    const round = async () => {
      const output = await parseWith(pdfiumEngine, withEngine("noise.pdf", bytes))
      expect(output.pages[0]!.text).toContain("Noise with a caption")
      await renderWith(pdfiumEngine, withEngine("noise.pdf", bytes), 1)
    }
    for (let i = 0; i < 3; i++) await round()
    const settled = await pdfiumHeapBytes()
    for (let i = 0; i < 20; i++) await round()
    // A leaked copy of the file alone would add 20 MB.
    expect((await pdfiumHeapBytes()) - settled).toBeLessThan(8 * 1024 * 1024)
  })

  it("reads PDF dates as pdf.js does", () => {
    expect(pdfDate("D:20240301100000Z")).toBe("2024-03-01T10:00:00.000Z")
    expect(pdfDate("D:20240301100000+02'00'")).toBe("2024-03-01T08:00:00.000Z")
    expect(pdfDate("D:20240301100000-05'30")).toBe("2024-03-01T15:30:00.000Z")
    expect(pdfDate("20240301")).toBe("2024-03-01T00:00:00.000Z")
    expect(pdfDate("D:2024")).toBe("2024-01-01T00:00:00.000Z")
    expect(pdfDate("yesterday")).toBeUndefined()
    expect(pdfDate(undefined)).toBeUndefined()
  })
})
