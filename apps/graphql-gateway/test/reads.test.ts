import { randomUUID } from "node:crypto"
import { makeKysely } from "@dxs/db"
import { decryptSecret, newEncryptionKey } from "@dxs/pipeline/webhooks/Encryption"
import type { TestApi } from "@dxs/rest-api/TestApi"
import { type Client, createProject } from "@dxs/testing/RestClient"
import { agentVersion, projectRows } from "@dxs/testing/Seeding"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { codesOf, countStatements, EXTRACTION, type Gateway, graphqlOn, ok, startGateway } from "./support.ts"

// Targets are IP literals (public addresses), so creation needs no DNS; nothing is delivered here (no worker).
const PUBLIC_URL = "https://93.184.216.34/hooks/dxs"
const OTHER_PUBLIC_URL = "https://[2606:4700:4700::1111]:8443/in"
const EVENTS = ["agent.completion.succeeded", "agent.completion.failed"]

let api: TestApi
let gql: Gateway
let keyA: string
let keyB: string
let a: Client
let b: Client
let db: ReturnType<typeof makeKysely>

const graphql = graphqlOn(() => gql)

/** The deployment's key of webhook secrets at rest, given to both processes as the CLI does. */
const webhookKey = newEncryptionKey()

beforeAll(async () => {
  gql = await startGateway({ webhookKey, countStatements: true })
  api = gql.api
  keyA = await api.newKey(`reads-a-${randomUUID()}`)
  keyB = await api.newKey(`reads-b-${randomUUID()}`)
  a = api.client(keyA)
  b = api.client(keyB)
  db = makeKysely(api.dbUrl, 2)
})

afterAll(async () => {
  await db?.destroy()
  await gql?.close()
})

const SUBSCRIPTION = "id name url subscribed_events is_active headers created_at updated_at"
const DELIVERIES = `count results { id event_type status attempt_count last_status_code last_error created_at
  delivered_at next_attempt_at attempts { id number status_code error duration_ms attempted_at } }`

const CREATE = `mutation ($input: WebhookInput!) { createWebhook(input: $input) { ${SUBSCRIPTION} secret } }`
const UPDATE = `mutation ($id: ID!, $input: WebhookPatchInput!) {
  updateWebhook(id: $id, input: $input) { ${SUBSCRIPTION} } }`
const ONE = `query ($id: ID!) { webhook(id: $id) { ${SUBSCRIPTION} } }`

describe("webhook secrets created through GraphQL", () => {
  it("are encrypted with the deployment's key, so workers can sign with them", async () => {
    const created = await createWebhook()
    const row = await db
      .selectFrom("webhook_subscriptions")
      .select("secret")
      .where("id", "=", created.id)
      .executeTakeFirstOrThrow()
    expect(decryptSecret(webhookKey, row.secret)).toBe(created.secret)
  })
})

const createWebhook = async (input: Record<string, unknown> = {}, key = keyA) =>
  ok(await graphql(key, CREATE, { input: { url: PUBLIC_URL, subscribed_events: EVENTS, ...input } }))
    .createWebhook

