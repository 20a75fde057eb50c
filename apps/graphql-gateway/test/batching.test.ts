import { randomUUID } from "node:crypto"
import type { TestApi } from "@dxs/rest-api/TestApi"
import { type Client, createProject } from "@dxs/testing/RestClient"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type GatewayRuntime, makeContext, makeGatewayRuntime } from "../src/index.ts"
import {
  countStatements,
  type Gateway,
  graphqlOn,
  startGateway,
  uploadPdf,
  withDb,
  withoutSignature,
} from "./support.ts"

let api: TestApi
let gql: Gateway
/** A runtime of the gateway's services, to call the loaders directly. */
let runtime: GatewayRuntime

/** An organisation with one project, one with ten (seeded alike), and one with one project of its own. */
let keyOne: string
let keyTen: string
let keyOther: string
let one: Client
let ten: Client
let oneProjects: ReadonlyArray<string>
let tenProjects: ReadonlyArray<string>
let otherProject: string

const graphql = graphqlOn(() => gql)

/**
 * A project with two tagged documents (Pending: no worker runs), the first with two pages; a custom
 * dimension, the system Document dimension (auto-attached to new agents) and a TAG dimension; an agent on
 * all three, one on the Document dimension only, and a derived agent referring to the first.
 */
const seedProject = async (client: Client, index: number) => {
  const id = await createProject(client, { auto_attach_document_dimension: true })
  const region = await client.post(`/projects/${id}/dimensions/`, { name: "Region", description: "Sales" })
  expect(region.status).toBe(201)
  const first = await uploadPdf(client, id, `first-${index}`, { client: `Acme ${index}`, year: "2025" })
  await uploadPdf(client, id, `second-${index}`, { client: "Globex" })
  const dimensions = (await client.get(`/projects/${id}/dimensions/`)).body as Array<any>
  const tag = dimensions.find((d) => d.source === "TAG" && d.name === "client")
  expect(tag).toBeDefined()
  for (const body of [
    {
      name: "Total amount",
      value_type: "number",
      dimensions: [{ dimension_id: region.body.id, values: ["EU", "US"] }, { dimension_id: tag.id }],
    },
    { name: "Governing law" },
    { name: "Doubled", agent_type: "derived", derived_prompt: '@"Total amount" * 2' },
  ]) {
    const r = await client.post(`/projects/${id}/agents/`, body)
    expect(r.status, JSON.stringify(r.body)).toBe(201)
  }
  await withDb(api, (db) =>
    db
      .insertInto("pages")
      .values(
        [1, 2].map((number) => ({
          document_id: first,
          number,
          text: `Page ${number} of ${index}`,
          layout: JSON.stringify([]),
          width: 612,
          height: 792,
          unit: "pt",
        })),
      )
      .execute(),
  )
  return id
}

const LISTS = `id
  documents { id tags { key } pages { page_number } }
  agents { id dimensions { name } progress { is_pending } }
  dimensions { id }`
const SCREEN = `{ projects { ${LISTS} } }`
const SCREEN_WITH_STATUS = `{ projects { ${LISTS} status { pipeline_running } } }`

beforeAll(async () => {
  gql = await startGateway({ countStatements: true })
  api = gql.api
  runtime = makeGatewayRuntime({ dbUrl: api.dbUrl, blobDir: api.blobDir, publicUrl: api.origin })
  keyOne = await api.newKey(`batch-1-${randomUUID()}`)
  keyTen = await api.newKey(`batch-10-${randomUUID()}`)
  keyOther = await api.newKey(`batch-other-${randomUUID()}`)
  one = api.client(keyOne)
  ten = api.client(keyTen)
  oneProjects = [await seedProject(one, 0)]
  const seeded: Array<string> = []
  for (let i = 0; i < 10; i++) seeded.push(await seedProject(ten, i))
  tenProjects = seeded
  otherProject = await seedProject(api.client(keyOther), 99)
}, 180_000)

afterAll(async () => {
  await gql?.close()
  await runtime?.dispose()
})

