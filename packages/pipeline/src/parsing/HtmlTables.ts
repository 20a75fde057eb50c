import { layoutTable, type StatedCell, type Table, tableLines } from "@dxs/domain/Tables"
import type { TextStructure } from "./TextStructure.ts"

/**
 * The formatters that read an HTML page's structure while html-to-text writes its text: data tables as
 * cells (`rowspan`/`colspan`, `<th>` and `<thead>` rows as headers; a table inside a cell as text of that
 * cell), written into the text as one line per row (cells joined by " | ", see `tableLines`), and headings
 * with their level. Tables used for layout (a single column, `role="presentation"`, or tables inside) are
 * written as before: their cells' text in blocks.
 *
 * html-to-text converts synchronously, so what one conversion records is gathered in one module-level
 * collector, set for the conversion and cleared after it (`collectStructure`).
 */

// The subset of html-to-text 10's formatter API and of its DOM (domhandler) used here.
export interface DomNode {
  readonly type: string
  readonly name?: string
  readonly data?: string
  readonly attribs?: Readonly<Record<string, string>>
  readonly children?: ReadonlyArray<DomNode>
  readonly prev?: DomNode | null
}
interface TableCellText {
  readonly colspan: number
  readonly rowspan: number
  readonly text: string
}
export interface TextBuilder {
  addInline(text: string): void
  openBlock(options: { leadingLineBreaks: number }): void
  closeBlock(options: { trailingLineBreaks: number }): void
  openTable(): void
  openTableRow(): void
  openTableCell(options?: object): void
  closeTableCell(options: { colspan: number; rowspan: number }): void
  closeTableRow(): void
  closeTable(options: {
    tableToString: (rows: ReadonlyArray<ReadonlyArray<TableCellText>>) => string
    leadingLineBreaks: number
    trailingLineBreaks: number
  }): void
}
export type Formatter = (
  element: DomNode,
  walk: (nodes: ReadonlyArray<DomNode> | undefined, builder: TextBuilder) => void,
  builder: TextBuilder,
) => void

interface Collector {
  readonly tables: Array<Table>
  readonly headings: Array<{ readonly text: string; readonly level: number }>
  /** Data tables being written: a table inside another is text of its cell, not a table of its own. */
  depth: number
}

let collector: Collector | undefined

/** Runs one conversion, gathering the tables and headings its formatters read. */
export const collectStructure = <A>(
  convert: () => A,
): { readonly result: A; readonly structure: TextStructure } => {
  const mine: Collector = { tables: [], headings: [], depth: 0 }
  const outer = collector
  collector = mine
  try {
    return { result: convert(), structure: { tables: mine.tables, headings: mine.headings } }
  } finally {
    collector = outer
  }
}

const tags = (nodes: ReadonlyArray<DomNode> | undefined): Array<DomNode> =>
  (nodes ?? []).filter((n) => n.type === "tag" || n.type === "script" || n.type === "style")

const isTag = (n: DomNode, ...names: Array<string>) => n.type === "tag" && names.includes(n.name ?? "")

/** The rows of a table element (inside thead, tbody, tfoot), each with whether it is a header row. */
const rowsOf = (table: DomNode): Array<{ readonly row: DomNode; readonly header: boolean }> =>
  tags(table.children).flatMap((child) =>
    isTag(child, "tr")
      ? [{ row: child, header: false }]
      : isTag(child, "thead", "tbody", "tfoot")
        ? tags(child.children)
            .filter((r) => isTag(r, "tr"))
            .map((row) => ({ row, header: child.name === "thead" }))
        : [],
  )

const cellsOf = (row: DomNode) => tags(row.children).filter((c) => isTag(c, "td", "th"))

const holdsTable = (node: DomNode): boolean =>
  (node.children ?? []).some((c) => isTag(c, "table") || holdsTable(c))

/** A table that lays a page out rather than holding data. */
const isLayoutTable = (table: DomNode): boolean => {
  const role = table.attribs?.role?.toLowerCase()
  if (role === "presentation" || role === "none") return true
  const rows = rowsOf(table)
  if (rows.some(({ row }) => cellsOf(row).some((c) => isTag(c, "th"))) || rows.some((r) => r.header))
    return false
  return rows.filter(({ row }) => cellsOf(row).length >= 2).length < 2 || holdsTable(table)
}

const span = (cell: DomNode, name: string): number => {
  const n = Number.parseInt(cell.attribs?.[name] ?? "", 10)
  return Number.isFinite(n) && n >= 0 ? n : 1
}

/** A data table as cells and as lines of text; a layout table as blocks of its cells' text. */
export const tableFormatter: Formatter = (element, walk, builder) => {
  if (isLayoutTable(element)) {
    builder.openBlock({ leadingLineBreaks: 2 })
    walk(element.children, builder)
    builder.closeBlock({ trailingLineBreaks: 2 })
    return
  }
  const rows = rowsOf(element)
  const headers: Array<Array<boolean>> = []
  // The caption above the table, as its own line.
  const captions = tags(element.children).filter((c) => isTag(c, "caption"))
  for (const caption of captions) {
    builder.openBlock({ leadingLineBreaks: 2 })
    walk(caption.children, builder)
    builder.closeBlock({ trailingLineBreaks: 1 })
  }
  if (collector !== undefined) collector.depth++
  builder.openTable()
  for (const { row, header } of rows) {
    builder.openTableRow()
    const flags: Array<boolean> = []
    for (const cell of cellsOf(row)) {
      builder.openTableCell()
      walk(cell.children, builder)
      builder.closeTableCell({ colspan: span(cell, "colspan") || 1, rowspan: span(cell, "rowspan") })
      flags.push(header || cell.name === "th")
    }
    headers.push(flags)
    builder.closeTableRow()
  }
  const nested = collector !== undefined && collector.depth > 1
  builder.closeTable({
    tableToString: (cellRows) => {
      const stated = cellRows.map((cells, r) =>
        cells.map(
          (c, i): StatedCell => ({
            text: c.text.replace(/[ \t]*\n[ \t]*/gu, "\n").trim(),
            columnSpan: c.colspan,
            rowSpan: c.rowspan,
            header: headers[r]?.[i] ?? false,
          }),
        ),
      )
      const table = layoutTable(stated)
      if (table === undefined) return ""
      if (!nested) collector?.tables.push(table)
      return tableLines(table).join("\n")
    },
    leadingLineBreaks: captions.length > 0 ? 1 : 2,
    trailingLineBreaks: 2,
  })
  if (collector !== undefined) collector.depth--
}

const textContent = (node: DomNode): string =>
  node.type === "text" ? (node.data ?? "") : (node.children ?? []).map(textContent).join("")

/** A heading as html-to-text writes one (a block, case kept), its text and level recorded. */
export const headingFormatter: Formatter = (element, walk, builder) => {
  builder.openBlock({ leadingLineBreaks: 2 })
  walk(element.children, builder)
  builder.closeBlock({ trailingLineBreaks: 2 })
  const text = textContent(element).replace(/\s+/gu, " ").trim()
  const level = Number((element.name ?? "h1").slice(1)) || 1
  if (text !== "" && collector !== undefined && collector.depth === 0)
    collector.headings.push({ text, level })
}
