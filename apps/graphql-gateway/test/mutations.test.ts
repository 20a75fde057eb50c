/**
 * The mutations over real HTTP on both sides and real PostgreSQL: each answer is what REST GET answers
 * for the same resource afterwards, and errors keep their codes. `idle` has no worker (documents stay
 * Pending, runs stay queued, archival waits); `busy` runs one (parsing, copying processed documents, a
 * launch refused for a failed document).
 */
import { randomUUID } from "node:crypto"
import type { TestApi } from "@dxs/rest-api/TestApi"
import { type Client, createProject, uuid } from "@dxs/testing/RestClient"
import ExcelJS from "exceljs"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { schemaSdl } from "../src/index.ts"
import {
  AGENT_FIELDS,
  call,
  codesOf,
  DIMENSION_FIELDS,
  DOCUMENT_FIELDS,
  type Gateway,
  graphqlOn,
  ok,
  PROGRESS,
  PROJECT_FIELDS,
  RESULT_DETAIL,
  seedAmountResult,
  startGateway,
  upload,
  uploadPdf,
  withoutSignature,
} from "./support.ts"

let idle: TestApi
let busy: TestApi
let gqlIdle: Gateway
let gqlBusy: Gateway
let keyA: string
let keyB: string
let keyW: string
/** Organisation A on the idle API. */
let a: Client
/** An organisation on the API with a worker. */
let w: Client

/** On the idle API. */
const gql = graphqlOn(() => gqlIdle)

const FOLDER_FIELDS = "id name parent_id created_at updated_at"

/** Reading a project through REST counts as a visit: only `last_visited_at` moves between two reads. */
const unvisited = (p: { last_visited_at: string | null }) => ({ ...p, last_visited_at: null })
/** The agent record as REST has it (REST reports progress in …/agents/status/). */
const withoutProgress = ({ progress: _, ...agent }: any) => agent

