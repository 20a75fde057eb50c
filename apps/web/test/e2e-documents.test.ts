import { invoice, ruledInvoice } from "@dxs/testing/Documents"
import type { FileChooser, Page } from "playwright-core"
import { beforeAll, describe, expect, it } from "vitest"
import { browserSuite, CHROMIUM, PASSWORD } from "./browser.ts"

const EMAIL = "grace@example.com"

let origin: string
let page: Page

const web = browserSuite({ org: "docs", email: EMAIL, tmpPrefix: "dxs-web-docs-" })
const { newKey, seriousViolations } = web

/** The REST API with a new key of the organisation. */
const rest = async () => web.api(await newKey())

const goodPdf = async (number: string, total: string) =>
  Buffer.from(
    await invoice({
      number,
      date: "May 5, 2024",
      seller: "Acme Supplies Inc.",
      currency: "USD",
      subtotal: total,
      tax: "$0.00",
      total,
    }),
  )

const notAPdf = (name: string) => ({
  name,
  mimeType: "application/pdf",
  buffer: Buffer.from("these bytes are not a PDF\n"),
})

const textFile = (name: string, text: string) => ({ name, mimeType: "text/plain", buffer: Buffer.from(text) })

/** A multipart/mixed e-mail with a text body and these text attachments. */
const emailWith = (attachments: ReadonlyArray<{ name: string; body: string }>) => {
  const boundary = "b-1234567890"
  const parts = [
    `--${boundary}\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nPlease find the files attached.\r\n`,
    ...attachments.map(
      (att) =>
        `--${boundary}\r\nContent-Type: text/plain; name="${att.name}"\r\nContent-Disposition: attachment; filename="${att.name}"\r\nContent-Transfer-Encoding: base64\r\n\r\n${Buffer.from(att.body).toString("base64")}\r\n`,
    ),
  ]
  return [
    "From: Alice <alice@example.com>",
    "To: Bob <bob@example.com>",
    "Subject: Board papers",
    "Date: Mon, 4 May 2026 10:00:00 +0000",
    "MIME-Version: 1.0",
    `Content-Type: multipart/mixed; boundary="${boundary}"`,
    "",
    `${parts.join("")}--${boundary}--\r\n`,
  ].join("\r\n")
}

