/**
 * The all-in-one process under a bounded load, as `pnpm start` runs it (`dxs start all` in a child process,
 * over a fresh test database): 50 live run-progress subscriptions over Server-Sent Events (from several
 * keys), 20 JSON bodies of about 900 KB at once, and 30 page images of a processed PDF at once. Afterwards
 * the process still answers, and its peak resident memory (`VmHWM`) stayed under the ceiling the README
 * documents.
 */
import { randomUUID } from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Db } from "@dxs/db"
import { ApiKeys } from "@dxs/services"
import { textPdf } from "@dxs/testing/Documents"
import { Dxs, killSpawned } from "@dxs/testing/DxsProcess"
import { useTestDatabase } from "@dxs/testing/TestDatabase"
import { Effect } from "effect"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"

/** The documented ceiling of the all-in-one process's peak resident memory under this load (README). */
const PEAK_RSS_CEILING_MB = 2048

const SUBSCRIPTIONS = 50
/** Subscriptions per key: within any per-key limit of live subscriptions. */
const SUBSCRIPTIONS_PER_KEY = 10
const LARGE_BODIES = 20
const PAGE_IMAGES = 30

let tmp: string
let server: Dxs
let origin: string
let keys: Array<string>
/** The process's peak resident memory after each step of the load, in MB. */
const peaks: Array<[string, number]> = []

/** The process ids below `pid` (tsx runs the program in a child process). */
const descendants = (pid: number): Array<number> => {
  const children: Array<number> = []
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, "utf8")
      const parent = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1])
      if (parent === pid) children.push(Number(entry))
    } catch {
      // The process is gone.
    }
  }
  return children.flatMap((child) => [child, ...descendants(child)])
}

/** Peak resident memory of a process, in MB. */
const peakRssMb = (pid: number) => {
  const status = fs.readFileSync(`/proc/${pid}/status`, "utf8")
  const kb = Number(/^VmHWM:\s+(\d+) kB$/m.exec(status)?.[1])
  return kb / 1024
}

/** The process that serves: the one below tsx with the largest peak. */
const serverPid = () => {
  const pids = [server.child.pid!, ...descendants(server.child.pid!)]
  return pids.reduce((best, pid) => (peakRssMb(pid) > peakRssMb(best) ? pid : best))
}

const api = (key: string, p: string, init: RequestInit = {}) =>
  fetch(`${origin}/api/v1${p}`, {
    ...init,
    headers: { "x-api-key": key, ...(init.headers as Record<string, string> | undefined) },
    signal: AbortSignal.timeout(ANSWER_WITHIN_MS),
  })

beforeAll(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), "dxs-memory-"))
  const databaseUrl = await useTestDatabase()
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: databaseUrl,
    DATA_DIR: tmp,
    HOST: "127.0.0.1",
    PORT: "0",
    LOG_LEVEL: "info",
  }
  for (const name of ["BLOB_DIR", "PUBLIC_URL", "APP_URL", "INIT_CWD"]) delete env[name]
  server = new Dxs(["start", "all"], env)
  const org = `memory-${randomUUID()}`
  keys = await Effect.runPromise(
    Effect.forEach(Array.from({ length: Math.ceil(SUBSCRIPTIONS / SUBSCRIPTIONS_PER_KEY) }), () =>
      Effect.map(
        Effect.flatMap(ApiKeys, (k) => k.create(org)),
        (r) => r.key,
      ),
    ).pipe(Effect.provide(ApiKeys.Default), Effect.provide(Db.layer(databaseUrl, 2))),
  )
  const [, port] = await server.waitFor(/REST API listening on http:\/\/127\.0\.0\.1:(\d+)\/api\/v1/)
  origin = `http://127.0.0.1:${port}`
}, 120_000)

afterAll(async () => {
  if (server !== undefined && server.exit === undefined) {
    server.child.kill("SIGTERM")
    await server.waitForExit(60_000).catch(() => killSpawned())
  }
  fs.rmSync(tmp, { recursive: true, force: true })
}, 90_000)

// A failure shows what the process said last.
afterEach((ctx) => {
  if (ctx.task.result?.state === "fail")
    console.error(`exit: ${JSON.stringify(server.exit)}\n${server.output.slice(-6000)}`)
})

