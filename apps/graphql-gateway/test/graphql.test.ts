import { randomUUID } from "node:crypto"
import type { TestApi } from "@dxs/rest-api/TestApi"
import { makeAjv } from "@dxs/services"
import { onePagePdf } from "@dxs/testing/Documents"
import { type Client, createProject } from "@dxs/testing/RestClient"
import { parse, validate } from "graphql"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { complexityLimit, depthLimit, MAX_COST, schemaSdl } from "../src/index.ts"
import { schema } from "../src/Schema.ts"
import {
  AGENT_FIELDS,
  codesOf,
  countStatements,
  DIMENSION_FIELDS,
  DOCUMENT_FIELDS,
  EXTRACTION,
  type Gateway,
  graphqlOn,
  PROGRESS,
  PROJECT_FIELDS,
  RESULT_DETAIL,
  seedRegionResult,
  startGateway,
  upload,
  uploadPdf,
  withDb,
  withoutSignature,
} from "./support.ts"

let api: TestApi
let gql: Gateway
let keyA: string
let keyB: string
let a: Client

const graphql = graphqlOn(() => gql)

const STATUS = `status { pipeline_running schema_status parsing_state document_count
  documents_by_status { Pending Processed Failed } }`
const RESULT_ROW = `id atomic_value_id agent_id agent_name result_name value_type extraction_status
  resolution_result { id value resolution_status references justification_for_resolution_status source_type
  updated_by_email confidence } dimension_instances { id dimension_id dimension_value name document_id }`

let project: string
let region: { id: string }

beforeAll(async () => {
  gql = await startGateway({ countStatements: true })
  api = gql.api
  keyA = await api.newKey(`gql-a-${randomUUID()}`)
  keyB = await api.newKey(`gql-b-${randomUUID()}`)
  a = api.client(keyA)

  project = await createProject(a, { description: "Invoices of 2025" })
  const dim = await a.post(`/projects/${project}/dimensions/`, {
    name: "Region",
    description: "Sales region",
  })
  expect(dim.status).toBe(201)
  region = dim.body
  for (const body of [
    {
      name: "Total amount",
      value_type: "number",
      dimensions: [{ dimension_id: region.id, values: ["EU", "US"] }],
    },
    { name: "Governing law" },
  ]) {
    const r = await a.post(`/projects/${project}/agents/`, body)
    expect(r.status, JSON.stringify(r.body)).toBe(201)
  }
  await upload(a, project, "invoice.pdf", onePagePdf("Invoice total 100 EUR"))
})

afterAll(async () => {
  await gql?.close()
})

describe("authentication", () => {
  it("rejects a missing key with UNAUTHENTICATED", async () => {
    const r = await graphql(undefined, "{ projects { id } }")
    expect(r.data ?? null).toBeNull()
    expect(codesOf(r)).toEqual(["UNAUTHENTICATED"])
  })

  it("rejects a malformed or unknown key with UNAUTHENTICATED", async () => {
    expect(codesOf(await graphql("nope", "{ projects { id } }"))).toEqual(["UNAUTHENTICATED"])
    expect(codesOf(await graphql(`dxs_live_${"a".repeat(40)}`, "{ projects { id } }"))).toEqual([
      "UNAUTHENTICATED",
    ])
  })
})

