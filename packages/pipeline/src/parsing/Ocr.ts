import { existsSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { Effect } from "effect"
import Tesseract from "tesseract.js"
import { type LayoutItem, ParseFailure, reportSlowStep } from "./Backend.ts"
import { oneLetterOff } from "./OcrShapes.ts"

/**
 * OCR with tesseract.js, strictly offline: the English model, the worker script and the wasm core all come
 * from node_modules. The library's defaults fetch the model from a CDN (and an unhandled worker error
 * kills the process), so every path is passed explicitly and checked to be a local file.
 *
 * One tesseract worker per process, created on first use and reused; calls are serialised because a
 * tesseract worker recognises one image at a time.
 */

export interface OcrResult {
  /** Recognised text, one line per text line, blank line between blocks. */
  readonly text: string
  /** One item per word, in output units (pixels unless `scale` was given), with confidence 0–100. */
  readonly words: ReadonlyArray<LayoutItem>
  readonly width: number
  readonly height: number
  /** Mean word confidence 0–100 (0 when no text was found). */
  readonly confidence: number
}

export interface OcrOptions {
  /**
   * Image pixels per output unit: boxes, width and height are divided by it. A PDF page rendered at
   * 2 px per point passes 2 to get points back. Default 1 (pixels).
   */
  readonly scale?: number
}

const require = createRequire(import.meta.url)

/** The worker options, all local paths (exported so a test can assert that nothing points to the network). */
export const ocrWorkerOptions = (): Partial<Tesseract.WorkerOptions> => {
  const options = {
    // LSTM-only engine → the LSTM-only model (what the library would otherwise download for this engine).
    langPath: join(dirname(require.resolve("@tesseract.js-data/eng/package.json")), "4.0.0_best_int"),
    workerPath: require.resolve("tesseract.js/src/worker-script/node/index.js"),
    // In Node the core is `require`d from tesseract.js-core by the worker script; corePath is informative.
    corePath: dirname(
      createRequire(require.resolve("tesseract.js/package.json")).resolve("tesseract.js-core/package.json"),
    ),
    gzip: true,
    cacheMethod: "none",
  }
  return options
}

/** A ParseFailure naming the first file of the worker options that is not there, else undefined. */
const notInstalled = (options: Partial<Tesseract.WorkerOptions>): ParseFailure | undefined => {
  const missing = [
    join(options.langPath ?? "", "eng.traineddata.gz"),
    options.workerPath,
    options.corePath,
  ].find((path) => path === undefined || !existsSync(path))
  return missing === undefined
    ? undefined
    : new ParseFailure({ reason: `OCR is not installed: ${missing} is missing` })
}

interface Running {
  readonly worker: Tesseract.Worker
  /** Rejects when the worker thread dies (wasm abort, out of memory), so a call in flight does not hang. */
  readonly died: Promise<never>
}

let current: Promise<Running | ParseFailure> | undefined
let queue: Promise<unknown> = Promise.resolve()

const message = (e: unknown): string => (e instanceof Error ? e.message : String(e)).replace(/^Error: /, "")

const startTimeoutMs = 60_000

/** The shared worker started, or a ParseFailure when OCR is not installed. */
const startWorker = async (): Promise<Running | ParseFailure> => {
  const options = ocrWorkerOptions()
  const failure = notInstalled(options)
  if (failure !== undefined) return failure
  let timer: NodeJS.Timeout | undefined
  let timedOut = false
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      timedOut = true
      reject(new Error("the OCR engine did not start"))
    }, startTimeoutMs)
  })
  const created = Tesseract.createWorker("eng", Tesseract.OEM.LSTM_ONLY, {
    ...options,
    // Without a handler tesseract.js rethrows worker-side failures inside a message listener, an uncaught
    // exception that ends the process. The failing call is rejected either way.
    errorHandler: () => {},
  })
  // A worker that comes up after the timeout is not used: stop it.
  created.then((w) => (timedOut ? w.terminate() : undefined)).catch(() => {})
  const worker = await Promise.race([created, timeout]).finally(() => clearTimeout(timer))
  // The Node Worker behind it (not in the typings); tesseract.js listens to neither "error" nor "exit".
  const thread = (worker as unknown as { worker?: NodeJS.EventEmitter }).worker
  const died = new Promise<never>((_, reject) => {
    thread?.once("error", (e) => reject(new Error(`the OCR engine crashed: ${message(e)}`)))
    thread?.once("exit", (code) => reject(new Error(`the OCR engine stopped (exit code ${code})`)))
  })
  died.catch(() => {})
  return { worker, died }
}

const getWorker = (): Promise<Running | ParseFailure> => {
  if (current === undefined) {
    const started = startWorker()
    current = started
    const forget = () => {
      if (current === started) current = undefined
    }
    started.then((r) => (r instanceof ParseFailure ? forget() : r.died)).catch(forget)
  }
  return current
}

