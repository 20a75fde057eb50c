import { randomUUID } from "node:crypto"
import { makeKysely } from "@dxs/db"
import { Agent } from "@dxs/domain/contract/Agent"
import { type Client, createProject, expectProblem, timestamp, uuid } from "@dxs/testing/RestClient"
import { Schema } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startTestApi, type TestApi } from "./harness.ts"

let api: TestApi
let a: Client
let b: Client
let db: ReturnType<typeof makeKysely>

beforeAll(async () => {
  api = await startTestApi()
  a = api.client(await api.newKey("acme"))
  b = api.client(await api.newKey("globex"))
  db = makeKysely(api.dbUrl, 2)
})

afterAll(async () => {
  await db?.destroy()
})

const newProject = (client: Client = a, body: Record<string, unknown> = {}) => createProject(client, body)

const newDimension = async (project: string, body: Record<string, unknown>, client: Client = a) => {
  const r = await client.post(`/projects/${project}/dimensions/`, body)
  expect(r.status).toBe(201)
  return r.body as { id: string; name: string; description: string; [k: string]: unknown }
}

const documentDimension = async (project: string) =>
  (await a.get(`/projects/${project}/dimensions/`)).body.find((d: any) => d.source === "DOCUMENT")

const createAgent = async (project: string, body: Record<string, unknown>, client: Client = a) => {
  const r = await client.post(`/projects/${project}/agents/`, body)
  expect(r.status, JSON.stringify(r.body)).toBe(201)
  return r.body
}

const insertDocument = async (projectId: string, fileName: string, tags: Record<string, string> = {}) => {
  const doc = await db
    .insertInto("documents")
    .values({
      project_id: projectId,
      file_name: fileName,
      type: "PDF",
      blob_key: `test/${randomUUID()}`,
      content_type: "application/pdf",
      size_bytes: 10,
      sha256: "0".repeat(64),
    })
    .returning("id")
    .executeTakeFirstOrThrow()
  for (const [key, value] of Object.entries(tags))
    await db.insertInto("document_tags").values({ document_id: doc.id, key, value }).execute()
  return doc.id
}

const agentRow = (id: string) =>
  db
    .selectFrom("agents")
    .select(["config_version", "extraction_status", "is_draft"])
    .where("id", "=", id)
    .executeTakeFirstOrThrow()

const defaults = {
  template_id: null,
  dimensions: [],
  extraction_status: "Pending",
  requires_attention: false,
  improvement_tip_summary: null,
  extraction_instructions: "",
  value_type: "string",
  unit: "",
  examples: "",
  inconsistency_instructions: "",
  resolution_instructions: "",
  enable_complex_calculations_in_resolution: false,
  enable_web_search: false,
  value_if_not_found: "",
  inconsistency_summary: null,
  agent_type: "extraction",
  derived_prompt: "",
  is_evaluation: false,
  derived_agent_references: [],
}

