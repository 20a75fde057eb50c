/**
 * Tables as cells (pure): the model every format's parser produces and every reader (the page API, the
 * Markdown and JSON content, the model prompt, the local extractor, the web viewer) consumes.
 *
 * A table is a grid of `rows × columns` positions. Each cell sits at its top-left position (`row`,
 * `column`, 0-based) and covers `row_span × column_span` positions; every position is covered by exactly one
 * cell (empty positions are cells with empty text). `rows` (the API's full grid) puts a spanning cell's text
 * at its top-left position and "" in the positions it covers.
 *
 * Parsers that read a table the file states (HTML, Word, PowerPoint) give rows of cells with spans, as HTML
 * does; `layoutTable` places them with the HTML table layout rule (a cell takes the first position its row
 * leaves free). Sizes are bounded: a hostile file cannot make a grid of millions of positions.
 */

/** `[x0, y0, x1, y1]`: top-left origin, in the page's unit. */
export type Box = readonly [number, number, number, number]

export interface TableCell {
  readonly row: number
  readonly column: number
  readonly row_span: number
  readonly column_span: number
  readonly text: string
  /** A header cell (`<th>`, a repeated header row, a first row of labels). */
  readonly header: boolean
  readonly bbox: Box | null
}

export interface Table {
  readonly bbox: Box | null
  /** Every position of the grid covered once, by rows then columns of their top-left positions. */
  readonly cells: ReadonlyArray<TableCell>
  /** The table goes on from the previous page (a table split by a page break). */
  readonly continued: boolean
}

/** At most this many grid positions per table; rows beyond it are left out. */
export const maxTablePositions = 200_000
/** At most this many columns (HTML's own limit on colspan is 1000). */
export const maxTableColumns = 1000

/** A cell as a file states it: its row's next free position is where it goes. */
export interface StatedCell {
  readonly text: string
  readonly columnSpan?: number | undefined
  /** 0: to the end of the table (HTML `rowspan="0"`). */
  readonly rowSpan?: number | undefined
  readonly header?: boolean | undefined
  readonly bbox?: Box | null | undefined
}

const spanOf = (n: number | undefined, max: number): number =>
  n === undefined || !Number.isFinite(n) || n < 1 ? 1 : Math.min(Math.floor(n), max)

/**
 * Places stated rows of cells on a grid (the HTML table layout rule): each cell at the first position of its
 * row not covered by a cell above, spanning as stated (clipped to the table). Positions left uncovered
 * become empty cells, so the grid is rectangular. Undefined when no cell has text.
 */
export const layoutTable = (
  rows: ReadonlyArray<ReadonlyArray<StatedCell>>,
  options: { readonly bbox?: Box | null; readonly continued?: boolean } = {},
): Table | undefined => {
  const rowCount = rows.length
  // covered[r] = the columns of row r taken by cells placed above it.
  const covered: Array<Set<number>> = rows.map(() => new Set())
  const placed: Array<{
    row: number
    column: number
    rowSpan: number
    columnSpan: number
    cell: StatedCell
  }> = []
  let columns = 0
  let positions = 0
  for (let r = 0; r < rowCount; r++) {
    let column = 0
    for (const cell of rows[r]!) {
      while (covered[r]!.has(column)) column++
      if (column >= maxTableColumns) break
      const columnSpan = spanOf(cell.columnSpan, maxTableColumns - column)
      const rowSpan = cell.rowSpan === 0 ? rowCount - r : spanOf(cell.rowSpan, rowCount - r)
      for (let dr = 1; dr < rowSpan; dr++)
        for (let dc = 0; dc < columnSpan; dc++) covered[r + dr]!.add(column + dc)
      placed.push({ row: r, column, rowSpan, columnSpan, cell })
      column += columnSpan
    }
    columns = Math.max(columns, column)
    for (const c of covered[r]!) columns = Math.max(columns, c + 1)
    positions = (r + 1) * columns
    if (positions > maxTablePositions) break
  }
  const keptRows = Math.min(rowCount, Math.max(1, Math.floor(maxTablePositions / Math.max(1, columns))))
  const cells = placed
    .filter((p) => p.row < keptRows)
    .map(
      (p): TableCell => ({
        row: p.row,
        column: p.column,
        row_span: Math.min(p.rowSpan, keptRows - p.row),
        column_span: p.columnSpan,
        text: p.cell.text,
        header: p.cell.header === true,
        bbox: p.cell.bbox ?? null,
      }),
    )
  return tableOfCells(cells, options)
}

/**
 * A table from placed cells: positions no cell covers are filled with empty cells, cells that overlap one
 * placed before them are dropped. Undefined when no cell has text.
 */
export const tableOfCells = (
  cells: ReadonlyArray<TableCell>,
  options: { readonly bbox?: Box | null; readonly continued?: boolean } = {},
): Table | undefined => {
  if (!cells.some((c) => c.text.trim() !== "")) return undefined
  const rows = Math.max(...cells.map((c) => c.row + c.row_span))
  const columns = Math.min(maxTableColumns, Math.max(...cells.map((c) => c.column + c.column_span)))
  if (rows * columns > maxTablePositions) return undefined
  const owner = new Int32Array(rows * columns).fill(-1)
  const kept: Array<TableCell> = []
  for (const cell of cells) {
    const { row, column, row_span: rs, column_span: cs } = cell
    if (column >= columns) continue
    let free = true
    for (let r = row; r < row + rs && free; r++)
      for (let c = column; c < Math.min(columns, column + cs) && free; c++)
        free = owner[r * columns + c] === -1
    if (!free) continue
    const span = Math.min(cs, columns - column)
    for (let r = row; r < row + rs; r++)
      for (let c = column; c < column + span; c++) owner[r * columns + c] = 1
    kept.push(span === cs ? cell : { ...cell, column_span: span })
  }
  for (let r = 0; r < rows; r++)
    for (let c = 0; c < columns; c++)
      if (owner[r * columns + c] === -1)
        kept.push({ row: r, column: c, row_span: 1, column_span: 1, text: "", header: false, bbox: null })
  kept.sort((a, b) => a.row - b.row || a.column - b.column)
  return {
    bbox: options.bbox ?? boxAround(kept.flatMap((c) => (c.bbox ? [c.bbox] : []))),
    cells: kept,
    continued: options.continued ?? false,
  }
}

