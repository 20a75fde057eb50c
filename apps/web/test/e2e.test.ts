import { invoice } from "@dxs/testing/Documents"
import type { FileChooser, Page } from "playwright-core"
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

  it("runs the typical flow without curl", async () => {
    // Signed out: any page leads to the sign-in screen.
    await page.goto(`${origin}/`)
    await page.waitForURL(`${origin}/sign-in`)
    expect(await seriousViolations()).toEqual([])
    await page.getByLabel("E-mail").fill(EMAIL)
    await page.getByLabel("Password").fill(PASSWORD)
    await page.getByRole("button", { name: "Sign in" }).click()
    await page.waitForURL(`${origin}/`)
    await page.getByRole("heading", { name: "Projects", level: 1 }).waitFor()
    expect(await seriousViolations()).toEqual([])

    await page.getByLabel("New project name").fill("Invoices")
    await page.getByRole("button", { name: "Create project" }).click()
    await page.getByRole("heading", { name: "Invoices", level: 1 }).waitFor()
    const projectUrl = page.url()
    expect(projectUrl).toMatch(/\/projects\/[0-9a-f-]{36}$/)

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
    await page.getByRole("cell", { name: "invoice.pdf", exact: true }).waitFor()
    await page.getByRole("cell", { name: "Processed" }).waitFor({ timeout: 60_000 })
    expect(await seriousViolations()).toEqual([])

    await page.getByLabel("Agent name").fill("Total due")
    await page.getByLabel("What to extract").fill("The total amount due")
    await page.getByLabel("Value type").selectOption("number")
    await page.getByRole("button", { name: "Create agent" }).click()
    await page.getByRole("columnheader", { name: "Total due" }).waitFor()

    await page.getByRole("button", { name: "Launch" }).click()
    await page.getByTestId("run-status").filter({ hasText: "Done" }).waitFor({ timeout: 60_000 })
    expect(await page.getByRole("progressbar", { name: "Extraction progress" }).getAttribute("value")).toBe(
      "100",
    )
    const cell = page.getByRole("link", { name: "1200" })
    await cell.waitFor()
    expect(await seriousViolations()).toEqual([])

    // The cell opens the result: its value, and the passage highlighted on the cited page.
    await cell.click()
    await page.waitForURL(/\/projects\/[0-9a-f-]{36}\/agents\/[0-9a-f-]{36}\/[0-9a-f-]{36}$/)
    await page.getByRole("heading", { name: "Total due", level: 1 }).waitFor()
    expect(await page.getByTestId("result-value").textContent()).toContain("1200")
    await page.getByRole("img", { name: /Page 2 of invoice\.pdf/ }).waitFor()
    await page.getByTestId("highlight").first().waitFor()
    expect(await page.getByTestId("highlight").count()).toBeGreaterThan(0)
    expect(await seriousViolations()).toEqual([])

    await page.getByLabel("New value").fill("1300")
    await page.getByRole("button", { name: "Save value" }).click()
    await page.getByTestId("result-value").filter({ hasText: "1300" }).waitFor()
    await page.getByLabel("Review comment").fill("checked against the PDF")
    await page.getByRole("button", { name: "Mark correct" }).click()
    await page
      .getByTestId("review-status")
      .filter({ hasText: `Reviewed as correct by ${EMAIL}` })
      .waitFor()
    // The REST API agrees, and records the member who set it.
    const [, projectId, , resultId] =
      /projects\/([0-9a-f-]{36})\/agents\/([0-9a-f-]{36})\/([0-9a-f-]{36})/.exec(page.url())!
    const key = await newKey()
    const detail = await rest(key).get(`/projects/${projectId}/results/${resultId}/`)
    expect(detail.body).toMatchObject({
      value: 1300,
      is_overridden: true,
      updated_by_email: EMAIL,
      latest_review_status: "positive",
      latest_review_comment: "checked against the PDF",
      latest_review_by: EMAIL,
    })

    // The developer page: a key shown once, then revoked.
    await page.getByRole("link", { name: "Developer" }).click()
    await page.getByRole("heading", { name: "Developer", level: 1 }).waitFor()
    expect(await seriousViolations()).toEqual([])
    await page.getByLabel("Key name").fill("ci")
    await page.getByRole("button", { name: "Create key" }).click()
    const shown = (await page.getByTestId("new-key").textContent()) ?? ""
    const created = /dxs_live_[0-9A-Za-z]{32}/.exec(shown)?.[0]
    expect(created).toBeDefined()
    expect((await rest(created!).get("/projects/")).status).toBe(200)
    await page.getByRole("button", { name: "Revoke ci" }).click()
    const revokeDialog = page.getByRole("dialog", { name: "Revoke API key “ci”?" })
    await revokeDialog.getByRole("button", { name: "Revoke", exact: true }).click()
    await revokeDialog.waitFor({ state: "hidden" })
    await expect
      .poll(async () => (await rest(created!).get("/projects/")).status, { timeout: 15_000 })
      .toBe(401)
  })

  it("organises projects, edits agents, maps an output schema and previews its results", async () => {
    await page.goto(`${origin}/`)
    await page.getByRole("heading", { name: "Projects", level: 1 }).waitFor()

    // Folders, search and pinning.
    await page.getByLabel("New folder name").fill("Clients")
    await page.getByRole("button", { name: "Create folder", exact: true }).click()
    await page
      .getByTestId("folder-list")
      .getByRole("button", { name: /Clients/ })
      .waitFor()
    await page.getByRole("button", { name: "Pin Invoices", exact: true }).click()
    await page.getByRole("button", { name: "Unpin Invoices", exact: true }).waitFor()
    await page.getByLabel("Search projects").fill("nothing like it")
    await page.getByText("No project matches the search.").waitFor()
    expect(await page.getByTestId("project-list").getByRole("link", { name: "Invoices" }).count()).toBe(0)
    await page.getByLabel("Search projects").fill("Inv")
    await page.getByTestId("project-list").getByRole("link", { name: "Invoices" }).waitFor()
    await page.getByLabel("Search projects").fill("")

    // Archiving takes a project out of the list; it can be restored.
    await page.getByLabel("New project name").fill("Old project")
    await page.getByRole("button", { name: "Create project" }).click()
    await page.getByRole("heading", { name: "Old project", level: 1 }).waitFor()
    await page.getByRole("link", { name: "dxs" }).click()
    await page.getByRole("button", { name: "Archive Old project", exact: true }).click()
    await page.getByText(/Archived projects \(1\)/).click()
    await page.getByTestId("archived-projects").getByRole("link", { name: "Old project" }).waitFor()
    await page
      .getByTestId("project-list")
      .getByRole("link", { name: "Old project" })
      .waitFor({ state: "detached" })
    expect(await seriousViolations()).toEqual([])
    await page.getByRole("button", { name: "Restore Old project", exact: true }).click()
    await page.getByTestId("project-list").getByRole("link", { name: "Old project" }).waitFor()

    // The agent editor: every field, and a derived agent with an @-mention picked from the list.
    await page.getByTestId("project-list").getByRole("link", { name: "Invoices" }).click()
    await page.getByRole("heading", { name: "Invoices", level: 1 }).waitFor()
    await page.getByLabel("Dimension name").fill("Region")
    await page.getByRole("button", { name: "Create dimension" }).click()
    await page.getByTestId("dimensions-table").getByText("Region").waitFor()
    await page.getByLabel("Agent name").fill("Doubled")
    await page.getByLabel("What to extract").fill("Twice the total")
    await page.getByRole("button", { name: "Create agent" }).click()
    await page.getByTestId("agents-table").getByRole("button", { name: "Doubled" }).click()
    const editor = page.getByTestId("agent-editor")
    await editor.waitFor()
    await editor.getByLabel("Agent type").selectOption("derived")
    const prompt = editor.getByLabel("Derived prompt")
    await prompt.fill("")
    await prompt.pressSequentially("2 * @Tot")
    await page
      .getByRole("listbox", { name: "Agents to mention" })
      .getByRole("option", { name: "Total due" })
      .waitFor()
    expect(await seriousViolations()).toEqual([])
    await prompt.press("Enter")
    // The mention goes in with a space after it, ready for the next word.
    await expect.poll(() => prompt.inputValue()).toBe('2 * @"Total due" ')
    await editor.getByRole("button", { name: "Save agent" }).click()
    await editor.getByRole("status").filter({ hasText: "Saved." }).waitFor()
    const projectId = /projects\/([0-9a-f-]{36})/.exec(page.url())![1]!
    const key = await newKey()
    const agents = (await rest(key).get(`/projects/${projectId}/agents/`)).body as Array<any>
    const doubled = agents.find((x) => x.name === "Doubled")
    expect(doubled).toMatchObject({
      agent_type: "derived",
      derived_agent_references: [{ agent_name: "Total due", agent_id: expect.any(String) }],
    })
    expect(doubled.derived_prompt.trim()).toBe('2 * @"Total due"')

    // The output schema: a manual mapping saved, its diagnostics, and the enriched preview.
    await page.getByRole("link", { name: "Output schema" }).click()
    await page.getByRole("heading", { name: "Output schema", level: 1 }).waitFor()
    await page.getByLabel("Schema (JSON Schema)").fill(
      JSON.stringify({
        type: "object",
        properties: { total: { type: "number" } },
        required: ["total", "missing"],
      }),
    )
    await page.getByLabel("Mapping (JSON)").fill(
      JSON.stringify({
        kind: "object",
        properties: { total: { kind: "scalar_from_agent", agent_name: "Nope" } },
      }),
    )
    await page.getByRole("button", { name: "Save schema" }).click()
    await page.getByRole("table", { name: "Diagnostics" }).getByText("agent_not_found").waitFor()
    expect(await seriousViolations()).toEqual([])
    await page.getByLabel("Mapping (JSON)").fill(
      JSON.stringify({
        kind: "object",
        properties: { total: { kind: "scalar_from_agent", agent_name: "Total due" } },
      }),
    )
    await page.getByRole("button", { name: "Save schema" }).click()
    await page.getByTestId("mapping-status").filter({ hasText: "success" }).waitFor()
    await page.getByRole("table", { name: "Diagnostics" }).getByText("required_unmapped").waitFor()
    await page.getByRole("button", { name: "Preview results" }).click()
    const preview = page.getByTestId("schema-preview")
    await preview.filter({ hasText: '"total": 1300' }).waitFor()
    const link = preview.getByRole("link").first()
    expect(await link.textContent()).toMatch(
      /\/projects\/[0-9a-f-]{36}\/agents\/[0-9a-f-]{36}\/[0-9a-f-]{36}$/,
    )
    // The deep link opens the result.
    await link.click()
    await page.getByRole("heading", { name: "Total due", level: 1 }).waitFor()
    expect(await page.getByTestId("result-value").textContent()).toContain("1300")

    // The developer page's webhooks section and key rotation.
    await page.getByRole("link", { name: "Developer" }).click()
    await page.getByRole("heading", { name: "Webhooks", level: 2 }).waitFor()
    await page.getByLabel("Key name").fill("rotating")
    await page.getByRole("button", { name: "Create key" }).click()
    const first = /dxs_live_[0-9A-Za-z]{32}/.exec((await page.getByTestId("new-key").textContent()) ?? "")![0]
    await page.getByRole("button", { name: "Rotate rotating", exact: true }).click()
    await page.getByTestId("rotated-note").waitFor()
    const second = /dxs_live_[0-9A-Za-z]{32}/.exec(
      (await page.getByTestId("new-key").textContent()) ?? "",
    )![0]
    expect(second).not.toBe(first)
    expect((await rest(first).get("/projects/")).status).toBe(401)
    expect((await rest(second).get("/projects/")).status).toBe(200)
    expect(await seriousViolations()).toEqual([])
  })

  it("fixes a failed document from the project screen: the refused launch links to it, replace and delete", async () => {
    // Playwright switches file-chooser interception on without waiting for the browser: a listener added
    // just before the key press can lose the race on a busy machine (the chooser then opens unseen). This
    // one is added long before, so interception is on when the page opens the chooser.
    const choosers: Array<FileChooser> = []
    const onChooser = (chooser: FileChooser) => choosers.push(chooser)
    page.on("filechooser", onChooser)
    await page.goto(`${origin}/`)
    await page.getByRole("heading", { name: "Projects", level: 1 }).waitFor()
    await page.getByLabel("New project name").fill("Repairs")
    await page.getByRole("button", { name: "Create project" }).click()
    await page.getByRole("heading", { name: "Repairs", level: 1 }).waitFor()
    const projectId = /projects\/([0-9a-f-]{36})$/.exec(page.url())![1]!

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
    const documents = page.getByTestId("documents-table")
    const row = (name: string, status?: string) =>
      documents.locator(status === undefined ? "tbody tr" : `tbody tr[data-status="${status}"]`, {
        has: page.getByRole("cell", { name, exact: true }),
      })

    await page
      .getByLabel("Upload documents")
      .setInputFiles([
        notAPdf("broken.pdf"),
        { name: "good.pdf", mimeType: "application/pdf", buffer: await goodPdf("INV-2001", "$500.00") },
      ])
    await row("broken.pdf", "Failed").waitFor({ timeout: 60_000 })
    await row("good.pdf", "Processed").waitFor({ timeout: 60_000 })
    const brokenId = await row("broken.pdf").getAttribute("data-document-id")
    // The failure reason is shown next to the actions, which name the document they act on.
    await row("broken.pdf")
      .getByText(/no %PDF header/)
      .waitFor()
    await row("broken.pdf").getByRole("button", { name: "Replace broken.pdf", exact: true }).waitFor()
    await row("broken.pdf").getByRole("button", { name: "Delete broken.pdf", exact: true }).waitFor()
    await row("good.pdf").getByRole("button", { name: "Replace good.pdf", exact: true }).waitFor()
    await row("good.pdf").getByRole("button", { name: "Delete good.pdf", exact: true }).waitFor()

    await page.getByLabel("Agent name").fill("Total due")
    await page.getByLabel("What to extract").fill("The total amount due")
    await page.getByLabel("Value type").selectOption("number")
    await page.getByRole("button", { name: "Create agent" }).click()
    await page.getByTestId("agents-table").getByRole("button", { name: "Total due" }).waitFor()

    // The refused launch says which document failed, with a link to its row.
    await page.getByRole("button", { name: "Launch" }).click()
    const refusal = page.getByTestId("launch-refusal")
    await refusal.waitFor()
    expect(await refusal.getAttribute("role")).toBe("alert")
    expect(await refusal.textContent()).toContain("1 document failed processing: broken.pdf.")
    expect(await seriousViolations()).toEqual([])
    await refusal.getByRole("link", { name: "broken.pdf" }).click()
    await expect
      .poll(() => page.evaluate(() => (document.activeElement as HTMLElement | null)?.dataset.documentId))
      .toBe(brokenId)

    // From the row, the keyboard reaches its selection box, its name (a link to the viewer), then Replace;
    // Replace's file picker takes a good PDF.
    await page.keyboard.press("Tab")
    expect(await page.evaluate(() => document.activeElement?.getAttribute("aria-label"))).toBe(
      "Select broken.pdf",
    )
    await page.keyboard.press("Tab")
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe("broken.pdf")
    await page.keyboard.press("Tab")
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe("Replace broken.pdf")
    await page.keyboard.press("Enter")
    await expect.poll(() => choosers.length, { timeout: 30_000 }).toBe(1)
    page.off("filechooser", onChooser)
    await choosers[0]!.setFiles({
      name: "fixed.pdf",
      mimeType: "application/pdf",
      buffer: await goodPdf("INV-2002", "$700.00"),
    })
    // The same document, now processed from the new file; the refusal has nothing left to say.
    await row("fixed.pdf", "Processed").waitFor({ timeout: 60_000 })
    expect(await row("fixed.pdf").getAttribute("data-document-id")).toBe(brokenId)
    expect(await row("broken.pdf").count()).toBe(0)
    await refusal.waitFor({ state: "detached" })

    await page.getByRole("button", { name: "Launch" }).click()
    await page.getByTestId("run-status").filter({ hasText: "Done" }).waitFor({ timeout: 60_000 })
    expect(await page.getByRole("progressbar", { name: "Extraction progress" }).getAttribute("value")).toBe(
      "100",
    )

    // A second failed document is deleted through the confirmation dialog.
    await page.getByLabel("Upload documents").setInputFiles([notAPdf("scan.pdf")])
    await row("scan.pdf", "Failed").waitFor({ timeout: 60_000 })
    const deleteScan = row("scan.pdf").getByRole("button", { name: "Delete scan.pdf", exact: true })
    await deleteScan.click()
    const dialog = page.getByRole("dialog", { name: "Delete document “scan.pdf”?" })
    await dialog.waitFor()
    // Focus starts inside the dialog, on the harmless choice; Escape cancels and gives the focus back.
    expect(
      await page.evaluate(() => {
        const active = document.activeElement
        return active?.closest("dialog") ? active.textContent : null
      }),
    ).toBe("Cancel")
    expect(await seriousViolations()).toEqual([])
    await page.keyboard.press("Escape")
    await dialog.waitFor({ state: "hidden" })
    expect(await row("scan.pdf").count()).toBe(1)
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe("Delete scan.pdf")
    await page.keyboard.press("Enter")
    await dialog.waitFor()
    // Asked again before the browser tells of the close (it does so in a task of its own): a user as quick
    // as that gets a dialog, and the late close dismisses none.
    await page.evaluate(
      () =>
        new Promise<void>((resolve) => {
          const closing = document.querySelector("dialog")!
          closing.addEventListener("close", () => setTimeout(resolve, 0), { once: true })
          closing.close()
          const opener = [...document.querySelectorAll("button")].find(
            (b) => b.textContent === "Delete scan.pdf",
          )
          opener!.click()
        }),
    )
    await dialog.waitFor()
    expect(await page.locator("dialog[open]").count()).toBe(1)
    await dialog.getByRole("button", { name: "Delete", exact: true }).click()
    await row("scan.pdf").waitFor({ state: "detached" })
    await dialog.waitFor({ state: "hidden" })
    await page.getByRole("status").filter({ hasText: "scan.pdf deleted." }).waitFor()

    // The REST API agrees: the replaced document kept its id, the deleted one is gone.
    const listed = (await rest(await newKey()).get(`/projects/${projectId}/documents/`)).body as Array<any>
    expect(listed.map((d) => [d.file_name, d.status]).sort()).toEqual([
      ["fixed.pdf", "Processed"],
      ["good.pdf", "Processed"],
    ])
    expect(listed.find((d) => d.file_name === "fixed.pdf").id).toBe(brokenId)
  })

  it("loads the docs page and the web application from the server alone", async () => {
    // A context in which every request that leaves loopback fails, as on a machine without internet.
    const context = await web.browser.newContext()
    const outside: Array<string> = []
    const failed: Array<string> = []
    await context.route(
      (url) => !["localhost", "127.0.0.1", "[::1]"].includes(url.hostname),
      (route) => {
        outside.push(route.request().url())
        return route.abort()
      },
    )
    const offline = await context.newPage()
    offline.on("requestfailed", (r) => failed.push(`${r.url()}: ${r.failure()?.errorText}`))
    // Each page rendered (fonts are fetched when text is drawn), then quiet.
    await offline.goto(`${origin}/api/v1/docs`)
    await offline.getByText("dxs — document extraction service").first().waitFor()
    await offline.waitForLoadState("networkidle")
    await offline.goto(`${origin}/sign-in`)
    await offline.getByRole("button", { name: "Sign in" }).waitFor()
    await offline.waitForLoadState("networkidle")
    await context.close()
    expect(outside).toEqual([])
    expect(failed).toEqual([])
  })
})
