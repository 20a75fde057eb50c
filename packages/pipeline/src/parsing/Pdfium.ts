import { readFileSync } from "node:fs"
import { createRequire } from "node:module"
import { type ParsedPage, ParseFailure, type ParseInput, type ParseOutput } from "./Backend.ts"
import { ocrPng } from "./Ocr.ts"
import {
  hasPdfHeader,
  infoText,
  message,
  minDrawnPaths,
  minTextChars,
  ocrResolution,
  readable,
  renderResolution,
  round,
  scaleForSize,
  type TextRun,
  textOfRuns,
} from "./PdfText.ts"

/**
 * The PDFium engine of the PDF backend: Google's PDF library (Chrome's) compiled to WebAssembly, through
 * @hyzyla/pdfium's low-level module (the wasm ships in the package; nothing is fetched). Its high-level API
 * has no character boxes, so this file calls PDFium's C API directly: characters with their origins and
 * advance boxes become runs of text (as pdf.js's text items), and the line rebuild is the one pdf.js's text
 * goes through (PdfText.ts). Pages are drawn into a PDFium bitmap and encoded as PNG with sharp.
 *
 * Memory: the wasm heap is one linear memory per thread that never shrinks, so every document, page, text
 * page and bitmap is closed or freed in a `finally`, and a document's bytes are freed after it is closed.
 *
 * A file PDFium cannot open (or that makes it fail) is a `PdfiumRefused`: the backend then reads it with
 * pdf.js. A password-protected file is a ParseFailure at once.
 */

/** The part of PDFium's C API used here (pointers are offsets into the wasm heap). */
interface PdfiumModule {
  _FPDF_InitLibraryWithConfig(config: object): void
  _FPDF_LoadMemDocument(data: number, size: number, password: number): number
  _FPDF_GetLastError(): number
  _FPDF_CloseDocument(doc: number): void
  _FPDF_GetPageCount(doc: number): number
  _FPDF_GetFileVersion(doc: number, version: number): number
  _FPDF_GetSecurityHandlerRevision(doc: number): number
  _FPDF_GetMetaText(doc: number, tag: number, buffer: number, length: number): number
  _FPDF_LoadPage(doc: number, index: number): number
  _FPDF_ClosePage(page: number): void
  _FPDF_GetPageWidthF(page: number): number
  _FPDF_GetPageHeightF(page: number): number
  _FPDFPage_GetRotation(page: number): number
  _FPDF_GetPageBoundingBox(page: number, rect: number): number
  _FPDFText_LoadPage(page: number): number
  _FPDFText_ClosePage(textPage: number): void
  _FPDFText_CountChars(textPage: number): number
  _FPDFText_GetUnicode(textPage: number, index: number): number
  _FPDFText_GetTextObject(textPage: number, index: number): number
  _FPDFTextObj_GetFont(textObject: number): number
  _FPDFText_GetFontSize(textPage: number, index: number): number
  _FPDFText_GetCharOrigin(textPage: number, index: number, x: number, y: number): number
  _FPDFText_GetLooseCharBox(textPage: number, index: number, rect: number): number
  _FPDFText_GetMatrix(textPage: number, index: number, matrix: number): number
  _FPDFPage_CountObjects(page: number): number
  _FPDFPage_GetObject(page: number, index: number): number
  _FPDFPageObj_GetType(object: number): number
  _FPDFImageObj_GetImagePixelSize(object: number, width: number, height: number): number
  _FPDFFormObj_CountObjects(object: number): number
  _FPDFFormObj_GetObject(object: number, index: number): number
  _FPDFBitmap_CreateEx(width: number, height: number, format: number, buffer: number, stride: number): number
  _FPDFBitmap_FillRect(
    bitmap: number,
    left: number,
    top: number,
    width: number,
    height: number,
    color: number,
  ): void
  _FPDF_RenderPageBitmap(
    bitmap: number,
    page: number,
    x: number,
    y: number,
    width: number,
    height: number,
    rotate: number,
    flags: number,
  ): void
  _FPDFDOC_InitFormFillEnvironment(doc: number, formInfo: number): number
  _FPDFDOC_ExitFormFillEnvironment(form: number): void
  _FORM_OnAfterLoadPage(page: number, form: number): void
  _FORM_OnBeforeClosePage(page: number, form: number): void
  _FPDF_FFLDraw(
    form: number,
    bitmap: number,
    page: number,
    x: number,
    y: number,
    width: number,
    height: number,
    rotate: number,
    flags: number,
  ): void
  _FPDFBitmap_GetBuffer(bitmap: number): number
  _FPDFBitmap_GetStride(bitmap: number): number
  _FPDFBitmap_Destroy(bitmap: number): void
  _malloc(size: number): number
  _free(pointer: number): void
  readonly HEAPU8: Uint8Array
  readonly HEAP32: Int32Array
  readonly HEAPU32: Uint32Array
  readonly HEAPF32: Float32Array
  readonly HEAPF64: Float64Array
}

