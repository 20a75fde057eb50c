import { createRequire } from "node:module"
import { dirname } from "node:path"
import type { PDFDocumentLoadingTask, PDFDocumentProxy, PDFPageProxy } from "pdfjs-dist/legacy/build/pdf.mjs"
import {
  type Backend,
  type LayoutItem,
  type ParsedPage,
  ParseFailure,
  type ParseInput,
  type ParseOutput,
  pageText,
} from "./Backend.ts"
import { ocrPng } from "./Ocr.ts"

/**
 * PDF with pdfjs-dist (legacy build, in-thread "fake" worker, no eval, no network, no system fonts): text
 * items with their boxes in points (top-left origin, page rotation applied), page text rebuilt line by line.
 * Pages without a text layer (scans) are rendered with @napi-rs/canvas and OCR'd.
 */

type Pdfjs = typeof import("pdfjs-dist/legacy/build/pdf.mjs")
type Canvas = typeof import("@napi-rs/canvas")

const require = createRequire(import.meta.url)
const packageDir = `${dirname(require.resolve("pdfjs-dist/package.json"))}/`

/** Pages with fewer visible characters than this have no real text layer: OCR them when they show an image. */
const minTextChars = 25
/** At least this many paths and no text: text drawn as outlines, worth OCR. */
const minDrawnPaths = 200
/** Smallest image (in its own pixels) worth OCR on a page without text. */
const minImagePixels = 40_000
interface Resolution {
  readonly dpi: number
  readonly maxSide?: number
  readonly maxPixels?: number
}
/** OCR images: 300 dpi, at most the pixels of a Letter page at 300 dpi (larger pages get less). */
const ocrResolution: Resolution = { dpi: 300, maxPixels: 8_500_000 }
/** `renderPage` images: 150 dpi, at most 2000 pixels on the longer side. */
const renderResolution: Resolution = { dpi: 150, maxSide: 2000 }
/** pdfjs skips (does not decode) images with more pixels than this when rendering. */
const maxImagePixels = 150_000_000

/** A variable, not a literal: the worker bundle has no type declarations. */
const workerModule = "pdfjs-dist/legacy/build/pdf.worker.mjs"

let loaded: Promise<{ readonly pdfjs: Pdfjs; readonly canvas: Canvas }> | undefined

/**
 * Loaded on first use, so importing the registry does not load pdfjs (nor its polyfills) into a thread that
 * never parses a PDF. The legacy build's core-js polyfills replace `Array.prototype.push` (V8 on Node 20 fails
 * a corner-case conformance check) and `JSON.parse/stringify` process-wide with much slower versions; pdfjs
 * does not need them, so the native ones are put back (text extraction is ~15% faster).
 */
const load = () => {
  loaded ??= (async () => {
    const push = Object.getOwnPropertyDescriptor(Array.prototype, "push")!
    const { parse, stringify } = JSON
    // Sets `globalThis.pdfjsWorker`: the "fake" worker then runs in this thread without a module lookup.
    await import(workerModule)
    const pdfjs = await import("pdfjs-dist/legacy/build/pdf.mjs")
    Object.defineProperty(Array.prototype, "push", push)
    Object.assign(JSON, { parse, stringify })
    return { pdfjs, canvas: await import("@napi-rs/canvas") }
  })()
  return loaded
}

const message = (e: unknown): string => (e instanceof Error ? e.message : String(e)).replace(/\.$/u, "")

const sentence = (s: string) => s.charAt(0).toLowerCase() + s.slice(1)

/** Any error of pdfjs while opening or reading becomes a reason a user can act on. */
const failure = (e: unknown): ParseFailure => {
  if (e instanceof ParseFailure) return e
  const name = e instanceof Error ? e.name : ""
  if (name === "PasswordException") return new ParseFailure("the PDF is encrypted with a password")
  if (name === "InvalidPDFException") return new ParseFailure(`not a valid PDF file: ${sentence(message(e))}`)
  return new ParseFailure(`the PDF could not be read: ${sentence(message(e))}`)
}

/** The header may follow some junk, but must come within the first 1024 bytes (as readers accept it). */
const hasPdfHeader = (bytes: Uint8Array): boolean => {
  const end = Math.min(bytes.length - 4, 1024)
  for (let i = 0; i < end; i++) {
    if (bytes[i] === 0x25 && bytes[i + 1] === 0x50 && bytes[i + 2] === 0x44 && bytes[i + 3] === 0x46)
      return true
  }
  return false
}