describe("agents: create, read, list, delete", () => {
  it("creates with 201 and the full record, the same as GET returns", async () => {
    const p = await newProject()
    const created = await a.post(`/projects/${p}/agents/`, { name: "Total amount" })
    expect(created.status).toBe(201)
    expect(created.body).toEqual({
      ...defaults,
      id: uuid,
      project_id: p,
      created_at: timestamp,
      name: "Total amount",
    })
    const got = await a.get(`/projects/${p}/agents/${created.body.id}/`)
    expect(got.status).toBe(200)
    expect(got.body).toEqual(created.body)
  })

  it("stores every supplied field", async () => {
    const p = await newProject()
    const body = {
      name: "Contract value",
      extraction_instructions: "The total contract value",
      value_type: "number",
      unit: "EUR",
      examples: "1,000,000",
      inconsistency_instructions: "Flag differing totals",
      resolution_instructions: "Prefer the signed version",
      enable_complex_calculations_in_resolution: true,
      enable_web_search: true,
      value_if_not_found: "unknown",
    }
    const created = await createAgent(p, body)
    expect(created).toEqual({ ...defaults, ...body, id: uuid, project_id: p, created_at: timestamp })
  })

  it("accepts the legacy value types", async () => {
    const p = await newProject()
    for (const value_type of ["bool", "date", "datetime"]) {
      const agent = await createAgent(p, { name: value_type, value_type })
      expect(agent.value_type).toBe(value_type)
    }
  })

  it("lists most recently created first", async () => {
    const p = await newProject()
    const first = await createAgent(p, { name: "First" })
    const second = await createAgent(p, { name: "Second" })
    const third = await createAgent(p, { name: "Third" })
    const list = await a.get(`/projects/${p}/agents/`)
    expect(list.status).toBe(200)
    expect(list.body).toEqual([third, second, first])
    expect((await a.get(`/projects/${await newProject()}/agents/`)).body).toEqual([])
  })

  it("lists the records exactly as their schema encodes them: its fields, in its order, nothing more", async () => {
    const p = await newProject()
    const country = await newDimension(p, { name: "Country", description: "where" })
    await createAgent(p, { name: "Plain", value_type: "number", unit: "EUR" })
    const attached = await createAgent(p, {
      name: "Split",
      dimensions: [{ dimension_id: country.id, values: ["FR", "DE"] }],
    })
    await createAgent(p, {
      name: "Derived",
      agent_type: "derived",
      derived_prompt: `@"${attached.name}" * 2`,
    })
    for (const query of ["", "?dimension_values=custom", "?is_evaluation=false"]) {
      const list = await a.get(`/projects/${p}/agents/${query}`)
      expect(list.status).toBe(200)
      expect(list.headers.get("content-type")).toMatch(/^application\/json/)
      expect(list.body).toHaveLength(3)
      expect(list.text).toBe(JSON.stringify(Schema.encodeUnknownSync(Schema.Array(Agent))(list.body)))
    }
  })

  it("deletes with 204", async () => {
    const p = await newProject()
    const agent = await createAgent(p, { name: "Doomed" })
    const del = await a.delete(`/projects/${p}/agents/${agent.id}/`)
    expect(del.status).toBe(204)
    expect(del.text).toBe("")
    expectProblem(await a.get(`/projects/${p}/agents/${agent.id}/`), 404)
    expectProblem(await a.delete(`/projects/${p}/agents/${agent.id}/`), 404)
    expect((await a.get(`/projects/${p}/agents/`)).body).toEqual([])
  })

  it("accepts url-encoded and multipart bodies, with dimensions as a JSON string field", async () => {
    const p = await newProject()
    const region = await newDimension(p, { name: "Region" })
    const form = await a.send(
      "POST",
      `/projects/${p}/agents/`,
      new URLSearchParams({
        name: "Form agent",
        value_type: "number",
        enable_web_search: "true",
        unit: "",
        dimensions: JSON.stringify([{ dimension_id: region.id, values: ["EU", "US"] }]),
      }),
      "application/x-www-form-urlencoded",
    )
    expect(form.status).toBe(201)
    expect(form.body).toMatchObject({
      name: "Form agent",
      value_type: "number",
      enable_web_search: true,
      unit: "",
      dimensions: [{ dimension_id: region.id, values: ["EU", "US"], value_count: 2 }],
    })
    const fd = new FormData()
    fd.set("name", "42")
    fd.set("agent_type", "derived")
    fd.set("derived_prompt", '@"Form agent" * 2')
    fd.set("dimensions", JSON.stringify([{ dimension_id: region.id, are_values_dynamic: true }]))
    const multi = await a.send("POST", `/projects/${p}/agents/`, fd)
    expect(multi.status).toBe(201)
    expect(multi.body).toMatchObject({
      name: "42",
      agent_type: "derived",
      derived_agent_references: [{ agent_id: form.body.id, agent_name: "Form agent" }],
      dimensions: [{ dimension_id: region.id, values: [], are_values_dynamic: true }],
    })
    const patch = await a.send(
      "PATCH",
      `/projects/${p}/agents/${form.body.id}/`,
      new URLSearchParams({ dimensions: "[]", enable_web_search: "false" }),
      "application/x-www-form-urlencoded",
    )
    expect(patch.status).toBe(200)
    expect(patch.body).toMatchObject({ name: "Form agent", enable_web_search: false, dimensions: [] })
  })

  it("rejects bad input with 400, never 500", async () => {
    const p = await newProject()
    const agent = await createAgent(p, { name: "Valid" })
    const path = `/projects/${p}/agents/`
    const missing = await a.post(path, { unit: "EUR" })
    expectProblem(missing, 400)
    expect(missing.body.errors.some((e: any) => e.path === "name")).toBe(true)
    expectProblem(await a.post(path, { name: "" }), 400)
    expectProblem(await a.post(path, { name: "  " }), 400)
    expectProblem(await a.post(path, { name: "x", value_type: "money" }), 400)
    expectProblem(await a.post(path, { name: "x", agent_type: "magic" }), 400)
    expectProblem(await a.post(path, { name: "x", enable_web_search: "maybe" }), 400)
    expectProblem(await a.post(path, { name: "x", dimensions: "nope" }), 400)
    expectProblem(await a.post(path, { name: "x", dimensions: [{ values: ["a"] }] }), 400)
    expectProblem(await a.post(path, { name: "x", dimensions: [{ dimension_id: "not-a-uuid" }] }), 400)
    expectProblem(await a.post(path, { name: "x", derived_agent_references: {} }), 400)
    expectProblem(
      await a.post(path, { name: "x", agent_type: "derived", derived_agent_references: [{}] }),
      400,
    )
    expectProblem(await a.send("POST", path, "{not json", "application/json"), 400)
    expectProblem(await a.patch(`${path}${agent.id}/`, { name: "" }), 400)
    expectProblem(await a.put(`${path}${agent.id}/`, { unit: "EUR" }), 400)
    expectProblem(await a.get(`${path}not-a-uuid/`), 400)
    expect((await a.get(`${path}${agent.id}/`)).body).toEqual(agent)
  })
})

