import { OCR_PARSER } from "@dxs/domain/DocumentType"
import { createCanvas, loadImage } from "@napi-rs/canvas"
import { Effect } from "effect"
import sharp from "sharp"
import { type Backend, type ParsedPage, ParseFailure, type ParseInput, type ParseOutput } from "./Backend.ts"
import { type OcrResult, ocrPng } from "./Ocr.ts"

/**
 * Images: every frame of a TIFF is a page (animated GIF/WebP: the first frame only, animation frames are
 * not pages). Each page is normalised to PNG with sharp (EXIF orientation applied, transparency on white)
 * and OCR'd. Coordinates are pixels of the upright original image, whatever size the OCR saw.
 */

/** Beyond this many pixels a frame is downscaled before OCR and rendering (memory and time). */
export const maxPixels = 20_000_000
/** Small low-resolution images (screenshots, 72 dpi renders) are upscaled towards this long side for OCR. */
const ocrLongSide = 2000
const maxUpscale = 3
/** sharp's own default limit (0x3FFF²): larger inputs are refused before decoding. */
const maxInputPixels = 268_402_689

const formats: Record<string, string> = {
  jpeg: "jpeg",
  png: "png",
  webp: "webp",
  tiff: "tiff",
  gif: "gif",
  heif: "heif",
}

interface Frame {
  /** 0-based frame index for sharp's `page`. */
  readonly index: number
  /** Upright size (EXIF orientation applied). */
  readonly width: number
  readonly height: number
}

interface Decoded {
  /** Bytes sharp can read (BMP is converted to PNG first). */
  readonly bytes: Uint8Array
  readonly format: string
  readonly frames: ReadonlyArray<Frame>
  /** Frames in the file when only the first is a page (animations). */
  readonly animationFrames: number | undefined
  readonly dpi: number | undefined
}

const message = (e: unknown): string => (e instanceof Error ? e.message : String(e))

const notAnImage = (reason: string) => new ParseFailure({ reason: `not a valid image: ${reason}` })

const isBmp = (bytes: Uint8Array): boolean => bytes.length >= 26 && bytes[0] === 0x42 && bytes[1] === 0x4d

const bmpHeaderSizes = new Set([12, 40, 52, 56, 64, 108, 124])

/** sharp (libvips) has no BMP decoder; Skia, through @napi-rs/canvas, has. */
const bmpToPng = (bytes: Uint8Array) =>
  Effect.gen(function* () {
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
    const headerSize = view.getUint32(14, true)
    if (!bmpHeaderSizes.has(headerSize)) return yield* notAnImage("unreadable BMP (unknown header)")
    const core = headerSize === 12
    const width = core ? view.getUint16(18, true) : Math.abs(view.getInt32(18, true))
    const height = core ? view.getUint16(20, true) : Math.abs(view.getInt32(22, true))
    if (width * height > maxInputPixels)
      return yield* new ParseFailure({ reason: `the image is too large (${width}×${height} pixels)` })
    const pixelsPerMetre = !core && bytes.length >= 42 ? view.getInt32(38, true) : 0
    const image = yield* Effect.tryPromise({
      try: () => loadImage(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)),
      catch: (e) => notAnImage(`unreadable BMP (${message(e)})`),
    })
    if (image.width === 0 || image.height === 0) return yield* notAnImage("unreadable BMP")
    const canvas = createCanvas(image.width, image.height)
    canvas.getContext("2d").drawImage(image, 0, 0)
    const dpi = pixelsPerMetre > 0 ? Math.round(pixelsPerMetre * 0.0254) : undefined
    const png: Uint8Array = yield* Effect.promise(() => canvas.encode("png"))
    return { png, dpi }
  })

const source = (bytes: Uint8Array, page = 0, failOn: "error" | "none" = "error") =>
  sharp(bytes, { page, failOn, limitInputPixels: maxInputPixels })

