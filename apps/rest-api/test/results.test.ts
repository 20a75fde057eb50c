import { randomUUID } from "node:crypto"
import { fileBlobStore, makeKysely } from "@dxs/db"
import * as TaskQueue from "@dxs/db/TaskQueue"
import { onePagePdf } from "@dxs/testing/Documents"
import { type Client, createProject, expectProblem, timestamp, uuid } from "@dxs/testing/RestClient"
import { agentVersion, projectRows } from "@dxs/testing/Seeding"
import { backgroundTaskHandlers } from "@dxs/worker"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { runTaskHandler, startTestApi, type TestApi, taskContext } from "./harness.ts"

let api: TestApi
let a: Client
let b: Client
let db: ReturnType<typeof makeKysely>

/** The seeded project: two documents, three agents (one a draft), their atomic values and results. */
const s = {} as {
  project: string
  otherProject: string
  invoice: string
  contract: string
  region: string
  documentDimension: string
  total: { id: string; version: number }
  law: { id: string; version: number }
  draft: { id: string }
  av: Record<"eu" | "us" | "lawInvoice" | "lawContract" | "draft" | "stale", string>
  rr: Record<"eu" | "us" | "lawInvoice" | "lawContract" | "draft" | "stale", string>
  ex: Record<"web" | "invoiceTrue" | "contractTrue" | "contractFalse" | "invoiceNull" | "old" | "law", string>
}

const WORKER = "results-test"

/** Runs due parse tasks with the real handlers, as a worker would, until none is due. */
const parseUploads = async () => {
  const handlers = backgroundTaskHandlers({
    blobs: fileBlobStore(api.blobDir),
    parsing: { timeoutMs: 60_000 },
  })
  for (let round = 0; round < 10; round++) {
    const claimed = await TaskQueue.claim(db, {
      workerId: WORKER,
      kinds: ["parse"],
      leaseMs: 120_000,
      limit: 4,
    })
    if (claimed.length === 0) return
    for (const task of claimed) {
      await runTaskHandler(handlers[task.kind]!, task, taskContext(db, task, WORKER))
      await TaskQueue.complete(db, task.id, WORKER)
    }
  }
}

const uploadPdf = async (project: string, fileName: string, line: string) => {
  const form = new FormData()
  form.set("file", new Blob([onePagePdf(line) as Uint8Array<ArrayBuffer>]), fileName)
  const r = await a.send("POST", `/projects/${project}/documents/`, form)
  expect(r.status).toBe(201)
  return r.body.id as string
}

const createAgent = async (project: string, body: Record<string, unknown>) => {
  const r = await a.post(`/projects/${project}/agents/`, body)
  expect(r.status, JSON.stringify(r.body)).toBe(201)
  return agentVersion(db, r.body.id)
}

