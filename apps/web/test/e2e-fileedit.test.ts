/**
 * Filling a template from the web application, end to end in a real headless Chromium against the
 * all-in-one `dxs start` process (as `e2e.test.ts` runs it): results from a run, then an .xlsx template built
 * here with exceljs is uploaded in the "Fill a template" panel, its state followed to the end, the problems
 * listed, the filled file downloaded through the browser and read back with exceljs. axe-core checks the
 * panel in each state.
 */
import { existsSync, promises as fs } from "node:fs"
import { createRequire } from "node:module"
import * as os from "node:os"
import * as path from "node:path"
import { invoice } from "@dxs/testing/Documents"
import { Dxs, killSpawned } from "@dxs/testing/DxsProcess"
import { useTestDatabase } from "@dxs/testing/TestDatabase"
import ExcelJS from "exceljs"
import { type Browser, chromium, type Page } from "playwright-core"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"

const CHROMIUM = [process.env.CHROMIUM_PATH, "/usr/bin/chromium", "/usr/bin/chromium-browser"].find(
  (p): p is string => p !== undefined && p !== "" && existsSync(p),
)
if (CHROMIUM === undefined)
  console.warn("web end-to-end tests skipped: no Chromium (set CHROMIUM_PATH or apt-get install chromium)")

const require = createRequire(import.meta.url)
const axeSource = require.resolve("axe-core/axe.min.js")
const EMAIL = "ada@example.com"
const PASSWORD = "correct horse battery staple"
const KEY = /dxs_live_[0-9A-Za-z]{32}/

let tmp: string
let env: NodeJS.ProcessEnv
let server: Dxs
let origin: string
let browser: Browser
let page: Page

/** Runs a `dxs` command against the same database as the server; its standard output. */
const dxs = async (args: ReadonlyArray<string>, input?: string) => {
  const p = new Dxs(args, env, input)
  const exit = await p.waitForExit()
  if (exit.code !== 0) throw new Error(`dxs ${args.join(" ")} failed\n${p.output}`)
  return p.stdout
}

/** A new API key of the organisation, made with `dxs keys create`. */
const newKey = async () => KEY.exec(await dxs(["keys", "create", "--org", "acme"]))![0]

/** The REST API of the server with an API key. */
const rest = (key: string) => ({
  get: async (p: string) => {
    const response = await fetch(`${origin}/api/v1${p}`, { headers: { "x-api-key": key } })
    return { status: response.status, body: (await response.json()) as any }
  },
})

/** axe-core on the current screen: the serious and critical violations (expected none). */
const seriousViolations = async () => {
  await page.addScriptTag({ content: await fs.readFile(axeSource, "utf8") })
  const result = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run: (ctx: Document) => Promise<any> } }).axe
    return axe.run(document)
  })
  return (result.violations as Array<{ id: string; impact: string; help: string; nodes: Array<unknown> }>)
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => `${v.id}: ${v.help} (${v.nodes.length})`)
}

describe.skipIf(CHROMIUM === undefined)("the web application in Chromium", () => {
  beforeAll(async () => {
    tmp = await fs.mkdtemp(path.join(os.tmpdir(), "dxs-web-"))
    env = {
      ...process.env,
      DATABASE_URL: await useTestDatabase(),
      DATA_DIR: tmp,
      HOST: "127.0.0.1",
      PORT: "0",
      LOG_LEVEL: "info",
    }
    for (const name of ["BLOB_DIR", "PUBLIC_URL", "APP_URL", "INIT_CWD"]) delete env[name]
    server = new Dxs(["start", "all"], env)
    const [, port] = await server.waitFor(/REST API listening on http:\/\/127\.0\.0\.1:(\d+)\/api\/v1/)
    // The address a user opens (the README's), and the default PUBLIC_URL/APP_URL of result links.
    origin = `http://localhost:${port}`
    await dxs(["users", "create", "--org", "acme", "--email", EMAIL], `${PASSWORD}\n`)
    browser = await chromium.launch({ executablePath: CHROMIUM!, args: ["--no-sandbox", "--disable-gpu"] })
    // The application's Content-Security-Policy forbids inline scripts: axe is injected past it.
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, bypassCSP: true })
    page = await context.newPage()
    page.setDefaultTimeout(30_000)
  }, 600_000)

  // A failed step says where the browser was and what it showed.
  afterEach(async (ctx) => {
    if (ctx.task.result?.state !== "fail" || page === undefined) return
    const text = await page.evaluate(() => document.body.textContent ?? "").catch(() => "")
    console.error(`the browser was at ${page.url()}, showing:\n${text.slice(0, 3000)}`)
  })

  afterAll(async () => {
    await browser?.close()
    if (server !== undefined && server.exit === undefined) {
      server.child.kill("SIGTERM")
      await server.waitForExit(60_000).catch(() => undefined)
    }
    killSpawned()
    if (tmp) await fs.rm(tmp, { recursive: true, force: true })
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
    const saved = path.join(tmp, "report-filled.xlsx")
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