const decode = (input: ParseInput): Effect.Effect<Decoded, ParseFailure> =>
  Effect.gen(function* () {
    if (input.bytes.length === 0) return yield* notAnImage("the file is empty")
    const bmp = isBmp(input.bytes) ? yield* bmpToPng(input.bytes) : undefined
    const bytes = bmp?.png ?? input.bytes
    const meta = yield* Effect.tryPromise({
      try: () => source(bytes).metadata(),
      catch: (e) => notAnImage(message(e).replace(/^Input (buffer|file) (contains|has) /, "")),
    })
    const format = bmp ? "bmp" : formats[meta.format]
    if (format === undefined) return yield* notAnImage(`${meta.format} is not a supported image format`)
    if (meta.width * meta.height > maxInputPixels)
      return yield* new ParseFailure({
        reason: `the image is too large (${meta.width}×${meta.height} pixels)`,
      })
    const count = meta.pages ?? 1
    const multiPage = format === "tiff"
    const pages = multiPage ? count : 1
    if (pages > input.limits.maxPages)
      return yield* new ParseFailure({
        reason: `the image has ${pages} pages, more than the limit of ${input.limits.maxPages}`,
      })
    const frames: Array<Frame> = []
    for (let index = 0; index < pages; index++) {
      const m = index === 0 ? meta : yield* Effect.promise(() => source(bytes, index).metadata())
      if (m.width * m.height > maxInputPixels)
        return yield* new ParseFailure({
          reason: `page ${index + 1} is too large (${m.width}×${m.height} pixels)`,
        })
      frames.push({ index, width: m.autoOrient.width, height: m.autoOrient.height })
    }
    // libvips reports 72 when the file declares no resolution: that says nothing.
    const declared = meta.density !== undefined && meta.density > 0 && meta.density !== 72
    const dpi = bmp?.dpi ?? (declared ? Math.round(meta.density!) : undefined)
    return { bytes, format, frames, animationFrames: !multiPage && count > 1 ? count : undefined, dpi }
  })

/** Rounded down when shrinking, so a capped frame stays within maxPixels. */
const scaledSize = (frame: Frame, scale: number): { width: number; height: number } => {
  const round = scale < 1 ? Math.floor : Math.round
  return { width: Math.max(1, round(frame.width * scale)), height: Math.max(1, round(frame.height * scale)) }
}

/**
 * The frame, upright, on white, resized by `scale`, as PNG. A damaged frame (truncated file, bad data) is
 * decoded as far as it goes, like an image viewer would, and flagged.
 */
const framePng = (
  decoded: Decoded,
  frame: Frame,
  scale: number,
  compressionLevel: number,
): Effect.Effect<{ png: Uint8Array; damaged: boolean }, ParseFailure> => {
  const encode = (failOn: "error" | "none") =>
    Effect.tryPromise({
      try: (): Promise<Uint8Array> => {
        let image = source(decoded.bytes, frame.index, failOn).autoOrient().flatten({ background: "#ffffff" })
        if (scale !== 1) image = image.resize({ ...scaledSize(frame, scale), fit: "fill" })
        return image.png({ compressionLevel }).toBuffer()
      },
      catch: (e) => e,
    })
  return encode("error").pipe(
    Effect.map((png) => ({ png, damaged: false })),
    Effect.catchAll((strict) =>
      encode("none").pipe(
        Effect.map((png) => ({ png, damaged: true })),
        Effect.mapError(
          () =>
            new ParseFailure({
              reason: `page ${frame.index + 1} of the image cannot be decoded: ${message(strict)}`,
            }),
        ),
      ),
    ),
  )
}

/** Never more than maxPixels; small images of unknown or low resolution are enlarged for the OCR. */
const ocrScale = (frame: Frame, dpi: number | undefined): number => {
  const pixels = frame.width * frame.height
  const cap = Math.sqrt(maxPixels / pixels)
  if (cap < 1) return cap
  const longSide = Math.max(frame.width, frame.height)
  const lowResolution = dpi === undefined || dpi < 200
  if (!lowResolution || longSide >= ocrLongSide * 0.75) return 1
  return Math.min(maxUpscale, ocrLongSide / longSide, cap)
}

const round2 = (n: number): number => Math.round(n * 100) / 100

/** How far into a page a dark band along an edge may reach, as a share of the page. */
const edgeBand = 0.15

/**
 * The page without the dark bands along its edges (a scanner's lid, the torn black edge of a receipt's
 * photocopy): the rows and columns from each edge inwards, within `edgeBand`, up to the last one that is
 * at least a tenth dark, and a little margin. Undefined when no edge has such a band.
 */