describe("agents: dimensions", () => {
  it("attaches custom, dynamic and system dimensions in request order", async () => {
    const p = await newProject()
    const region = await newDimension(p, { name: "Region", description: "Sales region" })
    const product = await newDimension(p, { name: "Product" })
    const document = await documentDimension(p)
    await insertDocument(p, "b-report.pdf", { Segment: "Retail" })
    await insertDocument(p, "a-report.pdf", { Segment: "Enterprise" })
    await insertDocument(p, "c-report.pdf", { Segment: "Retail" })
    const segment = await db
      .insertInto("dimensions")
      .values({ project_id: p, name: "Segment", tag_key: "Segment", source: "TAG" })
      .returning("id")
      .executeTakeFirstOrThrow()
    const agent = await createAgent(p, {
      name: "Revenue",
      dimensions: [
        { dimension_id: product.id, are_values_dynamic: true, values: ["ignored"] },
        { dimension_id: region.id, values: ["EU", "US", "APAC"] },
        { dimension_id: document.id },
        { dimension_id: segment.id, values: [] },
      ],
    })
    expect(agent.dimensions).toEqual([
      {
        dimension_id: product.id,
        dimension_mapping_id: uuid,
        name: "Product",
        description: "",
        values: [],
        value_count: 0,
        order: 0,
        are_values_dynamic: true,
        source: "CUSTOM",
      },
      {
        dimension_id: region.id,
        dimension_mapping_id: uuid,
        name: "Region",
        description: "Sales region",
        values: ["EU", "US", "APAC"],
        value_count: 3,
        order: 1,
        are_values_dynamic: false,
        source: "CUSTOM",
      },
      {
        dimension_id: document.id,
        dimension_mapping_id: uuid,
        name: "Document",
        description: "One value per document",
        values: ["b-report.pdf", "a-report.pdf", "c-report.pdf"],
        value_count: 3,
        order: 2,
        are_values_dynamic: false,
        source: "DOCUMENT",
      },
      {
        dimension_id: segment.id,
        dimension_mapping_id: uuid,
        name: "Segment",
        description: "",
        values: ["Enterprise", "Retail"],
        value_count: 2,
        order: 3,
        are_values_dynamic: false,
        source: "TAG",
      },
    ])
    const mappings = await db
      .selectFrom("agent_dimensions")
      .select(["id", "dimension_id"])
      .where("agent_id", "=", agent.id)
      .execute()
    for (const d of agent.dimensions)
      expect(mappings.find((m) => m.dimension_id === d.dimension_id)?.id).toBe(d.dimension_mapping_id)
    expect((await a.get(`/projects/${p}/agents/${agent.id}/`)).body).toEqual(agent)
    // Beyond the contract: the list without the values of system-managed dimensions, which a project of many
    // documents would make long; custom dimensions keep theirs.
    const light = (await a.get(`/projects/${p}/agents/?dimension_values=custom`)).body
    expect(light[0].dimensions.map((d: any) => [d.name, d.values, d.value_count])).toEqual([
      ["Product", [], 0],
      ["Region", ["EU", "US", "APAC"], 3],
      ["Document", [], 0],
      ["Segment", [], 0],
    ])
    expect((await a.get(`/projects/${p}/agents/?dimension_values=all`)).body[0]).toEqual(agent)
    expectProblem(await a.get(`/projects/${p}/agents/?dimension_values=some`), 400)
  })

  it("updates the dimension for every agent from description and value_type", async () => {
    const p = await newProject()
    const region = await newDimension(p, { name: "Region" })
    const other = await createAgent(p, {
      name: "Other",
      dimensions: [{ dimension_id: region.id, values: ["EU"] }],
    })
    await createAgent(p, {
      name: "Revenue",
      dimensions: [
        { dimension_id: region.id, values: ["EU"], description: "Where sold", value_type: "number" },
      ],
    })
    expect((await a.get(`/projects/${p}/dimensions/${region.id}/`)).body).toMatchObject({
      description: "Where sold",
      value_type: "number",
    })
    const seen = (await a.get(`/projects/${p}/agents/${other.id}/`)).body
    expect(seen.dimensions[0].description).toBe("Where sold")
    // null leaves the value type alone.
    await createAgent(p, {
      name: "Third",
      dimensions: [{ dimension_id: region.id, values: ["EU"], value_type: null }],
    })
    expect((await a.get(`/projects/${p}/dimensions/${region.id}/`)).body.value_type).toBe("number")
  })

  it("rejects invalid dimension entries with 400", async () => {
    const p = await newProject()
    const region = await newDimension(p, { name: "Region" })
    const elsewhere = await newDimension(await newProject(), { name: "Region" })
    const path = `/projects/${p}/agents/`
    const noValues = await a.post(path, { name: "x", dimensions: [{ dimension_id: region.id }] })
    expectProblem(noValues, 400)
    expect(noValues.body.detail).toContain("Region")
    expect(noValues.body.errors).toEqual([{ path: "dimensions/0/values", message: expect.any(String) }])
    expectProblem(
      await a.post(path, { name: "x", dimensions: [{ dimension_id: region.id, values: [] }] }),
      400,
    )
    expectProblem(
      await a.post(path, {
        name: "x",
        dimensions: [{ dimension_id: region.id, are_values_dynamic: false, values: ["EU", ""] }],
      }),
      400,
    )
    expectProblem(
      await a.post(path, { name: "x", dimensions: [{ dimension_id: region.id, values: ["EU", "EU"] }] }),
      400,
    )
    const unknown = await a.post(path, {
      name: "x",
      dimensions: [{ dimension_id: randomUUID(), values: ["a"] }],
    })
    expectProblem(unknown, 400)
    expect(unknown.body.detail).toContain("not a dimension of this project")
    expectProblem(
      await a.post(path, { name: "x", dimensions: [{ dimension_id: elsewhere.id, values: ["a"] }] }),
      400,
    )
    const dup = await a.post(path, {
      name: "x",
      dimensions: [
        { dimension_id: region.id, values: ["EU"] },
        { dimension_id: region.id, values: ["US"] },
      ],
    })
    expectProblem(dup, 400)
    expect(dup.body.detail).toContain("more than once")
    // Nothing was left behind by the rejected bodies.
    expect((await a.get(path)).body).toEqual([])
  })

  it("patch: omitted dimensions stay, a list is authoritative, [] removes all", async () => {
    const p = await newProject()
    const region = await newDimension(p, { name: "Region" })
    const year = await newDimension(p, { name: "Year" })
    const document = await documentDimension(p)
    const agent = await createAgent(p, {
      name: "Revenue",
      dimensions: [
        { dimension_id: region.id, values: ["EU", "US"] },
        { dimension_id: year.id, are_values_dynamic: true },
        { dimension_id: document.id },
      ],
    })
    const path = `/projects/${p}/agents/${agent.id}/`
    const renamed = await a.patch(path, { name: "Turnover" })
    expect(renamed.status).toBe(200)
    expect(renamed.body).toEqual({ ...agent, name: "Turnover" })

    // Reordered, Year dropped (and the system Document too), Region's values changed.
    const listed = await a.patch(path, {
      dimensions: [{ dimension_id: document.id }, { dimension_id: region.id, values: ["APAC"] }],
    })
    expect(listed.status).toBe(200)
    const [regionEntry, docEntry] = agent.dimensions.filter((d: any) => d.dimension_id !== year.id)
    expect(listed.body.dimensions).toEqual([
      { ...docEntry, order: 0 },
      { ...regionEntry, values: ["APAC"], value_count: 1, order: 1 },
    ])
    // An entry with only its id keeps the attachment as it is.
    const kept = await a.patch(path, { dimensions: [{ dimension_id: region.id }] })
    expect(kept.body.dimensions).toEqual([{ ...regionEntry, values: ["APAC"], value_count: 1, order: 0 }])

    const cleared = await a.patch(path, { dimensions: [] })
    expect(cleared.status).toBe(200)
    expect(cleared.body.dimensions).toEqual([])
    expect((await a.get(path)).body).toEqual({ ...agent, name: "Turnover", dimensions: [] })
  })

  it("add_to_all_agents attaches to every other agent and to future agents", async () => {
    const p = await newProject()
    const region = await newDimension(p, { name: "Region" })
    const year = await newDimension(p, { name: "Year" })
    const first = await createAgent(p, { name: "First" })
    const second = await createAgent(p, {
      name: "Second",
      dimensions: [{ dimension_id: year.id, values: ["2024"] }],
    })
    const third = await createAgent(p, {
      name: "Third",
      dimensions: [{ dimension_id: region.id, values: ["Mars"] }],
    })
    const adder = await createAgent(p, {
      name: "Adder",
      dimensions: [{ dimension_id: region.id, values: ["EU", "US"], add_to_all_agents: true }],
    })
    expect(adder.dimensions).toMatchObject([{ dimension_id: region.id, values: ["EU", "US"], order: 0 }])
    expect((await a.get(`/projects/${p}/dimensions/${region.id}/`)).body.auto_attach_to_new_agents).toBe(true)
    const got = async (id: string) => (await a.get(`/projects/${p}/agents/${id}/`)).body.dimensions
    expect(await got(first.id)).toMatchObject([{ dimension_id: region.id, values: ["EU", "US"], order: 0 }])
    expect(await got(second.id)).toMatchObject([
      { dimension_id: year.id, values: ["2024"], order: 0 },
      { dimension_id: region.id, values: ["EU", "US"], order: 1 },
    ])
    // An agent that already had it keeps its own attachment.
    expect(await got(third.id)).toMatchObject([{ dimension_id: region.id, values: ["Mars"] }])
    // Future agents get it with the values of its latest attachment, after the body's own dimensions.
    const later = await createAgent(p, {
      name: "Later",
      dimensions: [{ dimension_id: year.id, values: ["2025"] }],
    })
    expect(later.dimensions).toMatchObject([
      { dimension_id: year.id, values: ["2025"], order: 0 },
      { dimension_id: region.id, values: ["EU", "US"], are_values_dynamic: false, order: 1 },
    ])
    // Mentioning it in the body wins over the automatic attachment.
    const own = await createAgent(p, {
      name: "Own",
      dimensions: [{ dimension_id: region.id, values: ["LATAM"] }],
    })
    expect(own.dimensions).toMatchObject([{ dimension_id: region.id, values: ["LATAM"] }])
    // add_to_all_agents on update works too.
    const upd = await a.patch(`/projects/${p}/agents/${own.id}/`, {
      dimensions: [
        { dimension_id: region.id, values: ["LATAM"] },
        { dimension_id: year.id, are_values_dynamic: true, add_to_all_agents: true },
      ],
    })
    expect(upd.status).toBe(200)
    expect(await got(first.id)).toMatchObject([
      { dimension_id: region.id, order: 0 },
      { dimension_id: year.id, are_values_dynamic: true, values: [], order: 1 },
    ])
  })

  it("auto-attaches the Document dimension when the project was created with auto_attach_document_dimension", async () => {
    const p = await newProject(a, { auto_attach_document_dimension: true })
    await insertDocument(p, "invoice.pdf")
    const document = await documentDimension(p)
    const region = await newDimension(p, { name: "Region" })
    const agent = await createAgent(p, {
      name: "Total",
      dimensions: [{ dimension_id: region.id, values: ["EU"] }],
    })
    expect(agent.dimensions).toEqual([
      expect.objectContaining({ dimension_id: region.id, order: 0 }),
      {
        dimension_id: document.id,
        dimension_mapping_id: uuid,
        name: "Document",
        description: "One value per document",
        values: ["invoice.pdf"],
        value_count: 1,
        order: 1,
        are_values_dynamic: false,
        source: "DOCUMENT",
      },
    ])
    // An explicit [] on update removes it; a patch without dimensions does not bring it back.
    const removed = await a.patch(`/projects/${p}/agents/${agent.id}/`, { dimensions: [] })
    expect(removed.body.dimensions).toEqual([])
    expect((await a.patch(`/projects/${p}/agents/${agent.id}/`, { unit: "EUR" })).body.dimensions).toEqual([])

    const plain = await newProject()
    expect((await createAgent(plain, { name: "Total" })).dimensions).toEqual([])
  })

  it("auto-attaches a custom dimension as dynamic when no agent has it yet", async () => {
    const p = await newProject()
    const year = await newDimension(p, { name: "Year", auto_attach_to_new_agents: true })
    const agent = await createAgent(p, { name: "Total" })
    expect(agent.dimensions).toEqual([
      {
        dimension_id: year.id,
        dimension_mapping_id: uuid,
        name: "Year",
        description: "",
        values: [],
        value_count: 0,
        order: 0,
        are_values_dynamic: true,
        source: "CUSTOM",
      },
    ])
    await a.patch(`/projects/${p}/agents/${agent.id}/`, {
      dimensions: [{ dimension_id: year.id, values: ["2024"] }],
    })
    const next = await createAgent(p, { name: "Next" })
    expect(next.dimensions).toMatchObject([
      { dimension_id: year.id, values: ["2024"], are_values_dynamic: false },
    ])
  })
})

