/**
 * One model request per document for all its outstanding agents, through the REST API with the `openai`
 * provider against a fake OpenAI-compatible server that records its traffic: agent groups under the
 * request budget, page windows for documents larger than the context, and the launch rules unchanged (a
 * changed agent is re-extracted alone, nothing changed sends nothing).
 */
import { makeKysely } from "@dxs/db"
import { makeOpenAiModel } from "@dxs/pipeline/llm/OpenAi"
import { textPdf } from "@dxs/testing/Documents"
import {
  answerDocument,
  type ChatCompletionRequestBody,
  documentRequest,
  type FakeOpenAiServer,
  genericResponder,
  labelledLines,
  startFakeOpenAiServer,
} from "@dxs/testing/FakeOpenAiServer"
import { type Client, createProject } from "@dxs/testing/RestClient"
import { createAgent, launchAndWait, resultsOf, upload, waitProcessed } from "@dxs/testing/Runs"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startTestApi, type TestApi } from "./harness.ts"

/** Reads "Label: value" lines, the label being the agent's name. */
const respond = (body: ChatCompletionRequestBody) => {
  const asked = documentRequest(body)
  if (asked === undefined) return genericResponder(body)
  return answerDocument(asked, (agent) => labelledLines(asked, agent))
}

let api: TestApi
let a: Client
let fake: FakeOpenAiServer
let db: ReturnType<typeof makeKysely>

beforeAll(async () => {
  fake = await startFakeOpenAiServer({ respond })
  api = await startTestApi({
    worker: {
      model: makeOpenAiModel({ baseUrl: fake.baseUrl, model: "test-model", concurrency: 4, retryBaseMs: 10 }),
    },
    // Two agents per request; a context of 2,500 tokens leaves about 1,560 for a window's pages.
    requestBudget: { maxAgentsPerRequest: 2, contextTokens: 2500 },
  })
  a = api.client(await api.newKey("acme"))
  db = makeKysely(api.dbUrl, 2)
})

afterAll(async () => {
  await db?.destroy()
  await fake?.close()
})

const extractRequests = () =>
  fake.requests.filter((r) => r.body.response_format?.json_schema?.name === "extract_document")

const agentsOf = (r: { body: ChatCompletionRequestBody }) =>
  documentRequest(r.body)!.agents.map((x) => x.name)

const documentDimension = async (projectId: string) =>
  (await a.get(`/projects/${projectId}/dimensions/`)).body.find((d: any) => d.source === "DOCUMENT").id

const valuesOf = async (projectId: string, agentId: string) =>
  Object.fromEntries(
    (await resultsOf(a, projectId, agentId)).map((r: any) => [
      r.dimension_instances[0].dimension_value,
      r.resolution_result?.value ?? null,
    ]),
  )

