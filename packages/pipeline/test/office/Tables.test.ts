import { describe, expect, it } from "vitest"
import { excelBackend } from "../../src/parsing/Excel.ts"
import { powerPointBackend } from "../../src/parsing/PowerPoint.ts"
import { wordBackend } from "../../src/parsing/Word.ts"
import { expectStructure, parseWith } from "../support.ts"
import { atFixedTime, inputOf } from "./fixtures.ts"
import { makeTablesDocx, makeTablesPptx, makeTablesXlsx } from "./tableFixtures.ts"

/** Tables as Office files state them: golden records in test/office/golden/tables/. */
const goldenFile = (name: string) => new URL(`golden/tables/${name}.json`, import.meta.url)

describe("Office tables", () => {
  it("reads a Word table's header row, a cell merged across columns, one merged down rows, a nested table as text", async () => {
    const bytes = await atFixedTime(makeTablesDocx)
    const output = await parseWith(wordBackend, inputOf("tables.docx", bytes))
    const { pages } = await expectStructure(goldenFile("tables.docx"), output)
    const [table] = pages[0]!.tables
    expect(table!.rows).toEqual([
      ["Header 0.0", "Header 0.1", "Header 0.2", "Header 0.3"],
      ["Cell 1.0", "Merged Cell 1.1 1.2", "", "Cell 1.3"],
      ["Vertical 2.0 3.0", "Cell 2.1", "Cell 2.2", "Cell 2.3"],
      ["", "Cell 3.1", "Cell 3.2", "Nested: inner a | inner b; inner c | inner d"],
    ])
    expect(table!.spans).toEqual([
      [1, 1, 1, 2],
      [2, 0, 2, 1],
    ])
    expect(table!.headers).toEqual([
      [0, 0],
      [0, 1],
      [0, 2],
      [0, 3],
    ])
    // The page text holds each row in its place, covered positions empty.
    expect(output.pages[0]!.text).toContain("Cell 1.0 | Merged Cell 1.1 1.2 |  | Cell 1.3")
    expect(pages[0]!.blocks.map((b) => b.kind)).toEqual(["heading", "paragraph", "table", "paragraph"])
  })

  it("reads a slide table's merged cells (gridSpan, rowSpan) and the breaks inside a cell", async () => {
    const bytes = await atFixedTime(makeTablesPptx)
    const output = await parseWith(powerPointBackend, inputOf("tables.pptx", bytes))
    const { pages } = await expectStructure(goldenFile("tables.pptx"), output)
    const [table] = pages[0]!.tables
    expect(table!.rows).toEqual([
      ["Region", "Revenue", ""],
      ["", "2023", "2024"],
      ["EMEA", "1,200\nrestated", "1,344"],
      ["Americas", "950", "1,010"],
    ])
    expect(table!.spans).toEqual([
      [0, 0, 2, 1],
      [0, 1, 1, 2],
    ])
  })

  it("cuts a sheet into tables at empty rows and columns, a merged range spanning, a lone cell a paragraph", async () => {
    const bytes = await atFixedTime(makeTablesXlsx)
    const output = await parseWith(excelBackend, inputOf("tables.xlsx", bytes))
    const { pages } = await expectStructure(goldenFile("tables.xlsx"), output)
    expect(pages[0]!.tables.map((t) => t.rows)).toEqual([
      [
        ["Region", "Sales", ""],
        ["", "2023", "2024"],
        ["North", "1200", "1344"],
        ["South", "900", "1020"],
      ],
      [
        ["Currency", "Rate"],
        ["EUR", "1"],
        ["USD", "1.08"],
      ],
      [
        ["Note", "Source"],
        ["Provisional", "Finance"],
      ],
    ])
    expect(pages[0]!.tables[0]!.spans).toEqual([[0, 1, 1, 2]])
    expect(pages[0]!.blocks.map((b) => b.kind)).toEqual(["heading", "paragraph", "table", "table", "table"])
  })

  it("reads a CSV file as one table", async () => {
    const csv = new TextEncoder().encode("name,amount\nAda,10\nGrace,12\n")
    const output = await parseWith(excelBackend, inputOf("people.csv", csv))
    expect(output.pages[0]!.tables?.map((t) => t.cells.length)).toEqual([6])
  })
})
