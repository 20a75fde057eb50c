import { createRequire } from "node:module"
import { dirname } from "node:path"
import { Cause, Effect, Either } from "effect"
import type { PDFDocumentLoadingTask, PDFDocumentProxy, PDFPageProxy } from "pdfjs-dist/legacy/build/pdf.mjs"
import { type ParsedPage, ParseFailure, type ParseInput, type ParseOutput } from "./Backend.ts"
import { ocrPng } from "./Ocr.ts"
import type { Matrix } from "./PdfGraphics.ts"
import { pageGraphicsOf } from "./PdfJsGraphics.ts"
import { type PdfPageContent, pdfOutput, pdfPageContent, showsScan } from "./PdfPage.ts"
import {
  hasPdfHeader,
  infoText,
  message,
  ocrResolution,
  type Resolution,
  renderResolution,
  round,
  scaleForSize,
  sentence,
  type TextRun,
} from "./PdfText.ts"

/**
 * The pdf.js engine of the PDF backend: pdfjs-dist (legacy build, in-thread "fake" worker, no eval, no network, no system fonts): text
 * items with their boxes in points (top-left origin, page rotation applied), page text rebuilt line by line.
 * Pages without a text layer (scans) are rendered with @napi-rs/canvas and OCR'd.
 */

type Pdfjs = typeof import("pdfjs-dist/legacy/build/pdf.mjs")
type Canvas = typeof import("@napi-rs/canvas")

const require = createRequire(import.meta.url)
const packageDir = `${dirname(require.resolve("pdfjs-dist/package.json"))}/`

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

/** Any error of pdfjs while opening or reading becomes a reason a user can act on. */
const failure = (e: unknown): ParseFailure => {
  if (e instanceof ParseFailure) return e
  const name = e instanceof Error ? e.name : ""
  if (name === "PasswordException")
    return new ParseFailure({ reason: "the PDF is encrypted with a password" })
  if (name === "InvalidPDFException")
    return new ParseFailure({ reason: `not a valid PDF file: ${sentence(message(e))}` })
  return new ParseFailure({ reason: `the PDF could not be read: ${sentence(message(e))}` })
}

interface Opened {
  readonly pdfjs: Pdfjs
  readonly canvas: Canvas
  readonly task: PDFDocumentLoadingTask
  readonly doc: PDFDocumentProxy
  /** The file had lost its trailer (a truncated download?): it was read with one rebuilt from its catalog. */
  readonly repaired: boolean
}

/** The document pdf.js opens from the bytes; what it rejects them with is the failure (the task destroyed). */
const openBytes = (pdfjs: Pdfjs, bytes: Uint8Array) =>
  Effect.suspend(() => {
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
    return Effect.tryPromise({ try: () => task.promise, catch: (e) => e }).pipe(
      Effect.map((doc) => ({ task, doc })),
      Effect.tapError(() => destroy(task)),
    )
  })

const destroy = (task: PDFDocumentLoadingTask) => Effect.promise(() => task.destroy().catch(() => {}))

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

const open = (input: ParseInput): Effect.Effect<Opened, ParseFailure> =>
  Effect.gen(function* () {
    if (input.bytes.length === 0)
      return yield* new ParseFailure({ reason: "not a valid PDF file: the file is empty" })
    if (!hasPdfHeader(input.bytes))
      return yield* new ParseFailure({ reason: "not a valid PDF file: there is no %PDF header" })
    const { pdfjs, canvas } = yield* Effect.promise(load)
    const opened = yield* Effect.either(openBytes(pdfjs, input.bytes))
    if (Either.isRight(opened)) return { pdfjs, canvas, ...opened.right, repaired: false }
    const e = opened.left
    const repaired =
      (e as Error | undefined)?.name === "InvalidPDFException" && withRebuiltTrailer(input.bytes)
    if (!repaired) return yield* failure(e)
    const reopened = yield* Effect.either(openBytes(pdfjs, repaired))
    if (Either.isLeft(reopened)) return yield* failure(e)
    return { pdfjs, canvas, ...reopened.right, repaired: true }
  })

/**
 * Runs `use` on the opened document and destroys it afterwards. Whatever pdf.js throws on the way, however
 * deep in its own code, is a reason a user can act on (`failure`), as when the file is opened.
 */