interface Opened {
  readonly pdfjs: Pdfjs
  readonly canvas: Canvas
  readonly task: PDFDocumentLoadingTask
  readonly doc: PDFDocumentProxy
  /** The file had lost its trailer (a truncated download?): it was read with one rebuilt from its catalog. */
  readonly repaired: boolean
}

const openBytes = async (pdfjs: Pdfjs, bytes: Uint8Array) => {
  const task = pdfjs.getDocument({
    // A copy: pdfjs refuses Node Buffers and may take over (detach) the buffer it is given.
    data: new Uint8Array(bytes),
    isEvalSupported: false,
    useSystemFonts: false,
    disableFontFace: true,
    standardFontDataUrl: `${packageDir}standard_fonts/`,
    cMapUrl: `${packageDir}cmaps/`,
    cMapPacked: true,
    wasmUrl: `${packageDir}wasm/`,
    iccUrl: `${packageDir}iccs/`,
    maxImageSize: maxImagePixels,
    verbosity: pdfjs.VerbosityLevel.ERRORS,
  })
  try {
    return { task, doc: await task.promise }
  } catch (e) {
    await task.destroy().catch(() => {})
    throw e
  }
}

/**
 * A truncated file has lost its trailer, and pdf.js (unlike poppler) does not look for the catalog without
 * one. When the catalog object is still there (uncompressed), a trailer naming it is appended: pdf.js then
 * rebuilds the cross-reference table from the objects it finds.
 */
const withRebuiltTrailer = (bytes: Uint8Array): Uint8Array | undefined => {
  const source = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("latin1")
  for (let at = source.indexOf("/Catalog"); at >= 0; at = source.indexOf("/Catalog", at + 1)) {
    const before = source.slice(Math.max(0, at - 4096), at)
    const heads = [...before.matchAll(/(\d+)\s+(\d+)\s+obj\b/g)]
    const head = heads[heads.length - 1]
    if (head === undefined || before.slice(head.index).includes("endobj")) continue
    const trailer = `\ntrailer\n<< /Root ${head[1]} ${head[2]} R >>\n%%EOF\n`
    return Buffer.concat([bytes, Buffer.from(trailer, "latin1")])
  }
  return undefined
}

const open = async (input: ParseInput): Promise<Opened> => {
  if (input.bytes.length === 0) throw new ParseFailure("not a valid PDF file: the file is empty")
  if (!hasPdfHeader(input.bytes)) throw new ParseFailure("not a valid PDF file: there is no %PDF header")
  const { pdfjs, canvas } = await load()
  try {
    return { pdfjs, canvas, ...(await openBytes(pdfjs, input.bytes)), repaired: false }
  } catch (e) {
    const repaired =
      (e as Error | undefined)?.name === "InvalidPDFException" && withRebuiltTrailer(input.bytes)
    if (!repaired) throw failure(e)
    const reopened = await openBytes(pdfjs, repaired).catch(() => undefined)
    if (reopened === undefined) throw failure(e)
    return { pdfjs, canvas, ...reopened, repaired: true }
  }
}

const round = (n: number): number => Math.round(n * 100) / 100

interface PageText {
  readonly text: string
  readonly layout: Array<LayoutItem>
  /** Characters of visible text, for "does this page have a text layer". */
  readonly chars: number
}

/**
 * Rebuilds a page's text from pdfjs text items, in content order (which is reading order for nearly every
 * producer): items on one baseline make a line, joined with a space where pdfjs found a gap it did not fill;
 * a new line starts at pdfjs's end-of-line marks, when the baseline moves or the text jumps back; a blank
 * line separates blocks (a clearly larger step between lines, or a jump up to a new column).
 * `vt` is the viewport transform (PDF user space → top-left points, rotation included).
 */