/** PDFium could not open or read the file (or failed on it): the backend falls back to pdf.js. */
export class PdfiumRefused extends Error {
  override readonly name = "PdfiumRefused"
}

const require = createRequire(import.meta.url)

let loaded: Promise<PdfiumModule> | undefined

/** The module, instantiated once per thread from the wasm file in the package. */
const load = (): Promise<PdfiumModule> => {
  loaded ??= (async () => {
    const { PDFiumModule } = await import("@hyzyla/pdfium")
    const file = readFileSync(require.resolve("@hyzyla/pdfium/pdfium.wasm"))
    const wasmBinary = file.buffer.slice(file.byteOffset, file.byteOffset + file.byteLength) as ArrayBuffer
    const module = (await PDFiumModule({ wasmBinary } as never)) as unknown as PdfiumModule
    module._FPDF_InitLibraryWithConfig({
      version: 2,
      m_pIsolate: null,
      m_pUserFontPaths: null,
      m_v8EmbedderSlot: 0,
      m_pPlatform: null,
    })
    // The module's own entry points check their arguments in JavaScript on every call (an assertions build):
    // a page makes some 20,000 calls, so the wasm exports are called directly (about a quarter faster).
    const exports = (module as unknown as { wasmExports: Record<string, unknown> }).wasmExports
    const direct: Record<string, unknown> = Object.create(module)
    for (const [name, f] of Object.entries(exports)) if (typeof f === "function") direct[`_${name}`] = f
    return direct as unknown as PdfiumModule
  })()
  loaded.catch(() => {
    loaded = undefined
  })
  return loaded
}

/** Bytes of the wasm heap, for tests that check that documents give their memory back. */
export const pdfiumHeapBytes = async (): Promise<number> => (await load()).HEAPU8.byteLength

// FPDF_GetLastError codes.
const errFormat = 3
const errPassword = 4
const errSecurity = 5

/** The scratch area of a call: 64 bytes of the heap for the numbers PDFium writes back. */
interface Scratch {
  readonly at: number
  f64(i: number): number
  f32(i: number): number
  u32(i: number): number
}

const scratchOf = (m: PdfiumModule, at: number): Scratch => ({
  at,
  f64: (i) => m.HEAPF64[(at >> 3) + i]!,
  f32: (i) => m.HEAPF32[(at >> 2) + i]!,
  u32: (i) => m.HEAPU32[(at >> 2) + i]!,
})

/** Runs `use` with `size` bytes of the wasm heap, freed afterwards. */
const withHeap = <A>(m: PdfiumModule, size: number, use: (at: number) => A): A => {
  const at = m._malloc(size)
  if (at === 0) throw new PdfiumRefused("PDFium ran out of memory")
  try {
    return use(at)
  } finally {
    m._free(at)
  }
}

/** `withHeap` for asynchronous work: the bytes are freed once `use` has settled. */
const withHeapAsync = async <A>(
  m: PdfiumModule,
  size: number,
  use: (at: number) => Promise<A>,
): Promise<A> => {
  const at = m._malloc(size)
  if (at === 0) throw new PdfiumRefused("PDFium ran out of memory")
  try {
    return await use(at)
  } finally {
    m._free(at)
  }
}

interface Doc {
  readonly m: PdfiumModule
  readonly handle: number
  readonly scratch: Scratch
}

/**
 * Opens the document and runs `use` with it; the document, its bytes and the scratch area are freed whatever
 * happens. Any error of PDFium itself (not a ParseFailure) becomes PdfiumRefused.
 */
