import { type LayoutItem, pageText } from "./Backend.ts"

/**
 * What both PDF engines (PDFium and pdf.js) share: rebuilding a page's text and layout from positioned runs of
 * text, the thresholds that decide when a page goes to OCR, the resolutions of page images, and the
 * document-information helpers.
 */

/** Pages with fewer visible characters than this have no real text layer: OCR them when they show an image. */
export const minTextChars = 25
/** At least this many paths and no text: text drawn as outlines, worth OCR. */
export const minDrawnPaths = 200
/** Smallest image (in its own pixels) worth OCR on a page without text. */
const minImagePixels = 40_000

/** An image large enough to hold a few words. */
export const readable = (width: number, height: number): boolean =>
  width >= 16 && height >= 16 && width * height >= minImagePixels

export interface Resolution {
  readonly dpi: number
  readonly maxSide?: number
  readonly maxPixels?: number
}
/** OCR images: 300 dpi, at most the pixels of a Letter page at 300 dpi (larger pages get less). */
export const ocrResolution: Resolution = { dpi: 300, maxPixels: 8_500_000 }
/** `renderPage` images: 150 dpi, at most 2000 pixels on the longer side. */
export const renderResolution: Resolution = { dpi: 150, maxSide: 2000 }

/** Pixels per point for a page of `width` × `height` points, reduced to keep within the resolution's limits. */
export const scaleForSize = (
  width: number,
  height: number,
  { dpi, maxSide = Infinity, maxPixels = Infinity }: Resolution,
): number => {
  const w = Math.max(width, 1)
  const h = Math.max(height, 1)
  return Math.min(dpi / 72, maxSide / Math.max(w, h), Math.sqrt(maxPixels / (w * h)))
}

export const message = (e: unknown): string =>
  (e instanceof Error ? e.message : String(e)).replace(/\.$/u, "")

export const sentence = (s: string) => s.charAt(0).toLowerCase() + s.slice(1)

/** The header may follow some junk, but must come within the first 1024 bytes (as readers accept it). */
export const hasPdfHeader = (bytes: Uint8Array): boolean => {
  const end = Math.min(bytes.length - 4, 1024)
  for (let i = 0; i < end; i++) {
    if (bytes[i] === 0x25 && bytes[i + 1] === 0x50 && bytes[i + 2] === 0x44 && bytes[i + 3] === 0x46)
      return true
  }
  return false
}

/** An Info or XMP value as text (XMP lists, such as several authors, joined), or undefined when blank. */
export const infoText = (value: unknown): string | undefined => {
  const joined = Array.isArray(value) ? value.filter((v) => typeof v === "string").join(", ") : value
  if (typeof joined !== "string") return undefined
  // Info strings are often NUL-padded or blank.
  const cleaned = joined.replace(/\0/g, "").trim()
  return cleaned === "" ? undefined : cleaned
}

export const round = (n: number): number => Math.round(n * 100) / 100

/**
 * A run of text drawn in one go along one direction: a pdf.js text item, or characters PDFium found side by
 * side. Positions are in top-left page points (rotation applied).
 */
export interface TextRun {
  readonly str: string
  /** The engine saw the line end after this run. */
  readonly hasEOL: boolean
  /** Start of the baseline (horizontal text) or of the centre line (vertical text). */
  readonly x0: number
  readonly y0: number
  /** Unit vector along the text's x axis. */
  readonly ux: number
  readonly uy: number
  /** Unit vector towards the top of the glyphs. */
  readonly vx: number
  readonly vy: number
  /** Top-to-bottom writing (CJK). */
  readonly vertical: boolean
  /** Advance along the writing direction. */
  readonly length: number
  /** Size across it: the font size for horizontal text. */
  readonly size: number
}

/** A line of the rebuilt text with where it is: what page structure (PdfLayout.ts) is read from. */
export interface TextLine {
  readonly text: string
  /** Top-left page points. */
  readonly x0: number
  readonly y0: number
  readonly x1: number
  readonly y1: number
  /** The largest font size on the line. */
  readonly size: number
  /** A blank line comes before it in the text: it starts a block. */
  readonly startsBlock: boolean
}

export interface PageText {
  readonly text: string
  readonly layout: Array<LayoutItem>
  /** Characters of visible text, for "does this page have a text layer". */
  readonly chars: number
  /** The lines of `text` with their boxes (the text's own lines, before blank lines are tidied). */
  readonly lines: Array<TextLine>
  /**
   * Evidence of text set in columns, which tables need: the longest stretch of lines (one line without
   * may interrupt it) that each have a gap of about an em or more between two runs, or the number of jumps
   * back up the page (text drawn column by column), whichever is more. Pages without are not searched.
   */
  readonly columnEvidence: number
}

