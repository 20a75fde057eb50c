/**
 * What every browser test of the web application shares: a real headless Chromium (Debian's `chromium`,
 * driven by playwright-core; no browser download) against the all-in-one `dxs start all` process on
 * loopback, as `pnpm start` runs it (the application built into apps/web/dist, the REST API, GraphQL and a
 * worker in one process, over a fresh test database), a member to sign in as, the `dxs` command against the
 * same database, the REST API with a key, and axe-core.
 *
 * Without a Chromium (CHROMIUM_PATH, or /usr/bin/chromium) the suites are skipped and say so; CI installs
 * Debian's package first.
 */
import { existsSync, promises as fs } from "node:fs"
import { createRequire } from "node:module"
import * as os from "node:os"
import * as path from "node:path"
import { invoice } from "@dxs/testing/Documents"
import { Dxs, killSpawned } from "@dxs/testing/DxsProcess"
import { useTestDatabase } from "@dxs/testing/TestDatabase"
import { type Browser, type BrowserContextOptions, chromium, type Page } from "playwright-core"
import { afterAll, afterEach, beforeAll, expect } from "vitest"

export const CHROMIUM = [process.env.CHROMIUM_PATH, "/usr/bin/chromium", "/usr/bin/chromium-browser"].find(
  (p): p is string => p !== undefined && p !== "" && existsSync(p),
)
if (CHROMIUM === undefined)
  console.warn("web end-to-end tests skipped: no Chromium (set CHROMIUM_PATH or apt-get install chromium)")

const axeSource = createRequire(import.meta.url).resolve("axe-core/axe.min.js")

export const PASSWORD = "correct horse battery staple"
const KEY = /dxs_live_[0-9A-Za-z]{32}/

/** An answer of the REST API: its status and its JSON body (undefined when empty). */
export interface Reply {
  readonly status: number
  readonly body: any
}

export interface BrowserSuiteOptions {
  /** The organisation the member and the keys belong to. */
  readonly org: string
  /** The member made with `dxs users create` (password `PASSWORD`). */
  readonly email: string
  /** The prefix of the suite's data directory under the system's temporary directory. */
  readonly tmpPrefix: string
  /** More options of the browser context (downloads, another viewport…). */
  readonly context?: BrowserContextOptions
}

/** What a suite's tests use once its `beforeAll` has run. */
export interface BrowserSuite {
  /** The address a user opens (the README's), and the default PUBLIC_URL/APP_URL of result links. */
  readonly origin: string
  readonly page: Page
  readonly browser: Browser
  /** The suite's data directory (DATA_DIR of the server), removed after the suite. */
  readonly tmp: string
  /** Runs a `dxs` command against the same database as the server; its standard output. */
  readonly dxs: (args: ReadonlyArray<string>, input?: string) => Promise<string>
  /** A new API key of the organisation, made with `dxs keys create`. */
  readonly newKey: () => Promise<string>
  /** The REST API with an API key: a JSON (or form) request, and a GET. */
  readonly api: (key: string) => {
    readonly request: (method: string, p: string, body?: unknown) => Promise<Reply>
    readonly get: (p: string) => Promise<Reply>
  }
  /** axe-core on the current screen: the serious and critical violations (expected none). */
  readonly seriousViolations: () => Promise<Array<string>>
  /** Signs in on the sign-in screen as the suite's member. */
  readonly signIn: () => Promise<void>
}

/**
 * Registers the suite's hooks (at the top of a test file, before its own; nothing is started without a
 * Chromium, and the file's suites skip themselves with `describe.skipIf(CHROMIUM === undefined)`): the server on a fresh test database, the
 * member, the browser and its page before the tests; on a failed test, where the browser was and what it
 * showed; everything stopped and removed after.
 */
