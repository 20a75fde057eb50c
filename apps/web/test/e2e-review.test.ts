/**
 * The review screen end to end in a real headless Chromium against the all-in-one `dxs start` process on
 * loopback: a project of three invoices and two agents split by Document, launched; the review opened from
 * the project screen ("Start review", the first document of the queue), then only the keyboard: values
 * walked with j/k, marked correct (a) and wrong (r), one edited in place (e, typing, Enter; and an edit
 * cancelled with Escape), the next document of the queue (n), the progress following. Then the results grid
 * shows the marks, its review filter lists only the rows marked, and the CSV export with confidence and
 * review carries them; each document's row links to its review, and so does a value's result screen.
 * axe-core on the review screen: no serious or critical violation.
 *
 * Without a Chromium (CHROMIUM_PATH, or /usr/bin/chromium) the suite is skipped and says so.
 */
import { promises as fs } from "node:fs"
import { parseCsv } from "@dxs/testing/Csv"
import type { Page } from "playwright-core"
import { beforeAll, describe, expect, it } from "vitest"
import { browserSuite, CHROMIUM, invoiceProject } from "./browser.ts"

/** The invoices' totals by file name; the local extractor reads them back. */
const TOTALS: Record<string, number> = {
  "a.pdf": 1200,
  "b.pdf": 950,
  "c.pdf": 3100,
}

let origin: string
let page: Page
let key: string
let projectId: string

const web = browserSuite({
  org: "acme",
  email: "ada@example.com",
  tmpPrefix: "dxs-web-review-",
  context: { acceptDownloads: true },
})
const { newKey, seriousViolations, signIn } = web

const rest = (method: string, p: string, body?: unknown) => web.api(key).request(method, p, body)

const queue = async () => {
  const r = await rest("GET", `/projects/${projectId}/review/queue/`)
  expect(r.status).toBe(200)
  return r.body as {
    total_documents: number
    reviewed_documents: number
    documents: Array<{ document_id: string; file_name: string; reviewed: boolean }>
  }
}

/** The values of the review screen, top to bottom. */
const values = () => page.getByTestId("review-value")
const value = (i: number) => values().nth(i)
const selectedIndex = () =>
  page.evaluate(() =>
    [...document.querySelectorAll('[data-testid="review-value"] button.review-select')].findIndex(
      (b) => b.getAttribute("aria-current") === "true",
    ),
  )
const progress = () => page.getByTestId("review-progress")
const stateOf = (i: number) => value(i).getByTestId("review-state")

/** The row names of the grid, top to bottom. */
const rowNames = () => page.getByTestId("results-grid").locator("tbody th[scope=row]").allTextContents()
const gridRow = (name: string) =>
  page
    .getByTestId("results-grid")
    .locator("tbody tr", { has: page.locator("th[scope=row]", { hasText: name }) })