describe("webhook reads", () => {
  it("lists the event types as REST GET /webhooks/events/ does", async () => {
    const data = ok(await graphql(keyA, "{ webhookEvents { name description payload_schema } }"))
    const rest = await a.get("/webhooks/events/")
    expect(rest.status).toBe(200)
    expect(data.webhookEvents).toEqual(rest.body)
    expect(data.webhookEvents.map((e: any) => e.name)).toEqual(expect.arrayContaining(EVENTS))
  })

  it("creates a subscription: the secret is in the answer once, the record equals REST's afterwards", async () => {
    const created = await createWebhook({
      name: "Orders",
      subscribed_events: ["agent.completion.succeeded"],
      headers: { Authorization: "Bearer s3cr3t", "X-Tenant": "acme" },
    })
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/)
    expect(created.headers).toEqual({ Authorization: "********", "X-Tenant": "********" })
    const { secret, ...record } = created
    const rest = await a.get(`/webhooks/${created.id}/`)
    expect(rest.status).toBe(200)
    expect(rest.body).toEqual(record)
    expect(rest.text).not.toContain(secret)

    const one = ok(await graphql(keyA, ONE, { id: created.id }))
    expect(one.webhook).toEqual(rest.body)
    expect(JSON.stringify(one)).not.toContain(secret)
    const list = ok(await graphql(keyA, `{ webhooks { ${SUBSCRIPTION} } }`))
    expect(list.webhooks).toEqual((await a.get("/webhooks/")).body)
    expect(list.webhooks.map((s: any) => s.id)).toContain(created.id)
  })

  it("answers a subscription created through REST with REST's record", async () => {
    const r = await a.post("/webhooks/", { url: OTHER_PUBLIC_URL, subscribed_events: EVENTS })
    expect(r.status).toBe(201)
    const { secret: _, ...record } = r.body
    expect(ok(await graphql(keyA, ONE, { id: r.body.id })).webhook).toEqual(record)
  })

  it("reads the delivery log as REST GET …/deliveries/ does, with its page arguments", async () => {
    const s = await createWebhook()
    const empty = ok(
      await graphql(keyA, `query ($id: ID!) { webhook(id: $id) { deliveries { ${DELIVERIES} } } }`, {
        id: s.id,
      }),
    )
    expect(empty.webhook.deliveries).toEqual({ count: 0, results: [] })

    const ids: Array<string> = []
    for (let i = 0; i < 3; i++) {
      const t = ok(
        await graphql(keyA, `mutation ($id: ID!) { testWebhook(id: $id) { delivery_id } }`, { id: s.id }),
      )
      ids.push(t.testWebhook.delivery_id)
    }
    const restTest = await a.post(`/webhooks/${s.id}/test/`)
    expect(restTest.status).toBe(202)
    expect(Object.keys(restTest.body)).toEqual(["delivery_id"])
    // One delivery with a failed attempt, so the attempts list is not empty.
    await db
      .insertInto("webhook_attempts")
      .values({
        id: randomUUID(),
        delivery_id: ids[0]!,
        number: 1,
        url: PUBLIC_URL,
        status_code: 503,
        error: "Service Unavailable",
        duration_ms: 42,
        response_body: null,
      })
      .execute()
    await db
      .updateTable("webhook_deliveries")
      .set({ status: "failed", attempt_count: 1, last_status_code: 503, last_error: "Service Unavailable" })
      .where("id", "=", ids[0]!)
      .execute()

    const page = `query ($id: ID!, $limit: Int, $offset: Int) {
      webhook(id: $id) { deliveries(limit: $limit, offset: $offset) { ${DELIVERIES} } } }`
    for (const [variables, query] of [
      [{}, ""],
      [{ limit: 2 }, "?limit=2"],
      [{ limit: 2, offset: 3 }, "?limit=2&offset=3"],
      [{ offset: 1 }, "?offset=1"],
    ] as const) {
      const data = ok(await graphql(keyA, page, { id: s.id, ...variables }))
      const rest = await a.get(`/webhooks/${s.id}/deliveries/${query}`)
      expect(rest.status).toBe(200)
      expect(data.webhook.deliveries).toEqual(rest.body)
    }
    const all = ok(await graphql(keyA, page, { id: s.id })).webhook.deliveries
    expect(all.count).toBe(4)
    const failed = all.results.find((d: any) => d.id === ids[0])
    expect(failed).toMatchObject({ status: "failed", attempt_count: 1, attempts: [{ status_code: 503 }] })

    // Outside REST's bounds: REST answers 400, GraphQL BAD_USER_INPUT.
    for (const [variables, query] of [
      [{ limit: 0 }, "?limit=0"],
      [{ limit: 101 }, "?limit=101"],
      [{ offset: -1 }, "?offset=-1"],
    ] as const) {
      expect((await a.get(`/webhooks/${s.id}/deliveries/${query}`)).status).toBe(400)
      expect(codesOf(await graphql(keyA, page, { id: s.id, ...variables }))).toEqual(["BAD_USER_INPUT"])
    }
  })
})

