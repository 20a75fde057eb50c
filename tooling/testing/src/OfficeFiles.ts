import {
  Document,
  FootnoteReferenceRun,
  HeadingLevel,
  Packer,
  PageBreak,
  Paragraph,
  SectionType,
  Table,
  TableCell,
  TableRow,
  TextRun,
} from "docx"
import ExcelJS from "exceljs"
import pptxgen from "pptxgenjs"
import { vi } from "vitest"

/**
 * Office files written by the tests themselves (every byte generated here, under a frozen clock so that the
 * dates the libraries stamp are stable): a Word document, a slide deck, a workbook and a CSV text.
 */

export const fixedNow = new Date("2024-05-01T09:30:00.000Z")

/** Runs `make` with Date frozen at `fixedNow` (timers keep running: the zip writers use them). */
export const atFixedTime = async <A>(make: () => Promise<A>): Promise<A> => {
  vi.useFakeTimers({ toFake: ["Date"], now: fixedNow })
  try {
    return await make()
  } finally {
    vi.useRealTimers()
  }
}

// pptxgenjs's types describe a CommonJS default export; at run time the ES build's default is the class.
const PptxGenJS = ((pptxgen as unknown as { default?: unknown }).default ?? pptxgen) as typeof pptxgen.default

const cell = (text: string) => new TableCell({ children: [new Paragraph(text)] })

/** Heading, paragraphs, a table, a page break, a "page break before" paragraph and a second section: 4 pages. */
export const makeDocx = async (): Promise<Uint8Array> => {
  const document = new Document({
    creator: "Ada Lovelace",
    title: "Supply Agreement",
    description: "Generated fixture",
    footnotes: { 1: { children: [new Paragraph("Prices exclude VAT.")] } },
    sections: [
      {
        children: [
          new Paragraph({ text: "Supply Agreement", heading: HeadingLevel.TITLE }),
          new Paragraph({ text: "1. Parties", heading: HeadingLevel.HEADING_1 }),
          new Paragraph("This agreement is made between Acme Corp and Globex Ltd."),
          new Paragraph({
            children: [
              new TextRun("The total price is EUR 12,500"),
              new FootnoteReferenceRun(1),
              new TextRun("."),
            ],
          }),
          new Table({
            rows: [
              new TableRow({ children: [cell("Item"), cell("Quantity"), cell("Price")] }),
              new TableRow({ children: [cell("Widget"), cell("100"), cell("EUR 10,000")] }),
              new TableRow({ children: [cell("Gadget"), cell("5"), cell("EUR 2,500")] }),
            ],
          }),
          new Paragraph({ text: "First item", bullet: { level: 0 } }),
          new Paragraph({ text: "Second item", bullet: { level: 0 } }),
          new Paragraph({ children: [new TextRun("Last line of page one."), new PageBreak()] }),
          new Paragraph({ text: "2. Term", heading: HeadingLevel.HEADING_1 }),
          new Paragraph("The agreement runs for 24 months from 1 March 2024."),
          new Paragraph({ text: "3. Governing law", pageBreakBefore: true }),
          new Paragraph("This agreement is governed by the laws of the State of New York."),
        ],
      },
      {
        properties: { type: SectionType.NEXT_PAGE },
        children: [
          new Paragraph({ text: "Schedule A", heading: HeadingLevel.HEADING_1 }),
          new Paragraph("Delivery address: 1 Main Street, Springfield."),
        ],
      },
    ],
  })
  return new Uint8Array(await Packer.toBuffer(document))
}

/** Three slides (a table on the second), notes on the first two. */
export const makePptx = async (): Promise<Uint8Array> => {
  const pres = new PptxGenJS()
  pres.title = "Quarterly Review"
  pres.author = "Ada Lovelace"
  pres.company = "Acme Corp"
  const titles = ["Quarterly Review", "Revenue by region", "Next steps"]
  titles.forEach((title, index) => {
    const slide = pres.addSlide()
    slide.addText(title, { x: 0.5, y: 0.3, w: 9, h: 1, fontSize: 28 })
    if (index === 0) slide.addText("Q1 2024\nPrepared by Finance", { x: 0.5, y: 1.5, w: 9, h: 1.5 })
    if (index === 1)
      slide.addTable(
        [
          [{ text: "Region" }, { text: "Revenue" }],
          [{ text: "EMEA" }, { text: "1,200,000" }],
          [{ text: "Americas" }, { text: "950,000" }],
        ],
        { x: 0.5, y: 1.5, w: 6 },
      )
    if (index === 2)
      slide.addText("Hire two engineers\nOpen Berlin office", { x: 0.5, y: 1.5, w: 9, h: 1.5, bullet: true })
    if (index === 0) slide.addNotes("Welcome everyone. Mention the record quarter.")
    if (index === 1) slide.addNotes("EMEA grew 12% year on year.")
  })
  return new Uint8Array((await pres.write({ outputType: "nodebuffer" })) as Buffer)
}

/** Two sheets (the second hidden): text, numbers, a date, a date-time, a formula, a merged title, rich text. */
export const makeXlsx = async (): Promise<Uint8Array> => {
  const workbook = new ExcelJS.Workbook()
  workbook.creator = "Ada Lovelace"
  workbook.title = "Invoices 2024"
  workbook.created = fixedNow
  workbook.modified = fixedNow
  const invoices = workbook.addWorksheet("Invoices")
  invoices.mergeCells("A1:D1")
  invoices.getCell("A1").value = "Invoices Q1"
  invoices.addRow(["Invoice", "Date", "Customer", "Total"])
  invoices.addRow(["INV-001", new Date(Date.UTC(2024, 0, 15)), "Acme Corp", 1250.5])
  invoices.addRow([
    "INV-002",
    new Date(Date.UTC(2024, 1, 3)),
    { richText: [{ text: "Globex " }, { text: "Ltd", font: { bold: true } }] },
    980,
  ])
  invoices.addRow(["Total", null, null, { formula: "SUM(D3:D4)", result: 2230.5 }])
  invoices.getColumn(2).numFmt = "yyyy-mm-dd"
  invoices.getCell("B6").value = "Printed"
  invoices.getCell("C6").value = new Date(Date.UTC(2024, 3, 30, 14, 5, 0))
  invoices.getCell("C6").numFmt = "yyyy-mm-dd hh:mm"
  invoices.getCell("D6").value = 0.2
  invoices.getCell("D6").numFmt = "0%"
  const rates = workbook.addWorksheet("Rates", { state: "hidden" })
  rates.addRow(["Currency", "Rate"])
  rates.addRow(["USD", 1.0825])
  rates.addRow(["GBP", 0.8571])
  return new Uint8Array(await workbook.xlsx.writeBuffer())
}

export const csvText = [
  "Invoice;Date;Customer;Total",
  'INV-001;2024-01-15;"Acme; Corp";1250,50',
  'INV-002;2024-02-03;"Globex ""Intl"" Ltd";980,00',
  "",
].join("\r\n")
