/**
 * Generated documents for tests: a small hand-written one-page PDF, and business documents (text PDFs of
 * several pages) made with pdf-lib.
 */
import { randomUUID } from "node:crypto"
import { PDFDocument, StandardFonts } from "pdf-lib"

/** A PDF with one page per entry; each page's text is written line by line from the top. */
export const textPdf = async (pages: ReadonlyArray<string>): Promise<Uint8Array> => {
  const pdf = await PDFDocument.create()
  const font = await pdf.embedFont(StandardFonts.Helvetica)
  for (const text of pages) {
    const page = pdf.addPage([612, 792])
    let y = 740
    for (const line of text.split("\n")) {
      page.drawText(line, { x: 56, y, size: 11, font })
      y -= 16
    }
  }
  return pdf.save()
}

export const invoice = (o: {
  readonly number: string
  readonly date: string
  readonly seller: string
  readonly currency: string
  readonly subtotal: string
  readonly tax: string
  readonly total: string
}) =>
  textPdf([
    [
      o.seller,
      "100 Market Street, Springfield",
      "",
      "INVOICE",
      `Invoice Number: ${o.number}`,
      `Invoice Date: ${o.date}`,
      `Currency: ${o.currency}`,
      "",
      "Bill To: Globex Corporation",
      "Description                      Qty     Amount",
      "Consulting services               10     see page 2",
    ].join("\n"),
    [
      "Summary of charges",
      `Subtotal: ${o.subtotal}`,
      `Tax (20%): ${o.tax}`,
      `Total Due: ${o.total}`,
      "",
      "Payment is due within 30 days. Thank you for your business.",
    ].join("\n"),
  ])

export const contract = (o: {
  readonly partyA: string
  readonly partyB: string
  readonly state: string
  readonly date: string
}) =>
  textPdf([
    [
      "MUTUAL NON-DISCLOSURE AGREEMENT",
      "",
      `This Agreement is made and entered into as of ${o.date}, by and between ${o.partyA}`,
      `and ${o.partyB} (together, the "Parties").`,
      "",
      "1. Confidential Information. Each party may disclose information to the other.",
    ].join("\n"),
    [
      "2. Term. This Agreement shall remain in effect for a period of two (2) years.",
      "",
      `3. Governing Law. This Agreement shall be governed by the laws of the State of ${o.state}.`,
      "",
      "IN WITNESS WHEREOF, the Parties have executed this Agreement.",
    ].join("\n"),
  ])

/** An invoice whose totals are a ruled table: each label cell beside its amount cell, bordered. */
export const ruledInvoice = async (): Promise<Uint8Array> => {
  const doc = await PDFDocument.create()
  const font = await doc.embedFont(StandardFonts.Helvetica)
  const page = doc.addPage([612, 792])
  page.drawText("Fabrikam GmbH - Invoice INV-77", { x: 72, y: 720, size: 14, font })
  const rows = [
    ["Description", "Amount"],
    ["Consulting", "1,000.00 EUR"],
    ["VAT", "190.00 EUR"],
    ["Total due", "1,190.00 EUR"],
  ]
  for (const [r, row] of rows.entries())
    for (const [c, text] of row.entries()) {
      const [x, top] = [72 + c * 200, 680 - r * 20]
      page.drawRectangle({ x, y: top - 20, width: 200, height: 20, borderWidth: 0.75 })
      page.drawText(text, { x: x + 4, y: top - 14, size: 10, font })
    }
  return doc.save()
}

/** A small, well-formed one-page PDF with a line of text (different each time by default). */
export const onePagePdf = (line: string = randomUUID()): Uint8Array => {
  const stream = `BT /F1 24 Tf 72 700 Td (${line}) Tj ET`
  const objects = [
    "<< /Type /Catalog /Pages 2 0 R >>",
    "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
    "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
    `<< /Length ${stream.length} >>\nstream\n${stream}\nendstream`,
    "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
  ]
  let out = "%PDF-1.4\n"
  const offsets: Array<number> = []
  objects.forEach((o, i) => {
    offsets.push(out.length)
    out += `${i + 1} 0 obj\n${o}\nendobj\n`
  })
  const xref = out.length
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`
  for (const off of offsets) out += `${String(off).padStart(10, "0")} 00000 n \n`
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`
  return new TextEncoder().encode(out)
}
