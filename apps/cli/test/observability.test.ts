/**
 * What the all-in-one process says about its work: JSON log lines (one per request, upload, parse, run
 * start and end, with the request id and the organisation, never a key) and Prometheus metrics on their
 * own port. A real `dxs start all` over its own embedded PostgreSQL.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Dxs, killSpawned } from "@dxs/testing/DxsProcess"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

const KEY = /dxs_live_[0-9A-Za-z]{32}/

let tmp = ""
let env: NodeJS.ProcessEnv = {}
let server: Dxs
let api = ""
let metricsUrl = ""
let key = ""

type Line = Record<string, unknown> & { readonly message: string; readonly level: string }

/** The server's log so far, one JSON object per line (every line must be JSON). */
const lines = (): Array<Line> =>
  server.stderr
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as Line)

const until = async <A>(what: string, find: () => A | undefined, ms = 60_000): Promise<A> => {
  const deadline = Date.now() + ms
  for (;;) {
    const found = find()
    if (found !== undefined) return found
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\n${server.output}`)
    await new Promise((r) => setTimeout(r, 100))
  }
}

const call = (p: string, init: RequestInit = {}) =>
  fetch(`${api}${p}`, { ...init, headers: { "x-api-key": key, ...(init.headers as object) } })

beforeAll(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), "dxs-observability-"))
  fs.chmodSync(tmp, 0o755)
  env = {
    ...process.env,
    DATA_DIR: path.join(tmp, "data"),
    PORT: "0",
    HOST: "127.0.0.1",
    LOG_LEVEL: "info",
    LOG_FORMAT: "json",
    METRICS_PORT: "0",
  }
  for (const name of ["DATABASE_URL", "BLOB_DIR", "PUBLIC_URL", "INIT_CWD"]) delete env[name]
  server = new Dxs(["start", "all"], env)
  const [, port] = await server.waitFor(/REST API listening on http:\/\/127\.0\.0\.1:(\d+)\/api\/v1/)
  const [, metrics] = await server.waitFor(/metrics on (http:\/\/127\.0\.0\.1:\d+\/metrics)/)
  api = `http://127.0.0.1:${port}/api/v1`
  metricsUrl = metrics!
  const created = new Dxs(["keys", "create", "--org", "acme"], env)
  await created.waitForExit()
  key = KEY.exec(created.stdout)![0]
})

afterAll(async () => {
  if (server && !server.exit) {
    server.child.kill("SIGTERM")
    await server.waitForExit(60_000).catch(() => undefined)
  }
  killSpawned()
  fs.rmSync(tmp, { recursive: true, force: true })
}, 90_000)

describe("the all-in-one process's log and metrics", () => {
  it("logs one JSON line per request with its id, route, status, duration and organisation, never the key", async () => {
    const r = await call("/projects/", {
      method: "POST",
      headers: { "content-type": "application/json", "x-request-id": "trace-create-1" },
      body: JSON.stringify({ name: "Observed", auto_attach_document_dimension: true }),
    })
    expect(r.status).toBe(201)
    const line = await until("the request line", () =>
      lines().find((l) => l.message === "request" && l.request_id === "trace-create-1"),
    )
    expect(line).toMatchObject({
      level: "info",
      method: "POST",
      route: "/api/v1/projects/",
      status: 201,
      organization_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
    })
    expect(line.ms).toEqual(expect.any(Number))
    // A client error is a request line at info level, not a failure.
    const missing = await call("/projects/00000000-0000-4000-8000-000000000000/", {
      headers: { "x-request-id": "trace-missing" },
    })
    expect(missing.status).toBe(404)
    const notFound = await until("the 404 line", () => lines().find((l) => l.request_id === "trace-missing"))
    expect(notFound).toMatchObject({ level: "info", status: 404, route: "/api/v1/projects/{id}/" })
    expect(lines().filter((l) => l.level === "error")).toEqual([])
    expect(server.stderr).not.toContain(key)
  })

  it("logs the upload, the parse, and the run's start and end", async () => {
    const project = (await (await call("/projects/")).json()) as Array<{ id: string; name: string }>
    const p = project.find((x) => x.name === "Observed")!.id
    const form = new FormData()
    form.set("file", new Blob(["Invoice INV-7\nTotal amount due: EUR 1,250.00\n"]), "invoice.txt")
    const uploaded = (await (
      await call(`/projects/${p}/documents/`, { method: "POST", body: form })
    ).json()) as {
      id: string
    }
    expect(
      lines().find((l) => l.message === "document uploaded" && l.document_id === uploaded.id),
    ).toMatchObject({
      project_id: p,
      type: "Text",
    })
    const parsed = await until("the parse line", () =>
      lines().find((l) => l.message === "document parsed" && l.document_id === uploaded.id),
    )
    expect(parsed).toMatchObject({ outcome: "Processed", pages: 1, type: "Text", task_kind: "parse" })
    expect(parsed.ms).toEqual(expect.any(Number))

    await call(`/projects/${p}/agents/`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name: "Total", value_type: "number", unit: "EUR" }),
    })
    expect((await call(`/projects/${p}/agents/launch/`, { method: "POST" })).status).toBe(202)
    const started = await until("the run's start", () =>
      lines().find((l) => l.message === "run started" && l.project_id === p),
    )
    expect(started).toMatchObject({ run_number: 1, extract_pairs: 1 })
    const ended = await until("the run's end", () =>
      lines().find((l) => l.message === "run ended" && l.project_id === p),
    )
    expect(ended).toMatchObject({ run_number: 1, status: "succeeded", model_calls: 0 })
  })

  it("serves Prometheus metrics on their own port: requests, tasks, the queue, parsing", async () => {
    const r = await fetch(metricsUrl)
    expect(r.status).toBe(200)
    expect(r.headers.get("content-type")).toContain("text/plain")
    const text = await r.text()
    expect(text).toMatch(
      /^dxs_http_requests_total\{method="POST",route="\/api\/v1\/projects\/",status="201"\} 1$/m,
    )
    expect(text).toMatch(
      /^dxs_http_requests_total\{method="GET",route="\/api\/v1\/projects\/\{id\}\/",status="404"\} 1$/m,
    )
    expect(text).toMatch(
      /^dxs_http_request_duration_seconds_count\{method="POST",route="\/api\/v1\/projects\/"\} 1$/m,
    )
    expect(text).toMatch(/^dxs_tasks_total\{kind="parse",outcome="succeeded"\} 1$/m)
    expect(text).toMatch(/^dxs_parse_duration_seconds_count\{type="Text",outcome="Processed"\} 1$/m)
    expect(text).toMatch(/^dxs_parsed_pages_total\{type="Text"\} 1$/m)
    expect(text).toMatch(/^# TYPE dxs_queue_depth gauge$/m)
    expect(text).toMatch(/^dxs_process_resident_memory_bytes \d+/m)
    expect((await fetch(metricsUrl.replace("/metrics", "/other"))).status).toBe(404)
    // Not on the API's port (there, /metrics is the web application's page, if anything).
    expect(await (await fetch(api.replace("/api/v1", "/metrics"))).text()).not.toContain(
      "dxs_http_requests_total",
    )
  })
})