describe("agents: patch and put", () => {
  it("patch changes only the supplied fields", async () => {
    const p = await newProject()
    const agent = await createAgent(p, { name: "A", unit: "EUR", examples: "10", enable_web_search: true })
    const r = await a.patch(`/projects/${p}/agents/${agent.id}/`, {
      examples: "20",
      value_if_not_found: "none",
    })
    expect(r.status).toBe(200)
    expect(r.body).toEqual({ ...agent, examples: "20", value_if_not_found: "none" })
    const empty = await a.patch(`/projects/${p}/agents/${agent.id}/`, {})
    expect(empty.body).toEqual(r.body)
  })

  it("put resets omitted fields to their defaults and keeps the agent type when omitted", async () => {
    const p = await newProject()
    const region = await newDimension(p, { name: "Region" })
    const source = await createAgent(p, { name: "Source" })
    const agent = await createAgent(p, {
      name: "Derived",
      agent_type: "derived",
      derived_prompt: "@Source + 1",
      unit: "EUR",
      is_evaluation: true,
      dimensions: [{ dimension_id: region.id, values: ["EU"] }],
    })
    expect(agent).toMatchObject({ value_type: "number", is_evaluation: true })
    const r = await a.put(`/projects/${p}/agents/${agent.id}/`, { name: "Replaced", derived_prompt: "2 * 2" })
    expect(r.status).toBe(200)
    expect(r.body).toEqual({
      ...defaults,
      id: agent.id,
      project_id: p,
      created_at: agent.created_at,
      name: "Replaced",
      agent_type: "derived",
      derived_prompt: "2 * 2",
    })
    const typed = await a.put(`/projects/${p}/agents/${agent.id}/`, {
      name: "Extraction",
      agent_type: "extraction",
    })
    expect(typed.body).toMatchObject({ agent_type: "extraction", derived_agent_references: [] })
    expect(source.id).toEqual(expect.any(String))
  })

  it("bumps config_version and resets extraction_status only when a clearing field changes (launch rule 7)", async () => {
    const p = await newProject()
    const region = await newDimension(p, { name: "Region" })
    const agent = await createAgent(p, { name: "Total", unit: "EUR" })
    const path = `/projects/${p}/agents/${agent.id}/`
    expect(await agentRow(agent.id)).toEqual({
      config_version: 1,
      extraction_status: "Pending",
      is_draft: false,
    })
    await db
      .updateTable("agents")
      .set({ extraction_status: "Processed" })
      .where("id", "=", agent.id)
      .execute()

    // Fields outside the eight never clear.
    for (const body of [
      { name: "Grand total" },
      { value_if_not_found: "n/a" },
      { dimensions: [{ dimension_id: region.id, values: ["EU"] }] },
      { unit: "EUR" },
      { value_type: "string" },
    ]) {
      expect((await a.patch(path, body)).status).toBe(200)
      expect(await agentRow(agent.id)).toEqual({
        config_version: 1,
        extraction_status: "Processed",
        is_draft: false,
      })
    }
    const changed = await a.patch(path, { unit: "USD" })
    expect(changed.body).toMatchObject({ unit: "USD", extraction_status: "Pending" })
    expect(await agentRow(agent.id)).toEqual({
      config_version: 2,
      extraction_status: "Pending",
      is_draft: false,
    })

    let version = 2
    for (const body of [
      { extraction_instructions: "the grand total" },
      { value_type: "number" },
      { examples: "1 000" },
      { resolution_instructions: "latest wins" },
      { inconsistency_instructions: "ignore rounding" },
      { enable_complex_calculations_in_resolution: true },
      { enable_web_search: true },
    ]) {
      expect((await a.patch(path, body)).status).toBe(200)
      version += 1
      expect((await agentRow(agent.id)).config_version).toBe(version)
    }
    // A put that resets clearing fields to defaults changes them too.
    expect((await a.put(path, { name: "Grand total" })).status).toBe(200)
    expect((await agentRow(agent.id)).config_version).toBe(version + 1)
    expect((await a.put(path, { name: "Grand total" })).status).toBe(200)
    expect((await agentRow(agent.id)).config_version).toBe(version + 1)
  })

  it("returns 404 for an agent of another project and unknown ids", async () => {
    const p1 = await newProject()
    const p2 = await newProject()
    const agent = await createAgent(p1, { name: "Mine" })
    const elsewhere = `/projects/${p2}/agents/${agent.id}/`
    expectProblem(await a.get(elsewhere), 404)
    expectProblem(await a.patch(elsewhere, { name: "x" }), 404)
    expectProblem(await a.put(elsewhere, { name: "x" }), 404)
    expectProblem(await a.delete(elsewhere), 404)
    expectProblem(await a.get(`/projects/${p1}/agents/${randomUUID()}/`), 404)
    expectProblem(await a.post(`/projects/${randomUUID()}/agents/`, { name: "x" }), 404)
  })
})