beforeAll(async () => {
  api = await startTestApi()
  a = api.client(await api.newKey("acme"))
  b = api.client(await api.newKey("globex"))
  db = makeKysely(api.dbUrl, 4)

  s.project = await createProject(a)
  const { contract, instance, atomicValue, extraction, result } = projectRows(db, s.project)
  s.otherProject = await createProject(a)
  s.invoice = await uploadPdf(s.project, "invoice.pdf", "Total amount due: EUR 1,234.50")
  await parseUploads()
  const invoice = await a.get(`/projects/${s.project}/documents/${s.invoice}/`)
  expect(invoice.body.status).toBe("Processed")
  s.contract = await contract("Liability is limited to the amount paid in the last twelve months.")

  const region = await a.post(`/projects/${s.project}/dimensions/`, { name: "Region" })
  expect(region.status).toBe(201)
  s.region = region.body.id
  s.documentDimension = (await a.get(`/projects/${s.project}/dimensions/`)).body.find(
    (d: any) => d.source === "DOCUMENT",
  ).id

  s.total = await createAgent(s.project, {
    name: "Total amount",
    extraction_instructions: "The total amount due on the invoice",
    value_type: "number",
    unit: "EUR",
    dimensions: [{ dimension_id: s.region, values: ["EU", "US"] }],
  })
  s.law = await createAgent(s.project, {
    name: "Governing law",
    extraction_instructions: "Which jurisdiction's laws govern the agreement",
    dimensions: [{ dimension_id: s.documentDimension }],
  })
  s.draft = await createAgent(s.project, { name: "Draft", agent_type: "derived" })

  const eu = await instance(s.region, "Region", "EU")
  const us = await instance(s.region, "Region", "US")
  const invoiceInstance = await instance(s.documentDimension, "Document", "invoice.pdf", s.invoice)
  const contractInstance = await instance(s.documentDimension, "Document", "contract.pdf", s.contract)
  s.av = {
    eu: await atomicValue(s.total.id, [eu]),
    us: await atomicValue(s.total.id, [us]),
    lawInvoice: await atomicValue(s.law.id, [invoiceInstance]),
    lawContract: await atomicValue(s.law.id, [contractInstance]),
    draft: await atomicValue(s.draft.id, []),
    stale: await atomicValue(s.law.id, [], "[]"),
  }
  s.ex = {} as typeof s.ex
  s.ex.invoiceTrue = await extraction(s.total, s.av.eu, {
    document_id: s.invoice,
    page_number: 1,
    value: "1,234.50",
    relevant_passage: "Total amount due: EUR 1,234.50",
    reasoning: "labelled total",
    consistent: true,
    justification_for_consistency: "agrees",
  })
  s.rr = {
    eu: await result(s.total, s.av.eu, {
      result_name: "EU",
      value: 1234.5,
      resolution_status: "Resolved",
      justification: "All documents agree",
      references: JSON.stringify({ [s.ex.invoiceTrue]: ["invoice.pdf", 1] }),
      sources: JSON.stringify([
        { document_name: "invoice.pdf", page_number: 1, document_id: s.invoice, atomic_value_ids: [s.av.eu] },
      ]),
    }),
    us: await result(s.total, s.av.us, { result_name: "US", value: null, resolution_status: "No result" }),
    lawInvoice: await result(s.law, s.av.lawInvoice, {
      result_name: "invoice.pdf",
      value: "New York",
      resolution_status: "Requires attention",
      justification: "The web disagrees",
      source_type: "document_and_web",
      is_web_supplement: true,
      web_supplement: JSON.stringify({
        text: "New York law applies",
        sources: [{ url: "https://example.com/law", title: "Law" }],
      }),
    }),
    lawContract: await result(s.law, s.av.lawContract, {
      result_name: "contract.pdf",
      value: "New York",
      resolution_status: "Resolved",
    }),
    draft: await result({ id: s.draft.id, version: 1 }, s.av.draft, {
      result_name: "Draft",
      value: "x",
      resolution_status: "Resolved",
    }),
    stale: await result({ id: s.law.id, version: s.law.version + 7 }, s.av.stale, {
      result_name: "Old configuration",
      value: "Texas",
      resolution_status: "Resolved",
    }),
  }
  s.ex.web = await extraction(s.total, s.av.eu, {
    source_type: "web",
    value: "1234.5",
    relevant_passage: "The invoice total was EUR 1,234.50",
    web_search_query: "invoice 42 total",
    web_search_timestamp: new Date("2026-01-02T03:04:05Z"),
    web_citations: JSON.stringify([
      {
        snippets: [{ text: "total EUR 1,234.50" }],
        source: { url: "https://example.com/i", title: "Invoice" },
      },
    ]),
  })
  s.ex.contractTrue = await extraction(s.total, s.av.eu, {
    document_id: s.contract,
    page_number: 2,
    value: "1234.5",
    relevant_passage: "the amount paid",
    consistent: true,
  })
  s.ex.contractFalse = await extraction(s.total, s.av.eu, {
    document_id: s.contract,
    page_number: 1,
    value: "99",
    consistent: false,
    justification_for_consistency: "differs",
  })
  s.ex.invoiceNull = await extraction(s.total, s.av.eu, {
    document_id: s.invoice,
    page_number: 1,
    value: "1234.5",
  })
  s.ex.old = await extraction({ id: s.total.id, version: s.total.version - 1 }, s.av.eu, {
    document_id: s.invoice,
    page_number: 1,
    value: "5",
  })
  s.ex.law = await extraction(s.law, s.av.lawContract, {
    document_id: s.contract,
    page_number: 1,
    value: "New York",
    relevant_passage: "governed by the laws of the State of New York",
  })
}, 120_000)

afterAll(async () => {
  await db?.destroy()
})