/** Waits until no document of the project is Pending (the worker parses them); returns the documents. */
const waitProcessed = async (client: Client, projectId: string): Promise<Array<any>> => {
  const deadline = Date.now() + 60_000
  for (;;) {
    const r = await client.get(`/projects/${projectId}/documents/`)
    if (r.body.every((d: any) => d.status !== "Pending")) return r.body
    if (Date.now() > deadline) throw new Error("timed out waiting for parsing")
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

beforeAll(async () => {
  ;[gqlIdle, gqlBusy] = await Promise.all([startGateway(), startGateway({ worker: {} })])
  idle = gqlIdle.api
  busy = gqlBusy.api
  keyA = await idle.newKey(`mut-a-${randomUUID()}`)
  keyB = await idle.newKey(`mut-b-${randomUUID()}`)
  keyW = await busy.newKey(`mut-w-${randomUUID()}`)
  a = idle.client(keyA)
  w = busy.client(keyW)
})

afterAll(async () => {
  await gqlIdle?.close()
  await gqlBusy?.close()
})

describe("authentication", () => {
  it("rejects a mutation without a key with UNAUTHENTICATED", async () => {
    const r = await gql(undefined, `mutation { createProject(input: { name: "X" }) { id } }`)
    expect(r.data ?? null).toBeNull()
    expect(codesOf(r)).toEqual(["UNAUTHENTICATED"])
  })
})

describe("projects", () => {
  const CREATE = `mutation ($input: ProjectInput!) { createProject(input: $input) { ${PROJECT_FIELDS} } }`
  const UPDATE = `mutation ($id: ID!, $input: ProjectPatchInput!) {
    updateProject(id: $id, input: $input) { ${PROJECT_FIELDS} } }`
  const REPLACE = `mutation ($id: ID!, $input: ProjectInput!) {
    replaceProject(id: $id, input: $input) { ${PROJECT_FIELDS} } }`
  const FULL = {
    description: "Invoices",
    reference_date: "2025-03-01",
    auto_archive_after_days: 30,
    is_pinned: true,
  }

  it("creates, patches and replaces a project as REST GET then shows it", async () => {
    const folder = (await a.post("/folders/", { name: "Clients" })).body
    const created = ok(
      await gql(keyA, CREATE, { input: { name: "Acme", folder_id: folder.id, ...FULL } }),
    ).createProject
    expect(created).toMatchObject({ name: "Acme", folder_id: folder.id, ...FULL, document_count: 0 })
    expect(unvisited(created)).toEqual(unvisited((await a.get(`/projects/${created.id}/`)).body))

    // PATCH: only the supplied fields change; a null where REST takes none is as if left out.
    const patched = ok(
      await gql(keyA, UPDATE, { id: created.id, input: { description: "Changed", name: null } }),
    ).updateProject
    expect(patched).toMatchObject({ name: "Acme", description: "Changed", is_pinned: true })
    expect(unvisited(patched)).toEqual(unvisited((await a.get(`/projects/${created.id}/`)).body))
    const cleared = ok(
      await gql(keyA, UPDATE, { id: created.id, input: { reference_date: null } }),
    ).updateProject
    expect(cleared).toMatchObject({ reference_date: null, folder_id: folder.id })

    // PUT: omitted fields reset, exactly as the REST PUT of a twin project.
    const twin = (await a.post("/projects/", { name: "Acme", folder_id: folder.id, ...FULL })).body
    const replaced = ok(
      await gql(keyA, REPLACE, { id: created.id, input: { name: "Acme 2" } }),
    ).replaceProject
    const restReplaced = (await a.put(`/projects/${twin.id}/`, { name: "Acme 2" })).body
    expect(replaced).toMatchObject({
      name: "Acme 2",
      description: "",
      reference_date: null,
      auto_archive_after_days: null,
      is_pinned: false,
      folder_id: null,
    })
    const comparable = ({ id: _, created_at: __, last_visited_at: ___, ...p }: any) => p
    expect(comparable(replaced)).toEqual(comparable(restReplaced))
    expect(unvisited(replaced)).toEqual(unvisited((await a.get(`/projects/${created.id}/`)).body))
  })

  it("refuses invalid fields with BAD_USER_INPUT", async () => {
    for (const input of [
      { name: "  " },
      { name: "X", auto_archive_after_days: 0 },
      { name: "X", folder_id: randomUUID() },
    ]) {
      const r = await gql(keyA, CREATE, { input })
      expect(codesOf(r), JSON.stringify(input)).toEqual(["BAD_USER_INPUT"])
    }
  })

  it("answers NOT_FOUND for another organisation's project and deletes", async () => {
    const id = await createProject(a)
    expect(codesOf(await gql(keyB, UPDATE, { id, input: { description: "x" } }))).toEqual(["NOT_FOUND"])
    expect(codesOf(await gql(keyB, REPLACE, { id, input: { name: "x" } }))).toEqual(["NOT_FOUND"])
    const foreignDelete = await gql(keyB, `mutation ($id: ID!) { deleteProject(id: $id) }`, { id })
    expect(codesOf(foreignDelete)).toEqual(["NOT_FOUND"])
    expect((await a.get(`/projects/${id}/`)).status).toBe(200)

    expect(ok(await gql(keyA, `mutation ($id: ID!) { deleteProject(id: $id) }`, { id }))).toEqual({
      deleteProject: true,
    })
    expect((await a.get(`/projects/${id}/`)).status).toBe(404)
    const again = await gql(keyA, `mutation ($id: ID!) { deleteProject(id: $id) }`, { id })
    expect(codesOf(again)).toEqual(["NOT_FOUND"])
  })
})

describe("folders", () => {
  const CREATE = `mutation ($input: FolderInput!) { createFolder(input: $input) { ${FOLDER_FIELDS} } }`
  const UPDATE = `mutation ($id: ID!, $input: FolderPatchInput!) {
    updateFolder(id: $id, input: $input) { ${FOLDER_FIELDS} } }`

  it("creates, lists, moves, renames and deletes folders as REST shows them", async () => {
    const top = ok(await gql(keyA, CREATE, { input: { name: "Top" } })).createFolder
    expect(top).toMatchObject({ id: uuid, name: "Top", parent_id: null })
    expect(top).toEqual((await a.get(`/folders/${top.id}/`)).body)
    const child = ok(await gql(keyA, CREATE, { input: { name: "Child", parent_id: top.id } })).createFolder
    expect(child).toEqual((await a.get(`/folders/${child.id}/`)).body)
    expect(child.parent_id).toBe(top.id)

    const list = ok(await gql(keyA, `{ folders { ${FOLDER_FIELDS} } }`)).folders
    expect(list).toEqual((await a.get("/folders/")).body)
    expect(list.map((f: any) => f.id)).toEqual(expect.arrayContaining([top.id, child.id]))

    const cycle = await gql(keyA, UPDATE, { id: top.id, input: { parent_id: child.id } })
    expect(codesOf(cycle)).toEqual(["BAD_USER_INPUT"])
    expect(codesOf(await gql(keyA, CREATE, { input: { name: " " } }))).toEqual(["BAD_USER_INPUT"])

    const moved = ok(
      await gql(keyA, UPDATE, { id: child.id, input: { name: "Renamed", parent_id: null } }),
    ).updateFolder
    expect(moved).toMatchObject({ name: "Renamed", parent_id: null })
    expect(moved).toEqual((await a.get(`/folders/${child.id}/`)).body)

    expect(codesOf(await gql(keyB, UPDATE, { id: top.id, input: { name: "Mine" } }))).toEqual(["NOT_FOUND"])
    expect(ok(await gql(keyB, "{ folders { id } }")).folders).toEqual([])

    const del = ok(await gql(keyA, `mutation ($id: ID!) { deleteFolder(id: $id) }`, { id: top.id }))
    expect(del).toEqual({ deleteFolder: true })
    expect((await a.get(`/folders/${top.id}/`)).status).toBe(404)
  })
})

describe("dimensions", () => {
  const CREATE = `mutation ($p: ID!, $input: DimensionInput!) {
    createDimension(projectId: $p, input: $input) { ${DIMENSION_FIELDS} } }`
  const UPDATE = `mutation ($p: ID!, $id: ID!, $input: DimensionPatchInput!) {
    updateDimension(projectId: $p, id: $id, input: $input) { ${DIMENSION_FIELDS} } }`

  it("creates, updates and deletes a dimension as REST GET then shows it", async () => {
    const project = await createProject(a)
    const created = ok(
      await gql(keyA, CREATE, {
        p: project,
        input: {
          name: "Region",
          description: "Sales region",
          example_values: "EU, US",
          value_type: "string",
          auto_attach_to_new_agents: true,
        },
      }),
    ).createDimension
    expect(created).toMatchObject({ name: "Region", source: "CUSTOM", auto_attach_to_new_agents: true })
    expect(created).toEqual((await a.get(`/projects/${project}/dimensions/${created.id}/`)).body)

    const updated = ok(
      await gql(keyA, UPDATE, {
        p: project,
        id: created.id,
        input: { description: "Market", value_type: "date" },
      }),
    ).updateDimension
    expect(updated).toMatchObject({ name: "Region", description: "Market", value_type: "date" })
    expect(updated).toEqual((await a.get(`/projects/${project}/dimensions/${created.id}/`)).body)

    const del = await gql(keyA, `mutation ($p: ID!, $id: ID!) { deleteDimension(projectId: $p, id: $id) }`, {
      p: project,
      id: created.id,
    })
    expect(ok(del)).toEqual({ deleteDimension: true })
    expect((await a.get(`/projects/${project}/dimensions/${created.id}/`)).status).toBe(404)
  })

  it("answers CONFLICT for a name taken, BAD_USER_INPUT for an empty one, NOT_FOUND for another organisation", async () => {
    const project = await createProject(a)
    ok(await gql(keyA, CREATE, { p: project, input: { name: "Region" } }))
    for (const name of ["region", "Document"]) {
      const r = await gql(keyA, CREATE, { p: project, input: { name } })
      expect(codesOf(r), name).toEqual(["CONFLICT"])
      expect(r.errors![0]!.extensions.errors).toEqual([expect.objectContaining({ path: "name" })])
      expect((await a.post(`/projects/${project}/dimensions/`, { name })).status).toBe(409)
    }
    expect(codesOf(await gql(keyA, CREATE, { p: project, input: { name: " " } }))).toEqual(["BAD_USER_INPUT"])
    const document = (await a.get(`/projects/${project}/dimensions/`)).body.find(
      (d: any) => d.source === "DOCUMENT",
    )
    const rename = await gql(keyA, UPDATE, { p: project, id: document.id, input: { name: "Doc" } })
    expect(codesOf(rename)).toEqual(["CONFLICT"])
    const unknownType = await gql(keyA, CREATE, { p: project, input: { name: "Kind", value_type: "text" } })
    expect(unknownType.data).toBeUndefined()
    expect(unknownType.errors?.[0]?.message).toContain("DimensionValueType")
    expect(codesOf(await gql(keyB, CREATE, { p: project, input: { name: "Mine" } }))).toEqual(["NOT_FOUND"])
  })
})

describe("agents", () => {
  const CREATE = `mutation ($p: ID!, $input: AgentInput!) {
    createAgent(projectId: $p, input: $input) { ${AGENT_FIELDS} ${PROGRESS} } }`
  const UPDATE = `mutation ($p: ID!, $id: ID!, $input: AgentPatchInput!) {
    updateAgent(projectId: $p, id: $id, input: $input) { ${AGENT_FIELDS} ${PROGRESS} } }`
  const REPLACE = `mutation ($p: ID!, $id: ID!, $input: AgentInput!) {
    replaceAgent(projectId: $p, id: $id, input: $input) { ${AGENT_FIELDS} ${PROGRESS} } }`

  /** The agent as REST GET shows it, and the mutation's answer without its progress (checked against REST). */
  const expectAsRest = async (project: string, agent: any) => {
    expect(withoutProgress(agent)).toEqual((await a.get(`/projects/${project}/agents/${agent.id}/`)).body)
    const status = (await a.get(`/projects/${project}/agents/status/`)).body
    expect(agent.progress).toEqual(status.progress[agent.id])
  }

  it("creates, patches and replaces agents as REST GET then shows them", async () => {
    const project = await createProject(a)
    const region = (await a.post(`/projects/${project}/dimensions/`, { name: "Region" })).body
    const body = {
      name: "Total",
      extraction_instructions: "The invoice total",
      value_type: "number",
      unit: "EUR",
      examples: "100.50",
      resolution_instructions: "Prefer the latest",
      enable_web_search: false,
      value_if_not_found: "0",
      dimensions: [{ dimension_id: region.id, values: ["EU", "US"], description: "Sales region" }],
    }
    const total = ok(await gql(keyA, CREATE, { p: project, input: body })).createAgent
    expect(total).toMatchObject({
      name: "Total",
      value_type: "number",
      unit: "EUR",
      agent_type: "extraction",
    })
    expect(total.dimensions).toEqual([
      expect.objectContaining({ dimension_id: region.id, values: ["EU", "US"], description: "Sales region" }),
    ])
    await expectAsRest(project, total)

    // PATCH keeps what is not supplied (a null as if left out); dimensions omitted stay attached.
    const patched = ok(
      await gql(keyA, UPDATE, {
        p: project,
        id: total.id,
        input: { extraction_instructions: "The grand total", unit: null },
      }),
    ).updateAgent
    expect(patched).toMatchObject({ extraction_instructions: "The grand total", unit: "EUR" })
    expect(patched.dimensions).toHaveLength(1)
    await expectAsRest(project, patched)

    const derived = ok(
      await gql(keyA, CREATE, {
        p: project,
        input: {
          name: "Double",
          agent_type: "derived",
          derived_prompt: "Twice @Total",
          derived_agent_references: [{ agent_name: "Total", agent_id: null }],
        },
      }),
    ).createAgent
    expect(derived.derived_agent_references).toEqual([{ agent_id: total.id, agent_name: "Total" }])
    await expectAsRest(project, derived)

    // PUT resets what is omitted, exactly as the REST PUT of a twin agent.
    const twin = (await a.post(`/projects/${project}/agents/`, { ...body, name: "Twin" })).body
    const replaced = ok(
      await gql(keyA, REPLACE, { p: project, id: total.id, input: { name: "Total" } }),
    ).replaceAgent
    const restReplaced = (await a.put(`/projects/${project}/agents/${twin.id}/`, { name: "Total" })).body
    expect(replaced).toMatchObject({ unit: "", value_type: "string", dimensions: [] })
    const comparable = ({ id: _, created_at: __, progress: ___, ...x }: any) => x
    expect(comparable(replaced)).toEqual(comparable(restReplaced))
    await expectAsRest(project, replaced)
  })

  it("answers BAD_USER_INPUT for an unknown reference or dimension, NOT_FOUND for another organisation", async () => {
    const project = await createProject(a)
    const unknown = await gql(keyA, CREATE, {
      p: project,
      input: { name: "D", agent_type: "derived", derived_agent_references: [{ agent_name: "Nope" }] },
    })
    expect(codesOf(unknown)).toEqual(["BAD_USER_INPUT"])
    expect(
      (
        await a.post(`/projects/${project}/agents/`, {
          name: "D",
          agent_type: "derived",
          derived_agent_references: [{ agent_name: "Nope" }],
        })
      ).status,
    ).toBe(400)
    const dimension = await gql(keyA, CREATE, {
      p: project,
      input: { name: "X", dimensions: [{ dimension_id: randomUUID(), values: ["a"] }] },
    })
    expect(codesOf(dimension)).toEqual(["BAD_USER_INPUT"])
    expect(codesOf(await gql(keyA, CREATE, { p: project, input: { name: "  " } }))).toEqual([
      "BAD_USER_INPUT",
    ])
    const badType = await gql(keyA, CREATE, { p: project, input: { name: "X", value_type: "money" } })
    expect(badType.data).toBeUndefined()
    expect(badType.errors?.[0]?.message).toContain("AgentValueType")
    expect(codesOf(await gql(keyB, CREATE, { p: project, input: { name: "X" } }))).toEqual(["NOT_FOUND"])
    expect((await a.get(`/projects/${project}/agents/`)).body).toEqual([])
  })

  it("deletes an agent", async () => {
    const project = await createProject(a)
    const agent = (await a.post(`/projects/${project}/agents/`, { name: "Gone" })).body
    const DELETE = `mutation ($p: ID!, $id: ID!) { deleteAgent(projectId: $p, id: $id) }`
    expect(codesOf(await gql(keyB, DELETE, { p: project, id: agent.id }))).toEqual(["NOT_FOUND"])
    expect(ok(await gql(keyA, DELETE, { p: project, id: agent.id }))).toEqual({ deleteAgent: true })
    expect((await a.get(`/projects/${project}/agents/${agent.id}/`)).status).toBe(404)
    expect(codesOf(await gql(keyA, DELETE, { p: project, id: agent.id }))).toEqual(["NOT_FOUND"])
  })
})

describe("launch", () => {
  const LAUNCH = `mutation ($p: ID!) { launch(projectId: $p) { run_id run_number queued_new_run } }`

  it("queues a run, and a second launch joins the queued one", async () => {
    const project = await createProject(a)
    expect((await a.post(`/projects/${project}/agents/`, { name: "Total" })).status).toBe(201)
    const first = ok(await gql(keyA, LAUNCH, { p: project })).launch
    expect(first).toEqual({ run_id: uuid, run_number: 1, queued_new_run: true })
    expect((await a.post(`/projects/${project}/agents/launch/`)).status).toBe(202)
    const second = ok(await gql(keyA, LAUNCH, { p: project })).launch
    expect(second).toEqual({ ...first, queued_new_run: false })
    expect(codesOf(await gql(keyB, LAUNCH, { p: project }))).toEqual(["NOT_FOUND"])
  })

  it("answers CONFLICT listing a document that failed processing", async () => {
    const project = await createProject(w)
    const broken = await upload(
      w,
      project,
      "broken.pdf",
      new TextEncoder().encode("%PDF-1.4 this is not a pdf"),
    )
    const docs = await waitProcessed(w, project)
    expect(docs.map((d) => d.status)).toEqual(["Failed"])
    const r = await call(gqlBusy, keyW, LAUNCH, { p: project })
    expect(r.data ?? null).toBeNull()
    expect(codesOf(r)).toEqual(["CONFLICT"])
    expect(r.errors![0]!.extensions.errors).toEqual([
      { path: `documents/${broken}`, message: "broken.pdf failed processing" },
    ])
    expect((await w.post(`/projects/${project}/agents/launch/`)).status).toBe(409)
  })
})

describe("documents", () => {
  const TAGS = `mutation ($p: ID!, $d: ID!, $tags: [DocumentTagInput!]!) {
    setDocumentTags(projectId: $p, documentId: $d, tags: $tags) { ${DOCUMENT_FIELDS} } }`

  it("sets tags, requests archival and deletes as REST GET then shows it", async () => {
    const project = await createProject(a)
    const doc = await uploadPdf(a, project, "invoice")
    const tagged = ok(
      await gql(keyA, TAGS, {
        p: project,
        d: doc,
        tags: [
          { key: "region", value: "EU" },
          { key: " year ", value: "2025" },
        ],
      }),
    ).setDocumentTags
    expect(tagged.tags).toEqual([
      { key: "region", value: "EU" },
      { key: "year", value: "2025" },
    ])
    expect(withoutSignature(tagged)).toEqual(
      withoutSignature((await a.get(`/projects/${project}/documents/${doc}/`)).body),
    )
    const dimensions = (await a.get(`/projects/${project}/dimensions/`)).body
    expect(dimensions.filter((d: any) => d.source === "TAG").map((d: any) => d.name)).toEqual(
      expect.arrayContaining(["region", "year"]),
    )
    const duplicate = await gql(keyA, TAGS, {
      p: project,
      d: doc,
      tags: [
        { key: "Region", value: "EU" },
        { key: "region", value: "US" },
      ],
    })
    expect(codesOf(duplicate)).toEqual(["BAD_USER_INPUT"])
    expect(codesOf(await gql(keyB, TAGS, { p: project, d: doc, tags: [] }))).toEqual(["NOT_FOUND"])

    const archived = ok(
      await gql(
        keyA,
        `mutation ($p: ID!, $d: ID!) { archiveDocument(projectId: $p, documentId: $d) { ${DOCUMENT_FIELDS} } }`,
        { p: project, d: doc },
      ),
    ).archiveDocument
    expect(archived.archive_requested_at).not.toBeNull()
    expect(withoutSignature(archived)).toEqual(
      withoutSignature((await a.get(`/projects/${project}/documents/${doc}/`)).body),
    )

    const DELETE = `mutation ($p: ID!, $d: ID!) { deleteDocument(projectId: $p, documentId: $d) }`
    expect(codesOf(await gql(keyB, DELETE, { p: project, d: doc }))).toEqual(["NOT_FOUND"])
    expect(ok(await gql(keyA, DELETE, { p: project, d: doc }))).toEqual({ deleteDocument: true })
    expect((await a.get(`/projects/${project}/documents/${doc}/`)).status).toBe(404)
  })

  it("copies a processed document into another project", async () => {
    const source = await createProject(w)
    const target = await createProject(w)
    const doc = await uploadPdf(w, source, "contract")
    await w.put(`/projects/${source}/documents/${doc}/tags/`, { tags: { kind: "contract" } })
    const [processed] = await waitProcessed(w, source)
    expect(processed.status).toBe("Processed")

    const COPY = `mutation ($p: ID!, $t: ID!, $ids: [ID!]!) {
      copyDocuments(projectId: $p, targetProjectId: $t, documentIds: $ids) {
        copied_count document_id_mappings { source_document_id copied_document_id } } }`
    const copied = ok(await call(gqlBusy, keyW, COPY, { p: source, t: target, ids: [doc] })).copyDocuments
    expect(copied).toEqual({
      copied_count: 1,
      document_id_mappings: [{ source_document_id: doc, copied_document_id: uuid }],
    })
    const copy = (
      await w.get(`/projects/${target}/documents/${copied.document_id_mappings[0].copied_document_id}/`)
    ).body
    expect(copy).toMatchObject({
      project_id: target,
      status: "Processed",
      file_name: "contract.pdf",
      page_count: processed.page_count,
      tags: [{ key: "kind", value: "contract" }],
    })

    for (const variables of [
      { p: source, t: source, ids: [doc] },
      { p: source, t: target, ids: [] },
      { p: source, t: target, ids: [randomUUID()] },
    ]) {
      const r = await call(gqlBusy, keyW, COPY, variables)
      expect(codesOf(r), JSON.stringify(variables)).toEqual(["BAD_USER_INPUT"])
    }
    const other = await gql(keyA, COPY, { p: source, t: target, ids: [doc] })
    expect(codesOf(other)).toEqual(["NOT_FOUND"])
  })
})

/** A project with a `number` agent on Region and one result (EU, 1234.5) with one extraction. */
const seedResult = () => seedAmountResult(idle, a)

describe("results", () => {
  const OVERRIDE = `mutation ($p: ID!, $id: ID!, $input: ResultOverrideInput!) {
    overrideResult(projectId: $p, id: $id, input: $input) {
      ${RESULT_DETAIL} extractions(limit: 5) { total_count data { id value } } } }`
  const REVIEW = `mutation ($p: ID!, $id: ID!, $input: ResultReviewInput!) {
    reviewResult(projectId: $p, id: $id, input: $input) { ${RESULT_DETAIL} } }`

  it("overrides a result as REST GET then shows it, with its extractions", async () => {
    const { project, result } = await seedResult()
    const r = ok(
      await gql(keyA, OVERRIDE, {
        p: project,
        id: result,
        input: {
          value: "1,500.25",
          justification_for_resolution_status: "checked",
          updated_by_email: "ann@x.io",
        },
      }),
    ).overrideResult
    const { extractions, ...detail } = r
    expect(detail).toMatchObject({
      value: 1500.25,
      resolution_status: "Resolved",
      is_overridden: true,
      updated_by_email: "ann@x.io",
      justification_for_resolution_status: "checked",
    })
    expect(detail).toEqual((await a.get(`/projects/${project}/results/${result}/`)).body)
    const restExtractions = (await a.get(`/projects/${project}/results/${result}/extractions/?limit=5`)).body
    expect(extractions).toEqual({
      total_count: restExtractions.total_count,
      data: restExtractions.data.map((x: any) => ({ id: x.id, value: x.value })),
    })
    expect(extractions.total_count).toBe(1)

    const cleared = ok(
      await gql(keyA, OVERRIDE, {
        p: project,
        id: result,
        input: { value: null, resolution_status: "Ignored" },
      }),
    ).overrideResult
    expect(cleared).toMatchObject({ value: null, resolution_status: "Ignored", updated_by_email: null })
    const { extractions: _, ...clearedDetail } = cleared
    expect(clearedDetail).toEqual((await a.get(`/projects/${project}/results/${result}/`)).body)
    const number = ok(await gql(keyA, OVERRIDE, { p: project, id: result, input: { value: 42 } }))
    expect(number.overrideResult.value).toBe(42)
  })

  it("refuses what REST refuses with BAD_USER_INPUT; another organisation gets NOT_FOUND", async () => {
    const { project, result } = await seedResult()
    for (const input of [
      { value: "a lot" },
      { value: 1, resolution_status: "Done" },
      { value: 1, updated_by_email: "not-an-email" },
    ]) {
      const r = await gql(keyA, OVERRIDE, { p: project, id: result, input })
      expect(codesOf(r), JSON.stringify(input)).toEqual(["BAD_USER_INPUT"])
      expect((await a.patch(`/projects/${project}/results/${result}/`, input)).status).toBe(400)
    }
    const wrongType = await gql(keyA, OVERRIDE, { p: project, id: result, input: { value: true } })
    expect(wrongType.data).toBeUndefined()
    expect(wrongType.errors?.[0]?.message).toContain("StringOrNumber cannot represent true")
    expect(codesOf(wrongType)).toEqual(["BAD_USER_INPUT"])
    const inline = await gql(
      keyA,
      `mutation ($p: ID!, $id: ID!) { overrideResult(projectId: $p, id: $id, input: { value: [1] }) { id } }`,
      { p: project, id: result },
    )
    expect(inline.data).toBeUndefined()
    expect(inline.errors?.[0]?.message).toContain("StringOrNumber cannot represent [1]")
    expect(codesOf(inline)).toEqual(["BAD_USER_INPUT"])
    expect(codesOf(await gql(keyB, OVERRIDE, { p: project, id: result, input: { value: 1 } }))).toEqual([
      "NOT_FOUND",
    ])
    const missing = await gql(keyA, OVERRIDE, { p: project, id: randomUUID(), input: { value: 1 } })
    expect(codesOf(missing)).toEqual(["NOT_FOUND"])
  })

  it("records a review as REST GET then shows it", async () => {
    const { project, result } = await seedResult()
    const r = ok(
      await gql(keyA, REVIEW, {
        p: project,
        id: result,
        input: { status: "positive", comment: "Checked", reviewed_by: "bob@example.com" },
      }),
    ).reviewResult
    expect(r).toMatchObject({
      latest_review_status: "positive",
      latest_review_comment: "Checked",
      latest_review_by: "bob@example.com",
    })
    expect(r).toEqual((await a.get(`/projects/${project}/results/${result}/`)).body)
    const state = ok(
      await gql(
        keyA,
        `query ($p: ID!, $id: ID!) { result(projectId: $p, id: $id) { latest_review_status source } }`,
        { p: project, id: result },
      ),
    )
    expect(state.result).toEqual({ latest_review_status: "positive", source: "model" })
    const reset = ok(await gql(keyA, REVIEW, { p: project, id: result, input: { status: "none" } }))
    expect(reset.reviewResult).toMatchObject({ latest_review_status: "none", latest_review_comment: "" })

    const bad = await gql(keyA, REVIEW, {
      p: project,
      id: result,
      input: { status: "negative", reviewed_by: "bob" },
    })
    expect(codesOf(bad)).toEqual(["BAD_USER_INPUT"])
    const unknown = await gql(keyA, REVIEW, { p: project, id: result, input: { status: "great" } })
    expect(unknown.data).toBeUndefined()
    expect(codesOf(await gql(keyB, REVIEW, { p: project, id: result, input: { status: "none" } }))).toEqual([
      "NOT_FOUND",
    ])
  })
})

describe("file edit", () => {
  const STATUS = `query ($p: ID!) { fileEditStatus(projectId: $p) {
    state template_name progress { completed total } error problems { placeholder location message }
    started_at finished_at download_url } }`
  const CLEAR = "mutation ($p: ID!) { clearFileEdit(projectId: $p) }"
  const status = (projectId: string, key = keyA) => gql(key, STATUS, { p: projectId })

  it("shows a job as REST GET …/file-edit/status/ does, and cancels it as REST DELETE does", async () => {
    const projectId = await createProject(a)
    const idleStatus = ok(await status(projectId)).fileEditStatus
    expect(idleStatus).toEqual((await a.get(`/projects/${projectId}/file-edit/status/`)).body)
    expect(idleStatus.state).toBe("idle")

    // Started through REST multipart; with no worker on this API the job stays running.
    const wb = new ExcelJS.Workbook()
    wb.addWorksheet("S").getCell("A1").value = "{{Invoiced Sum}}"
    const form = new FormData()
    form.append("file", new Blob([new Uint8Array(await wb.xlsx.writeBuffer())]), "report.xlsx")
    expect((await a.send("POST", `/projects/${projectId}/file-edit/`, form)).status).toBe(202)
    const running = ok(await status(projectId)).fileEditStatus
    expect(running).toMatchObject({ state: "running", template_name: "report.xlsx", download_url: null })
    expect(running).toEqual((await a.get(`/projects/${projectId}/file-edit/status/`)).body)

    expect(ok(await gql(keyA, CLEAR, { p: projectId })).clearFileEdit).toBe(true)
    expect((await a.get(`/projects/${projectId}/file-edit/status/`)).body.state).toBe("idle")
    expect(ok(await status(projectId)).fileEditStatus.state).toBe("idle")
    // Clearing when there is no job is no error: REST answers 204 again.
    expect(ok(await gql(keyA, CLEAR, { p: projectId })).clearFileEdit).toBe(true)
  })

  it("answers NOT_FOUND for another organisation's project, as REST answers 404", async () => {
    const projectId = await createProject(a)
    expect(codesOf(await status(projectId, keyB))).toEqual(["NOT_FOUND"])
    expect(codesOf(await gql(keyB, CLEAR, { p: projectId }))).toEqual(["NOT_FOUND"])
    expect(codesOf(await status(randomUUID()))).toEqual(["NOT_FOUND"])
  })
})

describe("schema", () => {
  it("prints the mutations, and says files go through REST multipart", () => {
    const sdl = schemaSdl()
    for (const signature of [
      "createProject(input: ProjectInput!): Project!",
      "updateProject(id: ID!, input: ProjectPatchInput!): Project!",
      "replaceProject(id: ID!, input: ProjectInput!): Project!",
      "deleteProject(id: ID!): Boolean!",
      "createFolder(input: FolderInput!): Folder!",
      "updateFolder(id: ID!, input: FolderPatchInput!): Folder!",
      "deleteFolder(id: ID!): Boolean!",
      "folders: [Folder!]!",
      "setDocumentTags(projectId: ID!, documentId: ID!, tags: [DocumentTagInput!]!): Document!",
      "copyDocuments(projectId: ID!, targetProjectId: ID!, documentIds: [ID!]!): DocumentCopyResult!",
      "archiveDocument(projectId: ID!, documentId: ID!): Document!",
      "deleteDocument(projectId: ID!, documentId: ID!): Boolean!",
      "createAgent(projectId: ID!, input: AgentInput!): Agent!",
      "updateAgent(projectId: ID!, id: ID!, input: AgentPatchInput!): Agent!",
      "replaceAgent(projectId: ID!, id: ID!, input: AgentInput!): Agent!",
      "deleteAgent(projectId: ID!, id: ID!): Boolean!",
      "launch(projectId: ID!): LaunchResult!",
      "createDimension(projectId: ID!, input: DimensionInput!): Dimension!",
      "updateDimension(projectId: ID!, id: ID!, input: DimensionPatchInput!): Dimension!",
      "deleteDimension(projectId: ID!, id: ID!): Boolean!",
      "overrideResult(projectId: ID!, id: ID!, input: ResultOverrideInput!): ResultDetail!",
      "reviewResult(projectId: ID!, id: ID!, input: ResultReviewInput!): ResultDetail!",
      "fileEditStatus(projectId: ID!): FileEditStatus!",
      "clearFileEdit(projectId: ID!): Boolean!",
    ])
      expect(sdl).toContain(signature)
    expect(sdl).toMatch(/through REST multipart[\s\S]*type Mutation/)
  })
})