/** Runs `f` after every earlier call has finished (one image at a time through the shared worker). */
const serialised = <A>(f: () => Promise<A>): Promise<A> => {
  const run = queue.then(f, f)
  queue = run.catch(() => undefined)
  return run
}

const pngSize = (png: Uint8Array): { width: number; height: number } | undefined => {
  const signature = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]
  if (png.length < 24 || signature.some((b, i) => png[i] !== b)) return undefined
  const view = new DataView(png.buffer, png.byteOffset, png.byteLength)
  return { width: view.getUint32(16), height: view.getUint32(20) }
}

/**
 * Without a real resolution tesseract estimates one from the text size; a pHYs chunk below 70 dpi (libvips
 * writes 1 px/mm when it knows nothing) would instead be clamped to 70 dpi, with a warning on stderr.
 */
const withoutBogusResolution = (png: Uint8Array): Uint8Array => {
  const view = new DataView(png.buffer, png.byteOffset, png.byteLength)
  const parts: Array<Uint8Array> = [png.subarray(0, 8)]
  let dropped = false
  for (let at = 8; at + 12 <= png.length; ) {
    const length = view.getUint32(at)
    const end = Math.min(png.length, at + 12 + length)
    const type = String.fromCharCode(...png.subarray(at + 4, at + 8))
    const bogus =
      type === "pHYs" && length === 9 && png[at + 16] === 1 && view.getUint32(at + 8) < 70 / 0.0254
    if (bogus) dropped = true
    else parts.push(png.subarray(at, end))
    if (type === "IEND") break
    at = end
  }
  return dropped ? Buffer.concat(parts) : png
}

const round = (n: number): number => Math.round(n * 100) / 100

/** The shared worker's reading of the image, or a ParseFailure when OCR is not installed. */
const recognize = async (png: Uint8Array): Promise<Tesseract.RecognizeResult | ParseFailure> => {
  const running = await getWorker()
  if (running instanceof ParseFailure) return running
  const clean = withoutBogusResolution(png)
  const image = Buffer.from(clean.buffer, clean.byteOffset, clean.byteLength)
  return Promise.race([running.worker.recognize(image, {}, { text: true, blocks: true }), running.died])
}

/** Recognises the text of a PNG image. Failures are ParseFailure. */
export const ocrPng = (
  png: Uint8Array,
  options?: { scale?: number },
): Effect.Effect<OcrResult, ParseFailure> =>
  Effect.suspend(() => {
    const size = pngSize(png)
    if (size === undefined) return Effect.fail(new ParseFailure({ reason: "OCR input is not a PNG image" }))
    const scale = options?.scale !== undefined && options.scale > 0 ? options.scale : 1
    return Effect.tryPromise({
      try: () => serialised(() => recognize(png)),
      catch: (e) => new ParseFailure({ reason: `OCR failed: ${message(e)}` }),
    }).pipe(
      Effect.flatMap((result) =>
        result instanceof ParseFailure
          ? Effect.fail(result)
          : Effect.sync(() => ocrResult(result, size, scale)),
      ),
    )
  })

/** A word's height in image pixels. */
const heightOf = (word: Tesseract.Word): number => word.bbox.y1 - word.bbox.y0

/**
 * Whether a word at a line's end is a speck of the scan rather than print: a mark of one or two characters
 * that stands apart from its neighbour, further than the line's height, and is either much smaller than the
 * line's words (a dot of dirt read as `1` or `'`) or a sliver read with next to no confidence (a border's
 * edge read as `©` or `g`). A character of the print that stands apart (a quantity, a column's `-`) has the
 * height and the confidence of its line.
 */
const isSpeck = (word: Tesseract.Word, neighbour: Tesseract.Word, lineHeight: number): boolean => {
  if (word.text.trim().length > 2) return false
  const gap =
    word.bbox.x1 <= neighbour.bbox.x0 ? neighbour.bbox.x0 - word.bbox.x1 : word.bbox.x0 - neighbour.bbox.x1
  if (gap < lineHeight) return false
  const width = word.bbox.x1 - word.bbox.x0
  return heightOf(word) < lineHeight * 0.4 || (word.confidence < 20 && width < lineHeight * 0.5)
}

/** A line's words without the specks at its ends. */
export const withoutSpecks = (line: ReadonlyArray<Tesseract.Word>): ReadonlyArray<Tesseract.Word> => {
  if (line.length < 2) return line
  const heights = line.map(heightOf).sort((a, b) => a - b)
  const lineHeight = heights[Math.floor(heights.length / 2)]!
  let from = 0
  let to = line.length
  while (to - from > 1 && isSpeck(line[from]!, line[from + 1]!, lineHeight)) from++
  while (to - from > 1 && isSpeck(line[to - 1]!, line[to - 2]!, lineHeight)) to--
  return line.slice(from, to)
}