describe("projects", () => {
  it("reads a project with its documents, agents, dimensions and status as REST does", async () => {
    const r = await graphql(
      keyA,
      `query ($id: ID!) {
        project(id: $id) {
          ${PROJECT_FIELDS}
          documents { ${DOCUMENT_FIELDS} pages { page_number text } }
          agents { ${AGENT_FIELDS} ${PROGRESS} }
          dimensions { ${DIMENSION_FIELDS} }
          ${STATUS}
        }
      }`,
      { id: project },
    )
    expect(r.errors).toBeUndefined()
    // Listed after the visit above, so both lists carry the same `last_visited_at`.
    const list = await graphql(keyA, `{ projects { ${PROJECT_FIELDS} } }`)
    expect(list.data.projects).toEqual((await a.get("/projects/")).body)

    const { documents, agents, dimensions, status, ...fields } = r.data.project
    const restProject = (await a.get(`/projects/${project}/`)).body
    // Reading a project counts as a visit, so only `last_visited_at` moves between the two reads.
    expect({ ...fields, last_visited_at: null }).toEqual({ ...restProject, last_visited_at: null })

    const restDocuments = (await a.get(`/projects/${project}/documents/`)).body
    expect(documents).toHaveLength(1)
    expect(documents.map(({ pages: _, ...d }: any) => withoutSignature(d))).toEqual(
      restDocuments.map(withoutSignature),
    )
    expect(documents[0].pages).toEqual([])

    const restAgents = (await a.get(`/projects/${project}/agents/`)).body
    expect(agents).toHaveLength(2)
    expect(agents.map(({ progress: _, ...x }: any) => x)).toEqual(restAgents)
    const total = agents.find((x: any) => x.name === "Total amount")
    expect(total.dimensions).toEqual([
      expect.objectContaining({ dimension_id: region.id, values: ["EU", "US"] }),
    ])

    const restStatus = (await a.get(`/projects/${project}/agents/status/`)).body
    for (const agent of agents) expect(agent.progress).toEqual(restStatus.progress[agent.id])

    expect(dimensions).toEqual((await a.get(`/projects/${project}/dimensions/`)).body)
    expect(dimensions.map((d: any) => d.name)).toContain("Region")
    expect(status).toEqual((await a.get(`/projects/${project}/status/`)).body)
  })

  it("answers NOT_FOUND for another organisation's project", async () => {
    const r = await graphql(keyB, `query ($id: ID!) { project(id: $id) { id } }`, { id: project })
    expect(r.data).toEqual({ project: null })
    expect(codesOf(r)).toEqual(["NOT_FOUND"])
    expect((await graphql(keyB, "{ projects { id } }")).data).toEqual({ projects: [] })
  })
})

/** A project with `agents` agents (each on the Region dimension) and `documents` documents. */
const seedProject = async (agents: number, documents: number) => {
  const id = await createProject(a)
  const dim = await a.post(`/projects/${id}/dimensions/`, { name: "Region" })
  for (let i = 0; i < agents; i++) {
    const r = await a.post(`/projects/${id}/agents/`, {
      name: `Agent ${i}`,
      dimensions: [{ dimension_id: dim.body.id, values: ["EU", "US"] }],
    })
    expect(r.status).toBe(201)
  }
  for (let i = 0; i < documents; i++) await uploadPdf(a, id, `doc-${i}`)
  return id
}

const SCREEN = `query ($id: ID!) {
  project(id: $id) {
    id
    documents { id tags { key } pages { page_number } }
    agents { id dimensions { name values } progress { is_running extraction { percentage } } }
    dimensions { id }
    status { parsing_state }
  }
}`

describe("batching", () => {
  it("reads a project of 50 agents × 20 documents with as many SQL statements as one of 1 × 1", async () => {
    const small = await seedProject(1, 1)
    const large = await seedProject(50, 20)
    const one = await countStatements(gql, keyA, SCREEN, { id: small })
    const many = await countStatements(gql, keyA, SCREEN, { id: large })
    expect(many.data.project.agents).toHaveLength(50)
    expect(many.data.project.documents).toHaveLength(20)
    expect(many.count).toBe(one.count)
    // A constant: each service call checks the project once and reads its lists in bulk.
    expect(many.count).toBeLessThan(60)
  })

  it("loads each project's lists once however often a query names them", async () => {
    const once = await countStatements(gql, keyA, `query ($id: ID!) { project(id: $id) { agents { id } } }`, {
      id: project,
    })
    const twice = await countStatements(
      gql,
      keyA,
      `query ($id: ID!) { project(id: $id) { agents { id } again: agents { name } } }`,
      { id: project },
    )
    expect(twice.count).toBe(once.count)
  })
})

/** Seeds two results (EU resolved with one extraction, US without a result) of the project's "Total amount". */
const seedResults = () =>
  withDb(api, async (db) => {
    const agent = await db
      .selectFrom("agents")
      .select(["id", "config_version"])
      .where("project_id", "=", project)
      .where("name", "=", "Total amount")
      .executeTakeFirstOrThrow()
    const document = await db
      .selectFrom("documents")
      .select("id")
      .where("project_id", "=", project)
      .executeTakeFirstOrThrow()
    const seed = { project, agent: { id: agent.id, version: agent.config_version }, region: region.id }
    const resultIds = [
      await seedRegionResult(db, {
        ...seed,
        value: "EU",
        amount: 1234.5,
        status: "Resolved",
        confidence: 0.42,
        extraction: { document: document.id, value: "1,234.50", passage: "Invoice total 100 EUR" },
      }),
      await seedRegionResult(db, { ...seed, value: "US", amount: null, status: "No result" }),
    ]
    return { agentId: agent.id, resultIds }
  })

