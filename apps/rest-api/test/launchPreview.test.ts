/**
 * Beyond the contract: the launch preview (`GET …/agents/launch/preview/`) and the runs list with their
 * model usage (`GET …/runs/`), through the REST API with a worker on the local provider.
 */
import { estimateDocumentRequests } from "@dxs/domain/ModelRequests"
import { type Client, createProject, expectProblem } from "@dxs/testing/RestClient"
import { createAgent, launchAndWait, upload, waitProcessed } from "@dxs/testing/Runs"
import { beforeAll, describe, expect, it } from "vitest"
import { startTestApi, type TestApi } from "./harness.ts"

let api: TestApi
let a: Client
let other: Client

const BUDGET = { maxAgentsPerRequest: 2, contextTokens: 128_000 }

beforeAll(async () => {
  api = await startTestApi({ worker: {}, requestBudget: BUDGET })
  a = api.client(await api.newKey("acme"))
  other = api.client(await api.newKey("globex"))
})

const text = (lines: number, seed: string) =>
  new TextEncoder().encode(
    Array.from({ length: lines }, (_, i) => `${seed} line ${i}: Total Due: ${100 + i} EUR`).join("\n"),
  )

/** The text length of every page of the document, read back through the REST API. */
const pageLengths = async (projectId: string, documentId: string): Promise<Array<number>> => {
  const doc = await a.get(`/projects/${projectId}/documents/${documentId}/`)
  const lengths: Array<number> = []
  for (let n = 1; n <= doc.body.page_count; n++) {
    const page = await a.get(`/projects/${projectId}/documents/${documentId}/pages/${n}/`)
    lengths.push(page.body.text.length)
  }
  return lengths
}

const preview = async (projectId: string) => {
  const r = await a.get(`/projects/${projectId}/agents/launch/preview/`)
  expect(r.status).toBe(200)
  return r.body
}

describe("the launch preview", () => {
  let projectId: string
  let documents: Array<string>
  let agents: Array<{ id: string }>

  beforeAll(async () => {
    projectId = await createProject(a, { auto_attach_document_dimension: true })
    documents = [
      await upload(a, projectId, "short.txt", text(5, "short")),
      await upload(a, projectId, "long.txt", text(200, "long")),
    ]
    await waitProcessed(a, projectId)
    agents = []
    for (const name of ["Total Due", "Currency", "Seller"])
      agents.push(await createAgent(a, projectId, { name, extraction_instructions: `The ${name}` }))
  })

  it("counts the outstanding pairs and estimates the requests from the pages' text", async () => {
    const body = await preview(projectId)
    let expected = { requests: 0, inputTokens: 0, outputTokens: 0 }
    for (const id of documents) {
      const e = estimateDocumentRequests(await pageLengths(projectId, id), 3, BUDGET)
      expected = {
        requests: expected.requests + e.requests,
        inputTokens: expected.inputTokens + e.inputTokens,
        outputTokens: expected.outputTokens + e.outputTokens,
      }
    }
    expect(body).toEqual({
      extraction_pairs: 6,
      documents: 2,
      agents: 3,
      documents_not_parsed: 0,
      model_requests: expected.requests,
      estimated_input_tokens: expected.inputTokens,
      estimated_output_tokens: expected.outputTokens,
      provider: "local",
      rejected: null,
    })
    // Three agents, at most two per request: two groups for each document.
    expect(body.model_requests).toBe(4)
    expect(body.estimated_input_tokens).toBeGreaterThan(0)
  })

  it("is zero once launched with nothing changed, and counts a changed agent alone", async () => {
    await launchAndWait(a, projectId)
    expect(await preview(projectId)).toMatchObject({
      extraction_pairs: 0,
      documents: 0,
      agents: 0,
      model_requests: 0,
      estimated_input_tokens: 0,
      estimated_output_tokens: 0,
      rejected: null,
    })
    const changed = await a.patch(`/projects/${projectId}/agents/${agents[1]!.id}/`, {
      extraction_instructions: "The currency of the total",
    })
    expect(changed.status).toBe(200)
    const body = await preview(projectId)
    expect(body).toMatchObject({ extraction_pairs: 2, documents: 2, agents: 1, model_requests: 2 })
  })

  it("reports failed documents as the reason a launch would be refused, without failing", async () => {
    const broken = await upload(a, projectId, "broken.pdf", new TextEncoder().encode("%PDF-1.4 not a pdf"))
    await waitProcessed(a, projectId)
    const body = await preview(projectId)
    expect(body.rejected).toMatchObject({
      status: 409,
      failed_documents: [{ id: broken, name: "broken.pdf" }],
    })
    expect(body.rejected.detail).toContain("broken.pdf")
    // The figures leave the failed document out.
    expect(body).toMatchObject({ extraction_pairs: 2, documents: 2, agents: 1 })
    expectProblem(await a.post(`/projects/${projectId}/agents/launch/`), 409)
  })

  it("is 404 for an unknown project or another organisation's", async () => {
    expectProblem(await a.get("/projects/00000000-0000-4000-8000-000000000000/agents/launch/preview/"), 404)
    expectProblem(await other.get(`/projects/${projectId}/agents/launch/preview/`), 404)
  })
})

describe("the runs list", () => {
  it("lists runs newest first with their pairs, agents and usage (zeros with the local provider)", async () => {
    const projectId = await createProject(a, { auto_attach_document_dimension: true })
    await upload(a, projectId, "one.txt", text(3, "one"))
    await waitProcessed(a, projectId)
    const agent = await createAgent(a, projectId, { name: "Total Due", extraction_instructions: "The total" })
    expect((await a.get(`/projects/${projectId}/runs/`)).body).toEqual({
      count: 0,
      next: null,
      previous: null,
      results: [],
    })
    await launchAndWait(a, projectId)
    await launchAndWait(a, projectId)
    const r = await a.get(`/projects/${projectId}/runs/`)
    expect(r.status).toBe(200)
    expect(r.body.count).toBe(2)
    const [second, first] = r.body.results
    expect(first).toMatchObject({
      number: 1,
      status: "succeeded",
      failure_reason: null,
      extraction_pairs: 1,
      agents: [agent.id],
      usage: { requests: 0, cache_hits: 0, input_tokens: 0, cached_input_tokens: 0, output_tokens: 0 },
    })
    expect(first.started_at).not.toBeNull()
    expect(first.finished_at).not.toBeNull()
    expect(second).toMatchObject({ number: 2, status: "succeeded", extraction_pairs: 0, agents: [] })

    const page = await a.get(`/projects/${projectId}/runs/?limit=1&offset=0`)
    expect(page.body).toMatchObject({ count: 2, previous: null })
    expect(page.body.next).toMatch(/^\?limit=1&cursor=[A-Za-z0-9_-]+$/)
    expect(page.body.results.map((x: any) => x.number)).toEqual([2])
    const last = await a.get(`/projects/${projectId}/runs/${page.body.next}`)
    expect(last.body).toMatchObject({ next: null, previous: "?limit=1&offset=0" })
    expect(last.body.results.map((x: any) => x.number)).toEqual([1])
    expect(
      (await a.get(`/projects/${projectId}/runs/?limit=1&offset=1`)).body.results.map((x: any) => x.number),
    ).toEqual([1])

    expectProblem(await a.get(`/projects/${projectId}/runs/?limit=0`), 400)
    expectProblem(await a.get(`/projects/${projectId}/runs/?limit=101`), 400)
    expectProblem(await other.get(`/projects/${projectId}/runs/`), 404)
  })
})