const textOfItems = (items: ReadonlyArray<object>, vt: ReadonlyArray<number>): PageText => {
  const [a = 1, b = 0, c = 0, d = -1, e = 0, f = 0] = vt
  const lines: Array<string> = []
  const layout: Array<LayoutItem> = []
  let line = ""
  let chars = 0
  let space = false
  let eol = false
  // The previous text item: direction of advance, position along and across it, end, size, text.
  let pdx = 0
  let pdy = 0
  let pAlong = 0
  let pEnd = 0
  let pAcross = 0
  let pSize = 0
  let pStr = ""
  let open = false
  // Where the current line started across the text direction, and the last step between two lines.
  let lineAcross = 0
  let pitch = 0
  for (const item of items) {
    const it = item as { str?: string; transform: Array<number>; width: number; height: number; dir: string }
    const str = it.str
    if (str === undefined) continue
    const hasEOL = (item as { hasEOL?: boolean }).hasEOL === true
    if (str.trim() === "") {
      // pdfjs's own spaces carry no useful position (the start of the previous item).
      if (str.length > 0 && open) space = true
      if (hasEOL) eol = true
      continue
    }
    const t = it.transform
    const t0 = t[0]!
    const t1 = t[1]!
    const t2 = t[2]!
    const t3 = t[3]!
    const m0 = a * t0 + c * t1
    const m1 = b * t0 + d * t1
    const m2 = a * t2 + c * t3
    const m3 = b * t2 + d * t3
    const x0 = a * t[4]! + c * t[5]! + e
    const y0 = b * t[4]! + d * t[5]! + f
    const vertical = it.dir === "ttb"
    // Unit vectors in top-left space: `u` along the text's x axis, `v` towards its top.
    const su = Math.hypot(m0, m1) || 1
    const sv = Math.hypot(m2, m3) || 1
    const ux = m0 / su
    const uy = m1 / su
    const vx = m2 / sv
    const vy = m3 / sv
    // Advance direction, its length and the size across it (font size for horizontal text).
    const dx = vertical ? -vx : ux
    const dy = vertical ? -vy : uy
    const length = vertical ? it.height : it.width
    const size = (vertical ? it.width : it.height) || sv
    let x: number
    let y: number
    let w: number
    let h: number
    if (ux === 1 && uy === 0 && vx === 0 && vy === -1) {
      x = x0
      y = y0 - size
      w = length
      h = size
    } else {
      // Bounding box of the four corners (rotated or skewed text; vertical text is centred on its origin).
      const ox = vertical ? x0 - (ux * size) / 2 : x0
      const oy = vertical ? y0 - (uy * size) / 2 : y0
      const ax = dx * length
      const ay = dy * length
      const bx = vertical ? ux * size : vx * size
      const by = vertical ? uy * size : vy * size
      x = Math.min(ox, ox + ax, ox + bx, ox + ax + bx)
      y = Math.min(oy, oy + ay, oy + by, oy + ay + by)
      w = Math.max(ox, ox + ax, ox + bx, ox + ax + bx) - x
      h = Math.max(oy, oy + ay, oy + by, oy + ay + by) - y
    }
    const along = x0 * dx + y0 * dy
    // Across the line, growing downwards the page for horizontal text.
    const across = vertical ? x0 * ux + y0 * uy : -(x0 * vx + y0 * vy)
    if (open) {
      const big = Math.max(size, pSize)
      // Text drawn twice a hair apart to look bold: keep one copy.
      if (str === pStr && Math.abs(along - pAlong) < 0.15 * big && Math.abs(across - pAcross) < 0.15 * big) {
        eol = eol || hasEOL
        continue
      }
      const gap = along - pEnd
      const newLine =
        eol || dx * pdx + dy * pdy < 0.99 || Math.abs(across - pAcross) > 0.5 * big || gap < -big
      if (newLine) {
        lines.push(line)
        const step = across - lineAcross
        const block =
          step < -big || (step > 1.5 * big && (pitch > 0 ? step > 1.35 * pitch : step > 2.4 * big))
        if (block) lines.push("")
        // The usual step between lines of a block: a block's own gap does not count.
        if (step > 0 && !block) pitch = step
        lineAcross = across
        line = str
      } else {
        if ((space || gap > 0.15 * big) && !line.endsWith(" ") && !str.startsWith(" ")) line += " "
        line += str
      }
    } else {
      open = true
      lineAcross = across
      line = str
    }
    space = false
    eol = hasEOL
    pdx = dx
    pdy = dy
    pAlong = along
    pEnd = along + length
    pAcross = across
    pSize = size
    pStr = str
    chars += str.length
    layout.push({ text: str, x: round(x), y: round(y), width: round(w), height: round(h) })
  }
  if (open) lines.push(line)
  return { text: pageText(lines), layout, chars }
}

/**
 * Whether a page without text shows something OCR could read: a real image (not a stretched 1-pixel rule or
 * a small icon; pdfjs inlines those as small inline images anyway), or many paths (text drawn as outlines).
 */