const withoutDarkEdges = async (
  png: Uint8Array,
): Promise<{ png: Uint8Array; left: number; top: number } | undefined> => {
  const { data, info } = await sharp(png).grayscale().raw().toBuffer({ resolveWithObject: true })
  const { width, height } = info
  const darkRow = (y: number) => {
    let n = 0
    for (let x = 0; x < width; x++) if (data[y * width + x]! < 100) n++
    return n >= width / 10
  }
  const darkColumn = (x: number) => {
    let n = 0
    for (let y = 0; y < height; y++) if (data[y * width + x]! < 100) n++
    return n >= height / 10
  }
  const band = (size: number, dark: (i: number) => boolean, from: (k: number) => number) => {
    let last = -1
    for (let k = 0; k < Math.floor(size * edgeBand); k++) if (dark(from(k))) last = k
    return last < 0 ? 0 : last + 1 + Math.ceil(size * 0.005)
  }
  const top = band(height, darkRow, (k) => k)
  const bottom = band(height, darkRow, (k) => height - 1 - k)
  const left = band(width, darkColumn, (k) => k)
  const right = band(width, darkColumn, (k) => width - 1 - k)
  if (top + bottom + left + right === 0) return undefined
  const cropped = await sharp(png)
    .extract({ left, top, width: width - left - right, height: height - top - bottom })
    .png({ compressionLevel: 1 })
    .toBuffer()
  return { png: cropped, left, top }
}

/**
 * Fewer words than this on a page are what tesseract reads when it finds no text: a speck or two of a
 * border read as letters, not a line of text.
 */
const specksOnly = 5

/**
 * The page's OCR. A page where nothing, or only specks, was read is read again without the dark bands along
 * its edges: tesseract finds no text on some scans framed by black edges, and reads them well once cropped.
 * The reading with more words is kept.
 */
const ocrPage = (png: Uint8Array, scale: number): Effect.Effect<OcrResult, ParseFailure> =>
  Effect.gen(function* () {
    const first = yield* ocrPng(png, { scale })
    if (first.words.length >= specksOnly) return first
    const cropped = yield* Effect.promise(() => withoutDarkEdges(png))
    if (cropped === undefined) return first
    const again = yield* ocrPng(cropped.png, { scale })
    if (again.words.length <= first.words.length) return first
    const dx = cropped.left / scale
    const dy = cropped.top / scale
    return {
      ...again,
      words: again.words.map((w) => ({ ...w, x: round2(w.x + dx), y: round2(w.y + dy) })),
      width: first.width,
      height: first.height,
    }
  })

const parse = (input: ParseInput): Effect.Effect<ParseOutput, ParseFailure> =>
  Effect.gen(function* () {
    const decoded = yield* decode(input)
    const pages: Array<ParsedPage> = []
    const confidences: Array<number> = []
    const downscaled: Array<{ page: number; width: number; height: number }> = []
    const damaged: Array<number> = []
    for (const frame of decoded.frames) {
      const scale = ocrScale(frame, decoded.dpi)
      const { png, damaged: isDamaged } = yield* framePng(decoded, frame, scale, 1)
      if (isDamaged) damaged.push(frame.index + 1)
      if (scale < 1) downscaled.push({ page: frame.index + 1, ...scaledSize(frame, scale) })
      const ocr = yield* ocrPage(png, scale)
      if (ocr.words.length > 0) confidences.push(ocr.confidence)
      pages.push({
        number: frame.index + 1,
        text: ocr.text,
        width: frame.width,
        height: frame.height,
        unit: "px",
        layout: ocr.words,
      })
    }
    const first = decoded.frames[0]
    const metadata: Record<string, unknown> = {
      format: decoded.format,
      width: first?.width ?? null,
      height: first?.height ?? null,
      pages: pages.length,
      ...(decoded.animationFrames !== undefined ? { animationFrames: decoded.animationFrames } : {}),
      ...(decoded.dpi !== undefined ? { dpi: decoded.dpi } : {}),
      ...(downscaled.length > 0 ? { downscaled, maxPixels } : {}),
      // Pages decoded only partly (truncated or corrupt data).
      ...(damaged.length > 0 ? { damagedPages: damaged } : {}),
      confidence:
        confidences.length === 0 ? 0 : round2(confidences.reduce((a, b) => a + b, 0) / confidences.length),
      parser: OCR_PARSER,
    }
    return { parser: OCR_PARSER, pages, metadata } satisfies ParseOutput
  })

const renderPage = (input: ParseInput, pageNumber: number): Effect.Effect<Uint8Array, ParseFailure> =>
  Effect.gen(function* () {
    const decoded = yield* decode(input)
    const frame = decoded.frames[pageNumber - 1]
    if (frame === undefined)
      return yield* new ParseFailure({
        reason: `page ${pageNumber} does not exist (the image has ${decoded.frames.length})`,
      })
    const scale = Math.min(1, Math.sqrt(maxPixels / (frame.width * frame.height)))
    return (yield* framePng(decoded, frame, scale, 6)).png
  })

export const imageBackend: Backend = {
  name: "image",
  parse,
  renderPage,
}
