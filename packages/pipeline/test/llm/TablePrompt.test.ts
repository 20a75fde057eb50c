import { layoutTable, tableLines } from "@dxs/domain/Tables"
import { describe, expect, it } from "vitest"
import { asPageText, groundCitation } from "../../src/llm/Citations.ts"
import { documentContext } from "../../src/llm/DocumentPrompt.ts"
import type { PageText } from "../../src/llm/LanguageModel.ts"

/** Tables in the model's prompt, and passages quoted from them found in the page text. */

const prices = layoutTable([
  [
    { text: "Item", header: true },
    { text: "Price", header: true },
  ],
  [{ text: "Widget" }, { text: "10.00" }],
  [{ text: "Gadget" }, { text: "45.00" }],
])!

const page = (text: string, over: Partial<PageText> = {}): PageText => ({
  documentId: "doc",
  documentName: "prices.docx",
  pageNumber: 1,
  text,
  ...over,
})

const wordText = ["Price list", "", ...tableLines(prices), "", "Prices exclude VAT."].join("\n")
const wordPage = page(wordText, {
  tables: [prices],
  blocks: [
    { kind: "heading", text: "Price list", bbox: null, level: 1 },
    { kind: "table", text: tableLines(prices).join("\n"), bbox: null, table: 0 },
    { kind: "paragraph", text: "Prices exclude VAT.", bbox: null },
  ],
})

describe("the document prompt", () => {
  it("shows a page's tables as Markdown tables in place of their lines", () => {
    const context = documentContext({ document: { id: "doc", name: "prices.docx" }, pages: [wordPage] })
    expect(context).toBe(
      [
        "Document: prices.docx",
        "",
        "--- Page 1 ---",
        "# Price list",
        "",
        "| Item | Price |",
        "| --- | --- |",
        "| Widget | 10.00 |",
        "| Gadget | 45.00 |",
        "",
        "Prices exclude VAT.",
      ].join("\n"),
    )
  })

  it("shows a page without tables exactly as its text", () => {
    const plain = page("Line one\n\n- a point")
    expect(documentContext({ document: { id: "doc", name: "n.txt" }, pages: [plain] })).toBe(
      "Document: n.txt\n\n--- Page 1 ---\nLine one\n\n- a point",
    )
  })
})

describe("a passage quoted from a Markdown table row", () => {
  it("is found as the page text holds the row: cells between pipes, or side by side", () => {
    expect(asPageText("| Widget | 10.00 |", [wordPage])).toBe("Widget | 10.00")
    const pdfPage = page("Item Price\nWidget 10.00\nGadget 45.00")
    expect(asPageText("| Widget | 10.00 |", [pdfPage])).toBe("Widget 10.00")
    expect(asPageText("| Item | Price |\n| --- | --- |\n| Widget | 10.00 |", [pdfPage])).toBe(
      "Item Price\nWidget 10.00",
    )
    // Not a table row, or a row the pages do not hold: the quote as it is.
    expect(asPageText("Widget costs 10.00", [pdfPage])).toBe("Widget costs 10.00")
    expect(asPageText("| Sprocket | 3.00 |", [pdfPage])).toBe("| Sprocket | 3.00 |")
  })

  it("grounds the answer on the page's own text", () => {
    const citation = groundCitation([wordPage], 1, "| Gadget | 45.00 |", "45", "number")
    expect(citation).toEqual({ grounded: true, pageNumber: 1, passage: "Gadget | 45.00" })
  })
})