const looksScanned = async (pdfjs: Pdfjs, page: PDFPageProxy): Promise<boolean> => {
  const { fnArray, argsArray } = await page.getOperatorList()
  const { OPS } = pdfjs
  let paths = 0
  for (let i = 0; i < fnArray.length; i++) {
    const op = fnArray[i]
    const args = argsArray[i] as Array<unknown> | null
    if (op === OPS.paintImageXObject) {
      if (readable(Number(args?.[1]), Number(args?.[2]))) return true
    } else if (op === OPS.paintImageMaskXObject) {
      const mask = args?.[0] as { width?: unknown; height?: unknown } | undefined
      if (readable(Number(mask?.width), Number(mask?.height))) return true
    } else if (op === OPS.constructPath && ++paths >= minDrawnPaths) return true
  }
  return false
}

/** An image large enough to hold a few words. */
const readable = (width: number, height: number): boolean =>
  width >= 16 && height >= 16 && width * height >= minImagePixels

/** Pixels per point for a resolution, reduced to keep within its largest side and pixel count. */
const scaleFor = (
  page: PDFPageProxy,
  { dpi, maxSide = Infinity, maxPixels = Infinity }: Resolution,
): number => {
  const { width, height } = page.getViewport({ scale: 1 })
  const w = Math.max(width, 1)
  const h = Math.max(height, 1)
  return Math.min(dpi / 72, maxSide / Math.max(w, h), Math.sqrt(maxPixels / (w * h)))
}

const renderPng = async (canvasLib: Canvas, page: PDFPageProxy, scale: number): Promise<Uint8Array> => {
  const viewport = page.getViewport({ scale })
  const canvas = canvasLib.createCanvas(
    Math.max(1, Math.round(viewport.width)),
    Math.max(1, Math.round(viewport.height)),
  )
  await page.render({ canvas: canvas as never, viewport }).promise
  const png = await canvas.encode("png")
  return new Uint8Array(png.buffer, png.byteOffset, png.byteLength)
}

/** An Info or XMP value as text (XMP lists, such as several authors, joined), or undefined when blank. */
const infoText = (value: unknown): string | undefined => {
  const joined = Array.isArray(value) ? value.filter((v) => typeof v === "string").join(", ") : value
  if (typeof joined !== "string") return undefined
  // Info strings are often NUL-padded or blank.
  const cleaned = joined.replace(/\0/g, "").trim()
  return cleaned === "" ? undefined : cleaned
}

const date = (pdfjs: Pdfjs, value: unknown): string | undefined => {
  const raw = infoText(value)
  if (raw === undefined) return undefined
  const parsed = pdfjs.PDFDateString.toDateObject(raw)
  return parsed !== null && !Number.isNaN(parsed.getTime()) ? parsed.toISOString() : undefined
}

const documentMetadata = async (pdfjs: Pdfjs, doc: PDFDocumentProxy): Promise<Record<string, unknown>> => {
  const { info, metadata: xmp } = await doc.getMetadata().catch(() => ({ info: {}, metadata: null }))
  const i = info as Record<string, unknown>
  const fromXmp = (name: string): string | undefined => {
    try {
      return infoText(xmp?.get(name))
    } catch {
      return undefined
    }
  }
  const entries: Record<string, unknown> = {
    title: infoText(i.Title) ?? fromXmp("dc:title"),
    author: infoText(i.Author) ?? fromXmp("dc:creator"),
    subject: infoText(i.Subject) ?? fromXmp("dc:description"),
    keywords: infoText(i.Keywords),
    creator: infoText(i.Creator),
    producer: infoText(i.Producer),
    creation_date: date(pdfjs, i.CreationDate),
    modification_date: date(pdfjs, i.ModDate),
    language: infoText(i.Language),
    pdf_version: infoText(i.PDFFormatVersion),
    encrypted: typeof i.EncryptFilterName === "string",
  }
  return Object.fromEntries(Object.entries(entries).filter(([, v]) => v !== undefined))
}

interface LoadedPage {
  readonly page: PDFPageProxy
  readonly content: { readonly items: ReadonlyArray<object> }
}

/**
 * Starts loading a page and its text. The caller awaits it in its turn; meanwhile pdfjs inflates the page's
 * streams off the main thread (DecompressionStream), so asking for the next page while the current one is
 * processed overlaps that wait (~15% faster on text PDFs).
 */
const loadPage = (doc: PDFDocumentProxy, n: number): Promise<LoadedPage> => {
  const loading = doc.getPage(n).then(async (page) => {
    try {
      return { page, content: await page.getTextContent() }
    } catch (e) {
      page.cleanup()
      throw e
    }
  })
  // Handled where it is awaited; a page never awaited (the document failed first) must not be unhandled.
  loading.catch(() => {})
  return loading
}