const results = (query = "", client: Client = a) => client.get(`/projects/${s.project}/results/${query}`)
const names = (body: any) => body.results.map((r: any) => `${r.agent_name}/${r.result_name}`)

describe("GET results/", () => {
  it("lists the current results of non-draft agents by agent then result name, in the envelope", async () => {
    const r = await results()
    expect(r.status).toBe(200)
    expect(r.body).toMatchObject({ count: 4, next: null, previous: null })
    expect(names(r.body)).toEqual([
      "Total amount/EU",
      "Total amount/US",
      "Governing law/contract.pdf",
      "Governing law/invoice.pdf",
    ])
  })

  it("gives each row its atomic value id, the nested resolution result and the dimension instances", async () => {
    const status = (await a.get(`/projects/${s.project}/agents/${s.total.id}/`)).body.extraction_status
    const rows = (await results()).body.results
    expect(rows[0]).toEqual({
      id: s.av.eu,
      atomic_value_id: s.av.eu,
      agent_id: s.total.id,
      agent_name: "Total amount",
      result_name: "EU",
      value_type: "number",
      extraction_status: status,
      resolution_result: {
        id: s.rr.eu,
        value: 1234.5,
        resolution_status: "Resolved",
        references: { [s.ex.invoiceTrue]: ["invoice.pdf", 1] },
        justification_for_resolution_status: "All documents agree",
        source_type: "document",
        updated_by_email: null,
        confidence: null,
      },
      dimension_instances: [
        { id: uuid, dimension_id: s.region, dimension_value: "EU", name: "Region", document_id: null },
      ],
    })
    expect(rows[1].resolution_result).toMatchObject({
      value: null,
      resolution_status: "No result",
      references: {},
    })
    // A renamed dimension is named as it is now, in the list, the detail and the grid.
    expect(
      (await a.patch(`/projects/${s.project}/dimensions/${s.region}/`, { name: "Sales region" })).status,
    ).toBe(200)
    try {
      expect((await results()).body.results[0].dimension_instances[0].name).toBe("Sales region")
      expect(
        (await a.get(`/projects/${s.project}/results/${s.rr.eu}/`)).body.dimension_instances[0].name,
      ).toBe("Sales region")
      const grid = (await a.get(`/projects/${s.project}/results/grid/`)).body
      expect(grid.rows.find((r: any) => r.name === "EU").dimension_values).toEqual({ "Sales region": "EU" })
    } finally {
      await a.patch(`/projects/${s.project}/dimensions/${s.region}/`, { name: "Region" })
    }
    expect(rows[3].resolution_result).toMatchObject({ value: "New York", source_type: "document_and_web" })
    expect(rows[3].dimension_instances).toEqual([
      {
        id: uuid,
        dimension_id: s.documentDimension,
        dimension_value: "invoice.pdf",
        name: "Document",
        document_id: s.invoice,
      },
    ])
  })

  it("filters by agent, resolution status and dimension value", async () => {
    expect(names((await results(`?agent_id=${s.law.id}`)).body)).toEqual([
      "Governing law/contract.pdf",
      "Governing law/invoice.pdf",
    ])
    expect(names((await results("?resolution_status=Resolved")).body)).toEqual([
      "Total amount/EU",
      "Governing law/contract.pdf",
    ])
    expect(names((await results("?resolution_status=Requires%20attention")).body)).toEqual([
      "Governing law/invoice.pdf",
    ])
    expect(names((await results("?dimension_value=EU")).body)).toEqual(["Total amount/EU"])
    expect(names((await results("?dimension_value=invoice.pdf")).body)).toEqual(["Governing law/invoice.pdf"])
    const none = await results(`?agent_id=${randomUUID()}`)
    expect(none.body).toEqual({ count: 0, next: null, previous: null, results: [] })
  })

  it("paginates with limit and offset or a cursor; next and previous are relative links keeping the filters", async () => {
    const first = await results("?limit=1")
    expect(first.body).toMatchObject({ count: 4, previous: null })
    expect(first.body.next).toMatch(/^\?limit=1&cursor=[A-Za-z0-9_-]+$/)
    expect(names(first.body)).toEqual(["Total amount/EU"])
    // Following `next` walks the whole list once, in order, and ends with null.
    const walked: Array<string> = [...names(first.body)]
    let page = first.body
    while (page.next !== null) {
      page = (await results(page.next)).body
      expect(page.count).toBe(4)
      walked.push(...names(page))
    }
    expect(walked).toEqual([
      "Total amount/EU",
      "Total amount/US",
      "Governing law/contract.pdf",
      "Governing law/invoice.pdf",
    ])
    const third = await results("?limit=1&offset=2")
    expect(names(third.body)).toEqual(["Governing law/contract.pdf"])
    expect(names((await results(third.body.next)).body)).toEqual(["Governing law/invoice.pdf"])
    // `previous` ends before the page's first row (a cursor), or is the first page.
    expect(third.body.previous).toMatch(/^\?limit=1&cursor=/)
    const second = await results(third.body.previous)
    expect(names(second.body)).toEqual(["Total amount/US"])
    expect(second.body.previous).toBe("?limit=1&offset=0")
    expect(names((await results(second.body.next)).body)).toEqual(["Governing law/contract.pdf"])
    const last = await results(third.body.next)
    expect(last.body.next).toBeNull()

    const filtered = await results(`?agent_id=${s.law.id}&resolution_status=Requires%20attention&limit=1`)
    expect(filtered.body.next).toBeNull()
    const byLaw = await results(`?agent_id=${s.law.id}&limit=1`)
    expect(byLaw.body.next).toMatch(new RegExp(`^\\?agent_id=${s.law.id}&limit=1&cursor=`))
    const followed = await results(byLaw.body.next)
    expect(names(followed.body)).toEqual(["Governing law/invoice.pdf"])
    expect(followed.body.previous).toBe(`?agent_id=${s.law.id}&limit=1&offset=0`)
    const status = await results("?resolution_status=Requires%20attention&limit=1&offset=1")
    expect(status.body.previous).toBe("?resolution_status=Requires%20attention&limit=1&offset=0")
    expect((await results(status.body.previous)).body.count).toBe(1)
    const past = await results("?offset=10")
    expect(past.body).toMatchObject({ count: 4, next: null, results: [] })
    // A cursor is this list's own, and names the start alone.
    expectProblem(await results(`${first.body.next}&offset=1`), 400)
    expectProblem(await results("?cursor=bm90LWEtY3Vyc29y"), 400)
    expectProblem(await results("?cursor=%3Cnot%3E"), 400)
  })

  it("answers 400 problems for invalid parameters", async () => {
    for (const query of [
      "?limit=0",
      "?limit=501",
      "?limit=abc",
      "?limit=1.5",
      "?offset=-1",
      "?resolution_status=Done",
      "?agent_id=nope",
    ])
      expectProblem(await results(query), 400)
    expect((await results("?limit=500")).status).toBe(200)
  })
})

