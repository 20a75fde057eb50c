import { readFileSync } from "node:fs"
import { createRequire } from "node:module"
import { Data, Effect } from "effect"
import { isParseFailure, ParseFailure, type ParseInput } from "./Backend.ts"
import { hasPdfHeader, message } from "./PdfText.ts"

/**
 * PDFium's C API as the PDFium engine calls it: Google's PDF library (Chrome's) compiled to WebAssembly,
 * through @hyzyla/pdfium's low-level module (the wasm ships in the package; nothing is fetched); its heap,
 * the documents and pages opened on it, and the geometry of a page.
 *
 * Memory: the wasm heap is one linear memory per thread that never shrinks, so every document, page, text
 * page and bitmap is closed or freed in a `finally`, and a document's bytes are freed after it is closed.
 */

/** The part of PDFium's C API used here (pointers are offsets into the wasm heap). */
export interface PdfiumModule {
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
  _FPDFPageObj_GetMatrix(object: number, matrix: number): number
  _FPDFPageObj_GetFillColor(object: number, r: number, g: number, b: number, a: number): number
  _FPDFPageObj_GetStrokeColor(object: number, r: number, g: number, b: number, a: number): number
  _FPDFPath_GetDrawMode(path: number, fillMode: number, stroke: number): number
  _FPDFPath_CountSegments(path: number): number
  _FPDFPath_GetPathSegment(path: number, index: number): number
  _FPDFPathSegment_GetPoint(segment: number, x: number, y: number): number
  _FPDFPathSegment_GetType(segment: number): number
  _FPDFPathSegment_GetClose(segment: number): number
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
export class PdfiumRefused extends Data.TaggedError("PdfiumRefused")<{ readonly reason: string }> {
  override get message(): string {
    return this.reason
  }
}

/**
 * Refuses the file from inside synchronous heap work (`withHeap`, called deep in the engine's reading of a
 * page): the only place the engine raises an exception. `withDocument` turns it back into its failure.
 */
const refuse = (reason: string): never => {
  throw new PdfiumRefused({ reason })
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
export interface Scratch {
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
export const withHeap = <A>(m: PdfiumModule, size: number, use: (at: number) => A): A => {
  const at = m._malloc(size)
  if (at === 0) return refuse("PDFium ran out of memory")
  try {
    return use(at)
  } finally {
    m._free(at)
  }
}

/** `withHeap` for an Effect: the bytes are freed once `use` has ended, however it ends. */
const withHeapEffect = <A, E>(
  m: PdfiumModule,
  size: number,
  use: (at: number) => Effect.Effect<A, E>,
): Effect.Effect<A, E | PdfiumRefused> =>
  Effect.acquireUseRelease(
    Effect.suspend(() => {
      const at = m._malloc(size)
      return at === 0
        ? Effect.fail(new PdfiumRefused({ reason: "PDFium ran out of memory" }))
        : Effect.succeed(at)
    }),
    use,
    (at) => Effect.sync(() => m._free(at)),
  )

export interface Doc {
  readonly m: PdfiumModule
  readonly handle: number
  readonly scratch: Scratch
}

/** The error channel of PDFium's work: the file refused to pdf.js, or a failure of the document itself. */
export type PdfiumError = ParseFailure | PdfiumRefused

/** The document PDFium opens from the bytes in its heap; closed once `use` has ended. */
const withHandle = <A>(
  m: PdfiumModule,
  data: number,
  size: number,
  use: (handle: number) => Effect.Effect<A, PdfiumError>,
): Effect.Effect<A, PdfiumError> =>
  Effect.acquireUseRelease(
    Effect.suspend(() => {
      const handle = m._FPDF_LoadMemDocument(data, size, 0)
      if (handle !== 0) return Effect.succeed(handle)
      const code = m._FPDF_GetLastError()
      return Effect.fail(
        code === errPassword
          ? new ParseFailure({ reason: "the PDF is encrypted with a password" })
          : new PdfiumRefused({
              reason:
                code === errFormat
                  ? "PDFium: not in PDF format or damaged"
                  : code === errSecurity
                    ? "PDFium: unsupported security handler"
                    : `PDFium could not open the file (error ${code})`,
            }),
      )
    }),
    use,
    (handle) => Effect.sync(() => m._FPDF_CloseDocument(handle)),
  )

/**
 * Opens the document and runs `use` with it; the document, its bytes and the scratch area are freed whatever
 * happens. Any error of PDFium itself (not a ParseFailure), and whatever the engine's work throws (a
 * `refuse` from heap work included), becomes PdfiumRefused.
 */
export const withDocument = <A>(
  input: ParseInput,
  use: (doc: Doc) => Effect.Effect<A, PdfiumError>,
): Effect.Effect<A, PdfiumError> =>
  Effect.gen(function* () {
    const bytes = input.bytes
    if (bytes.length === 0)
      return yield* new ParseFailure({ reason: "not a valid PDF file: the file is empty" })
    if (!hasPdfHeader(bytes))
      return yield* new ParseFailure({ reason: "not a valid PDF file: there is no %PDF header" })
    const m = yield* Effect.promise(load)
    return yield* withHeapEffect(m, bytes.length, (data) =>
      Effect.sync(() => m.HEAPU8.set(bytes, data)).pipe(
        Effect.zipRight(
          withHandle(m, data, bytes.length, (handle) =>
            withHeapEffect(m, 64, (at) => use({ m, handle, scratch: scratchOf(m, at) })),
          ),
        ),
      ),
    ).pipe(
      Effect.catchAllDefect((e) => {
        if (isParseFailure(e) || e instanceof PdfiumRefused) return Effect.fail(e)
        // A trap inside the wasm (out-of-bounds access, abort) may leave its heap inconsistent: start afresh.
        loaded = undefined
        return Effect.fail(new PdfiumRefused({ reason: `PDFium failed: ${message(e)}` }))
      }),
    )
  })

export interface Geometry {
  /** In points, rotation applied. */
  readonly width: number
  readonly height: number
  /** PDF user space → top-left points (rotation applied), as pdf.js's viewport transform at scale 1. */
  readonly vt: readonly [number, number, number, number, number, number]
}

export const geometryOf = (doc: Doc, page: number): Geometry => {
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

/** Loads page `n` (1-based), runs `use`, closes it. Undefined when PDFium cannot load the page. */
export const withPage = <A, E>(
  doc: Doc,
  n: number,
  use: (page: number) => Effect.Effect<A, E>,
): Effect.Effect<A | undefined, E> =>
  Effect.suspend(() => {
    const page = doc.m._FPDF_LoadPage(doc.handle, n - 1)
    return page === 0
      ? Effect.succeed(undefined)
      : use(page).pipe(Effect.ensuring(Effect.sync(() => doc.m._FPDF_ClosePage(page))))
  })
