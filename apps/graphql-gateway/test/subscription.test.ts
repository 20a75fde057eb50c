/**
 * Live run progress over Server-Sent Events: a client subscribes, a run is launched through REST, and the
 * pushed states go from idle to running to done, each equal in shape to what REST reports.
 */
import { localModel } from "@dxs/pipeline/llm/Local"
import type { TestApi } from "@dxs/rest-api/TestApi"
import { invoice } from "@dxs/testing/Documents"
import { type Client, createProject } from "@dxs/testing/RestClient"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Gateway, startGateway, upload } from "./support.ts"

let api: TestApi
let gql: Gateway
let key: string
let a: Client

beforeAll(async () => {
  // Extraction takes a while, as with a real model, so the run is seen while it runs.
  gql = await startGateway({
    worker: {
      model: {
        ...localModel,
        extract: (r) => Effect.delay(localModel.extract(r), "1500 millis"),
        // A run's extraction asks once per document.
        extractDocument: (r) => Effect.delay(localModel.extractDocument(r), "1500 millis"),
      },
    },
  })
  api = gql.api
  key = await api.newKey("acme")
  a = api.client(key)
})

afterAll(async () => {
  await gql?.close()
})

const waitProcessed = async (projectId: string) =>
  until(
    "documents processed",
    () => processed.has(projectId),
    60_000,
    async () => {
      const r = await a.get(`/projects/${projectId}/documents/`)
      if (r.body.every((d: any) => d.status === "Processed")) processed.add(projectId)
    },
  )
const processed = new Set<string>()

const PROGRESS = `subscription ($p: ID!) { runProgress(projectId: $p) {
  project_id pipeline_running status { pipeline_running schema_status document_count }
  agents { agent_id progress { extraction { total completed percentage } resolution { total completed }
    is_running is_pending } consistency } } }`

/** Opens an SSE subscription; returns the pushed payloads as they arrive and a way to stop. */
const subscribe = async (apiKey: string | undefined, query: string, variables: Record<string, unknown>) => {
  const abort = new AbortController()
  const res = await fetch(gql.url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "text/event-stream",
      ...(apiKey === undefined ? {} : { "x-api-key": apiKey }),
    },
    body: JSON.stringify({ query, variables }),
    signal: abort.signal,
  })
  const events: Array<any> = []
  const reading = (async () => {
    const reader = res.body!.getReader()
    const decoder = new TextDecoder()
    let buffer = ""
    try {
      for (;;) {
        const { value, done } = await reader.read()
        if (done) return
        buffer += decoder.decode(value, { stream: true })
        let end = buffer.indexOf("\n\n")
        while (end >= 0) {
          const block = buffer.slice(0, end)
          buffer = buffer.slice(end + 2)
          const data = block
            .split("\n")
            .filter((l) => l.startsWith("data:"))
            .map((l) => l.slice(5).trim())
            .join("\n")
          if (data !== "") events.push(JSON.parse(data))
          end = buffer.indexOf("\n\n")
        }
      }
    } catch {
      // aborted
    }
  })()
  return {
    status: res.status,
    contentType: res.headers.get("content-type") ?? "",
    events,
    stop: async () => {
      abort.abort()
      await reading
    },
  }
}

const until = async (what: string, f: () => boolean, timeoutMs = 60_000, poll?: () => Promise<void>) => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    await poll?.()
    if (f()) return
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 50))
  }
}

describe("runProgress over SSE", () => {
  it("pushes the current state, then the run as it starts, progresses and ends", async () => {
    const projectId = await createProject(a)
    await upload(
      a,
      projectId,
      "invoice.pdf",
      await invoice({
        number: "INV-7",
        date: "May 1, 2024",
        seller: "Acme Supplies Inc.",
        currency: "USD",
        subtotal: "$10.00",
        tax: "$2.00",
        total: "$12.00",
      }),
    )
    await waitProcessed(projectId)
    const created = await a.post(`/projects/${projectId}/agents/`, {
      name: "Total due",
      value_type: "number",
    })
    expect(created.status).toBe(201)
    const agent = created.body
    const sub = await subscribe(key, PROGRESS, { p: projectId })
    expect(sub.status).toBe(200)
    expect(sub.contentType).toContain("text/event-stream")
    try {
      await until("the first state", () => sub.events.length > 0)
      const first = sub.events[0].data.runProgress
      expect(first).toMatchObject({ project_id: projectId, pipeline_running: false })
      expect(first.agents).toEqual([expect.objectContaining({ agent_id: agent.id })])
      expect(first.agents[0].progress.is_pending).toBe(true)

      expect((await a.post(`/projects/${projectId}/agents/launch/`)).status).toBe(202)
      const states = () => sub.events.map((e) => e.data.runProgress)
      await until("the run to start", () => states().some((s) => s.pipeline_running))
      await until("the run to end", () => {
        const s = states()
        const started = s.findIndex((x) => x.pipeline_running)
        return started >= 0 && s.slice(started).some((x) => !x.pipeline_running)
      })
      const last = states().at(-1)
      expect(last.pipeline_running).toBe(false)
      expect(last.agents[0].progress.extraction).toEqual({ total: 1, completed: 1, percentage: 100 })
      // The pushed state is what REST reports now.
      const rest = (await a.get(`/projects/${projectId}/agents/status/`)).body
      expect(last.agents[0].progress.extraction).toEqual(rest.progress[agent.id].extraction)
      expect(last.agents[0].consistency).toEqual(rest.consistency[agent.id])
      // Only changes are pushed: no two consecutive states are equal.
      const keys = states().map((s) => JSON.stringify(s))
      for (let i = 1; i < keys.length; i++) expect(keys[i]).not.toBe(keys[i - 1])
    } finally {
      await sub.stop()
    }
  })

  it("refuses a missing key and another organisation's project", async () => {
    const projectId = await createProject(a)
    const anonymous = await subscribe(undefined, PROGRESS, { p: projectId })
    await until("an answer", () => anonymous.events.length > 0, 10_000)
    const otherKey = await api.newKey("globex")
    const other = await subscribe(otherKey, PROGRESS, { p: projectId })
    await until("an answer", () => other.events.length > 0, 10_000)
    expect(other.events[0].errors?.[0]?.extensions?.code).toBe("NOT_FOUND")
    await other.stop()
    await anonymous.stop()
    expect(anonymous.events[0].errors[0].extensions.code).toBe("UNAUTHENTICATED")
  })
})
