import { degrees, PDFDocument, type PDFFont, type PDFPage, StandardFonts } from "pdf-lib"

/**
 * PDFs with tables, drawn with pdf-lib (the project's own fixtures): a ruled table with spanning cells, an
 * unruled one, a ruled table on a turned page and one printed sideways, a table continued on the next page
 * under running headers and footers, and a two-column page.
 */

const letter: [number, number] = [612, 792]

interface Fonts {
  readonly regular: PDFFont
  readonly bold: PDFFont
}

const fontsOf = async (doc: PDFDocument): Promise<Fonts> => ({
  regular: await doc.embedFont(StandardFonts.Helvetica),
  bold: await doc.embedFont(StandardFonts.HelveticaBold),
})

/** A cell of a ruled table: its text and how many rows and columns it spans. */
interface RuledCell {
  readonly text: string
  readonly rows?: number
  readonly columns?: number
}

/**
 * Draws a ruled table in a frame of its own: `at(u, v)` maps a point of the table (u to the right along
 * its text, v down from its top) to user space, `rotate` turns its text. Cells are placed by the HTML
 * rule (first free position); each cell's border is stroked around its whole span.
 */
const ruledTable = (
  page: PDFPage,
  fonts: Fonts,
  rows: ReadonlyArray<ReadonlyArray<RuledCell>>,
  widths: ReadonlyArray<number>,
  rowHeight: number,
  at: (u: number, v: number) => [number, number],
  rotate = 0,
) => {
  const taken = new Set<string>()
  const left = (c: number) => widths.slice(0, c).reduce((a, b) => a + b, 0)
  rows.forEach((row, r) => {
    let c = 0
    for (const cell of row) {
      while (taken.has(`${r}:${c}`)) c++
      const rs = cell.rows ?? 1
      const cs = cell.columns ?? 1
      for (let i = 0; i < rs; i++) for (let j = 0; j < cs; j++) taken.add(`${r + i}:${c + j}`)
      const [u0, v0] = [left(c), r * rowHeight]
      const [u1, v1] = [left(c + cs), (r + rs) * rowHeight]
      const corners = [at(u0, v0), at(u1, v0), at(u1, v1), at(u0, v1)]
      for (let k = 0; k < 4; k++) {
        const [a, b] = [corners[k]!, corners[(k + 1) % 4]!]
        page.drawLine({ start: { x: a[0], y: a[1] }, end: { x: b[0], y: b[1] }, thickness: 0.75 })
      }
      const [x, y] = at(u0 + 4, v0 + rowHeight / 2 + 3.5)
      const font = r === 0 ? fonts.bold : fonts.regular
      page.drawText(cell.text, { x, y, size: 10, font, rotate: degrees(rotate) })
      c += cs
    }
  })
}

/** Upright text lines (a paragraph), top line at `top` (user space y of its baseline), 14 points apart. */
const lines = (
  page: PDFPage,
  font: PDFFont,
  texts: ReadonlyArray<string>,
  x: number,
  top: number,
  size = 11,
) => {
  for (const [i, text] of texts.entries()) page.drawText(text, { x, y: top - i * 14, size, font })
}

const priceRows: ReadonlyArray<ReadonlyArray<RuledCell>> = [
  [{ text: "Region", rows: 2 }, { text: "Sales", columns: 2 }, { text: "Share" }],
  [{ text: "2023" }, { text: "2024" }, { text: "%" }],
  [{ text: "North" }, { text: "1,200" }, { text: "1,344" }, { text: "42" }],
  [{ text: "South" }, { text: "900" }, { text: "1,020" }, { text: "31" }],
  [{ text: "Total" }, { text: "2,100" }, { text: "2,364" }, { text: "73" }],
]

/** A heading, a paragraph, a ruled table with spanning cells and its caption, a page number. */
export const ruledPdf = async (): Promise<Uint8Array> => {
  const doc = await PDFDocument.create()
  const fonts = await fontsOf(doc)
  const page = doc.addPage(letter)
  page.drawText("Regional sales", { x: 72, y: 720, size: 20, font: fonts.bold })
  lines(page, fonts.regular, ["Sales grew in both regions, as the table below shows."], 72, 690)
  ruledTable(page, fonts, priceRows, [120, 80, 80, 60], 20, (u, v) => [72 + u, 660 - v])
  page.drawText("Table 1: Sales by region", { x: 72, y: 540, size: 10, font: fonts.regular })
  page.drawText("1", { x: 300, y: 40, size: 9, font: fonts.regular })
  return doc.save({ useObjectStreams: false })
}