/** The smallest box around boxes, or null for none. */
export const boxAround = (boxes: ReadonlyArray<Box>): Box | null => {
  if (boxes.length === 0) return null
  let [x0, y0, x1, y1] = boxes[0]!
  for (const [a, b, c, d] of boxes) {
    x0 = Math.min(x0, a)
    y0 = Math.min(y0, b)
    x1 = Math.max(x1, c)
    y1 = Math.max(y1, d)
  }
  return [x0, y0, x1, y1]
}

export const tableSize = (table: Table): { readonly rows: number; readonly columns: number } => ({
  rows: table.cells.reduce((n, c) => Math.max(n, c.row + c.row_span), 0),
  columns: table.cells.reduce((n, c) => Math.max(n, c.column + c.column_span), 0),
})

/** The full grid, top row first: a spanning cell's text at its top-left position, "" where it spans. */
export const tableGrid = (table: Table): Array<Array<string>> => {
  const { rows, columns } = tableSize(table)
  const grid = Array.from({ length: rows }, () => new Array<string>(columns).fill(""))
  for (const c of table.cells) grid[c.row]![c.column] = c.text
  return grid
}

const oneLine = (text: string): string => text.replace(/\s+/gu, " ").trim()

/**
 * The table as lines of page text: one per row that has text, its positions' texts (each on one line)
 * joined by " | ". A Markdown row of the same table is this line between pipes.
 */
export const tableLines = (table: Table): Array<string> =>
  tableGrid(table)
    .map((row) => row.map(oneLine))
    .filter((row) => row.some((t) => t !== ""))
    .map((row) => row.join(" | ").trim())

/** The table's text: its lines, one per row. */
export const tableText = (table: Table): string => tableLines(table).join("\n")

const hasSpans = (table: Table): boolean => table.cells.some((c) => c.row_span > 1 || c.column_span > 1)

/** How many rows at the top are header rows (every cell that starts there is a header). */
export const headerRowCount = (table: Table): number => {
  const { rows } = tableSize(table)
  let n = 0
  for (let r = 0; r < rows; r++) {
    const starting = table.cells.filter((c) => c.row === r && c.text.trim() !== "")
    if (starting.length === 0 || !starting.every((c) => c.header)) break
    n = r + 1
  }
  return n
}

const escapeHtml = (text: string): string =>
  text.replace(/&/gu, "&amp;").replace(/</gu, "&lt;").replace(/>/gu, "&gt;").replace(/"/gu, "&quot;")

const markdownCell = (text: string): string =>
  text
    .trim()
    .replace(/\\/gu, "\\\\")
    .replace(/\|/gu, "\\|")
    .replace(/\s*\n\s*/gu, "<br>")
    .replace(/[ \t]+/gu, " ")

/** The table as HTML (spans need it in Markdown): `<th>` for header cells, line breaks as `<br>`. */
export const tableHtml = (table: Table): string => {
  const { rows } = tableSize(table)
  const lines = ["<table>"]
  for (let r = 0; r < rows; r++) {
    const cells = table.cells
      .filter((c) => c.row === r)
      .map((c) => {
        const tag = c.header ? "th" : "td"
        const spans =
          (c.row_span > 1 ? ` rowspan="${c.row_span}"` : "") +
          (c.column_span > 1 ? ` colspan="${c.column_span}"` : "")
        const text = escapeHtml(c.text.trim()).replace(/\s*\n\s*/gu, "<br>")
        return `<${tag}${spans}>${text}</${tag}>`
      })
    lines.push(`<tr>${cells.join("")}</tr>`)
  }
  lines.push("</table>")
  return lines.join("\n")
}

/**
 * The table in Markdown: a GitHub table (its first row as the header row) when every cell covers one
 * position and at most the first row is a header; else an HTML table, which keeps spans and header rows.
 */
export const tableMarkdown = (table: Table): string => {
  if (hasSpans(table) || headerRowCount(table) > 1) return tableHtml(table)
  const grid = tableGrid(table).map((row) => row.map(markdownCell))
  if (grid.length === 0) return ""
  const line = (row: ReadonlyArray<string>) => `| ${row.join(" | ")} |`
  const [head, ...body] = grid
  return [line(head!), line(head!.map(() => "---")), ...body.map(line)].join("\n")
}

const numeric = /^[\s(+\-−–$€£¥%]*\d[\d\s.,'’%)]*[a-z%]{0,3}$/iu

/**
 * Marks the first row as a header row when the file did not say: every one of its cells has text that is
 * not a number, and some column below it holds numbers (a row of labels over values).
 */
export const withGuessedHeader = (table: Table): Table => {
  if (table.cells.some((c) => c.header)) return table
  const first = table.cells.filter((c) => c.row === 0)
  const { rows } = tableSize(table)
  if (rows < 2 || first.length < 2 || first.some((c) => c.text.trim() === "" || numeric.test(c.text)))
    return table
  const numbersBelow = table.cells.some((c) => c.row > 0 && c.text.trim() !== "" && numeric.test(c.text))
  if (!numbersBelow) return table
  return { ...table, cells: table.cells.map((c) => (c.row === 0 ? { ...c, header: true } : c)) }
}