describe("batching across projects", () => {
  it("reads the lists of 10 projects with as many SQL statements as those of 1", async () => {
    // The first request of the server creates the file links' signing secret; keep it out of the counts.
    await countStatements(gql, keyOne, SCREEN)
    const single = await countStatements(gql, keyOne, SCREEN)
    const many = await countStatements(gql, keyTen, SCREEN)
    expect(single.data.projects.map((p: any) => p.id)).toEqual(oneProjects)
    expect(many.data.projects).toHaveLength(10)
    for (const p of many.data.projects) {
      expect(p.documents).toHaveLength(2)
      expect(p.agents).toHaveLength(3)
    }
    expect(many.count).toBe(single.count)
  })

  it("reads the projects' statuses in one batch too", async () => {
    const single = await countStatements(gql, keyOne, SCREEN_WITH_STATUS)
    const many = await countStatements(gql, keyTen, SCREEN_WITH_STATUS)
    expect(many.count).toBe(single.count)
    for (const p of many.data.projects)
      expect(p.status.pipeline_running).toBe(
        (await ten.get(`/projects/${p.id}/status/`)).body.pipeline_running,
      )
  })

  it("answers each project's lists as REST does", async () => {
    const r = await graphql(keyTen, SCREEN)
    expect(r.errors).toBeUndefined()
    const byId = new Map<string, any>(r.data.projects.map((p: any) => [p.id, p]))
    expect([...byId.keys()].sort()).toEqual([...tenProjects].sort())
    for (const id of tenProjects) {
      const p = byId.get(id)
      const documents = (await ten.get(`/projects/${id}/documents/`)).body as Array<any>
      const agents = (await ten.get(`/projects/${id}/agents/`)).body as Array<any>
      const dimensions = (await ten.get(`/projects/${id}/dimensions/`)).body as Array<any>
      const status = (await ten.get(`/projects/${id}/agents/status/`)).body
      expect(p.documents.map((d: any) => ({ id: d.id, tags: d.tags }))).toEqual(
        documents.map((d) => ({ id: d.id, tags: d.tags.map((t: any) => ({ key: t.key })) })),
      )
      expect(p.documents.map((d: any) => d.pages.map((x: any) => x.page_number))).toEqual(
        documents.map((d) => (d.file_name.startsWith("first-") ? [1, 2] : [])),
      )
      expect(p.agents).toEqual(
        agents.map((a) => ({
          id: a.id,
          dimensions: a.dimensions.map((d: any) => ({ name: d.name })),
          progress: { is_pending: status.progress[a.id].is_pending },
        })),
      )
      expect(p.dimensions).toEqual(dimensions.map((d) => ({ id: d.id })))
    }
  })

  it("loads every field of several projects' lists as REST does, and another organisation's as NOT_FOUND", async () => {
    const ctx = await makeContext(runtime, {
      apiKey: keyTen,
      sessionToken: undefined,
      csrfToken: undefined,
      method: "POST",
    })
    const keys = [...tenProjects, otherProject]
    const [documents, agents, dimensions, statuses] = await Promise.all([
      ctx.loaders.documents.loadMany(keys),
      ctx.loaders.agents.loadMany(keys),
      ctx.loaders.dimensions.loadMany(keys),
      ctx.loaders.agentsStatus.loadMany(keys),
    ])
    for (const [i, id] of tenProjects.entries()) {
      expect((documents[i] as Array<any>).map(withoutSignature)).toEqual(
        ((await ten.get(`/projects/${id}/documents/`)).body as Array<any>).map(withoutSignature),
      )
      expect(agents[i]).toEqual((await ten.get(`/projects/${id}/agents/`)).body)
      expect(dimensions[i]).toEqual((await ten.get(`/projects/${id}/dimensions/`)).body)
      expect(statuses[i]).toEqual((await ten.get(`/projects/${id}/agents/status/`)).body)
    }
    // The system dimensions' values are the project's own documents and tag values.
    const total = (agents[0] as Array<any>).find((a) => a.name === "Total amount")
    expect(total.dimensions.map((d: any) => [d.name, d.values])).toEqual([
      ["Region", ["EU", "US"]],
      ["client", ["Acme 0", "Globex"]],
      ["Document", ["first-0.pdf", "second-0.pdf"]],
    ])
    for (const results of [documents, agents, dimensions, statuses]) {
      const last = results[tenProjects.length] as any
      expect(last).toBeInstanceOf(Error)
      expect(last.extensions?.code).toBe("NOT_FOUND")
    }

    // Pages: only documents of the organisation's projects.
    const otherDocuments = (await api.client(keyOther).get(`/projects/${otherProject}/documents/`)).body
    const ownDocuments = (documents[0] as Array<any>).map((d) => d.id)
    const pages = await ctx.loaders.pages.loadMany([...ownDocuments, ...otherDocuments.map((d: any) => d.id)])
    expect(pages.map((list: any) => list.map((p: any) => p.page_number))).toEqual([
      ...(documents[0] as Array<any>).map((d) => (d.file_name.startsWith("first-") ? [1, 2] : [])),
      ...otherDocuments.map(() => []),
    ])
    expect((pages.flat() as Array<any>)[0]).toEqual({
      document_id: expect.any(String),
      page_number: 1,
      text: "Page 1 of 0",
      width: 612,
      height: 792,
      unit: "pt",
      layout: [],
      tables: [],
    })
  })
})