describe("webhook mutations", () => {
  it("updates members as REST PATCH does; null members are kept, headers replace all", async () => {
    const s = await createWebhook({ name: "Before", headers: { "X-One": "1" } })
    const updated = ok(
      await graphql(keyA, UPDATE, {
        id: s.id,
        input: {
          name: "After",
          url: null,
          subscribed_events: null,
          headers: { "X-Two": "2", "X-Three": "3" },
        },
      }),
    )
    expect(updated.updateWebhook).toMatchObject({
      name: "After",
      url: PUBLIC_URL,
      subscribed_events: EVENTS,
      headers: { "X-Two": "********", "X-Three": "********" },
    })
    expect(updated.updateWebhook).toEqual((await a.get(`/webhooks/${s.id}/`)).body)

    const moved = ok(
      await graphql(keyA, UPDATE, {
        id: s.id,
        input: { url: OTHER_PUBLIC_URL, subscribed_events: ["agent.completion.failed"] },
      }),
    )
    expect(moved.updateWebhook).toMatchObject({
      name: "After",
      url: OTHER_PUBLIC_URL,
      subscribed_events: ["agent.completion.failed"],
    })
    expect(moved.updateWebhook).toEqual((await a.get(`/webhooks/${s.id}/`)).body)
  })

  it("refuses what REST refuses with 400, with the same field errors", async () => {
    const s = await createWebhook()
    for (const body of [
      { url: "https://10.1.2.3/" },
      { url: "http://93.184.216.34/" },
      { subscribed_events: [] },
      { subscribed_events: ["nope"] },
      { headers: { Host: "example.com" } },
    ]) {
      const rest = await a.patch(`/webhooks/${s.id}/`, body)
      expect(rest.status).toBe(400)
      const r = await graphql(keyA, UPDATE, { id: s.id, input: body })
      expect(codesOf(r), JSON.stringify(body)).toEqual(["BAD_USER_INPUT"])
      expect(r.errors![0]!.extensions.errors).toEqual(rest.body.errors)
    }
    const created = await graphql(keyA, CREATE, {
      input: { url: "https://10.1.2.3/", subscribed_events: ["nope"] },
    })
    const restCreated = await a.post("/webhooks/", { url: "https://10.1.2.3/", subscribed_events: ["nope"] })
    expect(restCreated.status).toBe(400)
    expect(codesOf(created)).toEqual(["BAD_USER_INPUT"])
    expect(created.errors![0]!.extensions.errors).toEqual(restCreated.body.errors)

    // headers must be an object of strings (REST's body schema); nothing is stored otherwise.
    for (const headers of [["X-A"], "X-A: 1", { "X-A": 1 }, { "X-A": { nested: "x" } }]) {
      expect((await a.patch(`/webhooks/${s.id}/`, { headers })).status).toBe(400)
      const r = await graphql(keyA, UPDATE, { id: s.id, input: { headers } })
      expect(codesOf(r), JSON.stringify(headers)).toEqual(["BAD_USER_INPUT"])
    }
    expect(ok(await graphql(keyA, ONE, { id: s.id })).webhook).toEqual(
      (await a.get(`/webhooks/${s.id}/`)).body,
    )
    expect((await a.get(`/webhooks/${s.id}/`)).body.headers).toEqual({})
  })

  it("rotates the secret as REST POST …/rotate-secret/ does", async () => {
    const s = await createWebhook()
    const r = ok(
      await graphql(keyA, `mutation ($id: ID!) { rotateWebhookSecret(id: $id) { secret } }`, { id: s.id }),
    )
    expect(r.rotateWebhookSecret.secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/)
    expect(r.rotateWebhookSecret.secret).not.toBe(s.secret)
    const rest = await a.post(`/webhooks/${s.id}/rotate-secret/`)
    expect(rest.status).toBe(200)
    expect(Object.keys(rest.body)).toEqual(["secret"])
    const read = ok(await graphql(keyA, ONE, { id: s.id }))
    expect(read.webhook).toEqual((await a.get(`/webhooks/${s.id}/`)).body)
    expect(JSON.stringify(read)).not.toContain(r.rotateWebhookSecret.secret)
  })

  it("deletes a subscription as REST DELETE does", async () => {
    const s = await createWebhook()
    expect(ok(await graphql(keyA, `mutation ($id: ID!) { deleteWebhook(id: $id) }`, { id: s.id }))).toEqual({
      deleteWebhook: true,
    })
    expect((await a.get(`/webhooks/${s.id}/`)).status).toBe(404)
    expect(codesOf(await graphql(keyA, ONE, { id: s.id }))).toEqual(["NOT_FOUND"])
    const again = await graphql(keyA, `mutation ($id: ID!) { deleteWebhook(id: $id) }`, { id: s.id })
    expect(codesOf(again)).toEqual(["NOT_FOUND"])
  })

  it("answers NOT_FOUND to another organisation, and BAD_USER_INPUT for an id that is not a UUID", async () => {
    const s = await createWebhook()
    const other = await graphql(keyB, ONE, { id: s.id })
    expect(other.data).toEqual({ webhook: null })
    expect(codesOf(other)).toEqual(["NOT_FOUND"])
    expect(ok(await graphql(keyB, "{ webhooks { id } }")).webhooks).toEqual([])
    for (const op of [
      `mutation ($id: ID!) { updateWebhook(id: $id, input: { name: "x" }) { id } }`,
      `mutation ($id: ID!) { deleteWebhook(id: $id) }`,
      `mutation ($id: ID!) { testWebhook(id: $id) { delivery_id } }`,
      `mutation ($id: ID!) { rotateWebhookSecret(id: $id) { secret } }`,
    ])
      expect(codesOf(await graphql(keyB, op, { id: s.id })), op).toEqual(["NOT_FOUND"])
    expect((await b.get(`/webhooks/${s.id}/`)).status).toBe(404)
    // Still there, unchanged, for its own organisation.
    expect(ok(await graphql(keyA, ONE, { id: s.id })).webhook).toEqual(
      (await a.get(`/webhooks/${s.id}/`)).body,
    )
    expect(codesOf(await graphql(keyA, ONE, { id: "not-a-uuid" }))).toEqual(["BAD_USER_INPUT"])
  })
})