/** A run's box (top-left points), advancing along (dx, dy). */
const runBox = (
  { x0, y0, ux, uy, vx, vy, vertical, length, size }: TextRun,
  dx: number,
  dy: number,
): { readonly x: number; readonly y: number; readonly w: number; readonly h: number } => {
  if (ux === 1 && uy === 0 && vx === 0 && vy === -1) return { x: x0, y: y0 - size, w: length, h: size }
  // Bounding box of the four corners (rotated or skewed text; vertical text is centred on its origin).
  const ox = vertical ? x0 - (ux * size) / 2 : x0
  const oy = vertical ? y0 - (uy * size) / 2 : y0
  const ax = dx * length
  const ay = dy * length
  const bx = vertical ? ux * size : vx * size
  const by = vertical ? uy * size : vy * size
  const x = Math.min(ox, ox + ax, ox + bx, ox + ax + bx)
  const y = Math.min(oy, oy + ay, oy + by, oy + ay + by)
  return {
    x,
    y,
    w: Math.max(ox, ox + ax, ox + bx, ox + ax + bx) - x,
    h: Math.max(oy, oy + ay, oy + by, oy + ay + by) - y,
  }
}

/**
 * Rebuilds a page's text from runs, in content order (which is reading order for nearly every producer):
 * runs on one baseline make a line, joined with a space where the engine found a gap it did not fill; a new
 * line starts at the engine's end-of-line marks, when the baseline moves or the text jumps back; a blank line
 * separates blocks (a clearly larger step between lines, or a jump up to a new column).
 */
export const textOfRuns = (runs: Iterable<TextRun>): PageText => {
  const lines: Array<string> = []
  const layout: Array<LayoutItem> = []
  const boxes: Array<TextLine> = []
  let line = ""
  // The current line's box and size, and whether a blank line came before it.
  let lx0 = 0
  let ly0 = 0
  let lx1 = 0
  let ly1 = 0
  let lsize = 0
  let lblock = false
  let jumps = 0
  let wideGapOnLine = false
  // Lines with wide gaps in a row (one line without may come between), and the longest such stretch.
  let streak = 0
  let without = 0
  let longest = 0
  const countLine = () => {
    if (wideGapOnLine) {
      streak++
      without = 0
      longest = Math.max(longest, streak)
    } else if (++without > 1) streak = 0
  }
  const endLine = () => {
    boxes.push({
      text: line,
      x0: round(lx0),
      y0: round(ly0),
      x1: round(lx1),
      y1: round(ly1),
      size: lsize,
      startsBlock: lblock,
    })
  }
  let chars = 0
  let space = false
  let eol = false
  // The previous run: direction of advance, position along and across it, end, size, text.
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
  for (const run of runs) {
    const { str, hasEOL, x0, y0, ux, uy, vx, vy, vertical, length, size } = run
    if (str.trim() === "") {
      // Whitespace runs carry no useful position (pdf.js gives them the start of the previous item).
      if (str.length > 0 && open) space = true
      if (hasEOL) eol = true
      continue
    }
    // Advance direction.
    const dx = vertical ? -vx : ux
    const dy = vertical ? -vy : uy
    const { x, y, w, h } = runBox(run, dx, dy)
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
        endLine()
        const step = across - lineAcross
        const block =
          step < -big || (step > 1.5 * big && (pitch > 0 ? step > 1.35 * pitch : step > 2.4 * big))
        if (block) lines.push("")
        if (step < -big) jumps++
        countLine()
        wideGapOnLine = false
        lblock = block
        lx0 = x
        ly0 = y
        lx1 = x + w
        ly1 = y + h
        lsize = size
        // The usual step between lines of a block: a block's own gap does not count.
        if (step > 0 && !block) pitch = step
        lineAcross = across
        line = str
      } else {
        if ((space || gap > 0.15 * big) && !line.endsWith(" ") && !str.startsWith(" ")) line += " "
        if (gap > 0.9 * big) wideGapOnLine = true
        line += str
        lx0 = Math.min(lx0, x)
        ly0 = Math.min(ly0, y)
        lx1 = Math.max(lx1, x + w)
        ly1 = Math.max(ly1, y + h)
        lsize = Math.max(lsize, size)
      }
    } else {
      open = true
      lineAcross = across
      line = str
      lx0 = x
      ly0 = y
      lx1 = x + w
      ly1 = y + h
      lsize = size
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
  if (open) {
    lines.push(line)
    endLine()
  }
  countLine()
  return { text: pageText(lines), layout, chars, lines: boxes, columnEvidence: Math.max(longest, jumps) }
}
