import { randomUUID } from "node:crypto"
import { Db, makeKysely } from "@dxs/db"
import { Effect, Layer } from "effect"
import { parse, validate } from "graphql"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  type Client,
  createProject,
  onePagePdf,
  startTestApi,
  type TestApi,
} from "../../rest-api/test/harness.ts"
import { depthLimit, type GraphqlServer, schemaSdl, startGraphqlServer } from "../src/index.ts"
import { schema } from "../src/Schema.ts"

let api: TestApi
let gql: GraphqlServer
let keyA: string
let keyB: string
let a: Client
/** SQL statements the GraphQL server has sent (BEGIN/COMMIT aside). */
let statements = 0

const graphql = async (key: string | undefined, query: string, variables: Record<string, unknown> = {}) => {
  const res = await fetch(gql.url, {
    method: "POST",
    headers: { "content-type": "application/json", ...(key === undefined ? {} : { "x-api-key": key }) },
    body: JSON.stringify({ query, variables }),
  })
  return (await res.json()) as { data?: any; errors?: Array<{ message: string; extensions?: any }> }
}

const codesOf = (r: { errors?: Array<{ extensions?: any }> }) =>
  (r.errors ?? []).map((e) => e.extensions?.code)

const PROJECT_FIELDS = `id name description created_at last_visited_at reference_date auto_archive_after_days
  document_count agent_count is_pinned folder_id project_modules target_output_schema output_mapping_status`
const DOCUMENT_FIELDS = `id project_id file_url uploaded_at type page_count version summary metadata status
  uses_agentic_extraction last_parsed_at archive_requested_at tags { key value } file_name failure_reason
  parent_document_id`
const DIMENSION_FIELDS = `id project_id name description example_values value_type source auto_attach_to_new_agents
  created_at`
const STAGE = "total completed percentage"
const AGENT_FIELDS = `id project_id template_id created_at extraction_status requires_attention improvement_tip_summary
  name extraction_instructions value_type unit examples inconsistency_instructions resolution_instructions
  enable_complex_calculations_in_resolution enable_web_search value_if_not_found inconsistency_summary agent_type
  derived_prompt is_evaluation derived_agent_references { agent_id agent_name }
  dimensions { dimension_id dimension_mapping_id name description values value_count order are_values_dynamic source }`
const PROGRESS = `progress { parsing { ${STAGE} } extraction { ${STAGE} } web_search { ${STAGE} }
  resolution { ${STAGE} } is_running is_pending }`
const STATUS = `status { pipeline_running schema_status parsing_state document_count
  documents_by_status { Pending Processed Failed } }`
const RESULT_ROW = `id atomic_value_id agent_id agent_name result_name value_type extraction_status
  resolution_result { id value resolution_status references justification_for_resolution_status source_type
  updated_by_email } dimension_instances { id dimension_id dimension_value name document_id }`

/** A signed file link differs only in its expiry second between two reads. */
const withoutSignature = (d: { file_url: string }) => ({ ...d, file_url: d.file_url.replace(/\?.*$/, "") })

let project: string
let region: { id: string }