describe("GET results/{resolution_result_id}/", () => {
  it("returns every member of the detail record", async () => {
    const r = await a.get(`/projects/${s.project}/results/${s.rr.lawInvoice}/`)
    expect(r.status).toBe(200)
    const agent = (await a.get(`/projects/${s.project}/agents/${s.law.id}/`)).body
    expect(r.body).toEqual({
      id: s.rr.lawInvoice,
      atomic_value_id: s.av.lawInvoice,
      result_name: "invoice.pdf",
      agent_id: s.law.id,
      agent_name: "Governing law",
      value_type: "string",
      unit: "",
      extraction_status: agent.extraction_status,
      requires_attention: agent.requires_attention,
      value: "New York",
      resolution_status: "Requires attention",
      justification_for_resolution_status: "The web disagrees",
      references: {},
      source_type: "document_and_web",
      is_web_supplement: true,
      web_supplement: {
        text: "New York law applies",
        sources: [{ url: "https://example.com/law", title: "Law" }],
      },
      is_overridden: false,
      updated_by_email: null,
      created_at: timestamp,
      updated_at: timestamp,
      dimension_instances: [
        {
          id: uuid,
          dimension_id: s.documentDimension,
          dimension_value: "invoice.pdf",
          name: "Document",
          document_id: s.invoice,
        },
      ],
      sources: [],
      latest_review_status: null,
      latest_review_comment: "",
      latest_review_at: null,
      latest_review_by: null,
      confidence: null,
    })
    const eu = (await a.get(`/projects/${s.project}/results/${s.rr.eu}/`)).body
    expect(eu).toMatchObject({
      value: 1234.5,
      unit: "EUR",
      sources: [
        { document_name: "invoice.pdf", page_number: 1, document_id: s.invoice, atomic_value_ids: [s.av.eu] },
      ],
    })
  })

  it("answers 404 for unknown, draft-agent and earlier-configuration results, and 400 for a malformed id", async () => {
    for (const id of [randomUUID(), s.rr.draft, s.rr.stale])
      expectProblem(await a.get(`/projects/${s.project}/results/${id}/`), 404)
    expectProblem(await a.get(`/projects/${s.otherProject}/results/${s.rr.eu}/`), 404)
    expectProblem(await a.get(`/projects/${randomUUID()}/results/${s.rr.eu}/`), 404)
    expectProblem(await a.get(`/projects/${s.project}/results/not-a-uuid/`), 400)
  })
})

