import { describe, expect, it } from "@effect/vitest"
import {
  headerRowCount,
  layoutTable,
  maxTablePositions,
  type StatedCell,
  type Table,
  tableGrid,
  tableHtml,
  tableLines,
  tableMarkdown,
  tableOfCells,
  tableSize,
  withGuessedHeader,
} from "./Tables.ts"

const cells = (...texts: Array<string>): Array<StatedCell> => texts.map((text) => ({ text }))

describe("layoutTable", () => {
  it("places a cell at the first position its row leaves free, below a cell spanning rows", () => {
    // Header 0.0 spans two rows; Merged Cell spans two columns: the HTML table layout rule.
    const table = layoutTable([
      [{ text: "Header 0.0", rowSpan: 2 }, ...cells("Header 0.1", "Header 0.2", "Header 0.3")],
      [...cells("Cell 1.1"), { text: "Merged Cell 1.2 1.3", columnSpan: 2 }],
      cells("Cell 2.0", "Cell 2.1", "Cell 2.2", "Cell 2.3"),
    ])!
    expect(tableSize(table)).toEqual({ rows: 3, columns: 4 })
    expect(tableGrid(table)).toEqual([
      ["Header 0.0", "Header 0.1", "Header 0.2", "Header 0.3"],
      ["", "Cell 1.1", "Merged Cell 1.2 1.3", ""],
      ["Cell 2.0", "Cell 2.1", "Cell 2.2", "Cell 2.3"],
    ])
    const merged = table.cells.find((c) => c.text === "Merged Cell 1.2 1.3")!
    expect([merged.row, merged.column, merged.row_span, merged.column_span]).toEqual([1, 2, 1, 2])
    // Every position is covered exactly once.
    const covered = table.cells.reduce((n, c) => n + c.row_span * c.column_span, 0)
    expect(covered).toBe(12)
  })

  it("clips spans to the table and reads rowspan 0 as to the end", () => {
    const table = layoutTable([
      [
        { text: "A", rowSpan: 0 },
        { text: "B", columnSpan: 99_999 },
      ],
      cells("C"),
      cells("D"),
    ])!
    expect(table.cells.find((c) => c.text === "A")!.row_span).toBe(3)
    expect(tableSize(table).columns).toBeLessThanOrEqual(1000)
    expect(tableGrid(table).map((r) => r[1])).toEqual(["B", "C", "D"])
  })

  it("makes ragged rows rectangular with empty cells, and answers nothing for a table without text", () => {
    const table = layoutTable([cells("a", "b", "c"), cells("d")])!
    expect(tableGrid(table)).toEqual([
      ["a", "b", "c"],
      ["d", "", ""],
    ])
    expect(layoutTable([cells("", " "), []])).toBeUndefined()
  })

  it("bounds a hostile table: a huge span and thousands of rows stay within the position limit", () => {
    const rows = Array.from({ length: 5000 }, (_, r) => [{ text: `r${r}`, columnSpan: 1000 }])
    const table = layoutTable(rows)!
    const { rows: n, columns } = tableSize(table)
    expect(n * columns).toBeLessThanOrEqual(maxTablePositions)
    expect(n).toBeGreaterThan(0)
  })
})

describe("tableOfCells", () => {
  it("fills uncovered positions and drops a cell overlapping one placed before it", () => {
    const table = tableOfCells([
      { row: 0, column: 0, row_span: 2, column_span: 2, text: "big", header: false, bbox: null },
      { row: 1, column: 1, row_span: 1, column_span: 1, text: "overlaps", header: false, bbox: null },
      { row: 2, column: 2, row_span: 1, column_span: 1, text: "corner", header: false, bbox: [0, 0, 1, 1] },
    ])!
    expect(table.cells.map((c) => c.text)).not.toContain("overlaps")
    expect(tableGrid(table)).toEqual([
      ["big", "", ""],
      ["", "", ""],
      ["", "", "corner"],
    ])
    expect(table.bbox).toEqual([0, 0, 1, 1])
  })
})

const invoice: Table = layoutTable([
  [
    { text: "Item", header: true },
    { text: "Qty", header: true },
    { text: "Price", header: true },
  ],
  cells("Widget | large", "2", "EUR 10,00"),
  cells("Gadget\nsmall", "", "EUR 5,00"),
])!

describe("tableLines and tableMarkdown", () => {
  it("writes one line per row with text, cells joined by ' | ' on one line each", () => {
    expect(tableLines(invoice)).toEqual([
      "Item | Qty | Price",
      "Widget | large | 2 | EUR 10,00",
      "Gadget small |  | EUR 5,00",
    ])
  })

  it("writes a GitHub table when no cell spans, escaping pipes and breaking lines with <br>", () => {
    expect(tableMarkdown(invoice)).toBe(
      [
        "| Item | Qty | Price |",
        "| --- | --- | --- |",
        "| Widget \\| large | 2 | EUR 10,00 |",
        "| Gadget<br>small |  | EUR 5,00 |",
      ].join("\n"),
    )
  })

  it("writes an HTML table when a cell spans or several rows are headers", () => {
    const spanning = layoutTable([[{ text: "Q1 & Q2", columnSpan: 2, header: true }], cells("<1>", "2")])!
    expect(tableMarkdown(spanning)).toBe(tableHtml(spanning))
    expect(tableHtml(spanning)).toBe(
      [
        "<table>",
        '<tr><th colspan="2">Q1 &amp; Q2</th></tr>',
        "<tr><td>&lt;1&gt;</td><td>2</td></tr>",
        "</table>",
      ].join("\n"),
    )
    const twoHeaders = layoutTable([
      [
        { text: "a", header: true },
        { text: "b", header: true },
      ],
      [
        { text: "c", header: true },
        { text: "d", header: true },
      ],
      cells("1", "2"),
    ])!
    expect(headerRowCount(twoHeaders)).toBe(2)
    expect(tableMarkdown(twoHeaders).startsWith("<table>")).toBe(true)
  })
})

describe("withGuessedHeader", () => {
  it("marks a first row of labels over numbers as the header, and leaves other tables alone", () => {
    const guessed = withGuessedHeader(layoutTable([cells("Year", "Revenue"), cells("2023", "1,200")])!)
    expect(guessed.cells.filter((c) => c.header).map((c) => c.text)).toEqual(["Year", "Revenue"])
    const words = withGuessedHeader(layoutTable([cells("Name", "City"), cells("Ada", "London")])!)
    expect(words.cells.some((c) => c.header)).toBe(false)
    const numbersFirst = withGuessedHeader(layoutTable([cells("2022", "2023"), cells("1", "2")])!)
    expect(numbersFirst.cells.some((c) => c.header)).toBe(false)
  })
})