const withDocument = async <A>(input: ParseInput, use: (doc: Doc) => Promise<A>): Promise<A> => {
  const bytes = input.bytes
  if (bytes.length === 0) throw new ParseFailure({ reason: "not a valid PDF file: the file is empty" })
  if (!hasPdfHeader(bytes))
    throw new ParseFailure({ reason: "not a valid PDF file: there is no %PDF header" })
  const m = await load()
  try {
    return await withHeapAsync(m, bytes.length, async (data) => {
      m.HEAPU8.set(bytes, data)
      const handle = m._FPDF_LoadMemDocument(data, bytes.length, 0)
      if (handle === 0) {
        const code = m._FPDF_GetLastError()
        if (code === errPassword) throw new ParseFailure({ reason: "the PDF is encrypted with a password" })
        throw new PdfiumRefused(
          code === errFormat
            ? "PDFium: not in PDF format or damaged"
            : code === errSecurity
              ? "PDFium: unsupported security handler"
              : `PDFium could not open the file (error ${code})`,
        )
      }
      try {
        return await withHeapAsync(m, 64, (at) => use({ m, handle, scratch: scratchOf(m, at) }))
      } finally {
        m._FPDF_CloseDocument(handle)
      }
    })
  } catch (e) {
    if (e instanceof ParseFailure || e instanceof PdfiumRefused) throw e
    // A trap inside the wasm (out-of-bounds access, abort) may leave its heap inconsistent: start afresh.
    loaded = undefined
    throw new PdfiumRefused(`PDFium failed: ${message(e)}`)
  }
}

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

interface Geometry {
  /** In points, rotation applied. */
  readonly width: number
  readonly height: number
  /** PDF user space → top-left points (rotation applied), as pdf.js's viewport transform at scale 1. */
  readonly vt: readonly [number, number, number, number, number, number]
}

const geometryOf = (doc: Doc, page: number): Geometry => {
  const { m, scratch } = doc
  const width = m._FPDF_GetPageWidthF(page)
  const height = m._FPDF_GetPageHeightF(page)
  // The visible box (crop box within the media box): left, top, right, bottom.
  const box = m._FPDF_GetPageBoundingBox(page, scratch.at)
    ? [scratch.f32(0), scratch.f32(3), scratch.f32(2), scratch.f32(1)]
    : [0, 0, width, height]
  const [x1, y1, x2, y2] = [
    Math.min(box[0]!, box[2]!),
    Math.min(box[1]!, box[3]!),
    Math.max(box[0]!, box[2]!),
    Math.max(box[1]!, box[3]!),
  ]
  const rotation = (((m._FPDFPage_GetRotation(page) % 4) + 4) % 4) * 90
  const [a, b, c, d] =
    rotation === 90
      ? [0, 1, 1, 0]
      : rotation === 180
        ? [-1, 0, 0, 1]
        : rotation === 270
          ? [0, -1, -1, 0]
          : [1, 0, 0, -1]
  const cx = (x1 + x2) / 2
  const cy = (y1 + y2) / 2
  const w = a === 0 ? y2 - y1 : x2 - x1
  const h = a === 0 ? x2 - x1 : y2 - y1
  return { width, height, vt: [a, b, c, d, w / 2 - a * cx - c * cy, h / 2 - b * cx - d * cy] }
}

interface OpenRun {
  str: string
  hasEOL: boolean
  x0: number
  y0: number
  ux: number
  uy: number
  vx: number
  vy: number
  end: number
  /** The end of the last character that is not a space. */
  inkEnd: number
  across: number
  size: number
  font: number
}

/** A run ends at its last visible character: a trailing space is not part of it (as in pdf.js's items). */
const finished = (run: OpenRun): TextRun => ({
  str: run.str.endsWith(" ") ? run.str.slice(0, -1) : run.str,
  hasEOL: run.hasEOL,
  x0: run.x0,
  y0: run.y0,
  ux: run.ux,
  uy: run.uy,
  vx: run.vx,
  vy: run.vy,
  vertical: false,
  length: Math.max(0, run.inkEnd - (run.x0 * run.ux + run.y0 * run.uy)),
  size: run.size,
})

const space: Omit<TextRun, "hasEOL"> = {
  str: " ",
  x0: 0,
  y0: 0,
  ux: 1,
  uy: 0,
  vx: 0,
  vy: -1,
  vertical: false,
  length: 0,
  size: 0,
}

/**
 * The page's characters as runs, as pdf.js groups text: characters that follow each other on one baseline in
 * one direction and size make a run; a gap of 0.1–0.6 em inside a run becomes a space; a larger gap, a jump
 * back or a change of line starts a new run. Spaces in the file separate runs, or become one space inside a
 * run. The spaces and line ends PDFium adds itself are left out (see below).
 */
