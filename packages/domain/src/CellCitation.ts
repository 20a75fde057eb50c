/**
 * A value cited from a table cell (pure): the cell is what the page image highlights, not the lines of text
 * around it. The cell is one whose words are all in the cited passage and that states the value (its words,
 * a number equal to it, or the date it is); when several do, the one with the most words in common with
 * the passage, and none when that leaves a tie.
 */
import { datesIn, numbersIn } from "./Grounding.ts"
import { parseDateOrdinal } from "./Resolution.ts"
import type { Box, Table } from "./Tables.ts"
import { parseNumber } from "./Values.ts"

const tokensOf = (text: string): Array<string> =>
  text
    .normalize("NFKC")
    .toLowerCase()
    .match(/[\p{L}\p{N}]+/gu) ?? []

/** Whether a cell's text states `value`: its words, a number equal to it, or the same date. */
const states = (cell: string, value: string): boolean => {
  const valueTokens = tokensOf(value)
  if (valueTokens.length === 0) return false
  const cellTokens = new Set(tokensOf(cell))
  if (valueTokens.every((t) => cellTokens.has(t))) return true
  const n = parseNumber(value.trim())
  if (n !== undefined && numbersIn(cell).some((m) => Math.abs(m - n) <= 1e-9 * Math.max(1, Math.abs(n))))
    return true
  const d = parseDateOrdinal(value.trim())
  return d !== undefined && datesIn(cell).includes(d)
}

export interface CellBox {
  readonly x: number
  readonly y: number
  readonly width: number
  readonly height: number
  readonly text: string
}

const boxOf = ([x0, y0, x1, y1]: Box, text: string): CellBox => ({
  x: x0,
  y: y0,
  width: x1 - x0,
  height: y1 - y0,
  text: text.replace(/\s+/gu, " ").trim(),
})

/** The box of the table cell a value was cited from, or undefined when no one cell is it. */
export const citedCell = (
  passage: string,
  value: string,
  tables: ReadonlyArray<Table>,
): CellBox | undefined => {
  const quoted = new Set(tokensOf(passage))
  if (quoted.size === 0) return undefined
  let best: { box: CellBox; words: number } | undefined
  let tie = false
  for (const table of tables)
    for (const cell of table.cells) {
      if (cell.bbox === null || cell.text.trim() === "") continue
      const words = tokensOf(cell.text)
      if (words.length === 0 || !words.every((w) => quoted.has(w)) || !states(cell.text, value)) continue
      if (best === undefined || words.length > best.words) {
        best = { box: boxOf(cell.bbox, cell.text), words: words.length }
        tie = false
      } else if (words.length === best.words) tie = true
    }
  return best === undefined || tie ? undefined : best.box
}

/** The highlight of a value cited from a table cell: its cell's box, or undefined when no one cell is it. */
export const citedCellBoxes = (
  passage: string,
  value: string,
  tables: ReadonlyArray<Table> | null | undefined,
): Array<CellBox> | undefined => {
  const cell = citedCell(passage, value, tables ?? [])
  return cell === undefined ? undefined : [cell]
}
