/**
 * The project screen as a workspace, end to end in Chromium against the all-in-one process (browser.ts):
 * the section nav by keyboard and in the URL, the skip link and the focus on each new screen's heading; the
 * results grid's sort, filter and page surviving a result opened and Back; part of a file name as the
 * dimension value filter; what a relaunch after an instruction change changed, before and after with
 * citations; a launch refused for a document that failed to parse, then "Remove failed and launch"; the
 * revoke-key confirmation cancelled. axe-core on the project screen and on what a run changed.
 *
 * Without a Chromium (CHROMIUM_PATH, or /usr/bin/chromium) the suite is skipped and says so.
 */
import { invoice } from "@dxs/testing/Documents"
import type { Page } from "playwright-core"
import { beforeAll, describe, expect, it } from "vitest"
import { browserSuite, CHROMIUM } from "./browser.ts"

const EMAIL = "ada@example.com"

/** The invoices by file name: the subtotal (the tax is 20 % of it); three are northern, three southern. */
const SUBTOTALS: Record<string, number> = {
  "north-1.pdf": 1000,
  "north-2.pdf": 500,
  "north-3.pdf": 2500,
  "south-1.pdf": 750,
  "south-2.pdf": 1500,
  "south-3.pdf": 250,
}
const money = (n: number) => `$${n.toLocaleString("en-US")}.00`

let origin: string
let page: Page
let key: string
let projectId: string
let agentId: string

const web = browserSuite({ org: "acme", email: EMAIL, tmpPrefix: "dxs-web-workspace-" })
const { newKey, seriousViolations } = web
const rest = (method: string, p: string, body?: unknown) => web.api(key).request(method, p, body)

/** Polls `read` until `done` says so (or fails after `ms`). */
const until = async <A>(read: () => Promise<A>, done: (a: A) => boolean, ms = 180_000): Promise<A> => {
  for (const deadline = Date.now() + ms; ; ) {
    const a = await read()
    if (done(a)) return a
    if (Date.now() > deadline) throw new Error(`gave up waiting: ${JSON.stringify(a)}`)
    await new Promise((r) => setTimeout(r, 250))
  }
}

const documents = async () => (await rest("GET", `/projects/${projectId}/documents/`)).body as Array<any>

const upload = async (name: string, bytes: Uint8Array) => {
  const form = new FormData()
  form.set("file", new Blob([Buffer.from(bytes)]), name)
  const r = await rest("POST", `/projects/${projectId}/documents/`, form)
  expect(r.status).toBe(201)
  return r.body.id as string
}

const projectUrl = () => `${origin}/projects/${projectId}`
const grid = () => page.getByTestId("results-grid")
const rowNames = () => grid().locator("tbody th[scope=row]").allTextContents()
const range = () => page.getByTestId("grid-range")
const resultsSection = () => page.locator('section[aria-labelledby="results-heading"]')
const valueHeader = () => grid().getByRole("columnheader", { name: "Value" })
/** The focused element: its tag and text. */
const focused = () =>
  page.evaluate(() => {
    const e = document.activeElement
    return e ? `${e.tagName}:${e.textContent?.trim()}` : ""
  })