describe("seeded results", () => {
  it("lists, filters and details results as REST does", async () => {
    const { agentId, resultIds } = await seedResults()
    const list = `query ($p: ID!, $agent: ID, $status: String, $dimension: String, $maxConfidence: Float,
      $limit: Int, $offset: Int) {
      results(projectId: $p, agentId: $agent, resolutionStatus: $status, dimensionValue: $dimension,
        maxConfidence: $maxConfidence, limit: $limit, offset: $offset) {
        count next previous results { ${RESULT_ROW} }
      }
    }`
    for (const [variables, rest] of [
      [{}, ""],
      [{ agent: agentId }, `?agent_id=${agentId}`],
      [{ status: "Resolved" }, "?resolution_status=Resolved"],
      [{ dimension: "US" }, "?dimension_value=US"],
      [{ limit: 1, offset: 1 }, "?limit=1&offset=1"],
      [{ maxConfidence: 0.5 }, "?max_confidence=0.5"],
      [{ maxConfidence: 1 }, "?max_confidence=1"],
    ] as const) {
      const r = await graphql(keyA, list, { p: project, ...variables })
      expect(r.errors).toBeUndefined()
      expect(r.data.results).toEqual((await a.get(`/projects/${project}/results/${rest}`)).body)
    }
    const all = await graphql(keyA, list, { p: project })
    expect(all.data.results.count).toBe(2)
    const doubtful = await graphql(keyA, list, { p: project, maxConfidence: 0.5 })
    expect(doubtful.data.results.results.map((r: any) => r.resolution_result.confidence)).toEqual([0.42])

    for (const id of resultIds) {
      const r = await graphql(
        keyA,
        `query ($p: ID!, $id: ID!) { result(projectId: $p, id: $id) {
          ${RESULT_DETAIL} extractions(limit: 5) { total_count data { ${EXTRACTION} } } } }`,
        { p: project, id },
      )
      expect(r.errors).toBeUndefined()
      const { extractions, ...detail } = r.data.result
      expect(detail).toEqual((await a.get(`/projects/${project}/results/${id}/`)).body)
      expect(extractions).toEqual(
        (await a.get(`/projects/${project}/results/${id}/extractions/?limit=5`)).body,
      )
    }
    const other = await graphql(keyB, `query ($p: ID!, $id: ID!) { result(projectId: $p, id: $id) { id } }`, {
      p: project,
      id: resultIds[0],
    })
    expect(codesOf(other)).toEqual(["NOT_FOUND"])
  })
})