/** How sure a reading must be (0–100) to be kept whatever the page's other readings say. */
const sureReading = 90
/** By how much the summed confidence of a word's other readings must exceed its own to replace it. */
const surerBy = 10
/** A word of four letters or more, with the marks around it. */
const LETTERS_WORD = /^([^A-Za-z]*)([A-Za-z]{4,})([^A-Za-z]*)$/

/**
 * A page's words made consistent with themselves. A name printed more than once on a page (a shop's name in
 * its heading and its address, a street's name in two lines) is often read right in one place and a letter
 * off in another (`MALURT` beside `MALURI`, `AEOM` beside `AEON`). A word of four letters or more, read with
 * less than `sureReading` confidence, that stands one letter of like shape from another word of the page is
 * read as that word when the other's readings are surer (their summed confidence exceeds its own by
 * `surerBy`). Its case and the marks around it stay. Returns each word's text.
 */
export const consistentReadings = (
  words: ReadonlyArray<{ readonly text: string; readonly confidence: number }>,
): Array<string> => {
  const weight = new Map<string, { sum: number; best: number }>()
  for (const w of words) {
    const core = LETTERS_WORD.exec(w.text)?.[2]?.toUpperCase()
    if (core === undefined) continue
    const seen = weight.get(core) ?? { sum: 0, best: 0 }
    weight.set(core, { sum: seen.sum + w.confidence, best: Math.max(seen.best, w.confidence) })
  }
  const ofLength = new Map<number, Array<string>>()
  for (const core of weight.keys()) {
    const same = ofLength.get(core.length)
    if (same === undefined) ofLength.set(core.length, [core])
    else same.push(core)
  }
  const readAs = new Map<string, string>()
  for (const [core, own] of weight) {
    if (own.best >= sureReading) continue
    let surest: string | undefined
    let surestSum = own.sum + surerBy
    for (const other of ofLength.get(core.length)!) {
      const theirs = weight.get(other)!
      if (theirs.sum < surestSum || !oneLetterOff(core, other, true)) continue
      surest = other
      surestSum = theirs.sum
    }
    if (surest !== undefined) readAs.set(core, surest)
  }
  return words.map((w) => {
    const m = LETTERS_WORD.exec(w.text)
    const read = m === null ? undefined : readAs.get(m[2]!.toUpperCase())
    if (m === null || read === undefined) return w.text
    const letters = [...m[2]!].map((c, k) =>
      c.toUpperCase() === read[k] ? c : c === c.toLowerCase() ? read[k]!.toLowerCase() : read[k]!,
    )
    return `${m[1]}${letters.join("")}${m[3]}`
  })
}

/**
 * The words and the text of a reading: one line of text per line tesseract found, its words apart by a space,
 * a blank line between paragraphs (as tesseract's own text), without the specks at the lines' ends.
 */
const ocrResult = (
  result: Tesseract.RecognizeResult,
  size: { readonly width: number; readonly height: number },
  scale: number,
): OcrResult => {
  reportSlowStep()
  const printedLines = (result.data.blocks ?? []).map((block) =>
    block.paragraphs.map((paragraph) =>
      paragraph.lines
        .map((line) => withoutSpecks(line.words.filter((word) => word.text.trim() !== "")))
        .filter((printed) => printed.length > 0),
    ),
  )
  const all = printedLines.flat(3)
  const texts = new Map(
    consistentReadings(all.map((w) => ({ text: w.text.trim(), confidence: w.confidence }))).map((t, k) => [
      all[k]!,
      t,
    ]),
  )
  const words: Array<LayoutItem> = []
  const paragraphs: Array<string> = []
  for (const block of printedLines) {
    for (const paragraph of block) {
      const lines: Array<string> = []
      for (const printed of paragraph) {
        for (const word of printed) {
          const { x0, y0, x1, y1 } = word.bbox
          words.push({
            text: texts.get(word)!,
            x: round(x0 / scale),
            y: round(y0 / scale),
            width: round((x1 - x0) / scale),
            height: round((y1 - y0) / scale),
            confidence: round(word.confidence),
          })
        }
        lines.push(printed.map((word) => texts.get(word)!).join(" "))
      }
      paragraphs.push(lines.join("\n"))
    }
  }
  const confidence =
    words.length === 0 ? 0 : round(words.reduce((sum, w) => sum + (w.confidence ?? 0), 0) / words.length)
  const text = (result.data.blocks ? paragraphs.join("\n\n") : result.data.text)
    .split("\n")
    .map((l) => l.replace(/[ \t]+$/u, ""))
    .join("\n")
    .replace(/\n{3,}/g, "\n\n")
    .trim()
  return { text, words, width: round(size.width / scale), height: round(size.height / scale), confidence }
}

/** Stops the shared tesseract worker (tests, shutdown); the next ocrPng starts a new one. */
export const terminateOcr = async (): Promise<void> => {
  const worker = current
  current = undefined
  if (worker === undefined) return
  await serialised(async () => {
    const running = await worker.catch(() => undefined)
    if (running !== undefined && !(running instanceof ParseFailure)) await running.worker.terminate()
  })
}