const withOpened = <A>(input: ParseInput, use: (opened: Opened) => Effect.Effect<A, ParseFailure>) =>
  Effect.acquireUseRelease(
    open(input),
    (opened) => use(opened).pipe(Effect.catchAllDefect((e) => Effect.fail(failure(e)))),
    ({ task }) => destroy(task),
  )

/**
 * pdfjs text items as runs: `vt` is the viewport transform (PDF user space → top-left points, rotation
 * included). pdfjs's whitespace items and end-of-line marks are kept for the line rebuild.
 */
function* runsOfItems(items: ReadonlyArray<object>, vt: ReadonlyArray<number>): Generator<TextRun> {
  const [a = 1, b = 0, c = 0, d = -1, e = 0, f = 0] = vt
  for (const item of items) {
    const it = item as { str?: string; transform: Array<number>; width: number; height: number; dir: string }
    const str = it.str
    if (str === undefined) continue
    const hasEOL = (item as { hasEOL?: boolean }).hasEOL === true
    const t = it.transform
    const t0 = t[0]!
    const t1 = t[1]!
    const t2 = t[2]!
    const t3 = t[3]!
    const m0 = a * t0 + c * t1
    const m1 = b * t0 + d * t1
    const m2 = a * t2 + c * t3
    const m3 = b * t2 + d * t3
    const vertical = it.dir === "ttb"
    const su = Math.hypot(m0, m1) || 1
    const sv = Math.hypot(m2, m3) || 1
    yield {
      str,
      hasEOL,
      x0: a * t[4]! + c * t[5]! + e,
      y0: b * t[4]! + d * t[5]! + f,
      ux: m0 / su,
      uy: m1 / su,
      vx: m2 / sv,
      vy: m3 / sv,
      vertical,
      length: vertical ? it.height : it.width,
      size: (vertical ? it.width : it.height) || sv,
    }
  }
}