describe("output schema", () => {
  const SCHEMA = {
    type: "object",
    properties: {
      totals: { type: "object", additionalProperties: { type: ["number", "null"] } },
      law: { type: "string" },
    },
    required: ["totals"],
  }
  const MAPPING = {
    kind: "object",
    properties: {
      totals: {
        kind: "object_from_dimension",
        dimension_name: "Region",
        values: { kind: "scalar_from_agent", agent_name: "Total amount" },
      },
    },
  }
  const SET = `mutation ($p: ID!, $schema: JSON!, $auto: Boolean!, $mapping: JSON) {
    setOutputSchema(projectId: $p, schema: $schema, autoMap: $auto, mapping: $mapping) {
      schema auto_map mapping status source error generated_at generated_by schema_in_sync diagnostics { path severity code message }
    }
  }`
  const READ = `query ($p: ID!) { project(id: $p) {
    output_schema { schema auto_map mapping status source error generated_at generated_by schema_in_sync
      diagnostics { path severity code message } }
    plain: schema_results enriched: schema_results(enrich: true) } }`

  it("sets the schema through a mutation and reads the record and schema-shaped results as REST does", async () => {
    const other = await createProject(a)
    const none = await graphql(keyA, `query ($p: ID!) { project(id: $p) { output_schema { status } } }`, {
      p: other,
    })
    expect(none.data.project.output_schema).toBeNull()
    const noSchema = await graphql(keyA, `query ($p: ID!) { project(id: $p) { schema_results } }`, {
      p: other,
    })
    expect(codesOf(noSchema)).toEqual(["BAD_USER_INPUT"])

    const set = await graphql(keyA, SET, { p: project, schema: SCHEMA, auto: false, mapping: MAPPING })
    expect(set.errors).toBeUndefined()
    expect(set.data.setOutputSchema).toEqual((await a.get(`/projects/${project}/schema/`)).body)
    expect(set.data.setOutputSchema).toMatchObject({ status: "success", source: "manual", mapping: MAPPING })
    expect(set.data.setOutputSchema.diagnostics).toEqual([])

    const read = await graphql(keyA, READ, { p: project })
    expect(read.errors).toBeUndefined()
    expect(read.data.project.output_schema).toEqual((await a.get(`/projects/${project}/schema/`)).body)
    expect(read.data.project.plain).toEqual((await a.get(`/projects/${project}/results/schema/`)).body)
    expect(read.data.project.plain).toEqual({ totals: { EU: 1234.5, US: null } })
    expect(read.data.project.enriched).toEqual(
      (await a.get(`/projects/${project}/results/schema/?enrich=true`)).body,
    )
  })

  it("refuses a mapping with errors with BAD_USER_INPUT and the diagnostics; keeps an omitted mapping", async () => {
    const bad = await graphql(keyA, SET, {
      p: project,
      schema: SCHEMA,
      auto: false,
      mapping: { kind: "object", properties: { totals: { kind: "scalar_from_agent", agent_name: "Nope" } } },
    })
    expect(codesOf(bad)).toEqual(["BAD_USER_INPUT"])
    expect(bad.errors![0]!.extensions.diagnostics).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ path: "totals", code: "node_kind_mismatch", severity: "error" }),
        expect.objectContaining({ path: "totals", code: "agent_not_found", severity: "error" }),
      ]),
    )
    const changed = { ...SCHEMA, required: ["totals", "law"] }
    const kept = await graphql(
      keyA,
      `mutation ($p: ID!, $schema: JSON!) { setOutputSchema(projectId: $p, schema: $schema, autoMap: false) {
        mapping schema_in_sync diagnostics { path code } } }`,
      { p: project, schema: changed },
    )
    expect(kept.errors).toBeUndefined()
    expect(kept.data.setOutputSchema).toMatchObject({ mapping: MAPPING, schema_in_sync: false })
    expect(kept.data.setOutputSchema.diagnostics).toEqual([{ path: "law", code: "required_unmapped" }])
    const foreign = await graphql(keyB, SET, { p: project, schema: SCHEMA, auto: true })
    expect(codesOf(foreign)).toEqual(["NOT_FOUND"])
  })
  it("keeps the schema's key order in output_schema, and schema_results follow it and validate", async () => {
    // Keys in an order of their own (PostgreSQL's jsonb would sort them); `law` is required but has no
    // result yet: null, which the schema allows.
    const ordered = {
      type: "object",
      properties: {
        totals: { type: "object", minProperties: 1, additionalProperties: { type: ["number", "null"] } },
        law: { type: ["string", "null"] },
      },
      required: ["totals", "law"],
      additionalProperties: false,
      $comment: "written in this order",
    }
    const mapping = {
      properties: {
        law: { kind: "scalar_from_agent", agent_name: "Governing law" },
        totals: MAPPING.properties.totals,
      },
      kind: "object",
    }
    const set = await graphql(keyA, SET, { p: project, schema: ordered, auto: false, mapping })
    expect(set.errors).toBeUndefined()
    expect(JSON.stringify(set.data.setOutputSchema.schema)).toBe(JSON.stringify(ordered))
    const read = await graphql(keyA, READ, { p: project })
    expect(read.errors).toBeUndefined()
    const { output_schema, plain, enriched } = read.data.project
    expect(JSON.stringify(output_schema.schema)).toBe(JSON.stringify(ordered))
    expect(JSON.stringify(output_schema.mapping)).toBe(JSON.stringify(mapping))
    expect(JSON.stringify(plain)).toBe(JSON.stringify({ totals: { EU: 1234.5, US: null }, law: null }))
    const validate = makeAjv().compile(ordered)
    for (const body of [plain, enriched]) expect(validate(body), JSON.stringify(validate.errors)).toBe(true)
    // The root allows no other keys: no enrich siblings
    expect(enriched).toEqual(plain)
  })
})