describe("one request per document", () => {
  let projectId: string
  const agents: Record<string, string> = {}

  beforeAll(async () => {
    projectId = await createProject(a)
    for (const [name, number, total, vendor] of [
      ["one.pdf", "INV-1", "100", "Acme"],
      ["two.pdf", "INV-2", "250", "Globex"],
    ] as const)
      await upload(
        a,
        projectId,
        name,
        await textPdf([`Invoice Number: ${number}\nVendor: ${vendor}`, `Total Due: ${total}`]),
      )
    await waitProcessed(a, projectId)
    const dimension = await documentDimension(projectId)
    for (const name of ["Invoice Number", "Total Due", "Vendor"])
      agents[name] = (
        await createAgent(a, projectId, {
          name,
          extraction_instructions: `The ${name.toLowerCase()}`,
          dimensions: [{ dimension_id: dimension }],
        })
      ).id
    fake.reset()
  })

  it("extracts every agent of a document in as few requests as the budget allows, one task per document", async () => {
    await launchAndWait(a, projectId)
    // Three agents, two per request: two requests per document.
    const requests = extractRequests()
    expect(requests).toHaveLength(4)
    const byDocument = new Map<string, Array<(typeof requests)[number]>>()
    for (const r of requests) {
      const doc = documentRequest(r.body)!.document
      byDocument.set(doc, [...(byDocument.get(doc) ?? []), r])
    }
    expect([...byDocument.keys()].sort()).toEqual(["one.pdf", "two.pdf"])
    for (const [, rs] of byDocument) {
      expect(rs.flatMap(agentsOf).sort()).toEqual(["Invoice Number", "Total Due", "Vendor"])
      // The instructions and the pages come first, the same bytes for both requests of the document.
      expect(rs[1]!.body.messages!.slice(0, 2)).toEqual(rs[0]!.body.messages!.slice(0, 2))
    }
    const tasks = await db
      .selectFrom("tasks")
      .select(["kind", "payload"])
      .where("kind", "=", "extract")
      .where("project_id", "=", projectId)
      .execute()
    expect(tasks).toHaveLength(2)

    expect(await valuesOf(projectId, agents["Invoice Number"]!)).toEqual({
      "one.pdf": "INV-1",
      "two.pdf": "INV-2",
    })
    expect(await valuesOf(projectId, agents["Total Due"]!)).toEqual({ "one.pdf": "100", "two.pdf": "250" })
    expect(await valuesOf(projectId, agents.Vendor!)).toEqual({ "one.pdf": "Acme", "two.pdf": "Globex" })
    const [total] = await resultsOf(a, projectId, agents["Total Due"]!)
    expect(Object.values(total.resolution_result.references)).toEqual([
      [total.dimension_instances[0].dimension_value, 2],
    ])
  })

  it("sends nothing when nothing changed, and only a changed agent when one did", async () => {
    fake.reset()
    await launchAndWait(a, projectId)
    expect(extractRequests()).toHaveLength(0)

    await a.patch(`/projects/${projectId}/agents/${agents.Vendor}/`, {
      extraction_instructions: "The seller",
    })
    fake.reset()
    await launchAndWait(a, projectId)
    const requests = extractRequests()
    expect(requests).toHaveLength(2)
    for (const r of requests) expect(agentsOf(r)).toEqual(["Vendor"])
    // The untouched agents keep their values.
    expect(await valuesOf(projectId, agents["Invoice Number"]!)).toEqual({
      "one.pdf": "INV-1",
      "two.pdf": "INV-2",
    })
    expect(await valuesOf(projectId, agents.Vendor!)).toEqual({ "one.pdf": "Acme", "two.pdf": "Globex" })
  })
})

describe("a document larger than the context", () => {
  it("goes in windows of pages within the budget, and the answers of every window are merged", async () => {
    const projectId = await createProject(a)
    // About 740 tokens per page: two pages per window.
    const filler = Array.from(
      { length: 45 },
      (_, i) => `Clause ${i + 1}. The parties agree to the terms set out below here.`,
    ).join("\n")
    await upload(
      a,
      projectId,
      "long.pdf",
      await textPdf([`Party: Initech\n${filler}`, filler, filler, `${filler}\nGoverning Law: Ohio`]),
    )
    await waitProcessed(a, projectId)
    const dimension = await documentDimension(projectId)
    const party = (
      await createAgent(a, projectId, { name: "Party", dimensions: [{ dimension_id: dimension }] })
    ).id
    const law = (
      await createAgent(a, projectId, { name: "Governing Law", dimensions: [{ dimension_id: dimension }] })
    ).id
    fake.reset()
    await launchAndWait(a, projectId)
    const requests = extractRequests()
    const windows = requests.map((r) => documentRequest(r.body)!.pages.map((p) => p.pageNumber))
    expect(windows.length).toBeGreaterThanOrEqual(2)
    expect(windows.flat().sort()).toEqual([1, 2, 3, 4])
    for (const r of requests) expect(agentsOf(r).sort()).toEqual(["Governing Law", "Party"])
    expect(await valuesOf(projectId, party)).toEqual({ "long.pdf": "Initech" })
    expect(await valuesOf(projectId, law)).toEqual({ "long.pdf": "Ohio" })
    const [result] = await resultsOf(a, projectId, law)
    expect(Object.values(result.resolution_result.references)).toEqual([["long.pdf", 4]])
  })
})
