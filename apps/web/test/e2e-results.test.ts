/**
 * The results grid end to end in a real headless Chromium against the all-in-one `dxs start` process on
 * loopback (as e2e.test.ts): a project of six invoices and two agents split by Document, launched from the
 * project screen; then the grid sorted by a column, filtered, paged, a cell opened with the keyboard, and
 * the CSV export downloaded and parsed. axe-core on the grid: no serious or critical violation.
 *
 * Without a Chromium (CHROMIUM_PATH, or /usr/bin/chromium) the suite is skipped and says so.
 */
import { promises as fs } from "node:fs"
import { parseCsv } from "@dxs/testing/Csv"
import type { Page } from "playwright-core"
import { beforeAll, describe, expect, it } from "vitest"
import { browserSuite, CHROMIUM, invoiceProject, PASSWORD } from "./browser.ts"

const EMAIL = "grace@example.com"

/** The invoices' totals by file name; the local extractor reads them back. */
const TOTALS: Record<string, number> = {
  "a.pdf": 1200,
  "b.pdf": 950,
  "c.pdf": 3100,
  "d.pdf": 480,
  "e.pdf": 2250,
  "f.pdf": 1775,
}

let origin: string
let page: Page
let key: string
let projectId: string

const web = browserSuite({
  org: "acme",
  email: EMAIL,
  tmpPrefix: "dxs-web-results-",
  context: { acceptDownloads: true },
})
const { newKey, seriousViolations } = web

const rest = (method: string, p: string, body?: unknown) => web.api(key).request(method, p, body)

/** The row names of the grid, top to bottom. */
const rowNames = () => page.getByTestId("results-grid").locator("tbody th[scope=row]").allTextContents()

const range = () => page.getByTestId("grid-range")
/** The results section (the documents panel above it has a pager of its own). */
const resultsSection = () => page.locator('section[aria-labelledby="results-heading"]')

describe.skipIf(CHROMIUM === undefined)("the results grid in Chromium", () => {
  beforeAll(async () => {
    ;({ page, origin } = web)
    key = await newKey()

    // The project: six invoices and two agents split by the Document dimension.
    projectId = await invoiceProject(rest, "Grid invoices", TOTALS)
  }, 600_000)

  it("launches, then sorts, filters, pages, opens a cell by keyboard and exports the grid", async () => {
    await page.goto(`${origin}/sign-in`)
    await page.getByLabel("E-mail").fill(EMAIL)
    await page.getByLabel("Password").fill(PASSWORD)
    await page.getByRole("button", { name: "Sign in" }).click()
    await page.waitForURL(`${origin}/`)
    await page.goto(`${origin}/projects/${projectId}`)
    await page.getByRole("heading", { name: "Grid invoices", level: 1 }).waitFor()

    // The grid refreshes when the run ends.
    await page.getByRole("button", { name: "Launch" }).click()
    await page.getByTestId("run-status").filter({ hasText: "Done" }).waitFor({ timeout: 120_000 })
    await range().filter({ hasText: "Rows 1–6 of 6" }).waitFor()
    const grid = page.getByTestId("results-grid")
    await grid.getByRole("link", { name: "1200 USD" }).waitFor()
    expect(await rowNames()).toEqual(["a.pdf", "b.pdf", "c.pdf", "d.pdf", "e.pdf", "f.pdf"])
    await grid.getByRole("columnheader", { name: /Total due \(USD\)/ }).waitFor()
    expect(await seriousViolations()).toEqual([])

    // Sort by the total: ascending, then descending, said by aria-sort.
    const totalHeader = grid.getByRole("columnheader", { name: /Total due/ })
    await totalHeader.getByRole("button").click()
    await expect.poll(() => totalHeader.getAttribute("aria-sort")).toBe("ascending")
    await expect.poll(rowNames).toEqual(["d.pdf", "b.pdf", "a.pdf", "f.pdf", "e.pdf", "c.pdf"])
    await totalHeader.getByRole("button").click()
    await expect.poll(() => totalHeader.getAttribute("aria-sort")).toBe("descending")
    await expect.poll(rowNames).toEqual(["c.pdf", "e.pdf", "f.pdf", "a.pdf", "b.pdf", "d.pdf"])

    // Filter with the search box (debounced), then clear it.
    await page.getByLabel("Search", { exact: true }).fill("2250")
    await expect.poll(rowNames).toEqual(["e.pdf"])
    await range().filter({ hasText: "Rows 1–1 of 1" }).waitFor()
    await page.getByLabel("Search", { exact: true }).fill("")
    await range().filter({ hasText: "Rows 1–6 of 6" }).waitFor()
    await page.getByLabel("Status", { exact: true }).selectOption("Ignored")
    await page.getByText("No results match these filters.").waitFor()
    await page.getByLabel("Status", { exact: true }).selectOption("")
    await range().filter({ hasText: "of 6" }).waitFor()

    // Page by five rows.
    await page.getByLabel("Rows per page", { exact: true }).selectOption("5")
    await range().filter({ hasText: "Rows 1–5 of 6" }).waitFor()
    await resultsSection().getByRole("button", { name: "Next" }).click()
    await range().filter({ hasText: "Rows 6–6 of 6" }).waitFor()
    await expect.poll(rowNames).toEqual(["d.pdf"])
    await resultsSection().getByRole("button", { name: "Previous" }).click()
    await range().filter({ hasText: "Rows 1–5 of 6" }).waitFor()
    expect(await seriousViolations()).toEqual([])

    // The CSV export with the current sort: every row, values with their unit, statuses, citations.
    const [download] = await Promise.all([
      page.waitForEvent("download"),
      page.getByRole("link", { name: "Export CSV" }).click(),
    ])
    expect(download.suggestedFilename()).toBe("Grid invoices-results.csv")
    const text = await fs.readFile((await download.path())!, "utf8")
    expect(text.startsWith("\uFEFF")).toBe(true)
    const rows = parseCsv(text.slice(1))
    expect(rows[0]).toEqual([
      "Row",
      "Document",
      "Total due",
      "Total due status",
      "Total due citations",
      "Invoice number",
      "Invoice number status",
      "Invoice number citations",
    ])
    expect(rows.slice(1).map((r) => r[0])).toEqual(["c.pdf", "e.pdf", "f.pdf", "a.pdf", "b.pdf", "d.pdf"])
    for (const r of rows.slice(1)) {
      expect(r[1]).toBe(r[0])
      expect(r[2]).toBe(`${TOTALS[r[0]!]} USD`)
      expect(r[3]).toBe("Resolved")
      expect(r[4]).toMatch(new RegExp(`^${r[0]!.replace(".", "\\.")} p\\.\\d+`))
      expect(r[6]).toMatch(/^(Resolved|Requires attention|Not resolved|No result)$/)
    }

    // The keyboard: arrows move between cells, Enter opens the result.
    await grid.locator('[data-cell="0:0"]').focus()
    await page.keyboard.press("ArrowDown")
    await page.keyboard.press("ArrowRight")
    await page.keyboard.press("ArrowLeft")
    expect(await page.evaluate(() => document.activeElement?.getAttribute("data-cell"))).toBe("1:0")
    await page.keyboard.press("Enter")
    await page.waitForURL(/\/projects\/[0-9a-f-]{36}\/agents\/[0-9a-f-]{36}\/[0-9a-f-]{36}$/)
    await page.getByRole("heading", { name: "Total due", level: 1 }).waitFor()
    expect(await page.getByTestId("result-value").textContent()).toContain("2250")
  })
})