export const browserSuite = (options: BrowserSuiteOptions): BrowserSuite => {
  let env: NodeJS.ProcessEnv = {}
  let server: Dxs | undefined
  const state = {} as { -readonly [K in keyof BrowserSuite]: BrowserSuite[K] }

  state.dxs = async (args, input) => {
    const p = new Dxs(args, env, input)
    const exit = await p.waitForExit()
    if (exit.code !== 0) throw new Error(`dxs ${args.join(" ")} failed\n${p.output}`)
    return p.stdout
  }
  state.newKey = async () => KEY.exec(await state.dxs(["keys", "create", "--org", options.org]))![0]!
  state.api = (key) => {
    const request = async (method: string, p: string, body?: unknown): Promise<Reply> => {
      const form = body instanceof FormData
      const response = await fetch(`${state.origin}/api/v1${p}`, {
        method,
        headers: {
          "x-api-key": key,
          ...(body === undefined || form ? {} : { "content-type": "application/json" }),
        },
        ...(body === undefined ? {} : { body: form ? body : JSON.stringify(body) }),
      })
      const text = await response.text()
      return { status: response.status, body: text === "" ? undefined : JSON.parse(text) }
    }
    return { request, get: (p) => request("GET", p) }
  }
  state.seriousViolations = async () => {
    const page = state.page
    await page.addScriptTag({ content: await fs.readFile(axeSource, "utf8") })
    const result = await page.evaluate(async () => {
      const axe = (window as unknown as { axe: { run: (ctx: Document) => Promise<any> } }).axe
      return axe.run(document)
    })
    return (result.violations as Array<{ id: string; impact: string; help: string; nodes: Array<unknown> }>)
      .filter((v) => v.impact === "serious" || v.impact === "critical")
      .map((v) => `${v.id}: ${v.help} (${v.nodes.length})`)
  }
  state.signIn = async () => {
    const page = state.page
    await page.goto(`${state.origin}/sign-in`)
    await page.getByLabel("E-mail").fill(options.email)
    await page.getByLabel("Password").fill(PASSWORD)
    await page.getByRole("button", { name: "Sign in" }).click()
    await page.getByRole("heading", { name: "Projects", level: 1 }).waitFor()
  }

  beforeAll(async () => {
    if (CHROMIUM === undefined) return
    state.tmp = await fs.mkdtemp(path.join(os.tmpdir(), options.tmpPrefix))
    env = {
      ...process.env,
      DATABASE_URL: await useTestDatabase(),
      DATA_DIR: state.tmp,
      HOST: "127.0.0.1",
      PORT: "0",
      LOG_LEVEL: "info",
    }
    for (const name of ["BLOB_DIR", "PUBLIC_URL", "APP_URL", "INIT_CWD"]) delete env[name]
    server = new Dxs(["start", "all"], env)
    const [, port] = await server.waitFor(/REST API listening on http:\/\/127\.0\.0\.1:(\d+)\/api\/v1/)
    state.origin = `http://localhost:${port}`
    await state.dxs(["users", "create", "--org", options.org, "--email", options.email], `${PASSWORD}\n`)
    state.browser = await chromium.launch({
      executablePath: CHROMIUM!,
      args: ["--no-sandbox", "--disable-gpu"],
    })
    // The application's Content-Security-Policy forbids inline scripts: axe is injected past it.
    const context = await state.browser.newContext({
      viewport: { width: 1280, height: 900 },
      bypassCSP: true,
      ...options.context,
    })
    state.page = await context.newPage()
    state.page.setDefaultTimeout(30_000)
  }, 600_000)

  // A failed step says where the browser was and what it showed, and what the server said last.
  afterEach(async (ctx) => {
    const page = state.page
    if (ctx.task.result?.state !== "fail" || page === undefined) return
    const text = await page.evaluate(() => document.body.textContent ?? "").catch(() => "")
    console.error(`the browser was at ${page.url()}, showing:\n${text.slice(0, 3000)}`)
    if (server !== undefined)
      console.error(
        `the server ${server.exit === undefined ? "is running" : `exited (${JSON.stringify(server.exit)})`}; its last output:\n${server.output.slice(-5000)}`,
      )
  })

  afterAll(async () => {
    await state.browser?.close()
    if (server !== undefined && server.exit === undefined) {
      server.child.kill("SIGTERM")
      await server.waitForExit(60_000).catch(() => undefined)
    }
    killSpawned()
    if (state.tmp) await fs.rm(state.tmp, { recursive: true, force: true })
  })

  return state
}

/**
 * A project of invoices (file name → total due, as the local extractor reads it back) and two agents split
 * by the Document dimension ("Total due", a number in USD, and "Invoice number"), its documents processed
 * and nothing launched yet. Its id.
 */
export const invoiceProject = async (
  rest: (method: string, p: string, body?: unknown) => Promise<Reply>,
  name: string,
  totals: Readonly<Record<string, number>>,
): Promise<string> => {
  const project = await rest("POST", "/projects/", { name })
  expect(project.status).toBe(201)
  const projectId = project.body.id as string
  for (const [fileName, total] of Object.entries(totals)) {
    const money = `$${total.toLocaleString("en-US")}.00`
    const form = new FormData()
    const pdf = await invoice({
      number: `INV-${fileName[0]}`,
      date: "March 3, 2024",
      seller: "Acme Supplies Inc.",
      currency: "USD",
      subtotal: money,
      tax: "$0.00",
      total: money,
    })
    form.set("file", new Blob([Buffer.from(pdf)]), fileName)
    expect((await rest("POST", `/projects/${projectId}/documents/`, form)).status).toBe(201)
  }
  for (const deadline = Date.now() + 180_000; ; ) {
    const documents = (await rest("GET", `/projects/${projectId}/documents/`)).body as Array<any>
    if (documents.every((d) => d.status === "Processed")) break
    if (documents.some((d) => d.status === "Failed") || Date.now() > deadline)
      throw new Error(`documents not processed: ${JSON.stringify(documents.map((d) => d.status))}`)
    await new Promise((r) => setTimeout(r, 250))
  }
  const dimensions = (await rest("GET", `/projects/${projectId}/dimensions/`)).body as Array<any>
  const documentDimension = dimensions.find((d) => d.source === "DOCUMENT").id
  for (const agent of [
    {
      name: "Total due",
      extraction_instructions: "The total amount due on the invoice",
      value_type: "number",
      unit: "USD",
    },
    { name: "Invoice number", extraction_instructions: "The invoice number" },
  ])
    expect(
      (
        await rest("POST", `/projects/${projectId}/agents/`, {
          ...agent,
          dimensions: [{ dimension_id: documentDimension }],
        })
      ).status,
    ).toBe(201)
  return projectId
}
