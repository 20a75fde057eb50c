import { invoice } from "@dxs/testing/Documents"
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

describe.skipIf(CHROMIUM === undefined)("the web application shell in Chromium", () => {
  beforeAll(() => {
    ;({ page, origin } = web)
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

    // A run that ends while the page reads the run history: each read of the history after the launch
    // is answered as the server answered it at once, but only after the run has ended, so the run's last
    // events come while a read from before its end is under way. The page shows the run's end all the same.
    let launched = false
    let ended = false
    let release: () => void = () => undefined
    const end = new Promise<void>((resolve) => {
      release = resolve
    })
    await page.route(/\/agents\/launch\/$/, async (route) => {
      const response = await route.fetch()
      launched = true
      await route.fulfill({ response })
    })
    await page.route(/\/runs\/\?limit=10$/, async (route) => {
      if (!launched || ended) return route.continue()
      const response = await route.fetch()
      await end
      // the page may have given the read up meanwhile
      await route.fulfill({ response }).catch(() => undefined)
    })
    await page.getByRole("button", { name: "Launch" }).click()
    await expect
      .poll(async () => (await rest(key).get(`/projects/${projectId}/runs/?limit=1`)).body.results[0], {
        timeout: 60_000,
      })
      .toMatchObject({ number: 3, status: "succeeded" })
    ended = true
    release()
    await page.locator(".run-progress").filter({ hasText: "Run 3 succeeded" }).waitFor({ timeout: 30_000 })
    await page.unrouteAll({ behavior: "ignoreErrors" })
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
