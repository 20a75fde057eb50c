import { describe, expect, it } from "@effect/vitest"
import {
  blocksOfText,
  type ContentDocument,
  type ContentPage,
  contentJson,
  contentMarkdown,
  contentText,
  pageMarkdownText,
  renderContent,
} from "./Content.ts"
import { layoutTable, type Table, tableLines } from "./Tables.ts"

const table = (rows: Array<Array<string>>, continued = false): Table => ({
  ...layoutTable(rows.map((r) => r.map((text) => ({ text }))))!,
  continued,
})

const page = (n: number, over: Partial<ContentPage> = {}): ContentPage => ({
  page_number: n,
  width: null,
  height: null,
  unit: null,
  text: "",
  blocks: [],
  tables: [],
  ...over,
})

describe("blocksOfText", () => {
  it("reads paragraphs at blank lines, list items at their markers, and the page's tables where their lines are", () => {
    const prices = table([
      ["Item", "Price"],
      ["Widget", "10"],
    ])
    const text = [
      "Intro line one",
      "line two",
      "",
      "- first",
      "- second",
      "",
      ...tableLines(prices),
      "",
      "End.",
    ].join("\n")
    const blocks = blocksOfText(text, [prices])
    expect(blocks.map((b) => [b.kind, b.text])).toEqual([
      ["paragraph", "Intro line one\nline two"],
      ["list_item", "- first"],
      ["list_item", "- second"],
      ["table", "Item | Price\nWidget | 10"],
      ["paragraph", "End."],
    ])
    expect(blocks[3]!.table).toBe(0)
  })

  it("places a table whose lines are not in the text after the text", () => {
    const blocks = blocksOfText("Only prose.", [table([["a", "b"]])])
    expect(blocks.map((b) => b.kind)).toEqual(["paragraph", "table"])
  })
})

const invoice: ContentDocument = {
  file_name: "invoice.pdf",
  type: "PDF",
  pages: [
    page(1, {
      width: 612,
      height: 792,
      unit: "pt",
      text: "ACME Ltd\nInvoice\n...",
      tables: [
        table([
          ["Item", "Amount"],
          ["Widget", "10"],
        ]),
      ],
      blocks: [
        { kind: "page_header", text: "ACME Ltd — confidential", bbox: [10, 5, 200, 15] },
        { kind: "heading", text: "Invoice", bbox: [10, 40, 100, 60], level: 1 },
        { kind: "paragraph", text: "# not a heading\nsecond line", bbox: null },
        { kind: "table", text: "Item | Amount\nWidget | 10", bbox: [10, 100, 300, 140], table: 0 },
        { kind: "caption", text: "Table 1: line items", bbox: null },
        { kind: "page_footer", text: "Page 1 of 2", bbox: [10, 770, 100, 780] },
      ],
    }),
    page(2, {
      text: "Item | Amount\nGadget | 5",
      tables: [
        table(
          [
            ["Item", "Amount"],
            ["Gadget", "5"],
          ],
          true,
        ),
      ],
      blocks: [
        { kind: "table", text: "", bbox: null, table: 0 },
        { kind: "list_item", text: "• Paid by card", bbox: null, level: 0 },
        { kind: "list_item", text: "2. Shipped", bbox: null, level: 1 },
        { kind: "figure", text: "", bbox: [0, 0, 50, 50] },
      ],
    }),
  ],
  attachments: [
    {
      file_name: "notes.txt",
      type: "Text",
      pages: [page(1, { text: "Attached note." })],
      attachments: [],
    },
  ],
}

describe("contentMarkdown", () => {
  it("writes headings, escaped paragraphs, tables, lists and figures, without running headers and footers", () => {
    expect(contentMarkdown(invoice)).toBe(
      [
        "# Invoice",
        "",
        "\\# not a heading",
        "second line",
        "",
        "| Item | Amount |",
        "| --- | --- |",
        "| Widget | 10 |",
        "",
        "Table 1: line items",
        "",
        "| Item | Amount |",
        "| --- | --- |",
        "| Gadget | 5 |",
        "",
        "- Paid by card",
        "  2. Shipped",
        "",
        "<!-- image -->",
        "",
        "## Attachment: notes.txt",
        "",
        "Attached note.",
        "",
      ].join("\n"),
    )
  })

  it("joins a continued table to the one ending the page before, its repeated header row left out", () => {
    const joined: ContentDocument = {
      ...invoice,
      pages: [
        page(1, {
          tables: [
            table([
              ["Item", "Amount"],
              ["Widget", "10"],
            ]),
          ],
          blocks: [{ kind: "table", text: "", bbox: null, table: 0 }],
        }),
        page(2, {
          tables: [
            table(
              [
                ["Item", "Amount"],
                ["Gadget", "5"],
              ],
              true,
            ),
          ],
          blocks: [{ kind: "table", text: "", bbox: null, table: 0 }],
        }),
      ],
      attachments: [],
    }
    expect(contentMarkdown(joined)).toBe(
      "| Item | Amount |\n| --- | --- |\n| Widget | 10 |\n| Gadget | 5 |\n",
    )
  })

  it("keeps running headers and footers when a page is shown on its own (the model prompt)", () => {
    const markdown = pageMarkdownText(invoice.pages[0]!)
    expect(markdown.startsWith("ACME Ltd — confidential\n\n# Invoice")).toBe(true)
    expect(markdown.endsWith("Page 1 of 2")).toBe(true)
  })
})

describe("contentJson and contentText", () => {
  it("writes pages of blocks, each with its page, box and table (rows and cells)", () => {
    const json = contentJson(invoice)
    expect(json.page_count).toBe(2)
    const first = json.pages[0]!
    expect(first.blocks.map((b) => b.kind)).toEqual([
      "page_header",
      "heading",
      "paragraph",
      "table",
      "caption",
      "page_footer",
    ])
    const t = first.blocks[3]!
    expect(t.page).toBe(1)
    expect(t.bbox).toEqual([10, 100, 300, 140])
    expect(t.table?.rows).toEqual([
      ["Item", "Amount"],
      ["Widget", "10"],
    ])
    expect(t.table?.cells).toHaveLength(4)
    expect(json.pages[1]!.blocks[0]!.table?.continued).toBe(true)
    expect(json.attachments[0]!.file_name).toBe("notes.txt")
    expect(JSON.parse(renderContent(invoice, "json"))).toEqual(JSON.parse(JSON.stringify(json)))
  })

  it("writes the pages' text, attachments under their names", () => {
    expect(contentText(invoice)).toBe(
      "ACME Ltd\nInvoice\n...\n\nItem | Amount\nGadget | 5\n\n=== Attachment: notes.txt ===\n\nAttached note.\n",
    )
  })
})