describe.skipIf(CHROMIUM === undefined)("the review screen in Chromium", () => {
  beforeAll(async () => {
    ;({ page, origin } = web)
    key = await newKey()

    // The project: three invoices and two agents split by the Document dimension, launched.
    projectId = await invoiceProject(rest, "Review invoices", TOTALS)
    expect((await rest("POST", `/projects/${projectId}/agents/launch/`)).status).toBe(202)
    for (const deadline = Date.now() + 180_000; ; ) {
      const status = (await rest("GET", `/projects/${projectId}/status/`)).body
      const agents = (await rest("GET", `/projects/${projectId}/agents/`)).body as Array<any>
      if (
        status.pipeline_running === false &&
        agents.every((a) => a.extraction_status === "Processed" || a.extraction_status === "No Result")
      )
        break
      if (Date.now() > deadline) throw new Error(`the run did not end: ${JSON.stringify(status)}`)
      await new Promise((r) => setTimeout(r, 250))
    }
  }, 600_000)

  it("reviews by keyboard along the queue; the grid, its review filter and the export show the marks", async () => {
    const start = await queue()
    expect(start.total_documents).toBe(3)
    expect(start.reviewed_documents).toBe(0)
    const first = start.documents[0]!

    // Opened from the project screen: the first document of the queue.
    await signIn()
    await page.goto(`${origin}/projects/${projectId}`)
    await page.getByRole("heading", { name: "Review invoices", level: 1 }).waitFor()
    await page.getByRole("button", { name: "Start review" }).click()
    await page.waitForURL(`${origin}/projects/${projectId}/documents/${first.document_id}/review`)
    await page.getByRole("heading", { name: `Review ${first.file_name}`, level: 1 }).waitFor()
    await progress().filter({ hasText: "0 of 3 reviewed" }).waitFor()
    await expect.poll(() => values().count()).toBe(2)
    expect(await value(0).textContent()).toContain("Total due")
    expect(await value(0).textContent()).toContain(String(TOTALS[first.file_name]))
    expect(await value(1).textContent()).toContain("Invoice number")
    expect(await selectedIndex()).toBe(0)
    // The cited page is shown with the passage highlighted; the key legend is there.
    await page.getByTestId("review-page").getByTestId("highlight").first().waitFor()
    await page.getByRole("heading", { name: "Keys" }).waitFor()
    expect(await seriousViolations()).toEqual([])

    // From here on, only the keyboard. j/k walk the values.
    await page.keyboard.press("j")
    await expect.poll(selectedIndex).toBe(1)
    await page.keyboard.press("j")
    await expect.poll(selectedIndex).toBe(1)
    await page.keyboard.press("k")
    await expect.poll(selectedIndex).toBe(0)

    // a marks the total correct, r the invoice number wrong: the document is reviewed.
    await page.keyboard.press("a")
    await stateOf(0).filter({ hasText: "Marked correct" }).waitFor()
    await page.keyboard.press("j")
    await expect.poll(selectedIndex).toBe(1)
    await page.keyboard.press("r")
    await stateOf(1).filter({ hasText: "Marked wrong" }).waitFor()
    await progress().filter({ hasText: "1 of 3 reviewed" }).waitFor()
    await page.getByTestId("document-progress").filter({ hasText: "2 of 2 values reviewed" }).waitFor()

    // n: the next document of the queue.
    const after = await rest(
      "GET",
      `/projects/${projectId}/review/queue/?after_document=${first.document_id}&limit=1`,
    )
    const second = after.body.documents[0]
    expect(second).toBeDefined()
    await page.keyboard.press("n")
    await page.waitForURL(`${origin}/projects/${projectId}/documents/${second.document_id}/review`)
    await page.getByRole("heading", { name: `Review ${second.file_name}`, level: 1 }).waitFor()
    await expect.poll(() => values().count()).toBe(2)
    expect(await selectedIndex()).toBe(0)
    await progress().filter({ hasText: "1 of 3 reviewed" }).waitFor()
    expect(await seriousViolations()).toEqual([])

    // e edits in place: Escape cancels, Enter saves; the keys do nothing while typing.
    await page.keyboard.press("j")
    await expect.poll(selectedIndex).toBe(1)
    const original = await value(1).getByTestId("review-value-text").textContent()
    await page.keyboard.press("e")
    const field = page.getByLabel("New value of Invoice number")
    await field.waitFor()
    await page.keyboard.type("zzz")
    await page.keyboard.press("Escape")
    await field.waitFor({ state: "detached" })
    expect(await value(1).getByTestId("review-value-text").textContent()).toBe(original)
    await page.keyboard.press("e")
    await field.waitFor()
    await page.keyboard.type("INV-jk-2")
    expect(await selectedIndex()).toBe(1)
    await page.keyboard.press("Enter")
    await field.waitFor({ state: "detached" })
    await value(1).getByTestId("review-value-text").filter({ hasText: "INV-jk-2" }).waitFor()
    await stateOf(1).filter({ hasText: "Set by hand" }).waitFor()
    await page.keyboard.press("k")
    await expect.poll(selectedIndex).toBe(0)
    await page.keyboard.press("a")
    await stateOf(0).filter({ hasText: "Marked correct" }).waitFor()
    await progress().filter({ hasText: "2 of 3 reviewed" }).waitFor()

    // p: the document before it in the queue (as the queue stands now), its marks kept.
    const before = await rest(
      "GET",
      `/projects/${projectId}/review/queue/?before_document=${second.document_id}&limit=1`,
    )
    const previous = before.body.documents[0]
    expect(previous).toBeDefined()
    await page.keyboard.press("p")
    await page.waitForURL(`${origin}/projects/${projectId}/documents/${previous.document_id}/review`)
    await page.getByRole("heading", { name: `Review ${previous.file_name}`, level: 1 }).waitFor()
    if (previous.document_id === first.document_id)
      await stateOf(1).filter({ hasText: "Marked wrong" }).waitFor()

    // The results grid shows the marks; the review filter lists only the rows marked.
    await page.goto(`${origin}/projects/${projectId}`)
    const grid = page.getByTestId("results-grid")
    await grid.getByRole("link", { name: /INV-jk-2/ }).waitFor()
    const totalCell = (name: string) => gridRow(name).locator("td").nth(0)
    const numberCell = (name: string) => gridRow(name).locator("td").nth(1)
    expect(await totalCell(first.file_name).getByTestId("review-mark").textContent()).toContain(
      "marked correct",
    )
    expect(await numberCell(first.file_name).getByTestId("review-mark").textContent()).toContain(
      "marked wrong",
    )
    expect(await numberCell(second.file_name).getByTestId("review-mark").textContent()).toContain(
      "set by hand",
    )
    expect(await totalCell(second.file_name).getByTestId("review-mark").textContent()).toContain(
      "marked correct",
    )
    const third = Object.keys(TOTALS).find((n) => n !== first.file_name && n !== second.file_name)!
    expect(await gridRow(third).getByTestId("review-mark").count()).toBe(0)
    const review = page.getByLabel("Review", { exact: true })
    await review.selectOption("positive")
    await expect.poll(rowNames).toEqual([first.file_name, second.file_name].sort())
    await review.selectOption("negative")
    await expect.poll(rowNames).toEqual([first.file_name])
    await review.selectOption("")
    await expect.poll(rowNames).toEqual(Object.keys(TOTALS))

    // Each processed document's row links to its review; so does a value's result screen.
    for (const name of Object.keys(TOTALS)) {
      const link = page
        .getByTestId("documents-panel")
        .getByRole("link", { name: `Review ${name}`, exact: true })
      expect(await link.getAttribute("href")).toMatch(
        new RegExp(`^/projects/${projectId}/documents/[0-9a-f-]{36}/review$`),
      )
    }
    expect(
      await page
        .getByTestId("documents-panel")
        .getByRole("link", { name: `Review ${first.file_name}`, exact: true })
        .getAttribute("href"),
    ).toBe(`/projects/${projectId}/documents/${first.document_id}/review`)

    // The CSV export with confidence and review.
    await page.getByLabel("Export with confidence and review").check()
    const [download] = await Promise.all([
      page.waitForEvent("download"),
      page.getByRole("link", { name: "Export CSV" }).click(),
    ])
    const rows = parseCsv((await fs.readFile((await download.path())!, "utf8")).slice(1))
    const header = rows[0]!
    const column = (name: string) => {
      const i = header.indexOf(name)
      expect(i, `column ${name} in ${header.join(", ")}`).toBeGreaterThanOrEqual(0)
      return i
    }
    const line = (name: string) => rows.find((r) => r[0] === name)!
    for (const agent of ["Total due", "Invoice number"]) {
      column(`${agent} confidence`)
      column(`${agent} review`)
      column(`${agent} source`)
    }
    expect(line(first.file_name)[column("Total due review")]).toBe("positive")
    expect(line(first.file_name)[column("Invoice number review")]).toBe("negative")
    expect(line(second.file_name)[column("Total due review")]).toBe("positive")
    expect(line(second.file_name)[column("Invoice number")]).toBe("INV-jk-2")
    expect(line(second.file_name)[column("Invoice number source")]).toBe("manual")
    expect(line(second.file_name)[column("Invoice number review")]).toBe("none")
    expect(line(third)[column("Total due review")]).toBe("none")
    expect(line(third)[column("Total due source")]).toBe("model")
    for (const name of Object.keys(TOTALS)) {
      const confidence = Number(line(name)[column("Total due confidence")])
      expect(confidence).toBeGreaterThan(0)
      expect(confidence).toBeLessThanOrEqual(1)
    }

    // From a value's result screen, back to its document's review.
    await gridRow(second.file_name)
      .getByRole("link", { name: /INV-jk-2/ })
      .click()
    await page.getByRole("heading", { name: "Invoice number", level: 1 }).waitFor()
    await page.getByRole("link", { name: "Review this document" }).click()
    await page.waitForURL(`${origin}/projects/${projectId}/documents/${second.document_id}/review`)
    await value(1).getByTestId("review-value-text").filter({ hasText: "INV-jk-2" }).waitFor()
  })
})