function* runsOfPage(doc: Doc, textPage: number, vt: Geometry["vt"]): Generator<TextRun> {
  const { m, scratch } = doc
  const [A, B, C, D, E, F] = vt
  const count = m._FPDFText_CountChars(textPage)
  let run: OpenRun | undefined
  let gapSpace = false
  // The text object of the previous character: its characters share the matrix and the font size.
  let object = 0
  let ma = 1
  let mb = 0
  let mc = 0
  let md = 1
  let fontSize = 0
  let font = 0
  for (let i = 0; i < count; i++) {
    const code = m._FPDFText_GetUnicode(textPage, i)
    // Characters PDFium made up (spaces, line ends) belong to no text object.
    const charObject = m._FPDFText_GetTextObject(textPage, i)
    if (charObject === 0 || code === 13 || code === 10) {
      // PDFium's own spaces and line ends come from its layout analysis, which breaks lines where pdf.js
      // does not (a signature block's columns) and spaces out letter-spaced words: runs and lines are
      // decided from the positions alone, as pdf.js does.
      continue
    }
    // PDFium marks a hyphen at a line end as U+0002; other control characters carry no text.
    // Tabs, no-break and other Unicode spaces are plain spaces, as in pdf.js's text.
    const ch =
      code === 2
        ? "-"
        : code === 9 ||
            code === 0xa0 ||
            (code >= 0x2000 && code <= 0x200a) ||
            code === 0x202f ||
            code === 0x3000
          ? " "
          : code < 32 || code > 0x10ffff
            ? ""
            : String.fromCodePoint(code)
    if (ch === "" || (code >= 0xd800 && code <= 0xdfff)) continue
    if (charObject !== object) {
      object = charObject
      m._FPDFText_GetMatrix(textPage, i, scratch.at)
      ma = scratch.f32(0)
      mb = scratch.f32(1)
      mc = scratch.f32(2)
      md = scratch.f32(3)
      fontSize = m._FPDFText_GetFontSize(textPage, i)
      font = m._FPDFTextObj_GetFont(object)
    }
    m._FPDFText_GetCharOrigin(textPage, i, scratch.at, scratch.at + 8)
    const ox = scratch.f64(0)
    const oy = scratch.f64(1)
    // Loose box (left, top, right, bottom): the advance from the origin along the text direction.
    m._FPDFText_GetLooseCharBox(textPage, i, scratch.at)
    const l = scratch.f32(0)
    const t = scratch.f32(1)
    const r = scratch.f32(2)
    const b = scratch.f32(3)
    const sa = Math.hypot(ma, mb) || 1
    const pa = ma / sa
    const pb = mb / sa
    const start = ox * pa + oy * pb
    const advance = Math.max(
      0,
      Math.max(l * pa + t * pb, r * pa + t * pb, l * pa + b * pb, r * pa + b * pb) - start,
    )
    // Into top-left points.
    const x0 = A * ox + C * oy + E
    const y0 = B * ox + D * oy + F
    const ux = A * pa + C * pb
    const uy = B * pa + D * pb
    const sv = Math.hypot(mc, md)
    const vx = sv > 0 ? (A * mc + C * md) / sv : -uy
    const vy = sv > 0 ? (B * mc + D * md) / sv : ux
    const size = Math.abs(fontSize * (sv || 1)) || Math.abs(t - b) || 1
    const along = x0 * ux + y0 * uy
    const across = -(x0 * vx + y0 * vy)
    if (run !== undefined) {
      const big = Math.max(size, run.size)
      const gap = along - run.end
      const joins =
        font === run.font &&
        ux * run.ux + uy * run.uy > 0.99 &&
        Math.abs(across - run.across) < 0.2 * big &&
        Math.abs(size - run.size) < 0.2 * big &&
        gap > -0.2 * big &&
        gap <= 0.6 * big
      if (joins) {
        // One space between words, however many the file draws (as pdf.js's text).
        if ((gapSpace || gap > 0.102 * big || ch === " ") && !run.str.endsWith(" ")) run.str += " "
        run.end = Math.max(run.end, along + advance)
        if (ch !== " ") {
          run.str += ch
          run.inkEnd = run.end
        }
        gapSpace = false
        continue
      }
      yield finished(run)
      // The trailing space left out of the run still separates it from the next.
      gapSpace = gapSpace || run.str.endsWith(" ")
      run = undefined
    }
    if (ch === " ") {
      // Spaces do not start a run: they separate it from the previous one.
      gapSpace = true
      continue
    }
    if (gapSpace) yield { ...space, hasEOL: false }
    gapSpace = false
    run = {
      str: ch,
      hasEOL: false,
      x0,
      y0,
      ux,
      uy,
      vx,
      vy,
      end: along + advance,
      inkEnd: along + advance,
      across,
      size,
      font,
    }
  }
  if (run !== undefined) yield finished(run)
}

