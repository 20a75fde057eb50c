/**
 * Documents read as structure through the REST API: a page's `tables`, the whole document as Markdown,
 * JSON or text (`…/content/`), an e-mail's attachments after it, and a value the local extractor found in a
 * table cell highlighted by that cell.
 */

import { ruledInvoice } from "@dxs/testing/Documents"
import { type Client, createProject, expectProblem } from "@dxs/testing/RestClient"
import { createAgent, launchAndWait, resultsOf, upload, waitProcessed } from "@dxs/testing/Runs"
import { beforeAll, describe, expect, it } from "vitest"
import { startTestApi, type TestApi } from "./harness.ts"

let api: TestApi
let a: Client

beforeAll(async () => {
  api = await startTestApi({ worker: {} })
  a = api.client(await api.newKey("acme"))
})

const utf8 = (s: string) => new TextEncoder().encode(s)

const pricesHtml = `<html><head><title>Prices</title></head><body>
<h1>Price list</h1><p>Valid from 1 March.</p>
<table>
  <tr><th rowspan="2">Product</th><th colspan="2">Price</th></tr>
  <tr><th>Net</th><th>Gross</th></tr>
  <tr><td>Widget</td><td>10.00</td><td>12.00</td></tr>
</table></body></html>`

const mailWithAttachment = [
  "From: billing@example.com",
  "To: ada@example.com",
  "Subject: Your statement",
  "Date: Fri, 01 Mar 2024 10:15:00 +0000",
  "MIME-Version: 1.0",
  'Content-Type: multipart/mixed; boundary="b1"',
  "",
  "--b1",
  "Content-Type: text/plain; charset=utf-8",
  "",
  "Dear Ada, your statement is attached.",
  "--b1",
  'Content-Type: text/plain; charset=utf-8; name="notes.txt"',
  'Content-Disposition: attachment; filename="notes.txt"',
  "",
  "Balance carried forward: 42.",
  "--b1--",
  "",
].join("\r\n")

describe("tables and content", () => {
  it("gives a page's tables with their cells and spans, and the document as Markdown, JSON and text", async () => {
    const projectId = await createProject(a)
    const id = await upload(a, projectId, "prices.html", utf8(pricesHtml))
    await waitProcessed(a, projectId)

    const page = await a.get(`/projects/${projectId}/documents/${id}/pages/1/`)
    expect(page.status).toBe(200)
    expect(page.body.tables).toHaveLength(1)
    const [table] = page.body.tables
    expect(table).toMatchObject({
      bbox: null,
      continued: false,
      rows: [
        ["Product", "Price", ""],
        ["", "Net", "Gross"],
        ["Widget", "10.00", "12.00"],
      ],
    })
    expect(table.cells[0]).toEqual({
      row: 0,
      column: 0,
      row_span: 2,
      column_span: 1,
      text: "Product",
      header: true,
      bbox: null,
    })

    const markdown = await a.get(`/projects/${projectId}/documents/${id}/content/`)
    expect(markdown.status).toBe(200)
    expect(markdown.headers.get("content-type")).toBe("text/markdown; charset=utf-8")
    expect(markdown.text).toContain("# Price list\n\nValid from 1 March.\n\n<table>")
    expect(markdown.text).toContain('<th rowspan="2">Product</th><th colspan="2">Price</th>')

    const json = await a.get(`/projects/${projectId}/documents/${id}/content/?format=json`)
    expect(json.headers.get("content-type")).toContain("application/json")
    const blocks = json.body.pages[0].blocks
    expect(blocks.map((b: any) => b.kind)).toEqual(["heading", "paragraph", "table"])
    expect(blocks[2].table.rows).toEqual(table.rows)
    expect(blocks[2].page).toBe(1)

    const text = await a.get(`/projects/${projectId}/documents/${id}/content/?format=text`)
    expect(text.headers.get("content-type")).toBe("text/plain; charset=utf-8")
    expect(text.text).toContain("Widget | 10.00 | 12.00")
  })

  it("writes an e-mail's attachments after it, each under its file name", async () => {
    const projectId = await createProject(a)
    const id = await upload(a, projectId, "statement.eml", utf8(mailWithAttachment))
    await waitProcessed(a, projectId)
    // The attachment's own parse: wait until it is processed too.
    await waitProcessed(a, projectId)
    const markdown = await a.get(`/projects/${projectId}/documents/${id}/content/`)
    expect(markdown.text).toContain("Dear Ada, your statement is attached.")
    expect(markdown.text).toContain("## Attachment: notes.txt\n\nBalance carried forward: 42.")
  })

  it("answers 400 for an unknown format and 404 for a document of another organisation", async () => {
    const projectId = await createProject(a)
    const id = await upload(a, projectId, "note.txt", utf8("Hello."))
    await waitProcessed(a, projectId)
    expectProblem(await a.get(`/projects/${projectId}/documents/${id}/content/?format=xml`), 400)
    const other = api.client(await api.newKey("globex"))
    expectProblem(await other.get(`/projects/${projectId}/documents/${id}/content/`), 404)
  })

  it("highlights the table cell a value was found in", async () => {
    const projectId = await createProject(a)
    const id = await upload(a, projectId, "invoice.pdf", await ruledInvoice())
    await waitProcessed(a, projectId)
    const page = await a.get(`/projects/${projectId}/documents/${id}/pages/1/`)
    expect(page.body.tables[0].rows[3]).toEqual(["Total due", "1,190.00 EUR"])
    const agent = await createAgent(a, projectId, {
      name: "Total due",
      extraction_instructions: "The total amount due on the invoice",
      value_type: "number",
      unit: "EUR",
    })
    await launchAndWait(a, projectId)
    const [row] = await resultsOf(a, projectId, agent.id)
    expect(row.resolution_result.value).toBe(1190)
    const extractions = await a.get(`/projects/${projectId}/results/${row.resolution_result.id}/extractions/`)
    const extraction = extractions.body.data[0]
    const boxes = await a.get(`/projects/${projectId}/extractions/${extraction.id}/bounding-boxes/`)
    const cell = page.body.tables[0].cells.find((c: any) => c.text === "1,190.00 EUR")
    const [x0, y0, x1, y1] = cell.bbox
    expect(boxes.body.boxes).toEqual([
      { x: x0, y: y0, width: x1 - x0, height: y1 - y0, text: "1,190.00 EUR" },
    ])
  })
})