/**
 * A project with a processed two-page contract (pages seeded with a layout), a "Governing law" agent and
 * one result with a document extraction located on page 1 and a web extraction.
 */
const seedContract = async () => {
  const project = await createProject(a)
  const agentReply = await a.post(`/projects/${project}/agents/`, {
    name: "Governing law",
    extraction_instructions: "Which jurisdiction's laws govern the agreement",
  })
  expect(agentReply.status, JSON.stringify(agentReply.body)).toBe(201)
  const agent = await agentVersion(db, agentReply.body.id)
  const rows = projectRows(db, project)
  const contract = await rows.contract(
    "Liability is limited to the amount paid in the last twelve months. The laws of Delaware apply to disputes.",
  )
  const av = await rows.atomicValue(agent.id, [], "[]")
  const located = await rows.extraction(agent, av, {
    document_id: contract,
    page_number: 1,
    value: "New York",
    relevant_passage: "This agreement is governed by the laws of the State of New York.",
    reasoning: "governing law clause",
    consistent: true,
  })
  const web = await rows.extraction(agent, av, {
    source_type: "web",
    value: "New York",
    relevant_passage: "Acme contracts are governed by New York law.",
    reasoning: "from the web",
    web_search_query: "acme governing law",
    consistent: true,
  })
  const result = await rows.result(agent, av, {
    result_name: "Governing law",
    value: "New York",
    resolution_status: "Resolved",
    references: JSON.stringify({ [located]: ["contract.pdf", 1] }),
  })
  return { project, agent: agent.id, contract, result, located, web }
}

const RELEVANT = "agent_id pages { document_id document_name page_number score snippet }"
const BOXES = `extraction_id document_id page_number page_width page_height unit
  boxes { x y width height text }`