/** Visits the page's objects (inside form XObjects too) until `visit` answers true; a bounded walk. */
const someObject = (m: PdfiumModule, page: number, visit: (type: number, object: number) => boolean) => {
  let budget = 100_000
  const walk = (count: number, get: (i: number) => number, depth: number): boolean => {
    for (let i = 0; i < count && budget-- > 0; i++) {
      const object = get(i)
      if (object === 0) continue
      const type = m._FPDFPageObj_GetType(object)
      if (visit(type, object)) return true
      if (type === 5 && depth < 16) {
        const inner = m._FPDFFormObj_CountObjects(object)
        if (walk(inner, (j) => m._FPDFFormObj_GetObject(object, j), depth + 1)) return true
      }
    }
    return false
  }
  return walk(m._FPDFPage_CountObjects(page), (i) => m._FPDFPage_GetObject(page, i), 0)
}

/**
 * Whether a page without text shows something OCR could read: a real image (not a stretched 1-pixel rule or a
 * small icon), or many paths (text drawn as outlines).
 */
const looksScanned = (doc: Doc, page: number): boolean => {
  const { m, scratch } = doc
  let paths = 0
  return someObject(m, page, (type, object) => {
    if (type === 3) {
      if (!m._FPDFImageObj_GetImagePixelSize(object, scratch.at, scratch.at + 4)) return false
      return readable(scratch.u32(0), scratch.u32(1))
    }
    return type === 2 && ++paths >= minDrawnPaths
  })
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
const renderPng = async (doc: Doc, page: number, geometry: Geometry, scale: number): Promise<Uint8Array> => {
  const { m } = doc
  const width = Math.max(1, Math.round(geometry.width * scale))
  const height = Math.max(1, Math.round(geometry.height * scale))
  // Format 4: BGRA, the buffer allocated by PDFium.
  const bitmap = m._FPDFBitmap_CreateEx(width, height, 4, 0, 0)
  if (bitmap === 0) throw new PdfiumRefused("PDFium ran out of memory for the page image")
  let rgba: Buffer
  try {
    m._FPDFBitmap_FillRect(bitmap, 0, 0, width, height, 0xffffffff)
    // FPDF_ANNOT | FPDF_REVERSE_BYTE_ORDER: annotations drawn, bytes in RGBA order.
    m._FPDF_RenderPageBitmap(bitmap, page, 0, 0, width, height, 0, 0x01 | 0x10)
    drawFormFields(doc, page, bitmap, width, height)
    const buffer = m._FPDFBitmap_GetBuffer(bitmap)
    const stride = m._FPDFBitmap_GetStride(bitmap)
    rgba = Buffer.allocUnsafe(width * height * 4)
    for (let row = 0; row < height; row++) {
      const from = buffer + row * stride
      rgba.set(m.HEAPU8.subarray(from, from + width * 4), row * width * 4)
    }
  } finally {
    m._FPDFBitmap_Destroy(bitmap)
  }
  const { default: sharp } = await import("sharp")
  const png = await sharp(rgba, { raw: { width, height, channels: 4 } })
    .removeAlpha()
    .png()
    .toBuffer()
  return new Uint8Array(png.buffer, png.byteOffset, png.byteLength)
}

/** Loads page `n` (1-based), runs `use`, closes it. Undefined when PDFium cannot load the page. */
const withPage = async <A>(
  doc: Doc,
  n: number,
  use: (page: number) => Promise<A>,
): Promise<A | undefined> => {
  const page = doc.m._FPDF_LoadPage(doc.handle, n - 1)
  if (page === 0) return undefined
  try {
    return await use(page)
  } finally {
    doc.m._FPDF_ClosePage(page)
  }
}

const textOfPage = (doc: Doc, page: number, geometry: Geometry) => {
  const textPage = doc.m._FPDFText_LoadPage(page)
  if (textPage === 0) return { text: "", layout: [], chars: 0 }
  try {
    return textOfRuns(runsOfPage(doc, textPage, geometry.vt))
  } finally {
    doc.m._FPDFText_ClosePage(textPage)
  }
}

/** The page's OCR text when it has (almost) no text layer but shows an image, else undefined. */
const ocrIfScanned = async (doc: Doc, page: number, geometry: Geometry, chars: number) => {
  if (chars >= minTextChars || !looksScanned(doc, page)) return undefined
  const scale = scaleForSize(geometry.width, geometry.height, ocrResolution)
  const ocr = await ocrPng(await renderPng(doc, page, geometry, scale), { scale })
  return ocr.text.replace(/\s/g, "").length > chars ? ocr : undefined
}

const parse = (input: ParseInput): Promise<ParseOutput> =>
  withDocument(input, async (doc) => {
    const count = doc.m._FPDF_GetPageCount(doc.handle)
    if (count <= 0) throw new PdfiumRefused("PDFium found no pages")
    if (count > input.limits.maxPages)
      throw new ParseFailure({ reason: `the PDF has ${count} pages; the limit is ${input.limits.maxPages}` })
    const metadata = documentMetadata(doc)
    const pages: Array<ParsedPage> = []
    const ocrPages: Array<number> = []
    const unreadable: Array<number> = []
    const ocrFailures: Array<{ readonly page: number; readonly reason: string }> = []
    for (let n = 1; n <= count; n++) {
      const parsed = await withPage(doc, n, async (page) => {
        const geometry = geometryOf(doc, page)
        let { text, layout, chars } = textOfPage(doc, page, geometry)
        try {
          const ocr = await ocrIfScanned(doc, page, geometry, chars)
          if (ocr !== undefined) {
            text = ocr.text
            layout = [...ocr.words]
            ocrPages.push(n)
          }
        } catch (e) {
          if (e instanceof PdfiumRefused) throw e
          // The page keeps what text it has; the document fails only if no page has any (below).
          ocrFailures.push({ page: n, reason: e instanceof ParseFailure ? e.reason : message(e) })
        }
        const size = { width: round(geometry.width), height: round(geometry.height) }
        return { number: n, text, ...size, unit: "pt", layout } satisfies ParsedPage
      })
      if (parsed !== undefined) pages.push(parsed)
      else {
        // A damaged page (truncated file, broken object): keep the others.
        unreadable.push(n)
        pages.push({ number: n, text: "", width: null, height: null, unit: null, layout: [] })
      }
    }
    if (unreadable.length === count) throw new PdfiumRefused("PDFium could not read any page")
    if (ocrFailures.length > 0 && pages.every((p) => p.text === ""))
      throw new ParseFailure({
        reason: `the PDF has no text layer and OCR failed: ${ocrFailures[0]!.reason}`,
      })
    const first = pages.find((p) => p.width !== null)
    return {
      parser: ocrPages.length > 0 ? "pdfium+tesseract.js" : "pdfium",
      pages,
      metadata: {
        ...metadata,
        page_count: count,
        ...(first ? { page_width: first.width, page_height: first.height } : {}),
        ocr_pages: ocrPages,
        ...(unreadable.length > 0 ? { unreadable_pages: unreadable } : {}),
        ...(ocrFailures.length > 0 ? { ocr_failures: ocrFailures } : {}),
      },
    }
  })

const renderPage = (input: ParseInput, pageNumber: number): Promise<Uint8Array> =>
  withDocument(input, async (doc) => {
    const count = doc.m._FPDF_GetPageCount(doc.handle)
    if (count <= 0) throw new PdfiumRefused("PDFium found no pages")
    if (!Number.isInteger(pageNumber) || pageNumber < 1 || pageNumber > count)
      throw new ParseFailure({ reason: `page ${pageNumber} does not exist: the PDF has ${count} pages` })
    const png = await withPage(doc, pageNumber, (page) => {
      const geometry = geometryOf(doc, page)
      return renderPng(doc, page, geometry, scaleForSize(geometry.width, geometry.height, renderResolution))
    })
    if (png === undefined) throw new PdfiumRefused(`PDFium could not read page ${pageNumber}`)
    return png
  })

/** The PDFium engine: the default one (PDF_ENGINE=pdfium). */
export const pdfiumEngine = { parse, renderPage }
