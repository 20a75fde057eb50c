import { blocksOfText, type PageBlock } from "@dxs/domain/Content"
import { type Table, tableGrid, tableOfCells } from "@dxs/domain/Tables"
import type { ParsedPage } from "./Backend.ts"

/**
 * Structure for formats whose text is cut into pages of about 3,000 characters (web pages, e-mail bodies,
 * Markdown): the tables and headings the converter read, placed on the pages where their text landed. A
 * table whose rows were cut across pages becomes one table per page, the later ones `continued`.
 */

export interface TextStructure {
  readonly tables: ReadonlyArray<Table>
  readonly headings: ReadonlyArray<{ readonly text: string; readonly level: number }>
}

export const noStructure: TextStructure = { tables: [], headings: [] }

const oneLine = (text: string) => text.replace(/\s+/gu, " ").trim()

/** The rows `from`–`to` of a table (spans cut at its edges), as a table of their own. */
const rowsOfTable = (table: Table, from: number, to: number, continued: boolean): Table | undefined =>
  tableOfCells(
    table.cells
      .filter((c) => c.row + c.row_span > from && c.row <= to)
      .map((c) => {
        const row = Math.max(c.row, from)
        // A cell reaching in from the previous part shows its text there only (as the full grid does).
        const text = c.row < from ? "" : c.text
        return { ...c, row: row - from, row_span: Math.min(c.row + c.row_span, to + 1) - row, text }
      }),
    { bbox: table.bbox, continued },
  )

/**
 * Where each table's rows are: the page of each row line found in order (a cursor moves through the pages'
 * lines), then the table cut at the page changes. A table whose lines are not found is left out.
 */
const placeTables = (pages: ReadonlyArray<ParsedPage>, tables: ReadonlyArray<Table>): Array<Array<Table>> => {
  const placed: Array<Array<Table>> = pages.map(() => [])
  const lines = pages.map((p) => p.text.split("\n").map((l) => l.trim()))
  let page = 0
  let line = 0
  for (const table of tables) {
    const grid = tableGrid(table)
    const pageOfRow: Array<number | undefined> = []
    let p = page
    let l = line
    for (const row of grid) {
      const cells = row.map(oneLine)
      if (cells.every((c) => c === "")) {
        pageOfRow.push(undefined)
        continue
      }
      const wanted = cells.join(" | ").trim()
      let found: [number, number] | undefined
      for (let q = p; q < pages.length && found === undefined; q++) {
        const at = lines[q]!.indexOf(wanted, q === p ? l : 0)
        if (at >= 0) found = [q, at]
      }
      if (found === undefined) break
      ;[p, l] = [found[0], found[1] + 1]
      pageOfRow.push(p)
    }
    if (pageOfRow.filter((x) => x !== undefined).length === 0) continue
    page = p
    line = l
    // Empty rows go with the row before them.
    let last = pageOfRow.find((x) => x !== undefined)!
    const rowsPage = grid.map((_, r) => (last = pageOfRow[r] ?? last))
    let start = 0
    for (let r = 1; r <= grid.length; r++) {
      if (r < grid.length && rowsPage[r] === rowsPage[start]) continue
      const part = rowsOfTable(table, start, r - 1, start > 0)
      if (part !== undefined) placed[rowsPage[start]!]!.push(part)
      start = r
    }
  }
  return placed
}

const markdownHeading = /^(#{1,6})\s+(\S.*)$/u

/**
 * The pages with their tables and blocks: blocks from each page's text (paragraphs, list items, the page's
 * tables where their lines are), a paragraph that is one of the recorded headings (in order) a heading, and
 * with `markdown` a one-line paragraph `# Title` a heading too.
 */
export const placeStructure = (
  pages: ReadonlyArray<ParsedPage>,
  structure: TextStructure,
  options: { readonly markdown?: boolean } = {},
): Array<ParsedPage> => {
  const tables = placeTables(pages, structure.tables)
  let nextHeading = 0
  return pages.map((page, i) => {
    const blocks = blocksOfText(page.text, tables[i]!).map((b): PageBlock => {
      if (b.kind !== "paragraph") return b
      const text = oneLine(b.text)
      const upcoming = structure.headings.findIndex((h, k) => k >= nextHeading && h.text === text)
      if (upcoming >= 0 && upcoming - nextHeading < 20) {
        nextHeading = upcoming + 1
        return { ...b, kind: "heading", text, level: structure.headings[upcoming]!.level }
      }
      const md = options.markdown && !b.text.includes("\n") ? markdownHeading.exec(text) : null
      return md ? { ...b, kind: "heading", text: md[2]!, level: md[1]!.length } : b
    })
    return { ...page, tables: tables[i]!, blocks }
  })
}
