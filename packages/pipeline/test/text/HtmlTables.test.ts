import { maxTablePositions } from "@dxs/domain/Tables"
import MailComposer from "nodemailer/lib/mail-composer/index.js"
import { describe, expect, it } from "vitest"
import { emailBackend } from "../../src/parsing/Email.ts"
import { htmlBackend } from "../../src/parsing/Html.ts"
import { textBackend } from "../../src/parsing/Text.ts"
import { expectStructure, parseWith } from "../support.ts"
import { input } from "./golden.ts"

/** Tables and headings of web pages, e-mail bodies and Markdown: golden records in test/text/golden/tables/. */
const goldenFile = (name: string) => new URL(`golden/tables/${name}.json`, import.meta.url)
const utf8 = (text: string) => new TextEncoder().encode(text)

const spans = `<!DOCTYPE html><html><head><title>Prices</title></head><body>
  <h1>Price list</h1>
  <p>Valid from 1 March.</p>
  <table>
    <thead>
      <tr><th rowspan="2">Product</th><th colspan="2">Price</th></tr>
      <tr><th>Net</th><th>Gross</th></tr>
    </thead>
    <tbody>
      <tr><td>Widget</td><td>10.00</td><td>12.00</td></tr>
      <tr><td>Gadget <br> (large)</td><td colspan="2">on request</td></tr>
      <tr><td>Bundle</td><td><table><tr><td>A</td><td>B</td></tr><tr><td>C</td><td>D</td></tr></table></td><td>30.00</td></tr>
    </tbody>
  </table>
  <h2>Layout</h2>
  <table role="presentation"><tr><td>Left column text</td><td>Right column text</td></tr></table>
</body></html>`

describe("HTML tables", () => {
  it("reads rowspan, colspan, <th> and <thead> headers, a nested table as its cell's text; a layout table is text", async () => {
    const output = await parseWith(htmlBackend, input("prices.html", utf8(spans)))
    const { pages } = await expectStructure(goldenFile("prices.html"), output)
    expect(pages[0]!.tables).toHaveLength(1)
    const [table] = pages[0]!.tables
    expect(table!.rows).toEqual([
      ["Product", "Price", ""],
      ["", "Net", "Gross"],
      ["Widget", "10.00", "12.00"],
      ["Gadget\n(large)", "on request", ""],
      ["Bundle", "A | B\nC | D", "30.00"],
    ])
    expect(table!.spans).toEqual([
      [0, 0, 2, 1],
      [0, 1, 1, 2],
      [3, 1, 1, 2],
    ])
    expect(table!.headers).toEqual([
      [0, 0],
      [0, 1],
      [1, 1],
      [1, 2],
    ])
    expect(pages[0]!.blocks.filter((b) => b.kind === "heading").map((b) => [b.text, b.level])).toEqual([
      ["Price list", 1],
      ["Layout", 2],
    ])
  })

  it("cuts a long table at the page breaks of the text: one table per page, the later ones continued", async () => {
    const rows = Array.from(
      { length: 400 },
      (_, i) => `<tr><td>Item ${i + 1}</td><td>${(i + 1) * 3}.00</td></tr>`,
    )
    const html = `<html><body><p>Inventory</p><table><tr><th>Item</th><th>Price</th></tr>${rows.join("")}</table></body></html>`
    const output = await parseWith(htmlBackend, input("inventory.html", utf8(html)))
    expect(output.pages.length).toBeGreaterThan(1)
    const tables = output.pages.flatMap((p) => p.tables ?? [])
    expect(tables.map((t) => t.continued)).toEqual(tables.map((_, i) => i > 0))
    const cells = tables.flatMap((t) => t.cells.filter((c) => c.column === 0).map((c) => c.text))
    expect(cells).toEqual(["Item", ...Array.from({ length: 400 }, (_, i) => `Item ${i + 1}`)])
    // Each page's table is where its rows are in that page's text.
    for (const page of output.pages)
      for (const t of page.tables ?? []) expect(page.text).toContain(t.cells.find((c) => c.text !== "")!.text)
  })
})

describe("hostile HTML tables", () => {
  it("bounds a table of huge spans: every page's tables stay within the position limit", async () => {
    const rows = Array.from(
      { length: 3000 },
      (_, i) => `<tr><td rowspan="65534" colspan="1000">r${i}</td><td>x</td></tr>`,
    )
    const output = await parseWith(htmlBackend, input("spans.html", utf8(`<table>${rows.join("")}</table>`)))
    const tables = output.pages.flatMap((p) => p.tables ?? [])
    expect(tables.length).toBeGreaterThan(0)
    for (const t of tables) {
      const rowsOf = Math.max(...t.cells.map((c) => c.row + c.row_span))
      const columns = Math.max(...t.cells.map((c) => c.column + c.column_span))
      expect(rowsOf * columns).toBeLessThanOrEqual(maxTablePositions)
    }
  }, 60_000)
})

describe("E-mail and Markdown structure", () => {
  it("reads the table of an HTML e-mail body on the message's page", async () => {
    const mail = await new MailComposer({
      from: "billing@example.com",
      to: "ada@example.com",
      subject: "Your invoice",
      date: new Date("2024-03-01T10:15:00Z"),
      html: "<p>Dear Ada,</p><table><tr><th>Item</th><th>Amount</th></tr><tr><td>Hosting</td><td>EUR 40.00</td></tr><tr><td>Total</td><td>EUR 40.00</td></tr></table>",
    })
      .compile()
      .build()
    const output = await parseWith(emailBackend, input("invoice.eml", new Uint8Array(mail)))
    expect(output.pages[0]!.tables?.map((t) => t.cells.map((c) => c.text))).toEqual([
      ["Item", "Amount", "Hosting", "EUR 40.00", "Total", "EUR 40.00"],
    ])
  })

  it("reads Markdown headings", async () => {
    const output = await parseWith(
      textBackend,
      input("notes.md", utf8("# Notes\n\nSome text.\n\n## Next steps\n\n- one\n- two\n")),
    )
    expect(output.pages[0]!.blocks?.map((b) => [b.kind, b.text, b.level])).toEqual([
      ["heading", "Notes", 1],
      ["paragraph", "Some text.", undefined],
      ["heading", "Next steps", 2],
      ["list_item", "- one", 0],
      ["list_item", "- two", 0],
    ])
  })
})
