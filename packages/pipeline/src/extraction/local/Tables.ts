/**
 * The local extractor reading tables: a page's table cells give the values in them their labels — in a
 * key–value table the label cell beside the value (or the header above it), in a table of line items the
 * column's header (with the row's own label in front of it when the row has one). A candidate found in a
 * cell takes that label, which scoring weighs as it weighs a `Label: value` line. For dynamic dimensions,
 * the cells of a column whose header names the dimension are its values (one per line item).
 *
 * Cells are found in the page text in table order (a cursor through the text), so a value the text states
 * twice is labelled where the table holds it.
 */
import { headerRowCount, type Table, tableGrid } from "@dxs/domain/Tables"
import type { DimensionQuery, PageText } from "../../llm/LanguageModel.ts"
import type { Candidate } from "./Candidates.ts"
import { stem, terms } from "./KeyTerms.ts"
import { escapeRegExp } from "./Text.ts"

/** A span of the page text that is a table cell, with the label its table gives it. */
export interface CellLabel {
  readonly start: number
  readonly end: number
  readonly label: string
  /** How the table labels it: "beside" (key–value) or "under" (a column header). */
  readonly how: "beside" | "under"
  /** The texts of the cell's row (a line item: which dimension value the row is about). */
  readonly row: ReadonlyArray<string>
}

const oneLine = (text: string) => text.replace(/\s+/gu, " ").trim()

/** A label cell: words, not a number, an amount or a code (letters and figures run together, `A5E3GP`). */
const isLabel = (text: string) =>
  /\p{L}{2}/u.test(text) &&
  !/^[\s\d.,:%$€£¥()+-]*$/u.test(text) &&
  !/(?=[\p{L}\d]*\p{L})(?=[\p{L}\d]*\d)[\p{L}\d]{5,}/u.test(text) &&
  text.length <= 80

const isValue = (text: string) => text !== "" && (/\d/u.test(text) || text.length <= 60)

/** The header rows of a table: those it states, else a first row of labels over rows with values. */
const headerRows = (table: Table, grid: ReadonlyArray<ReadonlyArray<string>>): number => {
  const stated = headerRowCount(table)
  if (stated > 0) return stated
  const first = grid[0]?.filter((t) => t !== "") ?? []
  const below = grid.slice(1).flat()
  // Headers are words: a first row with a figure in it is a row of values (a key–value table's first pair).
  const heads = first.length >= 2 && first.every((t) => isLabel(t) && !/\d/u.test(t))
  return grid.length > 1 && heads && below.some((t) => /\d/u.test(t)) ? 1 : 0
}

/** What labels each cell of the table: `[row, column, label, how]`. */
const labelsOf = (table: Table): Array<[number, number, string, CellLabel["how"]]> => {
  const grid = tableGrid(table).map((row) => row.map(oneLine))
  const columns = grid[0]?.length ?? 0
  const header = headerRows(table, grid)
  const heads = Array.from({ length: columns }, (_, c) =>
    oneLine(
      grid
        .slice(0, header)
        .map((row) => row[c])
        .join(" "),
    ),
  )
  const out: Array<[number, number, string, CellLabel["how"]]> = []
  for (let r = header; r < grid.length; r++)
    for (let c = 0; c < columns; c++) {
      const text = grid[r]![c]!
      if (!isValue(text)) continue
      const left = grid[r]!.slice(0, c).findLast((t) => t !== "")
      const rowLabel = c > 0 && grid[r]![0] !== "" && isLabel(grid[r]![0]!) ? grid[r]![0]! : undefined
      if (header === 0 && left !== undefined && isLabel(left)) out.push([r, c, left, "beside"])
      else if (heads[c]) out.push([r, c, oneLine(`${rowLabel ?? ""} ${heads[c]}`), "under"])
    }
  return out
}