beforeAll(async () => {
  api = await startTestApi()
  gql = await startGraphqlServer({
    port: 0,
    host: "127.0.0.1",
    dbUrl: api.dbUrl,
    blobDir: api.blobDir,
    publicUrl: api.origin,
    db: Layer.scoped(
      Db,
      Effect.acquireRelease(
        Effect.sync(() => ({
          kysely: makeKysely(api.dbUrl, 5).withPlugin({
            transformQuery: (args) => {
              statements++
              return args.node
            },
            transformResult: async (args) => args.result,
          }),
          url: api.dbUrl,
        })),
        ({ kysely }) => Effect.promise(() => kysely.destroy()),
      ),
    ),
  })
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
  const form = new FormData()
  form.set("file", new Blob([onePagePdf("Invoice total 100 EUR") as Uint8Array<ArrayBuffer>]), "invoice.pdf")
  const up = await a.send("POST", `/projects/${project}/documents/`, form)
  expect(up.status).toBe(201)
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

const uploadPdf = async (projectId: string, name: string) => {
  const form = new FormData()
  form.set("file", new Blob([onePagePdf(name) as Uint8Array<ArrayBuffer>]), `${name}.pdf`)
  const r = await a.send("POST", `/projects/${projectId}/documents/`, form)
  expect(r.status).toBe(201)
}

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
  for (let i = 0; i < documents; i++) await uploadPdf(id, `doc-${i}`)
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

const countStatements = async (query: string, variables: Record<string, unknown> = {}) => {
  const before = statements
  const r = await graphql(keyA, query, variables)
  expect(r.errors).toBeUndefined()
  return { count: statements - before, data: r.data }
}

describe("batching", () => {
  it("reads a project of 50 agents × 20 documents with as many SQL statements as one of 1 × 1", async () => {
    const small = await seedProject(1, 1)
    const large = await seedProject(50, 20)
    const one = await countStatements(SCREEN, { id: small })
    const many = await countStatements(SCREEN, { id: large })
    expect(many.data.project.agents).toHaveLength(50)
    expect(many.data.project.documents).toHaveLength(20)
    expect(many.count).toBe(one.count)
    // A constant: each service call checks the project once and reads its lists in bulk.
    expect(many.count).toBeLessThan(60)
  })

  it("loads each project's lists once however often a query names them", async () => {
    const once = await countStatements(`query ($id: ID!) { project(id: $id) { agents { id } } }`, {
      id: project,
    })
    const twice = await countStatements(
      `query ($id: ID!) { project(id: $id) { agents { id } again: agents { name } } }`,
      { id: project },
    )
    expect(twice.count).toBe(once.count)
  })
})

/** Seeds two results (EU resolved with one extraction, US without a result) of the project's "Total amount". */
const seedResults = async () => {
  const db = makeKysely(api.dbUrl, 2)
  try {
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
    const ids: Array<string> = []
    for (const [value, status, amount] of [
      ["EU", "Resolved", 1234.5],
      ["US", "No result", null],
    ] as const) {
      const inst = await db
        .insertInto("dimension_instances")
        .values({ dimension_id: region.id, value, document_id: null })
        .returning("id")
        .executeTakeFirstOrThrow()
      const instances = [
        { id: inst.id, dimension_id: region.id, name: "Region", dimension_value: value, document_id: null },
      ]
      const av = await db
        .insertInto("atomic_values")
        .values({
          project_id: project,
          agent_id: agent.id,
          dimension_key: JSON.stringify([inst.id]),
          dimension_values: JSON.stringify(instances),
        })
        .returning("id")
        .executeTakeFirstOrThrow()
      const extraction =
        amount === null
          ? undefined
          : await db
              .insertInto("extractions")
              .values({
                project_id: project,
                agent_id: agent.id,
                agent_config_version: agent.config_version,
                atomic_value_id: av.id,
                document_id: document.id,
                value: "1,234.50",
                page_number: 1,
                relevant_passage: "Invoice total 100 EUR",
                reasoning: "labelled total",
                consistent: true,
                justification_for_consistency: "agrees",
                source_type: "document",
                web_search_query: null,
                web_citations: "[]",
                derived_sources: "[]",
              } as never)
              .returning("id")
              .executeTakeFirstOrThrow()
      const rr = await db
        .insertInto("resolution_results")
        .values({
          project_id: project,
          agent_id: agent.id,
          agent_config_version: agent.config_version,
          atomic_value_id: av.id,
          result_name: value,
          value: amount === null ? null : JSON.stringify(amount),
          resolution_status: status,
          justification: null,
          references: JSON.stringify(extraction ? { [extraction.id]: ["invoice.pdf", 1] } : {}),
          sources: "[]",
          web_supplement: null,
        } as never)
        .returning("id")
        .executeTakeFirstOrThrow()
      ids.push(rr.id)
    }
    return { agentId: agent.id, resultIds: ids }
  } finally {
    await db.destroy()
  }
}

const RESULT_DETAIL = `id atomic_value_id result_name agent_id agent_name value_type unit extraction_status
  requires_attention value resolution_status justification_for_resolution_status references source_type
  is_web_supplement web_supplement is_overridden updated_by_email created_at updated_at
  dimension_instances { id dimension_id dimension_value name document_id }
  sources { document_name page_number document_id atomic_value_ids }
  latest_review_status latest_review_comment latest_review_at latest_review_by`
const EXTRACTION = `id value relevant_passage reasoning consistent justification_for_consistency source_type
  document_id document_name page_number extracted_at web_search_query web_search_timestamp web_citations
  derived_sources`

describe("seeded results", () => {
  it("lists, filters and details results as REST does", async () => {
    const { agentId, resultIds } = await seedResults()
    const list = `query ($p: ID!, $agent: ID, $status: String, $limit: Int, $offset: Int) {
      results(projectId: $p, agentId: $agent, resolutionStatus: $status, limit: $limit, offset: $offset) {
        count next previous results { ${RESULT_ROW} }
      }
    }`
    for (const [variables, rest] of [
      [{}, ""],
      [{ agent: agentId }, `?agent_id=${agentId}`],
      [{ status: "Resolved" }, "?resolution_status=Resolved"],
      [{ limit: 1, offset: 1 }, "?limit=1&offset=1"],
    ] as const) {
      const r = await graphql(keyA, list, { p: project, ...variables })
      expect(r.errors).toBeUndefined()
      expect(r.data.results).toEqual((await a.get(`/projects/${project}/results/${rest}`)).body)
    }
    const all = await graphql(keyA, list, { p: project })
    expect(all.data.results.count).toBe(2)

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
    const other = await graphql(keyB, `query ($p: ID!) { results(projectId: $p) { count } }`, { p: project })
    expect(codesOf(other)).toEqual(["NOT_FOUND"])
  })
})

describe("limits and schema", () => {
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
      "results(projectId: ID!, agentId: ID, resolutionStatus: String, limit: Int, offset: Int)",
    )
  })
})