describe("GET results/{resolution_result_id}/extractions/", () => {
  const extractions = (query = "") => a.get(`/projects/${s.project}/results/${s.rr.eu}/extractions/${query}`)

  it("orders web first, then consistent true, false and unevaluated, then by document name and page", async () => {
    const r = await extractions()
    expect(r.status).toBe(200)
    expect(r.body.total_count).toBe(5)
    expect(r.body.data.map((e: any) => e.id)).toEqual([
      s.ex.web,
      s.ex.contractTrue,
      s.ex.invoiceTrue,
      s.ex.contractFalse,
      s.ex.invoiceNull,
    ])
    expect(r.body.data[0]).toEqual({
      id: s.ex.web,
      value: "1234.5",
      relevant_passage: "The invoice total was EUR 1,234.50",
      reasoning: "",
      consistent: null,
      justification_for_consistency: null,
      source_type: "web",
      document_id: null,
      document_name: null,
      page_number: null,
      extracted_at: timestamp,
      web_search_query: "invoice 42 total",
      web_search_timestamp: "2026-01-02T03:04:05.000Z",
      web_citations: [
        {
          snippets: [{ text: "total EUR 1,234.50" }],
          source: { url: "https://example.com/i", title: "Invoice" },
        },
      ],
      derived_sources: [],
      grounded: true,
      confidence: null,
    })
    expect(r.body.data[2]).toMatchObject({
      value: "1234.5",
      document_id: s.invoice,
      document_name: "invoice.pdf",
      page_number: 1,
      consistent: true,
      justification_for_consistency: "agrees",
      reasoning: "labelled total",
      web_citations: [],
    })
  })

  it("pages with limit and offset (default 10) and counts all", async () => {
    const page = await extractions("?limit=2&offset=1")
    expect(page.body.total_count).toBe(5)
    expect(page.body.data.map((e: any) => e.id)).toEqual([s.ex.contractTrue, s.ex.invoiceTrue])
    expect((await extractions("?offset=5")).body).toEqual({ data: [], total_count: 5 })
    expectProblem(await extractions("?limit=0"), 400)
    expectProblem(await extractions("?offset=x"), 400)
    expectProblem(await a.get(`/projects/${s.project}/results/${randomUUID()}/extractions/`), 404)
  })
})