/** A table without rules: columns of words set apart, numbers right-aligned; prose above and below. */
export const unruledPdf = async (): Promise<Uint8Array> => {
  const doc = await PDFDocument.create()
  const fonts = await fontsOf(doc)
  const page = doc.addPage(letter)
  lines(page, fonts.regular, ["The shipment held the following items, priced in euros:"], 72, 720)
  const rows = [
    ["Item", "Quantity", "Unit price", "Amount"],
    ["Steel bolts M8", "400", "0.12", "48.00"],
    ["Washers", "400", "0.03", "12.00"],
    ["Hex nuts M8", "350", "0.05", "17.50"],
    ["Total", "", "", "77.50"],
  ]
  const right = [0, 300, 390, 480]
  rows.forEach((row, r) => {
    const font = r === 0 ? fonts.bold : fonts.regular
    row.forEach((text, c) => {
      if (text === "") return
      const width = font.widthOfTextAtSize(text, 10)
      const x = c === 0 ? 72 : right[c]! - width
      page.drawText(text, { x, y: 690 - r * 16, size: 10, font })
    })
  })
  lines(page, fonts.regular, ["Payment is due within thirty days of delivery."], 72, 590)
  return doc.save({ useObjectStreams: false })
}

/** A ruled table on a page turned to landscape (/Rotate 90), and one printed sideways on an upright page. */
export const rotatedPdf = async (): Promise<Uint8Array> => {
  const doc = await PDFDocument.create()
  const fonts = await fontsOf(doc)
  const turned = doc.addPage(letter)
  turned.setRotation(degrees(90))
  // On screen the page is 792 × 612; text drawn turned by 90° reads left to right there.
  ruledTable(turned, fonts, priceRows, [120, 80, 80, 60], 20, (u, v) => [100 + v, 80 + u], 90)
  const upright = doc.addPage(letter)
  upright.drawText("Sideways table", { x: 72, y: 720, size: 16, font: fonts.bold })
  // Text running up the page: the table's rows go across the page from left to right.
  ruledTable(upright, fonts, priceRows, [120, 80, 80, 60], 20, (u, v) => [150 + v, 200 + u], 90)
  return doc.save({ useObjectStreams: false })
}

/** A table that goes on from page 1 to page 2 (its header repeated), under a running header and footer. */
export const continuedPdf = async (): Promise<Uint8Array> => {
  const doc = await PDFDocument.create()
  const fonts = await fontsOf(doc)
  const header: ReadonlyArray<RuledCell> = [{ text: "Date" }, { text: "Description" }, { text: "Amount" }]
  const rows = (from: number, n: number) =>
    Array.from({ length: n }, (_, i) => [
      { text: `2024-03-${String(from + i).padStart(2, "0")}` },
      { text: `Payment ${from + i}` },
      { text: `${(from + i) * 100}.00` },
    ])
  for (const [n, body] of [
    [1, rows(1, 4)],
    [2, rows(5, 3)],
  ] as const) {
    const page = doc.addPage(letter)
    page.drawText("ACME Ltd - account statement", { x: 72, y: 760, size: 9, font: fonts.regular })
    page.drawText(`Page ${n} of 2`, { x: 500, y: 30, size: 9, font: fonts.regular })
    const top = n === 1 ? 300 : 720
    if (n === 1) {
      page.drawText("Statement of account", { x: 72, y: 700, size: 18, font: fonts.bold })
      lines(page, fonts.regular, ["Payments received this quarter:"], 72, 330)
    }
    ruledTable(page, fonts, [header, ...body], [100, 200, 90], 20, (u, v) => [72 + u, top - v])
  }
  return doc.save({ useObjectStreams: false })
}

/** A title across the page, then two columns of paragraphs, the left column drawn first. */
export const twoColumnPdf = async (): Promise<Uint8Array> => {
  const doc = await PDFDocument.create()
  const fonts = await fontsOf(doc)
  const page = doc.addPage(letter)
  page.drawText("Field notes", { x: 72, y: 720, size: 22, font: fonts.bold })
  const left = [
    ["Left column, first paragraph,", "which runs over three lines", "before it ends here."],
    ["Left column, second paragraph", "of two lines."],
  ]
  const right = [
    ["Right column, first paragraph,", "read after the whole left", "column."],
    ["Right column, last paragraph."],
  ]
  for (const [x, paragraphs] of [
    [72, left],
    [330, right],
  ] as const) {
    let top = 680
    for (const p of paragraphs) {
      lines(page, fonts.regular, p, x, top)
      top -= p.length * 14 + 18
    }
  }
  return doc.save({ useObjectStreams: false })
}
