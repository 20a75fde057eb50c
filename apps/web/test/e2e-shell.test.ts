/**
 * The web application's shell end to end in a real headless Chromium against the all-in-one `dxs start`
 * process on loopback (as e2e.test.ts): a project created with one result per document whose results are
 * split by document; a launch followed live to its end and listed in the run history, then a relaunch
 * whose progress is its own; an output schema built with the form (two fields, one nested), mapped to
 * agents and saved. Every new or changed screen is checked with axe-core for serious or critical
 * violations.
 */
import { existsSync, promises as fs } from "node:fs"
import { createRequire } from "node:module"
import * as os from "node:os"
import * as path from "node:path"
import { invoice } from "@dxs/testing/Documents"
import { Dxs, killSpawned } from "@dxs/testing/DxsProcess"
import { useTestDatabase } from "@dxs/testing/TestDatabase"
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

describe.skipIf(CHROMIUM === undefined)("the web application shell in Chromium", () => {
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

  it("creates a project with one result per document, follows a launch live and lists its runs", async () => {
    await page.goto(`${origin}/sign-in`)
    await page.getByLabel("E-mail").fill(EMAIL)
    await page.getByLabel("Password").fill(PASSWORD)
    await page.getByRole("button", { name: "Sign in" }).click()
    await page.getByRole("heading", { name: "Projects", level: 1 }).waitFor()

    // Creating: the option is explained in one line; Archive and Delete are quiet actions of each row.
    await page.getByLabel("New project name").fill("Per invoice")
    await page.getByLabel("One result per document").check()
    expect(await page.getByLabel("One result per document").getAttribute("aria-describedby")).toBeTruthy()
    expect(await seriousViolations()).toEqual([])
    await page.getByRole("button", { name: "Create project" }).click()
    await page.getByRole("heading", { name: "Per invoice", level: 1 }).waitFor()
    const projectId = /projects\/([0-9a-f-]{36})$/.exec(page.url())![1]!

    const pdf = async (number: string, total: string) =>
      Buffer.from(
        await invoice({
          number,
          date: "June 6, 2024",
          seller: "Acme Supplies Inc.",
          currency: "USD",
          subtotal: total,
          tax: "$0.00",
          total,
        }),
      )
    await page.getByLabel("Upload documents").setInputFiles([
      { name: "first.pdf", mimeType: "application/pdf", buffer: await pdf("INV-3001", "$500.00") },
      { name: "second.pdf", mimeType: "application/pdf", buffer: await pdf("INV-3002", "$700.00") },
    ])
    await page.getByRole("cell", { name: "first.pdf", exact: true }).waitFor()
    await page.getByRole("cell", { name: "second.pdf", exact: true }).waitFor()
    await expect
      .poll(() => page.getByRole("cell", { name: "Processed", exact: true }).count(), { timeout: 60_000 })
      .toBe(2)

    await page.getByLabel("Agent name").fill("Total due")
    await page.getByLabel("What to extract").fill("The total amount due")
    await page.getByLabel("Value type").selectOption("number")
    await page.getByRole("button", { name: "Create agent" }).click()
    // The agent editor says the agent is split by Document.
    await page.getByTestId("agents-table").getByRole("button", { name: "Total due" }).click()
    await page.getByTestId("split-by-document").waitFor()
    expect(await page.getByTestId("split-by-document").textContent()).toContain("Split by Document")
    await page.getByRole("button", { name: "Close editor" }).click()
    await page.getByText("No runs yet").waitFor()

    // The launch is followed over the runProgress subscription, not by polling the REST status.
    const statusReads: Array<string> = []
    const streams: Array<string> = []
    const onRequest = (r: { url: () => string; headers: () => Record<string, string> }) => {
      if (r.url().includes("/agents/status/")) statusReads.push(r.url())
      if (r.url().includes("/graphql?") && r.url().includes("runProgress")) streams.push(r.url())
    }
    page.on("request", onRequest)
    await page.getByRole("button", { name: "Launch" }).click()
    const runStatus = page.getByTestId("run-status")
    await runStatus.filter({ hasText: "Done" }).waitFor({ timeout: 60_000 })
    page.off("request", onRequest)
    expect(streams.length).toBeGreaterThan(0)
    // at most the one read of the final state once the run ended
    expect(statusReads.length).toBeLessThanOrEqual(1)
    const bar = page.getByRole("progressbar", { name: "Extraction progress" })
    expect(await bar.getAttribute("value")).toBe("100")
    expect(await page.locator(".run-progress").textContent()).toContain("Run 1 succeeded")

    // The run history lists it: succeeded, the two document pairs, the agent.
    const runs = page.getByTestId("runs-table")
    const first = runs.locator('tbody tr[data-run-number="1"]')
    await first.waitFor()
    expect(await first.getAttribute("data-run-status")).toBe("succeeded")
    expect(await first.textContent()).toContain("Total due")
    expect(await first.locator("td").nth(4).textContent()).toBe("2")

    // One value per document, not one merged value.
    await page.getByRole("link", { name: "500" }).first().waitFor()
    await page.getByRole("link", { name: "700" }).first().waitFor()
    const key = await newKey()
    const results = (await rest(key).get(`/projects/${projectId}/results/?limit=50`)).body
    expect(results.count).toBe(2)
    expect(results.results.map((r: any) => r.resolution_result.value).sort()).toEqual([500, 700])
    expect(await seriousViolations()).toEqual([])

    // A relaunch shows its own run from the start: never the previous run's "Done".
    await page.evaluate(() => {
      const seen: Array<string> = []
      ;(window as unknown as { seen: Array<string> }).seen = seen
      const read = () => {
        const progress = document.querySelector(".run-progress")?.textContent ?? ""
        const state = document.querySelector('[data-testid="run-status"]')?.textContent ?? ""
        const last = seen[seen.length - 1]
        if (last !== `${state}|${progress}`) seen.push(`${state}|${progress}`)
      }
      read()
      new MutationObserver(read).observe(document.body, {
        subtree: true,
        childList: true,
        characterData: true,
      })
    })
    await page.getByRole("button", { name: "Launch" }).click()
    await page.locator(".run-progress").filter({ hasText: "Run 2 succeeded" }).waitFor({ timeout: 60_000 })
    await runStatus.filter({ hasText: "Done" }).waitFor()
    const seen = await page.evaluate(() => (window as unknown as { seen: Array<string> }).seen)
    // from the click on, every state shown is the new run's: first "Running…", never run 1's numbers
    expect(seen[0]).toMatch(/^Done\|.*Run 1 succeeded/)
    expect(seen[1]).toMatch(/^Running…/)
    expect(seen.slice(1).filter((s) => s.includes("Run 1"))).toEqual([])
    await runs.locator('tbody tr[data-run-number="2"][data-run-status="succeeded"]').waitFor()
    expect(await runs.locator("tbody tr").count()).toBe(2)
    const listed = (await rest(key).get(`/projects/${projectId}/runs/`)).body
    expect(listed.results.map((r: any) => [r.number, r.status])).toEqual([
      [2, "succeeded"],
      [1, "succeeded"],
    ])
  })
  it("builds an output schema with the form, maps its fields to agents and saves it", async () => {
    await page.goto(`${origin}/`)
    await page.getByRole("heading", { name: "Projects", level: 1 }).waitFor()
    await page.getByLabel("New project name").fill("Schema form")
    await page.getByRole("button", { name: "Create project" }).click()
    await page.getByRole("heading", { name: "Schema form", level: 1 }).waitFor()
    const projectId = /projects\/([0-9a-f-]{36})$/.exec(page.url())![1]!
    for (const [name, type] of [
      ["Total due", "number"],
      ["Supplier", "string"],
    ] as const) {
      await page.getByLabel("Agent name").fill(name)
      await page.getByLabel("Value type").selectOption(type)
      await page.getByRole("button", { name: "Create agent" }).click()
      await page.getByTestId("agents-table").getByRole("button", { name }).waitFor()
    }

    await page.getByRole("link", { name: "Output schema" }).click()
    await page.getByRole("heading", { name: "Output schema", level: 1 }).waitFor()
    await page.getByTestId("schema-fields").getByText("No fields yet.").waitFor()

    // Two fields, the second an object with nested fields, each leaf mapped to an agent.
    await page.getByRole("button", { name: "Add field", exact: true }).click()
    await page.getByLabel("Name of field 1", { exact: true }).fill("total")
    await page.getByLabel("Type of field 1", { exact: true }).selectOption("number")
    await page.getByLabel("Required of field 1", { exact: true }).check()
    await page.getByLabel("Agent of field 1", { exact: true }).selectOption("Total due")
    await page.getByRole("button", { name: "Add field", exact: true }).click()
    await page.getByLabel("Name of field 2", { exact: true }).fill("supplier")
    await page.getByLabel("Type of field 2", { exact: true }).selectOption("object")
    await page.getByRole("button", { name: "Add nested field to field 2", exact: true }).click()
    await page.getByLabel("Name of field 2.1", { exact: true }).fill("name")
    await page.getByLabel("Description of field 2.1", { exact: true }).fill("who sent the invoice")
    await page.getByLabel("Agent of field 2.1", { exact: true }).selectOption("Supplier")
    // a required field left unmapped: the server's warning shows at that field
    await page.getByRole("button", { name: "Add nested field to field 2", exact: true }).click()
    await page.getByLabel("Name of field 2.2", { exact: true }).fill("vat")
    await page.getByLabel("Required of field 2.2", { exact: true }).check()

    const schema = {
      type: "object",
      properties: {
        total: { type: "number" },
        supplier: {
          type: "object",
          properties: {
            name: { type: "string", description: "who sent the invoice" },
            vat: { type: "string" },
          },
          required: ["vat"],
        },
      },
      required: ["total"],
    }
    const mapping = {
      kind: "object",
      properties: {
        total: { kind: "scalar_from_agent", agent_name: "Total due" },
        supplier: {
          kind: "object",
          properties: { name: { kind: "scalar_from_agent", agent_name: "Supplier" } },
        },
      },
    }
    // The JSON beside the form follows it.
    expect(JSON.parse(await page.getByLabel("Schema (JSON Schema)").inputValue())).toEqual(schema)
    expect(JSON.parse(await page.getByLabel("Mapping (JSON)").inputValue())).toEqual(mapping)

    // And the form follows the JSON: a description written in the JSON shows in the form.
    const described = {
      ...schema,
      properties: { ...schema.properties, total: { type: "number", description: "the amount due" } },
    }
    await page.getByLabel("Schema (JSON Schema)").fill(JSON.stringify(described, null, 2))
    await expect
      .poll(() => page.getByLabel("Description of field 1", { exact: true }).inputValue())
      .toBe("the amount due")
    expect(await page.getByLabel("Agent of field 1", { exact: true }).inputValue()).toBe("Total due")
    // JSON that does not parse leaves the form as it was, and says so.
    await page.getByLabel("Schema (JSON Schema)").fill("{ not json")
    await page.getByTestId("form-problem").waitFor()
    expect(await page.getByLabel("Name of field 2.1", { exact: true }).inputValue()).toBe("name")
    // and read only, so that it cannot overwrite the JSON being typed
    expect(await page.getByLabel("Name of field 2.1", { exact: true }).isDisabled()).toBe(true)
    await page.getByLabel("Schema (JSON Schema)").fill(JSON.stringify(described, null, 2))
    await page.getByTestId("form-problem").waitFor({ state: "detached" })
    expect(await seriousViolations()).toEqual([])

    await page.getByRole("button", { name: "Save schema" }).click()
    await page.getByTestId("mapping-status").filter({ hasText: "success" }).waitFor()
    const vat = page.locator('fieldset[data-path="supplier/vat"]')
    await vat.getByTestId("field-diagnostics").getByText("required_unmapped").waitFor()
    expect(await page.locator('fieldset[data-path="total"]').getByTestId("field-diagnostics").count()).toBe(0)
    expect(await seriousViolations()).toEqual([])

    const stored = (await rest(await newKey()).get(`/projects/${projectId}/schema/`)).body
    expect(stored.schema).toEqual(described)
    expect(stored.mapping).toEqual(mapping)
    expect(stored.status).toBe("success")

    // Opened again, the form shows the saved schema and mapping.
    await page.reload()
    await page.getByLabel("Name of field 2.1", { exact: true }).waitFor()
    expect(await page.getByLabel("Agent of field 2.1", { exact: true }).inputValue()).toBe("Supplier")
    expect(await page.getByLabel("Required of field 2.2", { exact: true }).isChecked()).toBe(true)
    expect(await page.getByLabel("Type of field 2", { exact: true }).inputValue()).toBe("object")
  })
})
