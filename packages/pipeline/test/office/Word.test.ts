import { Document, Packer, Paragraph } from "docx"
import { describe, expect, it } from "vitest"
import { wordBackend } from "../../src/parsing/Word.ts"
import { parseWith } from "../support.ts"
import { atFixedTime, expectGolden, failureReason, inputOf, makeDocx, makePptx } from "./fixtures.ts"

describe("Word backend", () => {
  it("reads a .docx with mammoth: headings, a table, a list, a footnote, pages at the forced breaks", async () => {
    const bytes = await atFixedTime(makeDocx)
    const output = await parseWith(wordBackend, inputOf("agreement.docx", bytes))
    expect(output.parser).toBe("mammoth")
    // A page break, a "page break before" paragraph and a next-page section break: four pages.
    expect(output.pages.map((p) => p.number)).toEqual([1, 2, 3, 4])
    expect(output.pages[0]?.text).toContain("Item | Quantity | Price\nWidget | 100 | EUR 10,000")
    expect(output.pages[0]?.text).toMatch(/EUR 12,500\[1\]\.[\s\S]*\[1\] Prices exclude VAT\.$/u)
    expect(output.pages[1]?.text).toMatch(/^2\. Term/u)
    expect(output.pages[2]?.text).toMatch(/^3\. Governing law/u)
    expect(output.pages[3]?.text).toMatch(/^Schedule A/u)
    expect(output.metadata).toMatchObject({
      title: "Supply Agreement",
      author: "Ada Lovelace",
      created: "2024-05-01T09:30:00.000Z",
      page_source: "page-breaks",
    })
    await expectGolden("agreement.docx", output)
  })

  it("keeps the blank page two page breaks in a row make, and opens no page before the first", async () => {
    const bytes = await atFixedTime(
      async () =>
        new Uint8Array(
          await Packer.toBuffer(
            new Document({
              sections: [
                {
                  children: [
                    new Paragraph({ text: "Cover", pageBreakBefore: true }),
                    new Paragraph({ text: "Next", pageBreakBefore: true }),
                    new Paragraph({ text: "Again", pageBreakBefore: true }),
                  ],
                },
              ],
            }),
          ),
        ),
    )
    const output = await parseWith(wordBackend, inputOf("breaks.docx", bytes))
    expect(output.pages.map((p) => p.text)).toEqual(["Cover", "Next", "Again"])
  })

  it("fails over the page limit", async () => {
    const bytes = await atFixedTime(makeDocx)
    const reason = await failureReason(
      wordBackend,
      inputOf("agreement.docx", bytes, { limits: { maxPages: 3, maxDecompressedBytes: 500 * 1024 * 1024 } }),
    )
    expect(reason).toBe("the document has 4 pages, more than the limit of 3 pages per document")
  })

  it("fails on random bytes named .docx", async () => {
    const bytes = new Uint8Array(4096).map((_, i) => (i * 7919 + 13) % 251)
    expect(await failureReason(wordBackend, inputOf("random.docx", bytes))).toBe(
      "not a valid .docx file (it is not a ZIP container)",
    )
  })

  it("fails on a presentation named .docx", async () => {
    const bytes = await atFixedTime(makePptx)
    expect(await failureReason(wordBackend, inputOf("slides.docx", bytes))).toBe(
      "the file is a PowerPoint presentation, not a Word document",
    )
  })

  it("needs LibreOffice for .doc, .odt and .rtf", async () => {
    for (const ext of [".doc", ".odt", ".rtf"])
      expect(await failureReason(wordBackend, inputOf(`old${ext}`, new Uint8Array([1, 2, 3])))).toBe(
        `reading a ${ext} file needs LibreOffice, which is not installed`,
      )
  })
})