describe("results reads", () => {
  let s: Awaited<ReturnType<typeof seedContract>>
  beforeAll(async () => {
    s = await seedContract()
  })

  it("answers Agent.relevant_pages as REST GET …/relevant-pages/ does", async () => {
    const query = `query ($p: ID!, $doc: ID, $limit: Int) { project(id: $p) {
      agents { id relevant_pages(documentId: $doc, limit: $limit) { ${RELEVANT} } } } }`
    for (const [variables, params] of [
      [{}, ""],
      [{ limit: 1 }, "?limit=1"],
      [{ doc: s.contract, limit: 2 }, `?document_id=${s.contract}&limit=2`],
    ] as const) {
      const data = ok(await graphql(keyA, query, { p: s.project, ...variables }))
      const rest = await a.get(`/projects/${s.project}/agents/${s.agent}/relevant-pages/${params}`)
      expect(rest.status).toBe(200)
      const [agent] = data.project.agents
      expect(agent.id).toBe(s.agent)
      expect(agent.relevant_pages).toEqual(rest.body)
    }
    const all = ok(await graphql(keyA, query, { p: s.project }))
    expect(all.project.agents[0].relevant_pages.pages[0]).toMatchObject({
      document_id: s.contract,
      document_name: "contract.pdf",
      page_number: 1,
    })

    const tooMany = await graphql(keyA, query, { p: s.project, limit: 101 })
    expect((await a.get(`/projects/${s.project}/agents/${s.agent}/relevant-pages/?limit=101`)).status).toBe(
      400,
    )
    expect(codesOf(tooMany)).toEqual(["BAD_USER_INPUT"])
    const unknown = await graphql(keyA, query, { p: s.project, doc: randomUUID() })
    expect(codesOf(unknown)).toEqual(["NOT_FOUND"])
  })

  it("answers Extraction.bounding_boxes as REST GET …/bounding-boxes/ does, leaving the other fields as REST's", async () => {
    const query = `query ($p: ID!, $id: ID!) { result(projectId: $p, id: $id) {
      extractions { total_count data { ${EXTRACTION} bounding_boxes { ${BOXES} } } } } }`
    const data = ok(await graphql(keyA, query, { p: s.project, id: s.result }))
    const { extractions } = data.result
    expect(extractions.total_count).toBe(2)
    const rest = await a.get(`/projects/${s.project}/results/${s.result}/extractions/`)
    expect(extractions.data.map(({ bounding_boxes: _, ...e }: any) => e)).toEqual(rest.body.data)
    for (const e of extractions.data) {
      const boxes = await a.get(`/projects/${s.project}/extractions/${e.id}/bounding-boxes/`)
      expect(boxes.status).toBe(200)
      expect(e.bounding_boxes).toEqual(boxes.body)
    }
    const located = extractions.data.find((e: any) => e.id === s.located)
    expect(located.bounding_boxes).toMatchObject({ document_id: s.contract, page_number: 1, unit: "pt" })
    expect(located.bounding_boxes.boxes.map((x: any) => x.text)).toEqual([
      "This agreement is governed by the laws of the",
      "State of New York.",
    ])
    const web = extractions.data.find((e: any) => e.id === s.web)
    expect(web.bounding_boxes).toMatchObject({ document_id: null, page_number: null, boxes: [] })
  })

  it("reads the bounding boxes of many extractions with as many SQL statements as of one", async () => {
    const project = await createProject(a)
    const created = await a.post(`/projects/${project}/agents/`, { name: "Governing law" })
    expect(created.status).toBe(201)
    const agent = await agentVersion(db, created.body.id)
    const rows = projectRows(db, project)
    const contract = await rows.contract("The laws of the State of New York govern this agreement.")
    const av = await rows.atomicValue(agent.id, [], "[]")
    for (let i = 0; i < 6; i++)
      await rows.extraction(agent, av, {
        document_id: contract,
        page_number: 1,
        value: "New York",
        relevant_passage: "The laws of the State of New York govern this agreement.",
        reasoning: `clause ${i}`,
        consistent: true,
      })
    const result = await rows.result(agent, av, {
      result_name: "Governing law",
      value: "New York",
      resolution_status: "Resolved",
    })
    const read = (limit: number, boxes: boolean) =>
      countStatements(
        gql,
        keyA,
        `query ($p: ID!, $id: ID!, $limit: Int) { result(projectId: $p, id: $id) {
          extractions(limit: $limit) { data { id ${boxes ? `bounding_boxes { ${BOXES} }` : ""} } } } }`,
        { p: project, id: result, limit },
      )
    const extra = async (limit: number) => {
      const withBoxes = await read(limit, true)
      expect(withBoxes.data.result.extractions.data).toHaveLength(limit)
      for (const e of withBoxes.data.result.extractions.data)
        expect(e.bounding_boxes.boxes.map((b: any) => b.text).join(" ")).toContain("State of New York")
      return withBoxes.count - (await read(limit, false)).count
    }
    const one = await extra(1)
    expect(one).toBeGreaterThan(0)
    expect(await extra(6)).toBe(one)
  })

  it("answers bounding_boxes under a mutation's result too", async () => {
    const r = ok(
      await graphql(
        keyA,
        `mutation ($p: ID!, $id: ID!) { reviewResult(projectId: $p, id: $id, input: { status: positive }) {
        extractions(limit: 1) { data { id bounding_boxes { ${BOXES} } } } } }`,
        { p: s.project, id: s.result },
      ),
    )
    const [first] = r.reviewResult.extractions.data
    expect(first.bounding_boxes).toEqual(
      (await a.get(`/projects/${s.project}/extractions/${first.id}/bounding-boxes/`)).body,
    )
  })

  it("answers NOT_FOUND to another organisation", async () => {
    const agents = await graphql(
      keyB,
      `query ($p: ID!) { project(id: $p) { agents { relevant_pages { agent_id } } } }`,
      { p: s.project },
    )
    expect(codesOf(agents)).toEqual(["NOT_FOUND"])
    const result = await graphql(
      keyB,
      `query ($p: ID!, $id: ID!) { result(projectId: $p, id: $id) {
        extractions { data { bounding_boxes { extraction_id } } } } }`,
      { p: s.project, id: s.result },
    )
    expect(codesOf(result)).toEqual(["NOT_FOUND"])
    expect((await b.get(`/projects/${s.project}/agents/${s.agent}/relevant-pages/`)).status).toBe(404)
    expect((await b.get(`/projects/${s.project}/extractions/${s.located}/bounding-boxes/`)).status).toBe(404)
  })
})

