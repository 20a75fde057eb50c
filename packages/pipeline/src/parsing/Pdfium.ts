import { Cause, Effect, Either } from "effect"
import {
  isParseFailure,
  type ParsedPage,
  ParseFailure,
  type ParseInput,
  type ParseOutput,
} from "./Backend.ts"
import { ocrPng } from "./Ocr.ts"
import { noGraphics } from "./PdfGraphics.ts"
import { pageGraphics } from "./PdfiumGraphics.ts"
import {
  type Doc,
  type Geometry,
  geometryOf,
  type PdfiumError,
  PdfiumRefused,
  withDocument,
  withHeap,
  withPage,
} from "./PdfiumModule.ts"
import { runsOfTextPage } from "./PdfiumText.ts"
import { type PdfPageContent, pdfOutput, pdfPageContent, showsScan } from "./PdfPage.ts"
import { infoText, message, ocrResolution, renderResolution, round, scaleForSize } from "./PdfText.ts"

export { PdfiumRefused, pdfiumHeapBytes } from "./PdfiumModule.ts"

/**
 * The PDFium engine of the PDF backend (PdfiumModule.ts: the library and its heap). Its high-level API has
 * no character boxes, so the engine calls PDFium's C API directly: characters with their origins and advance
 * boxes become runs of text (as pdf.js's text items, PdfiumText.ts), its path and image objects the page's
 * drawing (PdfiumGraphics.ts), and from there the page is read as pdf.js's is (PdfPage.ts: text, layout,
 * tables, blocks). Pages are drawn into a PDFium bitmap and encoded as PNG with sharp.
 *
 * A file PDFium cannot open (or that makes it fail) is a `PdfiumRefused`: the backend then reads it with
 * pdf.js. A password-protected file is a ParseFailure at once.
 */

/** A PDF date (`D:YYYYMMDDHHmmSSOHH'mm'`, everything after the year optional) as ISO 8601, as pdf.js reads it. */
export const pdfDate = (raw: string | undefined): string | undefined => {
  if (raw === undefined) return undefined
  const match = /^D?:?(\d{4})(\d{2})?(\d{2})?(\d{2})?(\d{2})?(\d{2})?([Z+-])?(\d{2})?'?(\d{2})?'?/.exec(raw)
  if (match === null) return undefined
  const part = (i: number, min: number, max: number, fallback: number) => {
    const n = match[i] === undefined ? fallback : Number(match[i])
    return n >= min && n <= max ? n : fallback
  }
  const year = Number(match[1])
  const month = part(2, 1, 12, 1) - 1
  const day = part(3, 1, 31, 1)
  let hour = part(4, 0, 23, 0)
  let minute = part(5, 0, 59, 0)
  const second = part(6, 0, 59, 0)
  const sign = match[7] ?? "Z"
  const offsetHour = part(8, 0, 23, 0)
  const offsetMinute = part(9, 0, 59, 0)
  if (sign === "-") {
    hour += offsetHour
    minute += offsetMinute
  } else if (sign === "+") {
    hour -= offsetHour
    minute -= offsetMinute
  }
  const date = new Date(Date.UTC(year, month, day, hour, minute, second))
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString()
}

/** One Info dictionary entry (UTF-16LE from PDFium), or undefined when absent or blank. */
const metaText = (doc: Doc, tag: string): string | undefined => {
  const { m, handle } = doc
  return withHeap(m, tag.length + 1, (name) => {
    m.HEAPU8.set(Buffer.from(`${tag}\0`, "latin1"), name)
    const size = m._FPDF_GetMetaText(handle, name, 0, 0)
    if (size <= 2) return undefined
    return withHeap(m, size, (buffer) => {
      m._FPDF_GetMetaText(handle, name, buffer, size)
      return infoText(Buffer.from(m.HEAPU8.subarray(buffer, buffer + size - 2)).toString("utf16le"))
    })
  })
}

const documentMetadata = (doc: Doc): Record<string, unknown> => {
  const { m, handle, scratch } = doc
  const version = m._FPDF_GetFileVersion(handle, scratch.at) ? m.HEAP32[scratch.at >> 2]! : 0
  const entries: Record<string, unknown> = {
    title: metaText(doc, "Title"),
    author: metaText(doc, "Author"),
    subject: metaText(doc, "Subject"),
    keywords: metaText(doc, "Keywords"),
    creator: metaText(doc, "Creator"),
    producer: metaText(doc, "Producer"),
    creation_date: pdfDate(metaText(doc, "CreationDate")),
    modification_date: pdfDate(metaText(doc, "ModDate")),
    pdf_version: version > 0 ? `${Math.floor(version / 10)}.${version % 10}` : undefined,
    encrypted: m._FPDF_GetSecurityHandlerRevision(handle) !== -1,
  }
  return Object.fromEntries(Object.entries(entries).filter(([, v]) => v !== undefined))
}