describe("agents: derived references", () => {
  it("resolves references by id and by exact name, returning both", async () => {
    const p = await newProject()
    const revenue = await createAgent(p, { name: "Revenue" })
    const costs = await createAgent(p, { name: "Costs" })
    const derived = await createAgent(p, {
      name: "Margin",
      agent_type: "derived",
      derived_prompt: "difference of the two",
      derived_agent_references: [{ agent_id: revenue.id }, { agent_name: "Costs" }, { agent_id: revenue.id }],
    })
    expect(derived).toEqual({
      ...defaults,
      id: uuid,
      project_id: p,
      created_at: timestamp,
      name: "Margin",
      agent_type: "derived",
      derived_prompt: "difference of the two",
      derived_agent_references: [
        { agent_id: revenue.id, agent_name: "Revenue" },
        { agent_id: costs.id, agent_name: "Costs" },
      ],
    })
    // An id of another project falls back to the name (the portable identifier).
    const other = await newProject()
    const foreign = await createAgent(other, { name: "Revenue" })
    const ported = await createAgent(p, {
      name: "Ported",
      agent_type: "derived",
      derived_prompt: "x",
      derived_agent_references: [{ agent_id: foreign.id, agent_name: "Revenue" }],
    })
    expect(ported.derived_agent_references).toEqual([{ agent_id: revenue.id, agent_name: "Revenue" }])
    // References follow renames of the referenced agent.
    await a.patch(`/projects/${p}/agents/${costs.id}/`, { name: "Expenses" })
    expect((await a.get(`/projects/${p}/agents/${derived.id}/`)).body.derived_agent_references).toEqual([
      { agent_id: revenue.id, agent_name: "Revenue" },
      { agent_id: costs.id, agent_name: "Expenses" },
    ])
  })

  it("rejects unknown and ambiguous references with 400 naming the reference", async () => {
    const p = await newProject()
    await createAgent(p, { name: "Twin" })
    await createAgent(p, { name: "Twin" })
    const path = `/projects/${p}/agents/`
    const unknown = await a.post(path, {
      name: "D",
      agent_type: "derived",
      derived_prompt: "x",
      derived_agent_references: [{ agent_name: "Ghost" }],
    })
    expectProblem(unknown, 400)
    expect(unknown.body.detail).toContain("Ghost")
    const unknownId = randomUUID()
    const byId = await a.post(path, {
      name: "D",
      agent_type: "derived",
      derived_prompt: "x",
      derived_agent_references: [{ agent_id: unknownId }],
    })
    expectProblem(byId, 400)
    expect(byId.body.detail).toContain(unknownId)
    const ambiguous = await a.post(path, {
      name: "D",
      agent_type: "derived",
      derived_prompt: "x",
      derived_agent_references: [{ agent_name: "Twin" }],
    })
    expectProblem(ambiguous, 400)
    expect(ambiguous.body.detail).toContain("Twin")
    expect(ambiguous.body.detail).toContain("ambiguous")
    const mentionAmbiguous = await a.post(path, {
      name: "D",
      agent_type: "derived",
      derived_prompt: "@Twin * 2",
    })
    expectProblem(mentionAmbiguous, 400)
    expect(mentionAmbiguous.body.detail).toContain("Twin")
    expect((await a.get(path)).body.map((x: any) => x.name)).toEqual(["Twin", "Twin"])
  })

  it("adds @Name mentions of the prompt to the references; unknown mentions are 400", async () => {
    const p = await newProject()
    const revenue = await createAgent(p, { name: "Revenue" })
    const netIncome = await createAgent(p, { name: "Net income" })
    await insertDocument(p, "annual-report.pdf")
    const derived = await createAgent(p, {
      name: "Ratio",
      agent_type: "derived",
      derived_prompt: '@"Net income" / @Revenue, see @"annual-report.pdf" and mail@example.com',
    })
    expect(derived.derived_agent_references).toEqual([
      { agent_id: netIncome.id, agent_name: "Net income" },
      { agent_id: revenue.id, agent_name: "Revenue" },
    ])
    const unknown = await a.post(`/projects/${p}/agents/`, {
      name: "Bad",
      agent_type: "derived",
      derived_prompt: "@Revenue + @Profit",
    })
    expectProblem(unknown, 400)
    expect(unknown.body.detail).toContain("@Profit")
    // Explicit references come first, mentions are added after them.
    const both = await a.patch(`/projects/${p}/agents/${derived.id}/`, {
      derived_agent_references: [{ agent_name: "Revenue" }],
      derived_prompt: "@Revenue - @[Net income]",
    })
    expect(both.body.derived_agent_references).toEqual([
      { agent_id: revenue.id, agent_name: "Revenue" },
      { agent_id: netIncome.id, agent_name: "Net income" },
    ])
  })

  it("reads @Name as the longest agent or document name that follows, so names may have spaces", async () => {
    const p = await newProject()
    const invoice = await createAgent(p, { name: "Invoice" })
    const total = await createAgent(p, { name: "Invoice total" })
    const vat = await createAgent(p, { name: "VAT rate" })
    await insertDocument(p, "supplier terms.pdf")
    const derived = await createAgent(p, {
      name: "Gross",
      agent_type: "derived",
      derived_prompt: "@Invoice total * (1 + @VAT rate) for @Invoice, as in @supplier terms.pdf",
    })
    expect(derived.derived_agent_references).toEqual([
      { agent_id: total.id, agent_name: "Invoice total" },
      { agent_id: vat.id, agent_name: "VAT rate" },
      { agent_id: invoice.id, agent_name: "Invoice" },
    ])
    const unknown = await a.post(`/projects/${p}/agents/`, {
      name: "Bad",
      agent_type: "derived",
      derived_prompt: "@Invoice totals + @Discount rate",
    })
    expectProblem(unknown, 400)
    expect(unknown.body.detail).toContain("@Discount")
  })

  it("rejects a self reference and a cycle through derived agents with 400", async () => {
    const p = await newProject()
    const base = await createAgent(p, { name: "Base" })
    const self = await a.post(`/projects/${p}/agents/`, {
      name: "Selfish",
      agent_type: "derived",
      derived_prompt: "@Selfish + 1",
    })
    expectProblem(self, 400)
    expect(self.body.detail).toContain("Selfish")
    const first = await createAgent(p, { name: "First", agent_type: "derived", derived_prompt: "@Base * 2" })
    const second = await createAgent(p, {
      name: "Second",
      agent_type: "derived",
      derived_prompt: "@First * 2",
    })
    const selfById = await a.patch(`/projects/${p}/agents/${first.id}/`, {
      derived_agent_references: [{ agent_id: first.id }],
    })
    expectProblem(selfById, 400)
    const cycle = await a.patch(`/projects/${p}/agents/${first.id}/`, { derived_prompt: "@Base * @Second" })
    expectProblem(cycle, 400)
    expect(cycle.body.detail).toContain("cycle")
    expect(cycle.body.detail).toContain('"First" -> "Second" -> "First"')
    // Nothing changed.
    expect((await a.get(`/projects/${p}/agents/${first.id}/`)).body).toEqual(first)
    expect(first.derived_agent_references).toEqual([{ agent_id: base.id, agent_name: "Base" }])
    expect(second.derived_agent_references).toEqual([{ agent_id: first.id, agent_name: "First" }])
    // A chain is fine, and an extraction agent never has references.
    const third = await createAgent(p, {
      name: "Third",
      agent_type: "derived",
      derived_prompt: "@Second + @First",
    })
    expect(third.derived_agent_references.map((r: any) => r.agent_name)).toEqual(["Second", "First"])
    const plain = await createAgent(p, {
      name: "Plain",
      derived_prompt: "@Nobody",
      derived_agent_references: [],
    })
    expect(plain.derived_agent_references).toEqual([])
  })

  it("forces value_type number for evaluation agents", async () => {
    const p = await newProject()
    await createAgent(p, { name: "Answer" })
    const evaluation = await createAgent(p, {
      name: "Score",
      agent_type: "derived",
      derived_prompt: "Is @Answer correct?",
      is_evaluation: true,
      value_type: "string",
    })
    expect(evaluation).toMatchObject({ is_evaluation: true, value_type: "number" })
    const patched = await a.patch(`/projects/${p}/agents/${evaluation.id}/`, { value_type: "string" })
    expect(patched.body.value_type).toBe("number")
  })

  it("counts only non-draft agents in the project's agent_count", async () => {
    const p = await newProject()
    await createAgent(p, { name: "Extract" })
    const draft = await createAgent(p, { name: "Draft", agent_type: "derived" })
    await createAgent(p, { name: "Blank", agent_type: "derived", derived_prompt: "   " })
    expect((await agentRow(draft.id)).is_draft).toBe(true)
    expect((await a.get(`/projects/${p}/`)).body.agent_count).toBe(1)
    await a.patch(`/projects/${p}/agents/${draft.id}/`, { derived_prompt: "@Extract * 2" })
    expect((await agentRow(draft.id)).is_draft).toBe(false)
    expect((await a.get(`/projects/${p}/`)).body.agent_count).toBe(2)
    await a.patch(`/projects/${p}/agents/${draft.id}/`, { agent_type: "extraction", derived_prompt: "" })
    expect((await a.get(`/projects/${p}/`)).body.agent_count).toBe(2)
    await a.delete(`/projects/${p}/agents/${draft.id}/`)
    expect((await a.get(`/projects/${p}/`)).body.agent_count).toBe(1)
  })
})