/** Where each labelled cell of the page's tables is in its text (cells not found are left out). */
export const tableLabels = (text: string, tables: ReadonlyArray<Table>): Array<CellLabel> => {
  const flat = text.replace(/\s/gu, " ")
  const out: Array<CellLabel> = []
  for (const table of tables) {
    const grid = tableGrid(table).map((row) => row.map(oneLine))
    const labels = new Map(labelsOf(table).map(([r, c, label, how]) => [`${r}:${c}`, { label, how }]))
    let cursor = 0
    let start: number | undefined
    for (const [r, row] of grid.entries())
      for (const [c, cell] of row.entries()) {
        if (cell === "") continue
        // A cell's text as the page has it: its words with any spacing between them.
        const first = cell.split(" ").slice(0, 12).join(" ")
        let at = flat.indexOf(first, cursor)
        if (at < 0 && start !== undefined) at = flat.indexOf(first, start)
        if (at < 0) continue
        start ??= at
        cursor = at + first.length
        const label = labels.get(`${r}:${c}`)
        if (label !== undefined) out.push({ start: at, end: at + first.length, ...label, row })
      }
  }
  return out
}

const cellOf = (candidate: Candidate, cells: ReadonlyArray<CellLabel>) =>
  cells.find((c) => candidate.valueStart >= c.start && candidate.valueEnd <= c.end)

/**
 * The dimension value a candidate's table row is about: one of `values` stated by another cell of the row
 * (a line item's name), else undefined (a candidate outside every table, or a row naming none).
 */
export const rowDimensionValue = (
  candidate: Candidate,
  cells: ReadonlyArray<CellLabel>,
  values: ReadonlyArray<string>,
): { readonly value: string; readonly how: string } | undefined => {
  const cell = cellOf(candidate, cells)
  if (cell === undefined) return undefined
  const texts = cell.row.map((t) => t.toLowerCase())
  const value = values.find((v) => {
    const wanted = v.trim().toLowerCase()
    return (
      wanted !== "" &&
      texts.some((t) => t === wanted || new RegExp(`(^|\\W)${escapeRegExp(wanted)}(\\W|$)`, "u").test(t))
    )
  })
  return value === undefined ? undefined : { value, how: "same table row" }
}

/** The candidate as its table cell labels it (a candidate outside every cell stays as it is). */
export const labelledByTable = (candidate: Candidate, cells: ReadonlyArray<CellLabel>): Candidate => {
  const cell = cellOf(candidate, cells)
  if (cell === undefined) return candidate
  return {
    ...candidate,
    label: cell.label,
    pattern: `${candidate.pattern} in a table cell ${cell.how === "beside" ? "beside" : "under"} "${cell.label}"`,
  }
}

/**
 * Values of a dynamic dimension in the pages' tables: the cells of a column whose header names it (its
 * name's words), leaving out total rows. Each with its position in the page text, for ordering.
 */
export const tableDimensionValues = (
  dimension: DimensionQuery,
  page: PageText,
): Array<{ readonly value: string; readonly at: number }> => {
  const wanted = new Set(terms(`${dimension.name}`).map(stem))
  if (wanted.size === 0) return []
  const out: Array<{ value: string; at: number }> = []
  for (const table of page.tables ?? []) {
    const grid = tableGrid(table).map((row) => row.map(oneLine))
    const header = headerRows(table, grid)
    if (header === 0) continue
    for (let c = 0; c < (grid[0]?.length ?? 0); c++) {
      const head = grid
        .slice(0, header)
        .map((row) => row[c])
        .join(" ")
      if (!terms(head).some((t) => wanted.has(stem(t)))) continue
      for (const row of grid.slice(header)) {
        const value = row[c] ?? ""
        if (value === "" || value.length > 60 || /^(sub)?total\b/iu.test(value) || !/\p{L}/u.test(value))
          continue
        out.push({ value, at: Math.max(0, page.text.indexOf(value)) })
      }
    }
  }
  return out
}
