import type { Box } from "@dxs/domain/Tables"
import type { PageGraphics } from "./PdfGraphics.ts"
import { type FoundTable, latticeTables } from "./PdfLattice.ts"
import { streamTables } from "./PdfStream.ts"
import type { PageText, TextRun } from "./PdfText.ts"
import { type Frame, fromFrame, type Word, wordsOfRuns } from "./PdfWords.ts"

/**
 * The tables of a PDF page, the same whichever engine read it: ruled tables from the page's rulings
 * (PdfLattice.ts), then unruled ones from the alignment of the remaining words (PdfStream.ts), in each
 * writing direction that has text. A page without rulings and without text set in columns (see
 * `PageText.columnEvidence`) is not searched at all: it costs nothing.
 */

/**
 * At least this many lines with wide gaps or column jumps before unruled tables are looked for: a table
 * needs three rows of cells.
 */
const minColumnEvidence = 3
/** A writing direction with fewer words than this holds no unruled table. */
const minWordsPerFrame = 6

const centreOf = (w: Word): [number, number] => fromFrame(w.frame, (w.x0 + w.x1) / 2, (w.y0 + w.y1) / 2)

const inside = ([x, y]: [number, number], box: Box) =>
  x >= box[0] && x <= box[2] && y >= box[1] && y <= box[3]

/** The tables of a page, top to bottom (left to right for tables side by side). */
export const pageTables = (
  runs: ReadonlyArray<TextRun>,
  text: PageText,
  graphics: PageGraphics,
): Array<FoundTable> => {
  const ruled = graphics.rulings.length >= 4
  const columns = text.columnEvidence >= minColumnEvidence
  if (!ruled && !columns) return []
  const words = wordsOfRuns(runs)
  if (words.length === 0) return []
  const lattice = ruled ? latticeTables(graphics.rulings, words) : []
  const found = [...lattice]
  if (columns) {
    const rest = words.filter((w) => {
      const c = centreOf(w)
      return !lattice.some((t) => inside(c, t.box))
    })
    for (const frame of [0, 1, 2, 3] as const satisfies ReadonlyArray<Frame>) {
      const inFrame = rest.filter((w) => w.frame === frame)
      if (inFrame.length >= minWordsPerFrame) found.push(...streamTables(inFrame, frame))
    }
  }
  return found.sort((a, b) => a.box[1] - b.box[1] || a.box[0] - b.box[0])
}
