import type { Box } from "@dxs/domain/Tables"
import type { Ruling } from "./PdfGraphics.ts"
import type { TextRun } from "./PdfText.ts"

/**
 * Words of a PDF page for table detection, in the frame of their writing direction: a table printed
 * sideways (its text running up the page) is read in a frame turned with it, so that its rows run across
 * and its columns down, as in an upright one. Runs are split into words at their spaces; a word's extent is
 * its share of the run's advance (engines give positions per run, not per character).
 */

/** One of the four upright writing directions: 0 left to right, 1 down the page, 2 upside down, 3 up. */
export type Frame = 0 | 1 | 2 | 3

/** Unit vectors of each frame's writing direction, in top-left page coordinates. */
const directions: ReadonlyArray<readonly [number, number]> = [
  [1, 0],
  [0, 1],
  [-1, 0],
  [0, -1],
]

export interface Word {
  readonly text: string
  /** Along the writing direction, in the word's frame. */
  readonly x0: number
  readonly x1: number
  /** Across it, growing towards the bottom of the glyphs: top of the glyphs and baseline. */
  readonly y0: number
  readonly y1: number
  readonly size: number
  readonly frame: Frame
}

/** Page coordinates → frame coordinates. */
export const toFrame = (frame: Frame, x: number, y: number): [number, number] => {
  const [ux, uy] = directions[frame]!
  // The glyphs' "down" is the writing direction turned a quarter clockwise on screen: (-uy, ux).
  return [x * ux + y * uy, -x * uy + y * ux]
}

/** Frame coordinates → page coordinates. */
export const fromFrame = (frame: Frame, X: number, Y: number): [number, number] => {
  const [ux, uy] = directions[frame]!
  return [X * ux - Y * uy, X * uy + Y * ux]
}

/** A box in frame coordinates as a page box. */
export const boxToPage = (frame: Frame, box: Box): Box => {
  const [a, b] = fromFrame(frame, box[0], box[1])
  const [c, d] = fromFrame(frame, box[2], box[3])
  return [Math.min(a, c), Math.min(b, d), Math.max(a, c), Math.max(b, d)]
}

/** A ruling in frame coordinates (still axis-aligned: frames turn by quarter turns). */
export const rulingToFrame = (frame: Frame, r: Ruling): Ruling => {
  const [a, b] = toFrame(frame, r.x0, r.y0)
  const [c, d] = toFrame(frame, r.x1, r.y1)
  return { x0: Math.min(a, c), y0: Math.min(b, d), x1: Math.max(a, c), y1: Math.max(b, d) }
}

const frameOf = (run: TextRun): Frame | undefined => {
  if (run.vertical) return undefined
  for (let f = 0; f < 4; f++) {
    const [ux, uy] = directions[f]!
    if (run.ux * ux + run.uy * uy > 0.99) return f as Frame
  }
  return undefined
}

/** The words of runs, each in the frame of its run's direction (skewed and vertical CJK text left out). */
export const wordsOfRuns = (runs: ReadonlyArray<TextRun>): Array<Word> => {
  const words: Array<Word> = []
  for (const run of runs) {
    const str = run.str
    if (str.trim() === "") continue
    const frame = frameOf(run)
    if (frame === undefined) continue
    const [along, baseline] = toFrame(frame, run.x0, run.y0)
    const size = run.size > 0 ? run.size : 1
    const scale = str.length > 0 ? run.length / str.length : 0
    for (const m of str.matchAll(/\S+/gu)) {
      words.push({
        text: m[0],
        x0: along + m.index * scale,
        x1: along + (m.index + m[0].length) * scale,
        y0: baseline - size,
        y1: baseline,
        size,
        frame,
      })
    }
  }
  return words
}

export interface TextRow {
  readonly words: Array<Word>
  y0: number
  y1: number
}

/** Words grouped into rows of text (overlapping vertically by half the smaller height), top to bottom. */
export const rowsOfWords = (words: ReadonlyArray<Word>): Array<TextRow> => {
  const sorted = [...words].sort((a, b) => a.y1 - b.y1 || a.x0 - b.x0)
  const rows: Array<TextRow> = []
  for (const word of sorted) {
    const h = word.y1 - word.y0
    let joined: TextRow | undefined
    for (let i = rows.length - 1; i >= 0 && i >= rows.length - 3; i--) {
      const row = rows[i]!
      const overlap = Math.min(row.y1, word.y1) - Math.max(row.y0, word.y0)
      if (overlap >= 0.5 * Math.min(h, row.y1 - row.y0)) {
        joined = row
        break
      }
    }
    if (joined === undefined) rows.push({ words: [word], y0: word.y0, y1: word.y1 })
    else {
      joined.words.push(word)
      joined.y0 = Math.min(joined.y0, word.y0)
      joined.y1 = Math.max(joined.y1, word.y1)
    }
  }
  for (const row of rows) row.words.sort((a, b) => a.x0 - b.x0)
  return rows.sort((a, b) => a.y0 - b.y0)
}

/**
 * Words of one cell or line in reading order: rows top to bottom, words left to right, a space between two
 * words unless they touch (a word drawn in pieces, a small capital and the rest).
 */
export const textOfWords = (words: ReadonlyArray<Word>): string =>
  rowsOfWords(words)
    .map((row) =>
      row.words
        .map((w, i) => {
          const before = row.words[i - 1]
          return before === undefined || w.x0 - before.x1 > 0.1 * Math.min(w.size, before.size)
            ? i === 0
              ? w.text
              : ` ${w.text}`
            : w.text
        })
        .join(""),
    )
    .join("\n")

export const boxOfWords = (words: ReadonlyArray<Word>): Box => [
  Math.min(...words.map((w) => w.x0)),
  Math.min(...words.map((w) => w.y0)),
  Math.max(...words.map((w) => w.x1)),
  Math.max(...words.map((w) => w.y1)),
]