/**
 * Draws the form fields (signatures, filled-in fields) over a rendered page, as pdf.js draws them: PDFium
 * draws widget annotations only through a form-fill environment (version 1: no XFA, no JavaScript).
 */
const drawFormFields = (doc: Doc, page: number, bitmap: number, width: number, height: number) => {
  const { m, handle } = doc
  // FPDF_FORMFILLINFO: the version, then callbacks, all left null (140 bytes on wasm32).
  withHeap(m, 256, (info) => {
    m.HEAPU8.fill(0, info, info + 256)
    m.HEAP32[info >> 2] = 1
    const form = m._FPDFDOC_InitFormFillEnvironment(handle, info)
    if (form === 0) return
    try {
      m._FORM_OnAfterLoadPage(page, form)
      m._FPDF_FFLDraw(form, bitmap, page, 0, 0, width, height, 0, 0x10)
      m._FORM_OnBeforeClosePage(page, form)
    } finally {
      m._FPDFDOC_ExitFormFillEnvironment(form)
    }
  })
}

/** The page drawn at `scale` pixels per point on white (annotations included), as a PNG. */
const renderPng = (
  doc: Doc,
  page: number,
  geometry: Geometry,
  scale: number,
): Effect.Effect<Uint8Array, PdfiumRefused> =>
  Effect.suspend(() => {
    const width = Math.max(1, Math.round(geometry.width * scale))
    const height = Math.max(1, Math.round(geometry.height * scale))
    const rgba = drawPage(doc, page, width, height)
    return rgba === undefined
      ? Effect.fail(new PdfiumRefused({ reason: "PDFium ran out of memory for the page image" }))
      : Effect.promise(() => encodePng(rgba, width, height))
  })

/** The page's RGBA pixels, drawn at `width`×`height`; undefined when PDFium has no memory for the bitmap. */
const drawPage = (doc: Doc, page: number, width: number, height: number): Buffer | undefined => {
  const { m } = doc
  // Format 4: BGRA, the buffer allocated by PDFium.
  const bitmap = m._FPDFBitmap_CreateEx(width, height, 4, 0, 0)
  if (bitmap === 0) return undefined
  try {
    m._FPDFBitmap_FillRect(bitmap, 0, 0, width, height, 0xffffffff)
    // FPDF_ANNOT | FPDF_REVERSE_BYTE_ORDER: annotations drawn, bytes in RGBA order.
    m._FPDF_RenderPageBitmap(bitmap, page, 0, 0, width, height, 0, 0x01 | 0x10)
    drawFormFields(doc, page, bitmap, width, height)
    const buffer = m._FPDFBitmap_GetBuffer(bitmap)
    const stride = m._FPDFBitmap_GetStride(bitmap)
    const rgba = Buffer.allocUnsafe(width * height * 4)
    for (let row = 0; row < height; row++) {
      const from = buffer + row * stride
      rgba.set(m.HEAPU8.subarray(from, from + width * 4), row * width * 4)
    }
    return rgba
  } finally {
    m._FPDFBitmap_Destroy(bitmap)
  }
}

const encodePng = async (rgba: Buffer, width: number, height: number): Promise<Uint8Array> => {
  const { default: sharp } = await import("sharp")
  const png = await sharp(rgba, { raw: { width, height, channels: 4 } })
    .removeAlpha()
    .png()
    .toBuffer()
  return new Uint8Array(png.buffer, png.byteOffset, png.byteLength)
}

/**
 * The page's OCR text when it has (almost) no text layer but shows an image, else undefined; Left with the
 * reason OCR failed (the page then keeps what text it has).
 */
const ocrIfScanned = (doc: Doc, page: number, geometry: Geometry, content: PdfPageContent) =>
  Effect.gen(function* () {
    if (!showsScan(content)) return Either.right(undefined)
    const chars = content.chars
    const scale = scaleForSize(geometry.width, geometry.height, ocrResolution)
    const ocr = yield* renderPng(doc, page, geometry, scale).pipe(
      Effect.flatMap((png) => ocrPng(png, { scale })),
      // However drawing or reading the page went wrong, PDFium refusing it aside, the page keeps its text.
      Effect.sandbox,
      Effect.either,
    )
    if (Either.isRight(ocr))
      return Either.right(ocr.right.text.replace(/\s/g, "").length > chars ? ocr.right : undefined)
    const error = Cause.squash(ocr.left)
    if (error instanceof PdfiumRefused) return yield* Effect.fail(error)
    return Either.left(isParseFailure(error) ? error.reason : message(error))
  })

