/**
 * Web search end to end through the REST API, with a worker loop in this process, the `local` language
 * model and a fake SearXNG-compatible search server: agents with `enable_web_search` supplement their
 * documents with what the search finds (web-only and document-and-web results, per atomic value for a
 * dimensioned agent); agents without it never search; agents/status counts the searches.
 */
import { makeKysely } from "@dxs/db"
import { searxngSearch } from "@dxs/pipeline/websearch/WebSearch"
import { contract, textPdf } from "@dxs/testing/Documents"
import { type FakeSearchServer, startFakeSearchServer } from "@dxs/testing/FakeSearchServer"
import { type Client, createProject, timestamp } from "@dxs/testing/RestClient"
import { createAgent, launchAndWait, resultsOf, upload, waitProcessed } from "@dxs/testing/Runs"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startTestApi, type TestApi } from "./harness.ts"

const EMPLOYEES = {
  url: "https://globex.example.com/about",
  title: "About Globex",
  content: "Globex Corporation has 4,200 employees worldwide.",
}
const CAREERS = {
  url: "https://globex.example.com/careers",
  title: "",
  content: "Careers at Globex: join our team.",
}
const NO_TEXT = { url: "https://globex.example.com/empty", title: "Empty", content: "" }
const LAW = {
  url: "https://law.example.org/acme",
  title: "Acme contracts",
  content: "Contracts of Acme Supplies Inc. are governed by the laws of the State of Delaware.",
}
const office = (region: string, count: string) => ({
  url: `https://globex.example.com/offices/${region.toLowerCase()}`,
  title: `Globex ${region} office`,
  content: `The ${region} office has ${count} employees.`,
})

let api: TestApi
let a: Client
let fake: FakeSearchServer
let db: ReturnType<typeof makeKysely>

beforeAll(async () => {
  fake = await startFakeSearchServer({
    results: (query) => {
      if (query.startsWith("Employee Count")) return [NO_TEXT, EMPLOYEES, CAREERS]
      if (query.startsWith("Governing Law")) return [LAW]
      if (query.startsWith("Headcount") && query.endsWith(" EU")) return [office("EU", "120")]
      if (query.startsWith("Headcount") && query.endsWith(" US")) return [office("US", "340")]
      return []
    },
  })
  api = await startTestApi({ worker: { webSearch: searxngSearch({ url: fake.url, maxResults: 5 }) } })
  a = api.client(await api.newKey("acme"))
  db = makeKysely(api.dbUrl, 2)
})

afterAll(async () => {
  await db?.destroy()
  await fake?.close()
})

/** The result's detail and its extractions list. */
const detailOf = async (projectId: string, resultId: string) => {
  const detail = await a.get(`/projects/${projectId}/results/${resultId}/`)
  expect(detail.status).toBe(200)
  const extractions = await a.get(`/projects/${projectId}/results/${resultId}/extractions/`)
  expect(extractions.status).toBe(200)
  return { detail: detail.body, extractions: extractions.body.data as Array<any> }
}