describe("launch preview and runs", () => {
  const PREVIEW = `query ($p: ID!) { launchPreview(projectId: $p) { extraction_pairs documents agents
    documents_not_parsed model_requests estimated_input_tokens estimated_output_tokens provider
    rejected { status detail failed_documents { id name } } } }`
  const RUNS = `query ($p: ID!, $limit: Int, $offset: Int) { runs(projectId: $p, limit: $limit, offset: $offset) {
    count next previous results { id number status failure_reason created_at started_at finished_at
    extraction_pairs agents usage { requests cache_hits input_tokens cached_input_tokens output_tokens } } } }`

  it("answers as REST GET …/agents/launch/preview/ and GET …/runs/ do", async () => {
    const project = await createProject(a)
    expect(
      (await a.post(`/projects/${project}/agents/`, { name: "Total", extraction_instructions: "The total" }))
        .status,
    ).toBe(201)
    const preview = ok(await graphql(keyA, PREVIEW, { p: project })).launchPreview
    expect(preview).toEqual((await a.get(`/projects/${project}/agents/launch/preview/`)).body)
    expect(preview).toMatchObject({
      extraction_pairs: 0,
      model_requests: 0,
      provider: "local",
      rejected: null,
    })

    expect((await a.post(`/projects/${project}/agents/launch/`)).status).toBe(202)
    const runs = ok(await graphql(keyA, RUNS, { p: project, limit: 5, offset: 0 })).runs
    expect(runs).toEqual((await a.get(`/projects/${project}/runs/?limit=5&offset=0`)).body)
    expect(runs.count).toBe(1)
    expect(runs.results[0]).toMatchObject({
      number: 1,
      status: "queued",
      usage: { requests: 0, cache_hits: 0, input_tokens: 0, cached_input_tokens: 0, output_tokens: 0 },
    })
  })

  it("answers NOT_FOUND to another organisation", async () => {
    const project = await createProject(a)
    expect(codesOf(await graphql(keyB, PREVIEW, { p: project }))).toEqual(["NOT_FOUND"])
    expect(codesOf(await graphql(keyB, RUNS, { p: project }))).toEqual(["NOT_FOUND"])
  })
})