describe("results", () => {
  it("returns the same page as REST GET …/results/", async () => {
    const r = await graphql(
      keyA,
      `query ($p: ID!) { results(projectId: $p, limit: 10) { count next previous results { ${RESULT_ROW} } } }`,
      { p: project },
    )
    expect(r.errors).toBeUndefined()
    expect(r.data.results).toEqual((await a.get(`/projects/${project}/results/?limit=10`)).body)
  })

  it("maps an unknown resolution status to BAD_USER_INPUT and another organisation to NOT_FOUND", async () => {
    const bad = await graphql(
      keyA,
      `query ($p: ID!) { results(projectId: $p, resolutionStatus: "maybe") { count } }`,
      {
        p: project,
      },
    )
    expect(codesOf(bad)).toEqual(["BAD_USER_INPUT"])
    const outOfRange = await graphql(
      keyA,
      `query ($p: ID!) { results(projectId: $p, maxConfidence: 1.5) { count } }`,
      { p: project },
    )
    expect(codesOf(outOfRange)).toEqual(["BAD_USER_INPUT"])
    const other = await graphql(keyB, `query ($p: ID!) { results(projectId: $p) { count } }`, { p: project })
    expect(codesOf(other)).toEqual(["NOT_FOUND"])
  })
})

describe("limits and schema", () => {
  it("refuses a query whose estimated cost is over the limit, before it runs", async () => {
    const heavy = `{ projects { documents { pages { page_number text layout width height unit } }
      agents { ${AGENT_FIELDS} } } }`
    const r = await graphql(keyA, heavy)
    expect(r.data).toBeUndefined()
    expect(codesOf(r), JSON.stringify(r.errors)).toEqual(["COMPLEXITY_LIMIT_EXCEEDED"])
    // A screen's query is well under it.
    const screen =
      parse(`query ($p: ID!) { project(id: $p) { ${PROJECT_FIELDS} documents { ${DOCUMENT_FIELDS} }
      agents { ${AGENT_FIELDS} ${PROGRESS} } dimensions { ${DIMENSION_FIELDS} } ${STATUS} } }`)
    expect(validate(schema, screen, [complexityLimit(MAX_COST)])).toEqual([])
    // A page's rows count by the page's limit.
    const page = (limit: number) =>
      parse(`{ results(projectId: "x", limit: ${limit}) { results { ${RESULT_ROW} } } }`)
    expect(validate(schema, page(10), [complexityLimit(3000)])).toEqual([])
    expect(validate(schema, page(500), [complexityLimit(3000)]).map((e) => e.extensions.code)).toEqual([
      "COMPLEXITY_LIMIT_EXCEEDED",
    ])
  })

  it("answers BAD_USER_INPUT for an id that is not a UUID", async () => {
    const r = await graphql(keyA, `{ project(id: "not-a-uuid") { id } }`)
    expect(codesOf(r)).toEqual(["BAD_USER_INPUT"])
  })

  it("rejects a query nested deeper than 10 levels", async () => {
    let nested = "id"
    for (let i = 0; i < 11; i++) nested = `agents { ${nested} }`
    const r = await graphql(keyA, `{ ${nested} }`)
    expect(r.data).toBeUndefined()
    expect(codesOf(r)).toContain("DEPTH_LIMIT_EXCEEDED")
  })

  it("the depth rule counts fields through fragments", () => {
    const query = parse("fragment F on Project { agents { dimensions { name } } } { projects { ...F } }")
    expect(validate(schema, query, [depthLimit(4)])).toEqual([])
    expect(validate(schema, query, [depthLimit(3)]).map((e) => e.extensions.code)).toEqual([
      "DEPTH_LIMIT_EXCEEDED",
    ])
  })

  it("prints the SDL", () => {
    const sdl = schemaSdl()
    expect(sdl).toContain("type Query")
    expect(sdl).toContain(
      "results(projectId: ID!, agentId: ID, resolutionStatus: String, dimensionValue: String, maxConfidence: Float, limit: Int, offset: Int)",
    )
  })
})