describe("agents with web search over documents that lack the value", () => {
  let projectId: string
  const ids: Record<string, string> = {}
  const agents: Record<string, { id: string; name: string }> = {}

  beforeAll(async () => {
    projectId = await createProject(a, { reference_date: "2024-06-30" })
    ids.notes = await upload(
      a,
      projectId,
      "notes.pdf",
      await textPdf([
        "Meeting notes\nThe team reviewed the product roadmap and agreed on next steps.\nNo decisions on hiring were taken.",
      ]),
    )
    ids.nda = await upload(
      a,
      projectId,
      "nda.pdf",
      await contract({
        partyA: "Acme Supplies Inc.",
        partyB: "Globex Corporation",
        state: "Delaware",
        date: "January 15, 2024",
      }),
    )
    await waitProcessed(a, projectId)
    const region = await a.post(`/projects/${projectId}/dimensions/`, { name: "Region" })
    expect(region.status).toBe(201)
    agents.employees = await createAgent(a, projectId, {
      name: "Employee Count",
      extraction_instructions: "Number of employees",
      value_type: "number",
      enable_web_search: true,
    })
    agents.law = await createAgent(a, projectId, {
      name: "Governing Law",
      extraction_instructions: "The state whose laws govern the agreement",
      enable_web_search: true,
    })
    agents.jurisdiction = await createAgent(a, projectId, {
      name: "Jurisdiction",
      extraction_instructions: "The state whose laws govern the agreement",
    })
    agents.headcount = await createAgent(a, projectId, {
      name: "Headcount",
      extraction_instructions: "Number of employees of the regional office",
      value_type: "number",
      enable_web_search: true,
      dimensions: [{ dimension_id: region.body.id, values: ["EU", "US"] }],
    })
    await launchAndWait(a, projectId)
  })

  it("searches once per atomic value, with the agent's name and instructions (and the result's name)", () => {
    expect(fake.requests.map((r) => r.query).sort()).toEqual([
      "Employee Count Number of employees",
      "Governing Law The state whose laws govern the agreement",
      "Headcount Number of employees of the regional office EU",
      "Headcount Number of employees of the regional office US",
    ])
    expect(fake.requests.every((r) => r.params.get("format") === "json" && r.status === 200)).toBe(true)
  })

  it("an agent without enable_web_search never searches and stays document-sourced", async () => {
    expect(fake.requests.some((r) => r.query.includes("Jurisdiction"))).toBe(false)
    const [row] = await resultsOf(a, projectId, agents.jurisdiction!.id)
    expect(row.resolution_result).toMatchObject({ value: "Delaware", resolution_status: "Resolved" })
    const { detail, extractions } = await detailOf(projectId, row.resolution_result.id)
    expect(detail).toMatchObject({ source_type: "document", is_web_supplement: false, web_supplement: null })
    expect(extractions.map((e) => e.source_type)).toEqual(["document"])
  })

  it("a value found only on the web: source_type web, with the web supplement and its sources", async () => {
    const [row] = await resultsOf(a, projectId, agents.employees!.id)
    expect(row.resolution_result).toMatchObject({ value: 4200, resolution_status: "Resolved" })
    const { detail, extractions } = await detailOf(projectId, row.resolution_result.id)
    expect(detail).toMatchObject({
      source_type: "web",
      is_web_supplement: true,
      web_supplement: {
        text: EMPLOYEES.content,
        sources: [{ url: EMPLOYEES.url, title: EMPLOYEES.title }],
      },
      sources: [],
    })
    expect(Object.values(detail.references)).toEqual([[EMPLOYEES.title, null]])
    expect(extractions).toHaveLength(1)
    const [web] = extractions
    expect(Object.keys(detail.references)).toEqual([web.id])
    expect(web).toMatchObject({
      value: "4200",
      source_type: "web",
      document_id: null,
      document_name: null,
      page_number: null,
      relevant_passage: EMPLOYEES.content,
      web_search_query: "Employee Count Number of employees",
      web_search_timestamp: timestamp,
      web_citations: [
        { snippets: [{ text: EMPLOYEES.content }], source: { url: EMPLOYEES.url, title: EMPLOYEES.title } },
      ],
      derived_sources: [],
    })
    expect(web.reasoning).not.toBe("")
  })

  it("a value in the documents and on the web: document_and_web, web extractions listed first", async () => {
    const [row] = await resultsOf(a, projectId, agents.law!.id)
    expect(row.resolution_result).toMatchObject({ value: "Delaware", resolution_status: "Resolved" })
    const { detail, extractions } = await detailOf(projectId, row.resolution_result.id)
    expect(detail).toMatchObject({
      source_type: "document_and_web",
      is_web_supplement: true,
      web_supplement: { text: LAW.content, sources: [{ url: LAW.url, title: LAW.title }] },
      sources: [{ document_name: "nda.pdf", page_number: 2, document_id: ids.nda }],
    })
    expect(extractions.map((e) => [e.source_type, e.document_name, e.page_number])).toEqual([
      ["web", null, null],
      ["document", "nda.pdf", 2],
    ])
    expect(extractions.every((e) => e.consistent === true)).toBe(true)
    expect(detail.references).toEqual({
      [extractions[0].id]: [LAW.title, null],
      [extractions[1].id]: ["nda.pdf", 2],
    })
    expect(extractions[1]).toMatchObject({
      web_search_query: null,
      web_search_timestamp: null,
      web_citations: [],
    })
  })

  it("a dimensioned agent searches per atomic value and keeps each finding with its value", async () => {
    const rows = await resultsOf(a, projectId, agents.headcount!.id)
    const byRegion = Object.fromEntries(rows.map((row) => [row.result_name, row.resolution_result]))
    expect(byRegion.EU).toMatchObject({ value: 120, resolution_status: "Resolved" })
    expect(byRegion.US).toMatchObject({ value: 340, resolution_status: "Resolved" })
    const { detail, extractions } = await detailOf(projectId, byRegion.US.id)
    expect(detail).toMatchObject({ source_type: "web", is_web_supplement: true })
    expect(detail.web_supplement.sources).toEqual([{ url: office("US", "").url, title: "Globex US office" }])
    expect(extractions).toMatchObject([
      { value: "340", web_search_query: "Headcount Number of employees of the regional office US" },
    ])
  })

  it("agents/status counts the web searches of agents with enable_web_search", async () => {
    const status = await a.get(`/projects/${projectId}/agents/status/`)
    expect(status.body.progress[agents.employees!.id].web_search).toEqual({
      total: 1,
      completed: 1,
      percentage: 100,
    })
    expect(status.body.progress[agents.headcount!.id].web_search).toEqual({
      total: 2,
      completed: 2,
      percentage: 100,
    })
    expect(status.body.progress[agents.jurisdiction!.id].web_search).toEqual({
      total: 0,
      completed: 0,
      percentage: 100,
    })
    const list = await a.get(`/projects/${projectId}/agents/`)
    for (const agent of list.body) expect(agent.extraction_status).toBe("Processed")
  })

  it("a new document re-resolves: web extractions are replaced, not added to", async () => {
    const before = fake.requests.length
    await upload(
      a,
      projectId,
      "more-notes.pdf",
      await textPdf(["More meeting notes\nNothing new to report."]),
    )
    await waitProcessed(a, projectId)
    await launchAndWait(a, projectId)
    expect(fake.requests.length).toBe(before + 4)
    const [row] = await resultsOf(a, projectId, agents.employees!.id)
    expect(row.resolution_result).toMatchObject({ value: 4200 })
    const { detail, extractions } = await detailOf(projectId, row.resolution_result.id)
    expect(extractions).toHaveLength(1)
    expect(Object.keys(detail.references)).toEqual([extractions[0].id])
    const web = await db
      .selectFrom("extractions")
      .select("id")
      .where("project_id", "=", projectId)
      .where("source_type", "=", "web")
      .execute()
    expect(web).toHaveLength(4)
  })
})