describe("PATCH results/{resolution_result_id}/ (override)", () => {
  it("sets the value by hand, records who did it, and returns the detail", async () => {
    const r = await a.patch(`/projects/${s.project}/results/${s.rr.us}/`, {
      value: "2,000.75",
      justification_for_resolution_status: "Read from the paper copy",
      updated_by_email: "ann@example.com",
    })
    expect(r.status, JSON.stringify(r.body)).toBe(200)
    expect(r.body).toMatchObject({
      id: s.rr.us,
      value: 2000.75,
      resolution_status: "Resolved",
      justification_for_resolution_status: "Read from the paper copy",
      is_overridden: true,
      updated_by_email: "ann@example.com",
    })
    const row = await db
      .selectFrom("resolution_results")
      .select(["value", "is_overridden", "updated_by_email"])
      .where("id", "=", s.rr.us)
      .executeTakeFirstOrThrow()
    expect(row).toEqual({ value: 2000.75, is_overridden: true, updated_by_email: "ann@example.com" })
    const listed = (await results("?dimension_value=US")).body.results[0].resolution_result
    expect(listed).toMatchObject({ value: 2000.75, updated_by_email: "ann@example.com" })
  })

  it("accepts url-encoded and multipart bodies, numbers for string agents, null and a chosen status", async () => {
    const form = await a.send(
      "PATCH",
      `/projects/${s.project}/results/${s.rr.lawContract}/`,
      new URLSearchParams({ value: "Delaware", resolution_status: "Requires attention" }),
      "application/x-www-form-urlencoded",
    )
    expect(form.status, JSON.stringify(form.body)).toBe(200)
    expect(form.body).toMatchObject({
      value: "Delaware",
      resolution_status: "Requires attention",
      updated_by_email: null,
    })
    const multipart = new FormData()
    multipart.set("value", "12")
    const m = await a.send("PATCH", `/projects/${s.project}/results/${s.rr.lawContract}/`, multipart)
    expect(m.status, JSON.stringify(m.body)).toBe(200)
    expect(m.body.value).toBe("12")
    const n = await a.patch(`/projects/${s.project}/results/${s.rr.lawContract}/`, {
      value: null,
      resolution_status: "No result",
    })
    expect(n.body).toMatchObject({ value: null, resolution_status: "No result", is_overridden: true })
  })

  it("answers 400 for a non-number on a number agent, a missing value, a bad e-mail or status", async () => {
    const path = `/projects/${s.project}/results/${s.rr.us}/`
    expectProblem(await a.patch(path, { value: "a lot" }), 400)
    expectProblem(await a.patch(path, {}), 400)
    expectProblem(await a.patch(path, { value: 1, updated_by_email: "not-an-email" }), 400)
    expectProblem(await a.patch(path, { value: 1, resolution_status: "Done" }), 400)
    const unchanged = (await a.get(path)).body
    expect(unchanged.value).toBe(2000.75)
    expectProblem(await a.patch(`/projects/${s.project}/results/${randomUUID()}/`, { value: 1 }), 404)
  })
})

describe("POST results/{resolution_result_id}/review/", () => {
  it("records the latest review", async () => {
    const path = `/projects/${s.project}/results/${s.rr.eu}/review/`
    const r = await a.post(path, { status: "positive", comment: "Checked", reviewed_by: "bob@example.com" })
    expect(r.status, JSON.stringify(r.body)).toBe(200)
    expect(r.body).toMatchObject({
      id: s.rr.eu,
      latest_review_status: "positive",
      latest_review_comment: "Checked",
      latest_review_at: timestamp,
      latest_review_by: "bob@example.com",
    })
    const again = await a.send(
      "POST",
      path,
      new URLSearchParams({ status: "negative" }),
      "application/x-www-form-urlencoded",
    )
    expect(again.body).toMatchObject({
      latest_review_status: "negative",
      latest_review_comment: "",
      latest_review_by: null,
    })
    expectProblem(await a.post(path, { status: "great" }), 400)
    expectProblem(await a.post(path, { status: "none", reviewed_by: "bob" }), 400)
    expectProblem(
      await a.post(`/projects/${s.project}/results/${randomUUID()}/review/`, { status: "none" }),
      404,
    )
  })
})

describe("GET agents/{agent_id}/relevant-pages/", () => {
  it("ranks the page holding the agent's key terms first, with a snippet", async () => {
    const r = await a.get(`/projects/${s.project}/agents/${s.total.id}/relevant-pages/`)
    expect(r.status, JSON.stringify(r.body)).toBe(200)
    expect(r.body.agent_id).toBe(s.total.id)
    expect(r.body.pages[0]).toEqual({
      document_id: s.invoice,
      document_name: "invoice.pdf",
      page_number: 1,
      score: expect.any(Number),
      snippet: expect.stringContaining("Total amount due"),
    })
    expect(r.body.pages.map((p: any) => [p.document_name, p.page_number])).toContainEqual(["contract.pdf", 2])
    const law = await a.get(`/projects/${s.project}/agents/${s.law.id}/relevant-pages/`)
    expect(law.body.pages[0]).toMatchObject({ document_id: s.contract, page_number: 1 })
    const one = await a.get(
      `/projects/${s.project}/agents/${s.total.id}/relevant-pages/?document_id=${s.contract}&limit=1`,
    )
    expect(one.body.pages).toEqual([expect.objectContaining({ document_id: s.contract, page_number: 2 })])
  })

  it("leaves the other agent routes alone and answers 404/400 problems", async () => {
    expect((await a.get(`/projects/${s.project}/agents/${s.total.id}/`)).body.name).toBe("Total amount")
    expectProblem(await a.get(`/projects/${s.project}/agents/${randomUUID()}/relevant-pages/`), 404)
    expectProblem(await a.get(`/projects/${s.otherProject}/agents/${s.total.id}/relevant-pages/`), 404)
    expectProblem(
      await a.get(`/projects/${s.project}/agents/${s.total.id}/relevant-pages/?document_id=${randomUUID()}`),
      404,
    )
    expectProblem(await a.get(`/projects/${s.project}/agents/${s.total.id}/relevant-pages/?limit=0`), 400)
  })
})

