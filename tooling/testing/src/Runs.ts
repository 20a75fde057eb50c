/** What end-to-end pipeline tests do through the REST API: upload, wait for parsing, launch and wait. */
import { expect } from "vitest"
import type { Client, Reply } from "./RestClient.ts"

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** Polls `f` until it returns a value (not undefined). */
export const until = async <T>(
  what: string,
  f: () => Promise<T | undefined>,
  timeoutMs = 60_000,
): Promise<T> => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const v = await f()
    if (v !== undefined) return v
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await sleep(100)
  }
}

/** Uploads a file (multipart field `file`) and returns the document's id. */
export const upload = async (
  client: Client,
  projectId: string,
  name: string,
  bytes: Uint8Array,
): Promise<string> => {
  const form = new FormData()
  form.append("file", new Blob([bytes as Uint8Array<ArrayBuffer>]), name)
  const r = await client.send("POST", `/projects/${projectId}/documents/`, form)
  expect(r.status).toBe(201)
  return r.body.id
}

/** Waits until no document of the project is Pending; returns the documents. */
export const waitProcessed = (client: Client, projectId: string) =>
  until("documents processed", async () => {
    const r = await client.get(`/projects/${projectId}/documents/`)
    return r.body.every((d: any) => d.status !== "Pending") ? (r.body as Array<any>) : undefined
  })

/** Launches (202) and waits until the run is done (`pipeline_running` false); returns the project status. */
export const launchAndWait = async (client: Client, projectId: string) => {
  const r = await client.post(`/projects/${projectId}/agents/launch/`)
  expect(r.status).toBe(202)
  return until("the run to end", async () => {
    const s = await client.get(`/projects/${projectId}/status/`)
    return s.body.pipeline_running ? undefined : s.body
  })
}

export const createAgent = async (client: Client, projectId: string, body: Record<string, unknown>) => {
  const r = await client.post(`/projects/${projectId}/agents/`, body)
  expect(r.status).toBe(201)
  return r.body as { id: string; name: string }
}

/** An agent's result rows (first 500). */
export const resultsOf = async (client: Client, projectId: string, agentId: string): Promise<Array<any>> => {
  const r: Reply = await client.get(`/projects/${projectId}/results/?agent_id=${agentId}&limit=500`)
  expect(r.status).toBe(200)
  return r.body.results
}
