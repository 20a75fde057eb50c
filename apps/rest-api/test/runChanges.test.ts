/**
 * What a run changed (`GET …/runs/{number}/changes/`, beyond the contract), through HTTP over real runs of
 * the local provider: after a relaunch, the values that differ from the previous run for the same agent and
 * combination, each side with its citations; unchanged values are no change; answers checked against the
 * OpenAPI description.
 */
import { randomUUID } from "node:crypto"
import { type Client, createProject, expectProblem } from "@dxs/testing/RestClient"
import { createAgent, launchAndWait, upload, waitProcessed } from "@dxs/testing/Runs"
import { beforeAll, describe, expect, it } from "vitest"
import { compileDescription, type Description, expectDescribed } from "./description.ts"
import { startTestApi, type TestApi } from "./harness.ts"

let api: TestApi
let a: Client
let b: Client
let description: Description

beforeAll(async () => {
  api = await startTestApi({ worker: {} })
  a = api.client(await api.newKey("acme"))
  b = api.client(await api.newKey("globex"))
  description = compileDescription((await a.get("/schema/?format=json")).body)
})

const agreement = (term: string) =>
  new TextEncoder().encode(
    [
      "SERVICES AGREEMENT",
      "",
      "This Services Agreement is made between Northwind Traders, Inc. and Contoso Ltd.",
      "",
      "2. Fees. Annual fee: 120,000 USD payable quarterly.",
      "",
      `3. Term. This Agreement shall remain in effect for ${term}.`,
    ].join("\n"),
  )

const changes = async (projectId: string, number: number, query = "") => {
  const r = await a.get(`/projects/${projectId}/runs/${number}/changes/${query}`)
  expect(r.status, JSON.stringify(r.body)).toBe(200)
  expectDescribed(description, r.body, "get", "/api/v1/projects/{project_id}/runs/{run_number}/changes/", 200)
  return r.body
}

describe("GET /projects/{id}/runs/{number}/changes/", () => {
  it("lists the values a relaunch changed, side by side with both citations", async () => {
    const projectId = await createProject(a)
    const first = await upload(a, projectId, "agreement-2023.txt", agreement("three (3) years"))
    await waitProcessed(a, projectId)
    const term = await createAgent(a, projectId, {
      name: "Term",
      extraction_instructions: "How long it lasts",
    })
    const fee = await createAgent(a, projectId, {
      name: "Annual fee",
      extraction_instructions: "The annual fee",
      value_type: "number",
      unit: "USD",
    })
    await launchAndWait(a, projectId)
    const none = await changes(projectId, 1)
    expect(none).toMatchObject({ run_number: 1, previous_run_number: null, count: 0, results: [] })

    // The agreement is replaced by one with another term; the fee stays the same.
    expect((await a.delete(`/projects/${projectId}/documents/${first}/`)).status).toBe(204)
    await upload(a, projectId, "agreement-2024.txt", agreement("five (5) years"))
    await waitProcessed(a, projectId)
    await launchAndWait(a, projectId)
    const runs = await a.get(`/projects/${projectId}/runs/`)
    const second = runs.body.results[0].number as number
    const body = await changes(projectId, second)
    expect(body).toMatchObject({ run_number: second, previous_run_number: 1, count: 1, next: null })
    expect(body.results).toEqual([
      {
        agent_id: term.id,
        agent_name: "Term",
        atomic_value_id: expect.any(String),
        result_name: expect.any(String),
        dimension_values: {},
        resolution_result_id: expect.any(String),
        previous: {
          value: "3 years",
          resolution_status: "Resolved",
          references: expect.any(Object),
          sources: [expect.objectContaining({ document_name: "agreement-2023.txt", page_number: 1 })],
        },
        current: {
          value: "5 years",
          resolution_status: "Resolved",
          references: expect.any(Object),
          sources: [expect.objectContaining({ document_name: "agreement-2024.txt", page_number: 1 })],
        },
      },
    ])
    expect(Object.values(body.results[0].previous.references)).toEqual([["agreement-2023.txt", 1]])
    expect(Object.values(body.results[0].current.references)).toEqual([["agreement-2024.txt", 1]])
    expect(body.results.map((c: any) => c.agent_id)).not.toContain(fee.id)
    const detail = await a.get(`/projects/${projectId}/results/${body.results[0].resolution_result_id}/`)
    expect(detail.body.value).toBe("5 years")

    const paged = await changes(projectId, second, "?limit=1&offset=1")
    expect(paged).toMatchObject({ count: 1, results: [], previous: "?limit=1&offset=0" })
  })

  it("answers 404 for a run the project does not have or another organisation's project, 400 for bad paging", async () => {
    const projectId = await createProject(a)
    expectProblem(await a.get(`/projects/${projectId}/runs/7/changes/`), 404)
    expectProblem(await a.get(`/projects/${randomUUID()}/runs/1/changes/`), 404)
    expectProblem(await b.get(`/projects/${projectId}/runs/1/changes/`), 404)
    for (const bad of [
      "runs/0/changes/",
      "runs/x/changes/",
      "runs/1/changes/?limit=0",
      "runs/1/changes/?limit=501",
    ])
      expectProblem(await a.get(`/projects/${projectId}/${bad}`), 400)
  })
})