/** An SSE subscription to a project's run progress; resolves once its first state has arrived. */
const subscribe = async (key: string, projectId: string) => {
  const abort = new AbortController()
  const res = await fetch(`${origin}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "text/event-stream", "x-api-key": key },
    body: JSON.stringify({
      query: "subscription ($p: ID!) { runProgress(projectId: $p) { project_id pipeline_running } }",
      variables: { p: projectId },
    }),
    signal: abort.signal,
  })
  const reader = res.body!.getReader()
  let received = ""
  // Comment lines (`:`) keep the stream alive; the first state is the first `data:` event.
  const firstState = (async () => {
    while (!/(^|\n)data:[^\n]*\n\n/.test(received)) {
      const { value, done } = await reader.read()
      if (done) break
      received += new TextDecoder().decode(value)
    }
    return received
  })()
  const first = await Promise.race([
    firstState,
    new Promise<string>((resolve) => setTimeout(() => resolve(""), 30_000)),
  ])
  return { status: res.status, first, close: () => abort.abort() }
}

/**
 * A JSON Schema of about `bytes` bytes: a few dozen fields with descriptions near the 20,000-character
 * limit of a string (a schema of thousands of fields is as large, but mostly measures Ajv's compile time).
 */
const largeSchema = (bytes: number) => {
  const properties: Record<string, unknown> = {}
  const description = "d".repeat(19_500)
  for (let i = 0; i < Math.floor(bytes / (description.length + 60)); i++)
    properties[`field_${i}`] = { type: "string", description }
  return { type: "object", properties }
}

/** Per request: a request of the load not answered in this time counts as failed. */
const ANSWER_WITHIN_MS = 45_000

/** What became of a request: its status (and content type), or why there was none; and how long it took. */
const outcome = async (request: () => Promise<Response>, describe = (r: Response) => String(r.status)) => {
  const started = Date.now()
  try {
    const r = await request()
    await r.arrayBuffer()
    return { outcome: describe(r), seconds: (Date.now() - started) / 1000 }
  } catch (e) {
    const reason =
      e instanceof Error && e.name === "TimeoutError"
        ? `no answer within ${ANSWER_WITHIN_MS / 1000} s`
        : String(e)
    return { outcome: reason, seconds: (Date.now() - started) / 1000 }
  }
}

const spread = (outcomes: ReadonlyArray<{ readonly seconds: number }>) => {
  const seconds = outcomes.map((o) => o.seconds)
  return `${Math.min(...seconds).toFixed(1)}–${Math.max(...seconds).toFixed(1)} s`
}

describe("the all-in-one process under load", () => {
  it("serves 50 subscriptions and, while they are open, 20 bodies of 900 KB at once, then 30 page images at once", async () => {
    const [key] = keys as [string]
    // A new schema each time would be refused without a mapping; `mapping: null` is always allowed.
    const body = JSON.stringify({ schema: largeSchema(900 * 1024), auto_map: false, mapping: null })
    expect(body.length).toBeGreaterThan(880 * 1024)
    expect(body.length).toBeLessThan(1024 * 1024)
    peaks.push(["start", peakRssMb(serverPid())])
    const project = (
      (await (
        await api(key, "/projects/", {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ name: "Memory" }),
        })
      ).json()) as { id: string }
    ).id
    const form = new FormData()
    const pdf = await textPdf(["Invoice Number: INV-1\nTotal Due: $1,200.00", "Second page", "Third page"])
    form.append("file", new Blob([pdf as Uint8Array<ArrayBuffer>]), "invoice.pdf")
    const uploaded = await api(key, `/projects/${project}/documents/`, { method: "POST", body: form })
    expect(uploaded.status).toBe(201)
    const document = ((await uploaded.json()) as { id: string }).id
    let status = "Pending"
    for (const deadline = Date.now() + 60_000; status === "Pending" && Date.now() < deadline; ) {
      await new Promise((r) => setTimeout(r, 200))
      status = (
        (await (await api(key, `/projects/${project}/documents/${document}/`)).json()) as { status: string }
      ).status
    }
    expect(status).toBe("Processed")
    peaks.push(["a PDF parsed", peakRssMb(serverPid())])

    const subscriptions = await Promise.all(
      Array.from({ length: SUBSCRIPTIONS }, (_, i) =>
        subscribe(keys[Math.floor(i / SUBSCRIPTIONS_PER_KEY)]!, project),
      ),
    )
    try {
      expect.soft(subscriptions.map((s) => s.status)).toEqual(Array(SUBSCRIPTIONS).fill(200))
      const live = subscriptions.filter((s) => s.first.includes(project)).length
      expect.soft(live, subscriptions.find((s) => !s.first.includes(project))?.first).toBe(SUBSCRIPTIONS)

      peaks.push(["50 subscriptions open", peakRssMb(serverPid())])
      const bodies = await Promise.all(
        Array.from({ length: LARGE_BODIES }, () =>
          outcome(() =>
            api(key, `/projects/${project}/schema/`, {
              method: "PUT",
              headers: { "content-type": "application/json" },
              body,
            }),
          ),
        ),
      )
      peaks.push(["20 bodies of 900 KB", peakRssMb(serverPid())])
      const images = await Promise.all(
        Array.from({ length: PAGE_IMAGES }, (_, i) =>
          outcome(
            () => api(key, `/projects/${project}/documents/${document}/pages/${(i % 3) + 1}/image/`),
            (r) => `${r.status} ${r.headers.get("content-type")}`,
          ),
        ),
      )
      peaks.push(["30 page images", peakRssMb(serverPid())])
      console.info(`900 KB bodies answered in ${spread(bodies)}, page images in ${spread(images)}`)
      expect.soft(bodies.map((b) => b.outcome)).toEqual(Array(LARGE_BODIES).fill("200"))
      expect.soft(images.map((i) => i.outcome)).toEqual(Array(PAGE_IMAGES).fill("200 image/png"))
    } finally {
      for (const s of subscriptions) s.close()
    }
  }, 150_000)

  it(`is still up and answering afterwards, its peak resident memory under ${PEAK_RSS_CEILING_MB} MB`, async () => {
    expect(server.exit).toBeUndefined()
    const health = await api(keys[0]!, "/projects/")
    expect(health.status).toBe(200)
    const peak = peakRssMb(serverPid())
    const steps = peaks.map(([step, mb]) => `${step}: ${Math.round(mb)} MB`).join(", ")
    const report = `peak resident memory of the all-in-one process after ${steps}; at the end ${Math.round(peak)} MB`
    console.info(report)
    expect(peak, report).toBeLessThan(PEAK_RSS_CEILING_MB)
  })
})