/** Pixels per point for a resolution, reduced to keep within its largest side and pixel count. */
const scaleFor = (page: PDFPageProxy, resolution: Resolution): number => {
  const { width, height } = page.getViewport({ scale: 1 })
  return scaleForSize(width, height, resolution)
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

/** A page and its text, or the error that kept them from loading (the page then cleaned up already). */
type LoadedPage =
  | { readonly page: PDFPageProxy; readonly content: { readonly items: ReadonlyArray<object> } }
  | { readonly error: unknown }

/**
 * Starts loading a page and its text. The caller awaits it in its turn; meanwhile pdfjs inflates the page's
 * streams off the main thread (DecompressionStream), so asking for the next page while the current one is
 * processed overlaps that wait (~15% faster on text PDFs).
 */
const loadPage = (doc: PDFDocumentProxy, n: number): Promise<LoadedPage> =>
  // Never rejects: a page never awaited (the document failed first) must not be an unhandled rejection.
  doc.getPage(n).then(
    (page) =>
      page.getTextContent().then(
        (content) => ({ page, content }),
        (error: unknown) => {
          page.cleanup()
          return { error }
        },
      ),
    (error: unknown) => ({ error }),
  )

interface OcrContext {
  readonly pdfjs: Pdfjs
  readonly canvas: Canvas
}

/** The page's OCR text when it has (almost) no text layer but shows an image, else undefined. */
const ocrIfScanned = (ctx: OcrContext, page: PDFPageProxy, content: PdfPageContent) =>
  Effect.gen(function* () {
    if (!showsScan(content)) return undefined
    const chars = content.chars
    const scale = scaleFor(page, ocrResolution)
    const png = yield* Effect.promise(() => renderPng(ctx.canvas, page, scale))
    const ocr = yield* ocrPng(png, { scale })
    return ocr.text.replace(/\s/g, "").length > chars ? ocr : undefined
  })

/**
 * One page read (its text, layout, tables, blocks, OCR'd when scanned), or the error that kept it from being
 * read. OCR that fails is recorded in `ocrFailures`; the page keeps what text it has.
 */
const readPage = (
  ctx: OcrContext,
  loading: Promise<LoadedPage>,
  n: number,
  ocrFailures: Array<{ readonly page: number; readonly reason: string }>,
): Effect.Effect<{ readonly page: ParsedPage; readonly ocr: boolean } | { readonly error: unknown }> =>
  Effect.gen(function* () {
    const loaded = yield* Effect.promise(() => loading)
    if ("error" in loaded) return loaded
    const page = loaded.page
    const read = yield* Effect.gen(function* () {
      const viewport = page.getViewport({ scale: 1 })
      const vt = viewport.transform as unknown as Matrix
      const content = yield* Effect.promise(() =>
        pdfPageContent([...runsOfItems(loaded.content.items, vt)], () => pageGraphicsOf(ctx.pdfjs, page, vt)),
      )
      const ocr = yield* ocrIfScanned(ctx, page, content).pipe(Effect.sandbox, Effect.either)
      // The page keeps what text it has; the document fails only if no page has any (see `parse`).
      if (Either.isLeft(ocr)) ocrFailures.push({ page: n, reason: failure(Cause.squash(ocr.left)).reason })
      const scanned = Either.isRight(ocr) ? ocr.right : undefined
      const { text, layout, tables, blocks } =
        scanned === undefined
          ? content
          : { ...content, text: scanned.text, layout: [...scanned.words], tables: [], blocks: [] }
      const size = { width: round(viewport.width), height: round(viewport.height) }
      return {
        page: { number: n, text, ...size, unit: "pt", layout, tables, blocks } satisfies ParsedPage,
        ocr: scanned !== undefined,
      }
    }).pipe(Effect.sandbox, Effect.either, Effect.ensuring(Effect.sync(() => page.cleanup())))
    return Either.isRight(read) ? read.right : { error: Cause.squash(read.left) }
  })

const parse = (input: ParseInput): Effect.Effect<ParseOutput, ParseFailure> =>
  withOpened(input, ({ pdfjs, canvas, doc, repaired }) =>
    Effect.gen(function* () {
      const count = doc.numPages
      if (count === 0) return yield* new ParseFailure({ reason: "the PDF has no pages" })
      if (count > input.limits.maxPages)
        return yield* new ParseFailure({
          reason: `the PDF has ${count} pages; the limit is ${input.limits.maxPages}`,
        })
      const metadata = yield* Effect.promise(() => documentMetadata(pdfjs, doc))
      const pages: Array<ParsedPage> = []
      const ocrPages: Array<number> = []
      const unreadable: Array<number> = []
      const ocrFailures: Array<{ readonly page: number; readonly reason: string }> = []
      let firstError: unknown
      let next: Promise<LoadedPage> | undefined = loadPage(doc, 1)
      for (let n = 1; n <= count; n++) {
        const current = next!
        next = n < count ? loadPage(doc, n + 1) : undefined
        const read = yield* readPage({ pdfjs, canvas }, current, n, ocrFailures)
        if ("page" in read) {
          pages.push(read.page)
          if (read.ocr) ocrPages.push(n)
        } else {
          // A damaged page (truncated file, broken object): keep the others.
          firstError ??= read.error
          unreadable.push(n)
          pages.push({ number: n, text: "", width: null, height: null, unit: null, layout: [] })
        }
      }
      if (unreadable.length === count)
        return yield* new ParseFailure({
          reason: `the PDF is damaged: no page could be read (${sentence(message(firstError))})`,
        })
      return yield* pdfOutput({
        engine: "pdfjs-dist",
        pages,
        count,
        metadata,
        ocrPages,
        ocrFailures,
        unreadable,
        extra: repaired
          ? { repaired: "the trailer was missing or broken (a truncated file?) and was rebuilt" }
          : {},
      })
    }),
  )

const renderPage = (input: ParseInput, pageNumber: number): Effect.Effect<Uint8Array, ParseFailure> =>
  withOpened(input, ({ canvas, doc }) =>
    !Number.isInteger(pageNumber) || pageNumber < 1 || pageNumber > doc.numPages
      ? Effect.fail(
          new ParseFailure({
            reason: `page ${pageNumber} does not exist: the PDF has ${doc.numPages} pages`,
          }),
        )
      : Effect.promise(async () => {
          const page = await doc.getPage(pageNumber)
          try {
            return await renderPng(canvas, page, scaleFor(page, renderResolution))
          } finally {
            page.cleanup()
          }
        }),
  )

/** The pdf.js engine: the fallback for files PDFium refuses, or the engine when PDF_ENGINE=pdfjs. */
export const pdfjsEngine = { parse, renderPage }