describe("the panels' reads and actions", () => {
  const GRID = `query ($p: ID!, $sort: String, $search: String, $status: String, $limit: Int, $cursor: String) {
    resultsGrid(projectId: $p, sort: $sort, search: $search, resolutionStatus: $status, limit: $limit, cursor: $cursor) {
      count next previous columns { agent_id agent_name value_type unit }
      rows { key name dimension_values cells } } }`
  const DOCUMENTS = `query ($p: ID!, $status: String, $search: String, $limit: Int, $cursor: String) {
    documentsPage(projectId: $p, status: $status, search: $search, limit: $limit, cursor: $cursor) {
      count next previous results { id project_id file_url uploaded_at type page_count version summary metadata
        status uses_agentic_extraction last_parsed_at archive_requested_at tags { key value } file_name
        failure_reason parent_document_id attachment_count } } }`
  const REPARSE = `mutation ($p: ID!, $d: ID!) { reparseDocument(projectId: $p, documentId: $d) { id status version } }`
  const BULK = `mutation ($p: ID!, $input: DocumentBulkInput!) {
    bulkDocuments(projectId: $p, input: $input) { succeeded failed { document_id status detail } } }`
  /** REST's answer with the links' file_url signatures left out (each answer signs anew). */
  const unsigned = (page: any) => ({
    ...page,
    results: page.results.map((d: any) => ({ ...d, file_url: d.file_url.split("?")[0] })),
  })

  it("answers the results grid and the documents page as REST does, with the same arguments", async () => {
    const s = await seedContract()
    const grid = ok(
      await graphql(keyA, GRID, { p: s.project, sort: `-agent:${s.agent}`, limit: 10 }),
    ).resultsGrid
    expect(grid).toEqual(
      (await a.get(`/projects/${s.project}/results/grid/?sort=-agent:${s.agent}&limit=10`)).body,
    )
    expect(grid.rows[0].cells[s.agent]).toMatchObject({ value: "New York", resolution_status: "Resolved" })
    const searched = ok(await graphql(keyA, GRID, { p: s.project, search: "nowhere" })).resultsGrid
    expect(searched).toMatchObject({ count: 0, rows: [] })

    const page = ok(
      await graphql(keyA, DOCUMENTS, { p: s.project, status: "Processed", limit: 1 }),
    ).documentsPage
    const rest = (await a.get(`/projects/${s.project}/documents/page/?status=Processed&limit=1`)).body
    expect(unsigned(page)).toEqual(unsigned(rest))
    expect(page.results.map((d: any) => d.id)).toEqual([s.contract])
  })

  it("refuses what REST refuses, with BAD_USER_INPUT naming the argument, and NOT_FOUND elsewhere", async () => {
    const s = await seedContract()
    expect(codesOf(await graphql(keyA, GRID, { p: s.project, status: "Done" }))).toEqual(["BAD_USER_INPUT"])
    expect(codesOf(await graphql(keyA, GRID, { p: s.project, sort: "size" }))).toEqual(["BAD_USER_INPUT"])
    expect(codesOf(await graphql(keyA, DOCUMENTS, { p: s.project, status: "Lost" }))).toEqual([
      "BAD_USER_INPUT",
    ])
    expect(codesOf(await graphql(keyA, DOCUMENTS, { p: s.project, cursor: "not a cursor" }))).toEqual([
      "BAD_USER_INPUT",
    ])
    expect(codesOf(await graphql(keyB, GRID, { p: s.project }))).toEqual(["NOT_FOUND"])
    expect(codesOf(await graphql(keyB, DOCUMENTS, { p: s.project }))).toEqual(["NOT_FOUND"])
    expect(codesOf(await graphql(keyB, REPARSE, { p: s.project, d: s.contract }))).toEqual(["NOT_FOUND"])
    expect(
      codesOf(
        await graphql(keyA, BULK, { p: s.project, input: { action: "shred", document_ids: [s.contract] } }),
      ),
    ).toEqual(["BAD_USER_INPUT"])
    expect(
      codesOf(await graphql(keyA, BULK, { p: s.project, input: { action: "delete", document_ids: [] } })),
    ).toEqual(["BAD_USER_INPUT"])
  })

  it("refuses to parse again a document whose stored file is gone, as REST does, and acts on many documents", async () => {
    // The seeded contract has rows but no stored file (as when a bucket was emptied by hand).
    const s = await seedContract()
    const reparse = await graphql(keyA, REPARSE, { p: s.project, d: s.contract })
    expect(codesOf(reparse)).toEqual(["CONFLICT"])
    const rest = await a.post(`/projects/${s.project}/documents/${s.contract}/reparse/`)
    expect(rest.status).toBe(409)
    expect(rest.body.detail).toContain("upload it again")
    expect(reparse.errors?.[0]?.message).toBe(rest.body.detail)
    const unknown = "00000000-0000-4000-8000-000000000000"
    const bulk = ok(
      await graphql(keyA, BULK, {
        p: s.project,
        input: { action: "delete", document_ids: [s.contract, unknown] },
      }),
    ).bulkDocuments
    expect(bulk).toEqual({
      succeeded: [s.contract],
      failed: [{ document_id: unknown, status: 404, detail: expect.stringContaining(unknown) }],
    })
    expect((await a.get(`/projects/${s.project}/documents/${s.contract}/`)).status).toBe(404)
  })
})
