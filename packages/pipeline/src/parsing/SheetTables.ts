import type { PageBlock } from "@dxs/domain/Content"
import { type Table, type TableCell, tableLines, tableOfCells, withGuessedHeader } from "@dxs/domain/Tables"

/**
 * The tables of a spreadsheet sheet (or a CSV file): its used cells cut apart at empty rows and columns
 * (an XY cut: the used area split at every row with nothing in it, each part at every empty column, and so
 * on until nothing splits), merged ranges as spanning cells. A part of two cells or more is a table; a lone
 * cell (a title above a table) is a paragraph.
 */

export interface SheetCell {
  /** 1-based, as in the sheet. */
  readonly row: number
  readonly column: number
  readonly text: string
}

/** A merged range, 1-based and inclusive. */
export interface MergedRange {
  readonly top: number
  readonly left: number
  readonly bottom: number
  readonly right: number
}

interface Part {
  readonly cells: ReadonlyArray<SheetCell>
  readonly merges: ReadonlyArray<MergedRange>
}

const rowsOf = (p: Part) => [
  ...p.cells.map((c) => [c.row, c.row] as const),
  ...p.merges.map((m) => [m.top, m.bottom] as const),
]
const columnsOf = (p: Part) => [
  ...p.cells.map((c) => [c.column, c.column] as const),
  ...p.merges.map((m) => [m.left, m.right] as const),
]

/** Cuts a part at the gaps of its extents along one axis (ranges never cut: they hold their rows). */
const cut = (part: Part, axis: "row" | "column"): Array<Part> => {
  const extents = (axis === "row" ? rowsOf(part) : columnsOf(part)).sort((a, b) => a[0] - b[0])
  const bands: Array<[number, number]> = []
  for (const [from, to] of extents) {
    const last = bands[bands.length - 1]
    if (last !== undefined && from <= last[1] + 1) last[1] = Math.max(last[1], to)
    else bands.push([from, to])
  }
  if (bands.length <= 1) return [part]
  const bandOf = (at: number) => bands.findIndex(([from, to]) => at >= from && at <= to)
  const parts: Array<{ cells: Array<SheetCell>; merges: Array<MergedRange> }> = bands.map(() => ({
    cells: [],
    merges: [],
  }))
  for (const c of part.cells) parts[bandOf(axis === "row" ? c.row : c.column)]!.cells.push(c)
  for (const m of part.merges) parts[bandOf(axis === "row" ? m.top : m.left)]!.merges.push(m)
  return parts
}

/** The XY cut: parts that neither empty rows nor empty columns split any further, top to bottom. */
const parts = (whole: Part): Array<Part> => {
  const done: Array<Part> = []
  const pending: Array<{ part: Part; axis: "row" | "column"; tried: number }> = [
    { part: whole, axis: "row", tried: 0 },
  ]
  while (pending.length > 0) {
    const { part, axis, tried } = pending.shift()!
    const split = cut(part, axis)
    const other: "row" | "column" = axis === "row" ? "column" : "row"
    if (split.length === 1) {
      if (tried === 1) done.push(part)
      else pending.unshift({ part, axis: other, tried: tried + 1 })
    } else pending.unshift(...split.map((p) => ({ part: p, axis: other, tried: 0 })))
  }
  const top = (p: Part) => Math.min(...rowsOf(p).map((r) => r[0]))
  const left = (p: Part) => Math.min(...columnsOf(p).map((c) => c[0]))
  return done.sort((a, b) => top(a) - top(b) || left(a) - left(b))
}

const partTable = (part: Part): Table | undefined => {
  const top = Math.min(...rowsOf(part).map((r) => r[0]))
  const left = Math.min(...columnsOf(part).map((c) => c[0]))
  const mergeAt = new Map(part.merges.map((m) => [`${m.top}:${m.left}`, m]))
  const cells: Array<TableCell> = part.cells.map((c) => {
    const m = mergeAt.get(`${c.row}:${c.column}`)
    return {
      row: c.row - top,
      column: c.column - left,
      row_span: m ? m.bottom - m.top + 1 : 1,
      column_span: m ? m.right - m.left + 1 : 1,
      text: c.text,
      header: false,
      bbox: null,
    }
  })
  const table = tableOfCells(cells)
  return table === undefined ? undefined : withGuessedHeader(table)
}

/** The sheet's tables and the blocks that place them (lone cells as paragraphs), top to bottom. */
export const sheetTables = (
  cells: ReadonlyArray<SheetCell>,
  merges: ReadonlyArray<MergedRange>,
): { readonly tables: Array<Table>; readonly blocks: Array<PageBlock> } => {
  const tables: Array<Table> = []
  const blocks: Array<PageBlock> = []
  if (cells.length === 0) return { tables, blocks }
  // Only ranges whose first cell holds something: a merge of empty cells is formatting.
  const filled = new Set(cells.map((c) => `${c.row}:${c.column}`))
  const used = merges.filter((m) => filled.has(`${m.top}:${m.left}`))
  for (const part of parts({ cells, merges: used })) {
    if (part.cells.length === 1) {
      blocks.push({ kind: "paragraph", text: part.cells[0]!.text, bbox: null })
      continue
    }
    const table = partTable(part)
    if (table === undefined) continue
    tables.push(table)
    blocks.push({ kind: "table", text: tableLines(table).join("\n"), bbox: null, table: tables.length - 1 })
  }
  return { tables, blocks }
}