interface OcrContext {
  readonly pdfjs: Pdfjs
  readonly canvas: Canvas
}

/** The page's OCR text when it has (almost) no text layer but shows an image, else undefined. */
const ocrIfScanned = async (ctx: OcrContext, page: PDFPageProxy, chars: number) => {
  if (chars >= minTextChars || !(await looksScanned(ctx.pdfjs, page))) return undefined
  const scale = scaleFor(page, ocrResolution)
  const ocr = await ocrPng(await renderPng(ctx.canvas, page, scale), { scale })
  return ocr.text.replace(/\s/g, "").length > chars ? ocr : undefined
}

const parse = async (input: ParseInput): Promise<ParseOutput> => {
  const { pdfjs, canvas, task, doc, repaired } = await open(input)
  try {
    const count = doc.numPages
    if (count === 0) throw new ParseFailure("the PDF has no pages")
    if (count > input.limits.maxPages)
      throw new ParseFailure(`the PDF has ${count} pages; the limit is ${input.limits.maxPages}`)
    const metadata = await documentMetadata(pdfjs, doc)
    const pages: Array<ParsedPage> = []
    const ocrPages: Array<number> = []
    const unreadable: Array<number> = []
    const ocrFailures: Array<{ readonly page: number; readonly reason: string }> = []
    let firstError: unknown
    let next: Promise<LoadedPage> | undefined = loadPage(doc, 1)
    for (let n = 1; n <= count; n++) {
      const current = next!
      next = n < count ? loadPage(doc, n + 1) : undefined
      let page: PDFPageProxy | undefined
      try {
        const loaded = await current
        page = loaded.page
        const viewport = page.getViewport({ scale: 1 })
        let { text, layout, chars } = textOfItems(loaded.content.items, viewport.transform)
        try {
          const ocr = await ocrIfScanned({ pdfjs, canvas }, page, chars)
          if (ocr !== undefined) {
            text = ocr.text
            layout = [...ocr.words]
            ocrPages.push(n)
          }
        } catch (e) {
          // The page keeps what text it has; the document fails only if no page has any (below).
          ocrFailures.push({ page: n, reason: failure(e).reason })
        }
        const size = { width: round(viewport.width), height: round(viewport.height) }
        pages.push({ number: n, text, ...size, unit: "pt", layout })
      } catch (e) {
        // A damaged page (truncated file, broken object): keep the others.
        firstError ??= e
        unreadable.push(n)
        pages.push({ number: n, text: "", width: null, height: null, unit: null, layout: [] })
      } finally {
        page?.cleanup()
      }
    }
    if (unreadable.length === count)
      throw new ParseFailure(`the PDF is damaged: no page could be read (${sentence(message(firstError))})`)
    if (ocrFailures.length > 0 && pages.every((p) => p.text === ""))
      throw new ParseFailure(`the PDF has no text layer and OCR failed: ${ocrFailures[0]!.reason}`)
    const first = pages.find((p) => p.width !== null)
    return {
      parser: ocrPages.length > 0 ? "pdfjs-dist+tesseract.js" : "pdfjs-dist",
      pages,
      metadata: {
        ...metadata,
        page_count: count,
        ...(first ? { page_width: first.width, page_height: first.height } : {}),
        ocr_pages: ocrPages,
        ...(repaired
          ? { repaired: "the trailer was missing or broken (a truncated file?) and was rebuilt" }
          : {}),
        ...(unreadable.length > 0 ? { unreadable_pages: unreadable } : {}),
        ...(ocrFailures.length > 0 ? { ocr_failures: ocrFailures } : {}),
      },
    }
  } catch (e) {
    throw failure(e)
  } finally {
    await task.destroy().catch(() => {})
  }
}

const renderPage = async (input: ParseInput, pageNumber: number): Promise<Uint8Array> => {
  const { canvas, task, doc } = await open(input)
  try {
    if (!Number.isInteger(pageNumber) || pageNumber < 1 || pageNumber > doc.numPages)
      throw new ParseFailure(`page ${pageNumber} does not exist: the PDF has ${doc.numPages} pages`)
    const page = await doc.getPage(pageNumber)
    try {
      return await renderPng(canvas, page, scaleFor(page, renderResolution))
    } finally {
      page.cleanup()
    }
  } catch (e) {
    throw failure(e)
  } finally {
    await task.destroy().catch(() => {})
  }
}

export const pdfBackend: Backend = { name: "pdf", extensions: [".pdf"], parse, renderPage }
