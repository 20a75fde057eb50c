/**
 * The review queue through HTTP (beyond the contract), over a project whose results are written straight
 * into the database: documents with a value requiring attention first, then the least confident first,
 * paged by cursor, the totals following reviews and values set by hand, answers checked against the OpenAPI
 * description, 400 for bad parameters and 404 for another organisation's project.
 */
import { randomUUID } from "node:crypto"
import { makeKysely } from "@dxs/db"
import { type Client, createProject, expectProblem } from "@dxs/testing/RestClient"
import { agentVersion, projectRows } from "@dxs/testing/Seeding"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { compileDescription, type Description, expectDescribed } from "./description.ts"
import { startTestApi, type TestApi } from "./harness.ts"

let api: TestApi
let a: Client
let b: Client
let db: ReturnType<typeof makeKysely>
let description: Description

const s = {} as {
  project: string
  docs: Record<"calm" | "alarm" | "doubt", string>
  rr: Record<string, string>
}

beforeAll(async () => {
  api = await startTestApi()
  a = api.client(await api.newKey("acme"))
  b = api.client(await api.newKey("globex"))
  db = makeKysely(api.dbUrl, 2)
  description = compileDescription((await a.get("/schema/?format=json")).body)

  s.project = await createProject(a, { name: `Review ${randomUUID().slice(0, 6)}` })
  const { contract, instance, atomicValue, result } = projectRows(db, s.project)
  const dimensions = await a.get(`/projects/${s.project}/dimensions/`)
  const documentDimension = dimensions.body.find((d: any) => d.source === "DOCUMENT")
  expect(documentDimension).toBeDefined()
  const agent = async (name: string) => {
    const r = await a.post(`/projects/${s.project}/agents/`, { name, extraction_instructions: name })
    expect(r.status, JSON.stringify(r.body)).toBe(201)
    return agentVersion(db, r.body.id)
  }
  const total = await agent("Total")
  const supplier = await agent("Supplier")
  s.docs = { calm: await contract("calm"), alarm: await contract("alarm"), doubt: await contract("doubt") }
  await db.updateTable("documents").set({ file_name: "alarm.pdf" }).where("id", "=", s.docs.alarm).execute()
  s.rr = {}
  const values: Record<keyof typeof s.docs, ReadonlyArray<[string, number | null]>> = {
    calm: [
      ["Resolved", 0.9],
      ["Resolved", 0.6],
    ],
    alarm: [
      ["Requires attention", 0.95],
      ["Resolved", 0.99],
    ],
    doubt: [
      ["Resolved", 0.2],
      ["Resolved", null],
    ],
  }
  for (const [name, id] of Object.entries(s.docs) as Array<[keyof typeof s.docs, string]>) {
    const doc = await instance(documentDimension.id, "Document", `${name}.pdf`, id)
    for (const [k, ag] of [total, supplier].entries()) {
      const [status, confidence] = values[name][k]!
      s.rr[`${name}${k}`] = await result(ag, await atomicValue(ag.id, [doc]), {
        result_name: `${name}.pdf`,
        value: confidence === null ? null : `v${k}`,
        resolution_status: status,
        confidence,
      })
    }
  }
})

afterAll(async () => {
  await db?.destroy()
})

const queue = async (query = "") => {
  const r = await a.get(`/projects/${s.project}/review/queue/${query}`)
  expect(r.status, JSON.stringify(r.body)).toBe(200)
  expectDescribed(description, r.body, "get", "/api/v1/projects/{project_id}/review/queue/", 200)
  return r.body
}