/** Page `n`: its text, layout, tables and blocks, OCR'd when it is a scan; undefined when PDFium cannot load it. */
const readPage = (doc: Doc, n: number, ocrPages: Array<number>, ocrFailures: Array<OcrFailure>) =>
  withPage(doc, n, (page) =>
    Effect.gen(function* () {
      const geometry = geometryOf(doc, page)
      const { runs, textObjects } = runsOfTextPage(doc, page, geometry)
      // A page of nothing but text objects draws no rules and shows no image: its objects are not walked.
      const textOnly = textObjects > 0 && doc.m._FPDFPage_CountObjects(page) === textObjects
      let content = yield* Effect.promise(() =>
        pdfPageContent(runs, () => (textOnly ? noGraphics : pageGraphics(doc, page, geometry))),
      )
      const ocr = yield* ocrIfScanned(doc, page, geometry, content)
      // The page keeps what text it has; the document fails only if no page has any (see `parse`).
      if (Either.isLeft(ocr)) ocrFailures.push({ page: n, reason: ocr.left })
      else if (ocr.right !== undefined) {
        content = { ...content, text: ocr.right.text, layout: [...ocr.right.words], tables: [], blocks: [] }
        ocrPages.push(n)
      }
      const size = { width: round(geometry.width), height: round(geometry.height) }
      const { text, layout, tables, blocks } = content
      return { number: n, text, ...size, unit: "pt", layout, tables, blocks } satisfies ParsedPage
    }),
  )

interface OcrFailure {
  readonly page: number
  readonly reason: string
}

const parse = (input: ParseInput): Effect.Effect<ParseOutput, PdfiumError> =>
  withDocument(input, (doc) =>
    Effect.gen(function* () {
      const count = doc.m._FPDF_GetPageCount(doc.handle)
      if (count <= 0) return yield* new PdfiumRefused({ reason: "PDFium found no pages" })
      if (count > input.limits.maxPages)
        return yield* new ParseFailure({
          reason: `the PDF has ${count} pages; the limit is ${input.limits.maxPages}`,
        })
      const metadata = documentMetadata(doc)
      const pages: Array<ParsedPage> = []
      const ocrPages: Array<number> = []
      const unreadable: Array<number> = []
      const ocrFailures: Array<OcrFailure> = []
      for (let n = 1; n <= count; n++) {
        const parsed = yield* readPage(doc, n, ocrPages, ocrFailures)
        if (parsed !== undefined) pages.push(parsed)
        else {
          // A damaged page (truncated file, broken object): keep the others.
          unreadable.push(n)
          pages.push({ number: n, text: "", width: null, height: null, unit: null, layout: [] })
        }
      }
      if (unreadable.length === count)
        return yield* new PdfiumRefused({ reason: "PDFium could not read any page" })
      return yield* pdfOutput({
        engine: "pdfium",
        pages,
        count,
        metadata,
        ocrPages,
        ocrFailures,
        unreadable,
      })
    }),
  )

const renderPage = (input: ParseInput, pageNumber: number): Effect.Effect<Uint8Array, PdfiumError> =>
  withDocument(input, (doc) =>
    Effect.gen(function* () {
      const count = doc.m._FPDF_GetPageCount(doc.handle)
      if (count <= 0) return yield* new PdfiumRefused({ reason: "PDFium found no pages" })
      if (!Number.isInteger(pageNumber) || pageNumber < 1 || pageNumber > count)
        return yield* new ParseFailure({
          reason: `page ${pageNumber} does not exist: the PDF has ${count} pages`,
        })
      const png = yield* withPage(doc, pageNumber, (page) => {
        const geometry = geometryOf(doc, page)
        return renderPng(doc, page, geometry, scaleForSize(geometry.width, geometry.height, renderResolution))
      })
      if (png === undefined)
        return yield* new PdfiumRefused({ reason: `PDFium could not read page ${pageNumber}` })
      return png
    }),
  )

/** The PDFium engine: the default one (PDF_ENGINE=pdfium). */
export const pdfiumEngine = { parse, renderPage }