describe.skipIf(CHROMIUM === undefined)("the project workspace in Chromium", () => {
  beforeAll(async () => {
    ;({ page, origin } = web)
    key = await newKey()
    const project = await rest("POST", "/projects/", { name: "Workspace invoices" })
    expect(project.status).toBe(201)
    projectId = project.body.id
    for (const [name, subtotal] of Object.entries(SUBTOTALS))
      await upload(
        name,
        await invoice({
          number: `INV-${name.replace(/\.pdf$/, "")}`,
          date: "March 3, 2024",
          seller: "Acme Supplies Inc.",
          currency: "USD",
          subtotal: money(subtotal),
          tax: money(subtotal / 5),
          total: money((subtotal * 6) / 5),
        }),
      )
    const docs = await until(documents, (ds) => ds.every((d) => d.status !== "Pending"))
    expect(docs.map((d) => d.status)).toEqual(docs.map(() => "Processed"))
    const dimensions = (await rest("GET", `/projects/${projectId}/dimensions/`)).body as Array<any>
    const documentDimension = dimensions.find((d) => d.source === "DOCUMENT").id
    const agent = await rest("POST", `/projects/${projectId}/agents/`, {
      name: "Value",
      extraction_instructions: "Total due",
      value_type: "number",
      dimensions: [{ dimension_id: documentDimension }],
    })
    expect(agent.status).toBe(201)
    agentId = agent.body.id
    expect((await rest("POST", `/projects/${projectId}/agents/launch/`)).status).toBeLessThan(300)
    await until(
      async () => (await rest("GET", `/projects/${projectId}/runs/`)).body.results as Array<any>,
      (runs) => runs.length === 1 && runs[0].status === "succeeded",
    )
    await web.signIn()
  }, 600_000)

  it("moves the focus to each new screen's heading, has a skip link and a section nav kept in the URL", async () => {
    // From the projects, a link to the project: the focus goes to its heading.
    await page.getByRole("link", { name: "Workspace invoices" }).first().click()
    const h1 = page.getByRole("heading", { name: "Workspace invoices", level: 1 })
    await h1.waitFor()
    await expect.poll(focused).toBe("H1:Workspace invoices")

    // Opened afresh: the first Tab reaches the skip link, which takes the focus to the main content.
    await page.goto(projectUrl())
    await h1.waitFor()
    await page.keyboard.press("Tab")
    const skip = page.getByRole("link", { name: "Skip to main content" })
    expect(await skip.evaluate((e) => e === document.activeElement)).toBe(true)
    await page.keyboard.press("Enter")
    await expect.poll(() => page.evaluate(() => document.activeElement?.id)).toBe("main")

    // The section nav: arrow keys move along it, Enter goes to a section, kept in the URL.
    const nav = page.getByRole("navigation", { name: "Project sections" })
    await nav.getByRole("link", { name: "Documents" }).focus()
    await page.keyboard.press("ArrowRight")
    await page.keyboard.press("ArrowRight")
    await page.keyboard.press("ArrowRight")
    expect(await focused()).toBe("A:Runs")
    await page.keyboard.press("Enter")
    await page.waitForURL(/[?&]section=runs\b/)
    await expect.poll(focused).toBe("H2:Runs")
    expect(await nav.getByRole("link", { name: "Runs" }).getAttribute("aria-current")).toBe("location")
    await nav.getByRole("link", { name: "Runs" }).focus()
    await page.keyboard.press("End")
    await page.keyboard.press("ArrowLeft")
    expect(await focused()).toBe("A:Results")
    await page.keyboard.press("Enter")
    await page.waitForURL(/[?&]section=results\b/)
    await expect.poll(focused).toBe("H2:Results")

    // A reload keeps the section: it is shown, marked in the nav.
    await page.reload()
    await h1.waitFor()
    await expect
      .poll(() => nav.getByRole("link", { name: "Results" }).getAttribute("aria-current"))
      .toBe("location")

    // Each cell says its status in words, not only by its colour.
    await range().filter({ hasText: "of 6" }).waitFor()
    const firstCell = grid().locator("td[data-status]").first()
    expect(await firstCell.locator(".visually-hidden").first().textContent()).toContain(
      (await firstCell.getAttribute("data-status")) ?? "no status",
    )
    expect(await seriousViolations()).toEqual([])
  })

  it("keeps the grid's sort, filter and page when a result is opened and Back is pressed", async () => {
    await page.goto(projectUrl())
    await range().filter({ hasText: "Rows 1–6 of 6" }).waitFor()
    await valueHeader().getByRole("button").click()
    await expect.poll(() => valueHeader().getAttribute("aria-sort")).toBe("ascending")
    await page.getByLabel("Value from", { exact: true }).selectOption("model")
    await page.getByLabel("Rows per page", { exact: true }).selectOption("5")
    await range().filter({ hasText: "Rows 1–5 of 6" }).waitFor()
    await resultsSection().getByRole("button", { name: "Next" }).click()
    await range().filter({ hasText: "Rows 6–6 of 6" }).waitFor()
    await expect.poll(rowNames).toEqual(["north-3.pdf"])
    const state = new URL(page.url()).searchParams
    expect(state.get("sort")).toBe(`agent:${agentId}`)
    expect(state.get("source")).toBe("model")
    expect(state.get("limit")).toBe("5")
    expect(state.get("offset")).toBe("5")
    const gridUrl = page.url()

    // Open the cell, then the browser's Back: the same page of the grid, at the same place.
    const cell = grid().getByRole("link", { name: "3000" })
    await cell.scrollIntoViewIfNeeded()
    const scrolled = await page.evaluate(() => window.scrollY)
    expect(scrolled).toBeGreaterThan(0)
    await cell.click()
    await page.getByRole("heading", { name: "Value", level: 1 }).waitFor()
    await expect.poll(focused).toBe("H1:Value")
    await page.goBack()
    await range().filter({ hasText: "Rows 6–6 of 6" }).waitFor()
    expect(page.url()).toBe(gridUrl)
    expect(await rowNames()).toEqual(["north-3.pdf"])
    expect(await valueHeader().getAttribute("aria-sort")).toBe("ascending")
    expect(await page.getByLabel("Value from", { exact: true }).inputValue()).toBe("model")
    await expect.poll(() => page.evaluate(() => Math.round(window.scrollY))).toBe(Math.round(scrolled))

    // The result's own "Back to project" link comes back to the same grid too.
    await grid().getByRole("link", { name: "3000" }).click()
    await page.getByRole("heading", { name: "Value", level: 1 }).waitFor()
    await page.getByRole("link", { name: "Back to project" }).click()
    await range().filter({ hasText: "Rows 6–6 of 6" }).waitFor()
    expect(page.url()).toBe(gridUrl)
  })

  it("finds rows by part of a file name in the dimension value filter", async () => {
    await page.goto(projectUrl())
    await range().filter({ hasText: "Rows 1–6 of 6" }).waitFor()
    await page.getByLabel("Dimension value", { exact: true }).fill("NORTH")
    await range().filter({ hasText: "Rows 1–3 of 3" }).waitFor()
    expect(await rowNames()).toEqual(["north-1.pdf", "north-2.pdf", "north-3.pdf"])
    await page.getByLabel("Dimension value", { exact: true }).fill("th-2")
    await expect.poll(rowNames).toEqual(["north-2.pdf", "south-2.pdf"])
    expect(new URL(page.url()).searchParams.get("dimension_value")).toBe("th-2")
  })

  it("shows what a relaunch after an instruction change changed, before and after with citations", async () => {
    const patched = await rest("PATCH", `/projects/${projectId}/agents/${agentId}/`, {
      extraction_instructions: "Tax",
    })
    expect(patched.status).toBe(200)
    await page.goto(`${projectUrl()}?section=agents`)
    await page.getByRole("button", { name: "Launch" }).click()
    await page.getByTestId("run-status").filter({ hasText: "Done" }).waitFor({ timeout: 120_000 })
    const runs = page.getByTestId("runs-table")
    await runs.locator('tr[data-run-number="2"][data-run-status="succeeded"]').waitFor()
    // the first run has nothing before it
    expect(await runs.locator('tr[data-run-number="1"]').getByRole("link").count()).toBe(0)
    await runs.getByRole("link", { name: "What changed in run 2" }).click()
    await page.getByRole("heading", { name: "What changed in run 2", level: 1 }).waitFor()
    await expect.poll(focused).toBe("H1:What changed in run 2")
    await page
      .getByTestId("changes-summary")
      .filter({ hasText: "differ from those before it (run 1)" })
      .waitFor()
    const row = page.getByTestId("changes-table").locator("tbody tr", { hasText: "north-1.pdf" })
    expect(await row.getByTestId("before").locator(".change-value").textContent()).toBe("1200")
    expect(await row.getByTestId("after").locator(".change-value").textContent()).toBe("200")
    expect(await row.getByTestId("before").getByRole("link", { name: "north-1.pdf, page 2" }).count()).toBe(1)
    expect(await seriousViolations()).toEqual([])
    await row.getByTestId("after").getByRole("link", { name: "north-1.pdf, page 2" }).click()
    await page.getByRole("heading", { name: "north-1.pdf", level: 1 }).waitFor()
  })

  it("offers to re-parse or remove the documents a refused launch names, and launches without them", async () => {
    const brokenId = await upload("broken.pdf", new TextEncoder().encode("these bytes are not a PDF\n"))
    await until(documents, (ds) => ds.find((d) => d.id === brokenId)?.status === "Failed", 60_000)
    await page.goto(`${projectUrl()}?section=agents`)
    await page.getByRole("button", { name: "Launch" }).click()
    const refusal = page.getByTestId("launch-refusal")
    await refusal.filter({ hasText: "broken.pdf" }).waitFor()
    await refusal.getByRole("button", { name: "Re-parse failed" }).waitFor()
    await refusal.getByRole("button", { name: "Remove failed and launch" }).click()
    const dialog = page.getByRole("dialog", { name: "Delete failed document “broken.pdf”?" })
    await dialog.waitFor()
    expect(await focused()).toBe("BUTTON:Cancel")
    await dialog.getByRole("button", { name: "Delete", exact: true }).click()
    await page.getByTestId("run-status").filter({ hasText: "Done" }).waitFor({ timeout: 120_000 })
    await page.getByTestId("runs-table").locator('tr[data-run-number="3"]').waitFor()
    expect((await rest("GET", `/projects/${projectId}/documents/${brokenId}/`)).status).toBe(404)
    expect(await refusal.count()).toBe(0)
  })

  it("asks before revoking a key, and Cancel keeps it", async () => {
    await page.goto(`${origin}/developer`)
    await page.getByRole("heading", { name: "Developer", level: 1 }).waitFor()
    await page.getByLabel("Key name").fill("keep-me")
    await page.getByRole("button", { name: "Create key" }).click()
    const created = /dxs_live_[0-9A-Za-z]{32}/.exec((await page.getByTestId("new-key").textContent()) ?? "")
    expect(created).not.toBeNull()
    await page.getByRole("button", { name: "Revoke keep-me" }).click()
    const dialog = page.getByRole("dialog", { name: "Revoke API key “keep-me”?" })
    await dialog.waitFor()
    expect(await focused()).toBe("BUTTON:Cancel")
    await dialog.getByRole("button", { name: "Cancel" }).click()
    await dialog.waitFor({ state: "hidden" })
    expect((await web.api(created![0]).get("/projects/")).status).toBe(200)
    expect(await page.getByRole("button", { name: "Revoke keep-me" }).isEnabled()).toBe(true)
  })
})