describe("GET /projects/{id}/review/queue/", () => {
  it("lists the documents requiring attention first, then the least confident, with their counts", async () => {
    const body = await queue()
    expect(body.total_documents).toBe(3)
    expect(body.reviewed_documents).toBe(0)
    expect(body.next).toBeNull()
    expect(body.documents.map((d: any) => d.document_id)).toEqual([s.docs.alarm, s.docs.doubt, s.docs.calm])
    expect(body.documents[0]).toMatchObject({
      file_name: "alarm.pdf",
      values: 2,
      reviewed_values: 0,
      requires_attention: 1,
      reviewed: false,
    })
    expect(body.documents[0].least_confidence).toBeCloseTo(0.95, 5)
    expect(body.documents[1].least_confidence).toBeCloseTo(0.2, 5)
  })

  it("pages by cursor, the next link keeping the limit", async () => {
    const seen: Array<string> = []
    let body = await queue("?limit=1")
    seen.push(...body.documents.map((d: any) => d.document_id))
    while (body.next !== null) {
      expect(body.next).toContain("limit=1")
      body = await queue(body.next)
      seen.push(...body.documents.map((d: any) => d.document_id))
    }
    expect(seen).toEqual([s.docs.alarm, s.docs.doubt, s.docs.calm])
  })

  it("gives a document's neighbours in the queue, after it and before it (nearest first)", async () => {
    const ids = (body: any) => body.documents.map((d: any) => d.document_id)
    expect(ids(await queue(`?after_document=${s.docs.alarm}&limit=1`))).toEqual([s.docs.doubt])
    expect(ids(await queue(`?after_document=${s.docs.alarm}`))).toEqual([s.docs.doubt, s.docs.calm])
    expect(ids(await queue(`?after_document=${s.docs.calm}`))).toEqual([])
    expect(ids(await queue(`?before_document=${s.docs.calm}`))).toEqual([s.docs.doubt, s.docs.alarm])
    expect(ids(await queue(`?before_document=${s.docs.alarm}`))).toEqual([])
    const neighbours = await queue(`?before_document=${s.docs.calm}&limit=1`)
    expect(neighbours.next).toBeNull()
    expect(neighbours.total_documents).toBe(3)
    // A document with no values is before the whole queue.
    const unknown = randomUUID()
    expect(ids(await queue(`?after_document=${unknown}&limit=1`))).toEqual([s.docs.alarm])
    expect(ids(await queue(`?before_document=${unknown}`))).toEqual([])
  })

  it("counts a document reviewed once each of its values has a review or a value set by hand", async () => {
    const base = `/projects/${s.project}/results`
    const reviewed = await a.post(`${base}/${s.rr.calm0}/review/`, { status: "positive", comment: "" })
    expect(reviewed.status, JSON.stringify(reviewed.body)).toBe(200)
    let body = await queue()
    expect(body.reviewed_documents).toBe(0)
    expect(body.documents.find((d: any) => d.document_id === s.docs.calm)).toMatchObject({
      reviewed_values: 1,
      reviewed: false,
    })
    const set = await a.patch(`${base}/${s.rr.calm1}/`, { value: "by hand" })
    expect(set.status, JSON.stringify(set.body)).toBe(200)
    body = await queue()
    expect(body.reviewed_documents).toBe(1)
    expect(body.documents.find((d: any) => d.document_id === s.docs.calm)).toMatchObject({
      reviewed_values: 2,
      reviewed: true,
    })
    // Clearing a review takes the document out of the reviewed ones again.
    const cleared = await a.post(`${base}/${s.rr.calm0}/review/`, { status: "none", comment: "" })
    expect(cleared.status).toBe(200)
    expect((await queue()).reviewed_documents).toBe(0)
  })

  it("the results grid lists the rows of one document with document_id", async () => {
    const r = await a.get(`/projects/${s.project}/results/grid/?document_id=${s.docs.alarm}`)
    expect(r.status, JSON.stringify(r.body)).toBe(200)
    expect(r.body.count).toBe(1)
    expect(r.body.rows.map((row: any) => row.name)).toEqual(["alarm.pdf"])
    expect(Object.keys(r.body.rows[0].cells)).toHaveLength(2)
    expectProblem(await a.get(`/projects/${s.project}/results/grid/?document_id=nope`), 400)
  })

  it("refuses bad parameters (400) and another organisation's project (404)", async () => {
    expectProblem(await a.get(`/projects/${s.project}/review/queue/?limit=0`), 400)
    expectProblem(await a.get(`/projects/${s.project}/review/queue/?limit=1000`), 400)
    expectProblem(await a.get(`/projects/${s.project}/review/queue/?cursor=nonsense`), 400)
    expectProblem(await a.get(`/projects/${s.project}/review/queue/?after_document=nope`), 400)
    const first = await queue("?limit=1")
    expectProblem(
      await a.get(`/projects/${s.project}/review/queue/${first.next}&after_document=${s.docs.alarm}`),
      400,
    )
    expectProblem(await b.get(`/projects/${s.project}/review/queue/`), 404)
    expectProblem(await a.get(`/projects/${randomUUID()}/review/queue/`), 404)
  })
})
