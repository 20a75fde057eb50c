import { Document, HeadingLevel, Packer, Paragraph, Table, TableCell, TableRow } from "docx"
import ExcelJS from "exceljs"
import pptxgen from "pptxgenjs"
import { fixedNow } from "./fixtures.ts"

/**
 * Office files whose tables state their structure (generated here, every byte): a Word table with a header
 * row, a cell merged across columns (gridSpan), one merged down rows (vMerge) and a table nested in a cell;
 * a slide table with merged cells and a header row; a workbook whose sheet holds a title and three tables
 * apart from each other, one with a merged header.
 */

const PptxGenJS = ((pptxgen as unknown as { default?: unknown }).default ?? pptxgen) as typeof pptxgen.default

const wordCell = (text: string, span: { rowSpan?: number; columnSpan?: number } = {}) =>
  new TableCell({ children: [new Paragraph(text)], ...span })

export const makeTablesDocx = async (): Promise<Uint8Array> => {
  const nested = new Table({
    rows: [
      new TableRow({ children: [wordCell("inner a"), wordCell("inner b")] }),
      new TableRow({ children: [wordCell("inner c"), wordCell("inner d")] }),
    ],
  })
  const document = new Document({
    creator: "Ada Lovelace",
    title: "Tables",
    sections: [
      {
        children: [
          new Paragraph({ text: "Quarterly figures", heading: HeadingLevel.HEADING_1 }),
          new Paragraph("The table below states its own structure."),
          new Table({
            rows: [
              new TableRow({
                tableHeader: true,
                children: ["Header 0.0", "Header 0.1", "Header 0.2", "Header 0.3"].map((t) => wordCell(t)),
              }),
              new TableRow({
                children: [
                  wordCell("Cell 1.0"),
                  wordCell("Merged Cell 1.1 1.2", { columnSpan: 2 }),
                  wordCell("Cell 1.3"),
                ],
              }),
              new TableRow({
                children: [
                  wordCell("Vertical 2.0 3.0", { rowSpan: 2 }),
                  wordCell("Cell 2.1"),
                  wordCell("Cell 2.2"),
                  wordCell("Cell 2.3"),
                ],
              }),
              new TableRow({
                children: [
                  wordCell("Cell 3.1"),
                  wordCell("Cell 3.2"),
                  new TableCell({ children: [new Paragraph("Nested:"), nested] }),
                ],
              }),
            ],
          }),
          new Paragraph("After the table."),
        ],
      },
    ],
  })
  return new Uint8Array(await Packer.toBuffer(document))
}

export const makeTablesPptx = async (): Promise<Uint8Array> => {
  const pres = new PptxGenJS()
  pres.title = "Tables"
  const slide = pres.addSlide()
  slide.addText("Revenue by region", { x: 0.5, y: 0.3, w: 9, h: 1, fontSize: 28 })
  slide.addTable(
    [
      [
        { text: "Region", options: { rowspan: 2 } },
        { text: "Revenue", options: { colspan: 2 } },
      ],
      [{ text: "2023" }, { text: "2024" }],
      [{ text: "EMEA" }, { text: "1,200\nrestated" }, { text: "1,344" }],
      [{ text: "Americas" }, { text: "950" }, { text: "1,010" }],
    ],
    { x: 0.5, y: 1.5, w: 6 },
  )
  return new Uint8Array((await pres.write({ outputType: "nodebuffer" })) as Buffer)
}

export const makeTablesXlsx = async (): Promise<Uint8Array> => {
  const workbook = new ExcelJS.Workbook()
  workbook.created = fixedNow
  workbook.modified = fixedNow
  const sheet = workbook.addWorksheet("Summary")
  sheet.getCell("A1").value = "Quarterly sales"
  // A table with a merged header over two columns, below the title after an empty row.
  sheet.getCell("A3").value = "Region"
  sheet.getCell("B3").value = "Sales"
  sheet.mergeCells("B3:C3")
  sheet.getCell("B4").value = 2023
  sheet.getCell("C4").value = 2024
  sheet.getCell("A5").value = "North"
  sheet.getCell("B5").value = 1200
  sheet.getCell("C5").value = 1344
  sheet.getCell("A6").value = "South"
  sheet.getCell("B6").value = 900
  sheet.getCell("C6").value = 1020
  // Beside it, past an empty column: another table.
  sheet.getCell("E3").value = "Currency"
  sheet.getCell("F3").value = "Rate"
  sheet.getCell("E4").value = "EUR"
  sheet.getCell("F4").value = 1
  sheet.getCell("E5").value = "USD"
  sheet.getCell("F5").value = 1.08
  // Below, past an empty row: a third.
  sheet.getCell("A9").value = "Note"
  sheet.getCell("B9").value = "Source"
  sheet.getCell("A10").value = "Provisional"
  sheet.getCell("B10").value = "Finance"
  return new Uint8Array(await workbook.xlsx.writeBuffer())
}