describe("GET extractions/{extraction_id}/bounding-boxes/", () => {
  const boxes = (id: string, client: Client = a) =>
    client.get(`/projects/${s.project}/extractions/${id}/bounding-boxes/`)

  it("covers the passage's layout items, one box per line", async () => {
    const r = await boxes(s.ex.law)
    expect(r.status, JSON.stringify(r.body)).toBe(200)
    expect(r.body).toEqual({
      extraction_id: s.ex.law,
      document_id: s.contract,
      page_number: 1,
      page_width: 612,
      page_height: 792,
      unit: "pt",
      boxes: [
        { x: 72, y: 100, width: 274, height: 13, text: "This agreement is governed by the laws of the" },
        { x: 72, y: 116, width: 110, height: 12, text: "State of New York." },
      ],
    })
  })

  it("finds a passage in a parsed PDF's layout", async () => {
    const r = await boxes(s.ex.invoiceTrue)
    expect(r.body).toMatchObject({ document_id: s.invoice, page_number: 1, unit: "pt" })
    expect(r.body.boxes.length).toBeGreaterThan(0)
    expect(r.body.boxes.map((x: any) => x.text).join(" ")).toContain("Total amount due")
    for (const box of r.body.boxes) {
      expect(box.x).toBeGreaterThanOrEqual(0)
      expect(box.y).toBeGreaterThanOrEqual(0)
      expect(box.x + box.width).toBeLessThanOrEqual(r.body.page_width)
      expect(box.y + box.height).toBeLessThanOrEqual(r.body.page_height)
    }
  })

  it("is empty for web extractions and passages not on the page", async () => {
    expect((await boxes(s.ex.web)).body).toEqual({
      extraction_id: s.ex.web,
      document_id: null,
      page_number: null,
      page_width: null,
      page_height: null,
      unit: null,
      boxes: [],
    })
    const missing = await boxes(s.ex.contractFalse)
    expect(missing.body).toMatchObject({ page_number: 1, page_width: 612, boxes: [] })
  })

  it("answers 404 for unknown extractions and other projects", async () => {
    expectProblem(await boxes(randomUUID()), 404)
    expectProblem(await a.get(`/projects/${s.otherProject}/extractions/${s.ex.law}/bounding-boxes/`), 404)
  })
})

describe("tenant isolation", () => {
  it("answers 404 to another organisation for every results endpoint", async () => {
    const p = `/projects/${s.project}`
    expectProblem(await b.get(`${p}/results/`), 404)
    expectProblem(await b.get(`${p}/results/${s.rr.eu}/`), 404)
    expectProblem(await b.get(`${p}/results/${s.rr.eu}/extractions/`), 404)
    expectProblem(await b.patch(`${p}/results/${s.rr.eu}/`, { value: 1 }), 404)
    expectProblem(await b.post(`${p}/results/${s.rr.eu}/review/`, { status: "negative" }), 404)
    expectProblem(await b.get(`${p}/agents/${s.total.id}/relevant-pages/`), 404)
    expectProblem(await b.get(`${p}/extractions/${s.ex.law}/bounding-boxes/`), 404)
    const own = await createProject(b)
    expectProblem(await b.get(`/projects/${own}/results/${s.rr.eu}/`), 404)
    expect((await b.get(`/projects/${own}/results/`)).body).toEqual({
      count: 0,
      next: null,
      previous: null,
      results: [],
    })
    const unchanged = await a.get(`${p}/results/${s.rr.eu}/`)
    expect(unchanged.body.latest_review_status).toBe("negative")
  })
})
