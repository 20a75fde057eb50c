/**
 * Image fixtures drawn by the tests themselves: known words at known places, rendered with @napi-rs/canvas
 * in DejaVu Sans, then converted with sharp.
 */
import { existsSync } from "node:fs"
import { createCanvas, GlobalFonts } from "@napi-rs/canvas"

const dejaVu = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
const family =
  existsSync(dejaVu) && GlobalFonts.registerFromPath(dejaVu, "Fixture Sans") ? "Fixture Sans" : "sans-serif"

/** Where a word's ink is, in pixels (top-left origin). */
export interface InkBox {
  readonly text: string
  readonly x: number
  readonly y: number
  readonly width: number
  readonly height: number
}

export interface TextImage {
  readonly png: Buffer
  readonly width: number
  readonly height: number
  readonly words: ReadonlyArray<InkBox>
}

/** Black lines of text on white (or on transparency), one word drawn at a time so each ink box is known. */
export const textImage = (
  lines: ReadonlyArray<string>,
  options: {
    width?: number
    height?: number
    fontSize?: number
    transparent?: boolean
    left?: number
    /** Colour of the text (black by default). */
    ink?: string
    /** First line's baseline (one line height down by default). */
    top?: number
    /** Height of black bands drawn along the top and bottom edges, as a scanner's lid leaves them. */
    darkBands?: number
  } = {},
): TextImage => {
  const fontSize = options.fontSize ?? 40
  const width = options.width ?? 1240
  const left = options.left ?? 60
  const lineHeight = Math.round(fontSize * 1.8)
  const top = options.top ?? lineHeight
  const height = options.height ?? top + lineHeight * lines.length
  const canvas = createCanvas(width, height)
  const g = canvas.getContext("2d")
  if (!options.transparent) {
    g.fillStyle = "#ffffff"
    g.fillRect(0, 0, width, height)
  }
  g.fillStyle = "#000000"
  if (options.darkBands !== undefined) {
    g.fillRect(0, 0, width, options.darkBands)
    g.fillRect(0, height - options.darkBands, width, options.darkBands)
  }
  g.fillStyle = options.ink ?? "#000000"
  g.font = `${fontSize}px "${family}"`
  g.textBaseline = "alphabetic"
  const words: Array<InkBox> = []
  lines.forEach((line, i) => {
    const baseline = top + lineHeight * i
    let x = left
    for (const word of line.split(" ")) {
      const m = g.measureText(word)
      g.fillText(word, x, baseline)
      words.push({
        text: word,
        x: x - m.actualBoundingBoxLeft,
        y: baseline - m.actualBoundingBoxAscent,
        width: m.actualBoundingBoxLeft + m.actualBoundingBoxRight,
        height: m.actualBoundingBoxAscent + m.actualBoundingBoxDescent,
      })
      x += g.measureText(`${word} `).width
    }
  })
  return { png: canvas.toBuffer("image/png"), width, height, words }
}

/** A 24-bit bottom-up BMP of raw RGB pixels (sharp cannot write BMP). */
export const bmp = (rgb: Uint8Array, width: number, height: number): Uint8Array => {
  const row = Math.ceil((width * 3) / 4) * 4
  const out = Buffer.alloc(54 + row * height)
  out.write("BM", 0, "latin1")
  out.writeUInt32LE(out.length, 2)
  out.writeUInt32LE(54, 10)
  out.writeUInt32LE(40, 14)
  out.writeInt32LE(width, 18)
  out.writeInt32LE(height, 22)
  out.writeUInt16LE(1, 26)
  out.writeUInt16LE(24, 28)
  out.writeUInt32LE(row * height, 34)
  out.writeInt32LE(11811, 38) // 300 dpi in pixels per metre
  out.writeInt32LE(11811, 42)
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const from = (y * width + x) * 3
      const to = 54 + (height - 1 - y) * row + x * 3
      out[to] = rgb[from + 2]!
      out[to + 1] = rgb[from + 1]!
      out[to + 2] = rgb[from]!
    }
  }
  return out
}
