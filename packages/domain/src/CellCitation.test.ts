import { describe, expect, it } from "@effect/vitest"
import { citedCell } from "./CellCitation.ts"
import type { Box, Table, TableCell } from "./Tables.ts"

const cell = (row: number, column: number, text: string, bbox: Box | null): TableCell => ({
  row,
  column,
  row_span: 1,
  column_span: 1,
  text,
  header: row === 0,
  bbox,
})

const totals: Table = {
  bbox: [50, 100, 350, 160],
  continued: false,
  cells: [
    cell(0, 0, "Description", [50, 100, 200, 120]),
    cell(0, 1, "Amount", [200, 100, 350, 120]),
    cell(1, 0, "Subtotal", [50, 120, 200, 140]),
    cell(1, 1, "1,000.00", [200, 120, 350, 140]),
    cell(2, 0, "Total due", [50, 140, 200, 160]),
    cell(2, 1, "1,250.00", [200, 140, 350, 160]),
  ],
}

describe("citedCell", () => {
  it("is the cell of the passage that states the value, as a number in either grouping", () => {
    expect(citedCell("Total due 1,250.00", "1250", [totals])).toEqual({
      x: 200,
      y: 140,
      width: 150,
      height: 20,
      text: "1,250.00",
    })
    expect(citedCell("| Total due | 1,250.00 |", "1250.00", [totals])?.y).toBe(140)
  })

  it("is the label's cell when the value is words", () => {
    expect(citedCell("Total due 1,250.00", "Total due", [totals])?.text).toBe("Total due")
  })

  it("is none when the value is in no cell of the passage, or in two cells alike", () => {
    expect(citedCell("Total due 1,250.00", "1000", [totals])).toBeUndefined()
    const twice: Table = { ...totals, cells: [...totals.cells, cell(3, 1, "1,250.00", [200, 160, 350, 180])] }
    expect(citedCell("1,250.00", "1250", [twice])).toBeUndefined()
    expect(citedCell("", "1250", [totals])).toBeUndefined()
  })

  it("leaves cells without a box alone (formats without coordinates)", () => {
    const word: Table = { ...totals, cells: totals.cells.map((c) => ({ ...c, bbox: null })) }
    expect(citedCell("Total due 1,250.00", "1250", [word])).toBeUndefined()
  })
})