describe.skipIf(CHROMIUM === undefined)("the documents panel and viewer in Chromium", () => {
  beforeAll(() => {
    ;({ page, origin } = web)
  })

  it("fixes failed documents from the panel, opens a PDF in the viewer, acts in bulk, searches and pages", async () => {
    const choosers: Array<FileChooser> = []
    page.on("filechooser", (chooser) => choosers.push(chooser))

    await page.goto(`${origin}/sign-in`)
    await page.getByLabel("E-mail").fill(EMAIL)
    await page.getByLabel("Password").fill(PASSWORD)
    await page.getByRole("button", { name: "Sign in" }).click()
    await page.getByRole("heading", { name: "Projects", level: 1 }).waitFor()
    await page.getByLabel("New project name").fill("Paperwork")
    await page.getByRole("button", { name: "Create project" }).click()
    await page.getByRole("heading", { name: "Paperwork", level: 1 }).waitFor()
    const projectUrl = page.url()
    const projectId = /projects\/([0-9a-f-]{36})$/.exec(projectUrl)![1]!
    const api = await rest()

    const documents = page.getByTestId("documents-table")
    const row = (name: string, status?: string) =>
      documents.locator(status === undefined ? "tbody tr" : `tbody tr[data-status="${status}"]`, {
        has: page.getByRole("link", { name, exact: true }),
      })
    const range = page.getByTestId("documents-range")

    // A document that fails parsing, and a good PDF; the failure's reason is shown in its row.
    await page
      .getByLabel("Upload documents")
      .setInputFiles([
        notAPdf("broken.pdf"),
        { name: "good.pdf", mimeType: "application/pdf", buffer: await goodPdf("INV-3001", "$500.00") },
      ])
    await row("broken.pdf", "Failed").waitFor({ timeout: 60_000 })
    await row("good.pdf", "Processed").waitFor({ timeout: 60_000 })
    await row("broken.pdf")
      .getByText(/no %PDF header/)
      .waitFor()
    const brokenId = (await row("broken.pdf").getAttribute("data-document-id"))!
    expect(await seriousViolations()).toEqual([])

    // Re-parse: a new version of the same file, which fails again with its reason.
    await row("broken.pdf").getByRole("button", { name: "Re-parse broken.pdf", exact: true }).click()
    await page.getByRole("status").filter({ hasText: "broken.pdf is being parsed again." }).waitFor()
    await expect
      .poll(async () => (await api.get(`/projects/${projectId}/documents/${brokenId}/`)).body, {
        timeout: 60_000,
      })
      .toMatchObject({ version: 2, status: "Failed" })
    await row("broken.pdf", "Failed").waitFor({ timeout: 60_000 })

    // Replace: the file picker of its Replace button takes a good PDF; the same document is then processed.
    await row("broken.pdf").getByRole("button", { name: "Replace broken.pdf", exact: true }).click()
    await expect.poll(() => choosers.length, { timeout: 30_000 }).toBe(1)
    await choosers[0]!.setFiles({
      name: "fixed.pdf",
      mimeType: "application/pdf",
      buffer: await goodPdf("INV-3002", "$700.00"),
    })
    await row("fixed.pdf", "Processed").waitFor({ timeout: 60_000 })
    expect(await row("fixed.pdf").getAttribute("data-document-id")).toBe(brokenId)

    // Another failed one is deleted through the confirmation dialog.
    await page.getByLabel("Upload documents").setInputFiles([notAPdf("scan.pdf")])
    await row("scan.pdf", "Failed").waitFor({ timeout: 60_000 })
    await row("scan.pdf").getByRole("button", { name: "Delete scan.pdf", exact: true }).click()
    const dialog = page.getByRole("dialog", { name: "Delete document “scan.pdf”?" })
    await dialog.waitFor()
    expect(await seriousViolations()).toEqual([])
    await dialog.getByRole("button", { name: "Delete", exact: true }).click()
    await row("scan.pdf").waitFor({ state: "detached" })
    await page.getByRole("status").filter({ hasText: "scan.pdf deleted." }).waitFor()

    // Nothing failed is left: the launch goes through.
    await page.getByLabel("Agent name").fill("Total due")
    await page.getByLabel("What to extract").fill("The total amount due")
    await page.getByLabel("Value type").selectOption("number")
    await page.getByRole("button", { name: "Create agent" }).click()
    await page.getByTestId("agents-table").getByRole("button", { name: "Total due" }).waitFor()
    await page.getByRole("button", { name: "Launch" }).click()
    await page.getByTestId("run-status").filter({ hasText: "Done" }).waitFor({ timeout: 90_000 })
    expect(await page.getByTestId("launch-refusal").count()).toBe(0)

    // The viewer: the name links to it; page images, page navigation and zoom.
    const goodId = (await row("good.pdf").getAttribute("data-document-id"))!
    await row("good.pdf").getByRole("link", { name: "good.pdf", exact: true }).click()
    await page.waitForURL(`${projectUrl}/documents/${goodId}`)
    await page.getByRole("heading", { name: "good.pdf", level: 1 }).waitFor()
    const image = (n: number) => page.getByRole("img", { name: `Page ${n} of good.pdf` })
    await image(1).waitFor()
    await expect
      .poll(() => image(1).evaluate((img: HTMLImageElement) => img.naturalWidth), { timeout: 30_000 })
      .toBeGreaterThan(0)
    expect(await page.getByRole("button", { name: "Previous page" }).isDisabled()).toBe(true)
    expect(await seriousViolations()).toEqual([])
    await page.getByRole("button", { name: "Next page" }).click()
    await image(2).waitFor()
    await expect
      .poll(() => image(2).evaluate((img: HTMLImageElement) => img.naturalWidth), { timeout: 30_000 })
      .toBeGreaterThan(0)
    expect(await page.getByLabel("Page", { exact: true }).inputValue()).toBe("2")
    expect(await page.getByRole("button", { name: "Next page" }).isDisabled()).toBe(true)
    const width = () => image(2).evaluate((img: HTMLImageElement) => img.getBoundingClientRect().width)
    const before = await width()
    await page.getByRole("button", { name: "Zoom in" }).click()
    await page.getByTestId("zoom-level").filter({ hasText: "125 %" }).waitFor()
    await expect.poll(width).toBeCloseTo(before * 1.25, 0)
    for (const level of ["100 %", "75 %", "50 %"]) {
      await page.getByRole("button", { name: "Zoom out" }).click()
      await page.getByTestId("zoom-level").filter({ hasText: level }).waitFor()
    }
    expect(await page.getByRole("button", { name: "Zoom out" }).isDisabled()).toBe(true)
    // The page number field: typed, then Enter.
    await page.getByLabel("Page", { exact: true }).fill("1")
    await page.getByLabel("Page", { exact: true }).press("Enter")
    await image(1).waitFor()
    expect(await seriousViolations()).toEqual([])

    // A text document has no page image: its text is laid out, or shown as text.
    await page.getByRole("link", { name: "Back to the project" }).click()
    await page.getByRole("heading", { name: "Paperwork", level: 1 }).waitFor()
    await page.getByLabel("Upload documents").setInputFiles([
      textFile("notes.txt", "Meeting notes: the budget is approved."),
      {
        name: "mail.eml",
        mimeType: "message/rfc822",
        buffer: Buffer.from(
          emailWith([
            { name: "minutes.txt", body: "Minutes of the board meeting." },
            { name: "agenda.txt", body: "Agenda of the next meeting." },
          ]),
        ),
      },
    ])
    await row("notes.txt", "Processed").waitFor({ timeout: 60_000 })
    await row("notes.txt").getByRole("link", { name: "notes.txt", exact: true }).click()
    await page.getByRole("heading", { name: "notes.txt", level: 1 }).waitFor()
    await page.getByTestId("viewer-page").filter({ hasText: "the budget is approved" }).waitFor()
    await page.goBack()

    // E-mail attachments: listed under their message on demand.
    await row("mail.eml", "Processed").waitFor({ timeout: 60_000 })
    const toggle = page.getByRole("button", { name: "Show 2 attachments of mail.eml" })
    await toggle.waitFor({ timeout: 60_000 })
    expect(await row("minutes.txt").count()).toBe(0)
    await toggle.click()
    await row("minutes.txt").waitFor()
    await row("agenda.txt").waitFor()
    const mailId = await row("mail.eml").getAttribute("data-document-id")
    expect(await row("minutes.txt").getAttribute("data-parent-document-id")).toBe(mailId)
    expect(
      await page
        .getByRole("button", { name: "Hide 2 attachments of mail.eml" })
        .getAttribute("aria-expanded"),
    ).toBe("true")
    expect(await seriousViolations()).toEqual([])
    await page.getByRole("button", { name: "Hide 2 attachments of mail.eml" }).click()
    await row("minutes.txt").waitFor({ state: "detached" })

    // Bulk: two selected documents deleted at once, with a summary.
    await page
      .getByLabel("Upload documents")
      .setInputFiles([textFile("draft-1.txt", "Draft one."), textFile("draft-2.txt", "Draft two.")])
    await row("draft-1.txt").waitFor({ timeout: 60_000 })
    await row("draft-2.txt").waitFor({ timeout: 60_000 })
    await page.getByLabel("Select draft-1.txt").check()
    await page.getByLabel("Select draft-2.txt").check()
    await page.getByText("2 selected").waitFor()
    await page.getByRole("button", { name: "Delete selected" }).click()
    const bulkDialog = page.getByRole("dialog", { name: "Delete 2 documents?" })
    await bulkDialog.waitFor()
    expect(await seriousViolations()).toEqual([])
    await bulkDialog.getByRole("button", { name: "Delete", exact: true }).click()
    await page.getByTestId("bulk-summary").filter({ hasText: "Deleted 2 documents." }).waitFor()
    await row("draft-1.txt").waitFor({ state: "detached" })
    await row("draft-2.txt").waitFor({ state: "detached" })
    const listed = (await api.get(`/projects/${projectId}/documents/`)).body as Array<any>
    expect(listed.map((d) => d.file_name)).not.toContain("draft-1.txt")
    expect(listed.map((d) => d.file_name)).not.toContain("draft-2.txt")

    // Search (debounced) and the status filter.
    await page.getByLabel("Search documents").fill("FIX")
    await expect.poll(() => documents.locator("tbody tr").count()).toBe(1)
    await row("fixed.pdf").waitFor()
    await page.getByLabel("Document status", { exact: true }).selectOption("Failed")
    await range.filter({ hasText: "No document matches the filters." }).waitFor()
    await page.getByLabel("Document status", { exact: true }).selectOption("")
    await page.getByLabel("Search documents").fill("")
    await row("good.pdf").waitFor()

    // Paging: 10 a page over the project's top-level documents (4 so far, 8 more uploaded).
    await page
      .getByLabel("Upload documents")
      .setInputFiles(
        Array.from({ length: 8 }, (_, i) => textFile(`page-${i + 1}.txt`, `Page document ${i + 1}.`)),
      )
    await row("page-8.txt").waitFor({ timeout: 60_000 })
    await page.getByLabel("Documents per page", { exact: true }).selectOption("10")
    await range.filter({ hasText: "1–10 of 12 documents" }).waitFor()
    expect(await documents.locator("tbody tr").count()).toBe(10)
    await page.getByRole("button", { name: "Next page" }).click()
    await range.filter({ hasText: "11–12 of 12 documents" }).waitFor()
    // The oldest uploads are last: the first two.
    await row("fixed.pdf").waitFor()
    await row("good.pdf").waitFor()
    expect(await page.getByRole("button", { name: "Next page" }).isDisabled()).toBe(true)
    // Select all on this page selects this page's documents only.
    await page.getByLabel("Select all documents on this page").check()
    await page.getByText("2 selected").waitFor()
    await page.getByLabel("Select all documents on this page").uncheck()
    await page.getByRole("button", { name: "Previous page" }).click()
    await range.filter({ hasText: "1–10 of 12 documents" }).waitFor()
    expect(await seriousViolations()).toEqual([])
  })

  it("draws a PDF's table over its page image, and reads it as a table in the text view", async () => {
    await page.goto(`${origin}/`)
    await page.getByRole("heading", { name: "Projects", level: 1 }).waitFor()
    await page.getByLabel("New project name").fill("Tables")
    await page.getByRole("button", { name: "Create project" }).click()
    await page.getByRole("heading", { name: "Tables", level: 1 }).waitFor()
    const projectId = /projects\/([0-9a-f-]{36})$/.exec(page.url())![1]!
    await page
      .getByLabel("Upload documents")
      .setInputFiles([
        { name: "totals.pdf", mimeType: "application/pdf", buffer: Buffer.from(await ruledInvoice()) },
      ])
    const row = page
      .getByTestId("documents-table")
      .locator('tbody tr[data-status="Processed"]', { has: page.getByRole("link", { name: "totals.pdf" }) })
    await row.waitFor({ timeout: 60_000 })
    const documentId = (await row.getAttribute("data-document-id"))!
    await row.getByRole("link", { name: "totals.pdf", exact: true }).click()
    const image = page.getByRole("img", { name: "Page 1 of totals.pdf" })
    await expect
      .poll(() => image.evaluate((img: HTMLImageElement) => img.naturalWidth), { timeout: 30_000 })
      .toBeGreaterThan(0)

    // Over the page: the table's box, where the page API puts it, scaled to the image.
    expect(await page.getByTestId("tables-overlay").count()).toBe(0)
    await page.getByLabel("Show tables").check()
    const table = page.getByRole("img", { name: "Table 1: 4 rows × 2 columns" })
    await table.waitFor()
    const api = await rest()
    const pageRecord = (await api.get(`/projects/${projectId}/documents/${documentId}/pages/1/`)).body
    const [x0, y0, x1, y1] = pageRecord.tables[0].bbox as [number, number, number, number]
    const imageBox = (await image.boundingBox())!
    const scale = imageBox.width / pageRecord.width
    const box = (await table.boundingBox())!
    // Within a pixel or two: the image has a one-pixel border.
    expect(Math.abs(box.x - imageBox.x - x0 * scale)).toBeLessThan(3)
    expect(Math.abs(box.y - imageBox.y - y0 * scale)).toBeLessThan(3)
    expect(Math.abs(box.width - (x1 - x0) * scale)).toBeLessThan(3)
    expect(Math.abs(box.height - (y1 - y0) * scale)).toBeLessThan(3)
    expect(await table.locator(".cell-box").count()).toBe(8)
    expect(await seriousViolations()).toEqual([])

    // The text view: the page's blocks, the table as a table with its header row.
    await page.getByLabel("Text view").check()
    const text = page.getByTestId("viewer-text")
    await text.getByRole("table").waitFor()
    expect(await text.getByRole("columnheader").allTextContents()).toEqual(["Description", "Amount"])
    expect(await text.getByRole("row").nth(3).getByRole("cell").allTextContents()).toEqual([
      "Total due",
      "1,190.00 EUR",
    ])
    expect(await text.textContent()).toContain("Fabrikam GmbH - Invoice INV-77")
    expect(await seriousViolations()).toEqual([])
  })
})