describe("agents: tenancy", () => {
  it("is tenant-scoped: another organisation's project, agents and dimensions are 404 or 400, never listed", async () => {
    const p = await newProject(a)
    const region = await newDimension(p, { name: "Region" })
    const agent = await createAgent(p, { name: "Secret" })
    const path = `/projects/${p}/agents/${agent.id}/`
    expectProblem(await b.get(`/projects/${p}/agents/`), 404)
    expectProblem(await b.post(`/projects/${p}/agents/`, { name: "Mine" }), 404)
    expectProblem(await b.get(path), 404)
    expectProblem(await b.patch(path, { name: "stolen" }), 404)
    expectProblem(await b.put(path, { name: "stolen" }), 404)
    expectProblem(await b.delete(path), 404)
    const theirs = await newProject(b)
    expectProblem(await b.get(`/projects/${theirs}/agents/${agent.id}/`), 404)
    expectProblem(
      await b.post(`/projects/${theirs}/agents/`, {
        name: "x",
        dimensions: [{ dimension_id: region.id, values: ["EU"] }],
      }),
      400,
    )
    const byId = await b.post(`/projects/${theirs}/agents/`, {
      name: "x",
      agent_type: "derived",
      derived_prompt: "y",
      derived_agent_references: [{ agent_id: agent.id }],
    })
    expectProblem(byId, 400)
    expect((await b.get(`/projects/${theirs}/agents/`)).body).toEqual([])
    expect((await a.get(path)).body).toEqual(agent)
    expectProblem(await api.client(undefined).get(`/projects/${p}/agents/`), 401)
  })
})
