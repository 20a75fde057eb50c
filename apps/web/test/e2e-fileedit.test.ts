import * as path from "node:path"
import { invoice } from "@dxs/testing/Documents"
import ExcelJS from "exceljs"
import type { Page } from "playwright-core"
import { beforeAll, describe, expect, it } from "vitest"
import { browserSuite, CHROMIUM, PASSWORD } from "./browser.ts"

const EMAIL = "ada@example.com"

let origin: string
let page: Page

const web = browserSuite({ org: "acme", email: EMAIL, tmpPrefix: "dxs-web-" })
const { newKey, seriousViolations } = web

/** The REST API of the server with an API key. */
const rest = web.api

describe.skipIf(CHROMIUM === undefined)("the web application in Chromium", () => {
  beforeAll(() => {
    ;({ page, origin } = web)
  })

  it("fills an .xlsx template from the project screen and downloads it", async () => {
    await page.goto(`${origin}/`)
    await page.waitForURL(`${origin}/sign-in`)
    await page.getByLabel("E-mail").fill(EMAIL)
    await page.getByLabel("Password").fill(PASSWORD)
    await page.getByRole("button", { name: "Sign in" }).click()
    await page.getByRole("heading", { name: "Projects", level: 1 }).waitFor()

    await page.getByLabel("New project name").fill("Templates")
    await page.getByRole("button", { name: "Create project" }).click()
    await page.getByRole("heading", { name: "Templates", level: 1 }).waitFor()
    const pdf = await invoice({
      number: "INV-1001",
      date: "March 3, 2024",
      seller: "Acme Supplies Inc.",
      currency: "USD",
      subtotal: "$1,000.00",
      tax: "$200.00",
      total: "$1,200.00",
    })
    await page.getByLabel("Upload documents").setInputFiles({
      name: "invoice.pdf",
      mimeType: "application/pdf",
      buffer: Buffer.from(pdf),
    })
    await page.getByRole("cell", { name: "Processed" }).waitFor({ timeout: 60_000 })
    await page.getByLabel("Agent name").fill("Total due")
    await page.getByLabel("What to extract").fill("The total amount due")
    await page.getByLabel("Value type").selectOption("number")
    await page.getByRole("button", { name: "Create agent" }).click()
    await page.getByRole("columnheader", { name: "Total due" }).waitFor()
    await page.getByRole("button", { name: "Launch" }).click()
    await page.getByTestId("run-status").filter({ hasText: "Done" }).waitFor({ timeout: 60_000 })
    await page.getByRole("link", { name: "1200" }).waitFor()

    const panel = page.getByTestId("file-edit")
    await panel.getByRole("heading", { name: "Fill a template" }).waitFor()
    await panel.getByTestId("file-edit-state").and(page.locator('[data-state="idle"]')).waitFor()
    expect(await seriousViolations()).toEqual([])

    const wb = new ExcelJS.Workbook()
    const sheet = wb.addWorksheet("Report")
    sheet.getCell("A1").value = "Total due"
    sheet.getCell("C4").value = "Amount: {{total due}}"
    sheet.getCell("C5").value = "{{Nobody}}"
    const template = Buffer.from(await wb.xlsx.writeBuffer())
    await panel.getByLabel("Template (.xlsx or .docx)").setInputFiles({
      name: "report.xlsx",
      mimeType: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
      buffer: template,
    })
    await panel.getByRole("button", { name: "Fill template" }).click()
    await panel.getByTestId("file-edit-state").and(page.locator('[data-state="succeeded"]')).waitFor()
    const problems = panel.getByTestId("file-edit-problems")
    await problems.getByRole("cell", { name: "{{Nobody}}" }).waitFor()
    await problems.getByRole("cell", { name: "Report!C5" }).waitFor()
    expect(await seriousViolations()).toEqual([])

    const [download] = await Promise.all([
      page.waitForEvent("download"),
      panel.getByRole("link", { name: "Download filled file" }).click(),
    ])
    expect(download.suggestedFilename()).toBe("report-filled.xlsx")
    const saved = path.join(web.tmp, "report-filled.xlsx")
    await download.saveAs(saved)
    const filled = new ExcelJS.Workbook()
    await filled.xlsx.readFile(saved)
    const report = filled.getWorksheet("Report")!
    expect(report.getCell("A2").value).toBe(1200)
    expect(report.getCell("C4").value).toBe("Amount: 1200")
    expect(report.getCell("C5").value).toBe("{{Nobody}}")

    // Clear: back to idle, and the download is gone.
    await panel.getByRole("button", { name: "Clear" }).click()
    await panel.getByTestId("file-edit-state").and(page.locator('[data-state="idle"]')).waitFor()
    expect(await panel.getByRole("link", { name: "Download filled file" }).count()).toBe(0)
    const projectId = /projects\/([0-9a-f-]{36})/.exec(page.url())![1]!
    const status = await rest(await newKey()).get(`/projects/${projectId}/file-edit/status/`)
    expect(status.body).toMatchObject({ state: "idle", download_url: null })
  })
})
