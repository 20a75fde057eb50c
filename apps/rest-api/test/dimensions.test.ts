import { randomUUID } from "node:crypto"
import { makeKysely } from "@dxs/db"
import { type Client, createProject, expectProblem, timestamp, uuid } from "@dxs/testing/RestClient"
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

/** A document row with one tag, inserted directly (upload is not under test here). */
const insertTaggedDocument = async (projectId: string, fileName: string, tags: Record<string, string>) => {
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

describe("dimensions", () => {
  it("lists the system Document dimension of a new project", async () => {
    const p = await newProject()
    const r = await a.get(`/projects/${p}/dimensions/`)
    expect(r.status).toBe(200)
    expect(r.body).toEqual([
      {
        id: uuid,
        project_id: p,
        name: "Document",
        description: "One value per document",
        example_values: "",
        value_type: "string",
        source: "DOCUMENT",
        auto_attach_to_new_agents: false,
        created_at: timestamp,
      },
    ])
    const attached = await newProject(a, { auto_attach_document_dimension: true })
    const r2 = await a.get(`/projects/${attached}/dimensions/`)
    expect(r2.body[0]).toMatchObject({ name: "Document", auto_attach_to_new_agents: true })
  })

  it("creates with 201 and defaults, gets it, and lists oldest first", async () => {
    const p = await newProject()
    const created = await a.post(`/projects/${p}/dimensions/`, { name: "Region" })
    expect(created.status).toBe(201)
    expect(created.body).toEqual({
      id: uuid,
      project_id: p,
      name: "Region",
      description: "",
      example_values: "",
      value_type: "string",
      source: "CUSTOM",
      auto_attach_to_new_agents: false,
      created_at: timestamp,
    })
    const full = await a.post(`/projects/${p}/dimensions/`, {
      name: " Year ",
      description: "Fiscal year",
      example_values: "2023, 2024",
      value_type: "number",
      auto_attach_to_new_agents: true,
    })
    expect(full.status).toBe(201)
    expect(full.body).toEqual({
      id: uuid,
      project_id: p,
      name: "Year",
      description: "Fiscal year",
      example_values: "2023, 2024",
      value_type: "number",
      source: "CUSTOM",
      auto_attach_to_new_agents: true,
      created_at: timestamp,
    })
    const got = await a.get(`/projects/${p}/dimensions/${created.body.id}/`)
    expect(got.status).toBe(200)
    expect(got.body).toEqual(created.body)
    const list = await a.get(`/projects/${p}/dimensions/`)
    expect(list.status).toBe(200)
    expect(list.body.map((d: any) => d.name)).toEqual(["Document", "Region", "Year"])
    expect(list.body[2]).toEqual(full.body)
  })

  it("accepts legacy value types", async () => {
    const p = await newProject()
    for (const value_type of ["bool", "date", "datetime"]) {
      const r = await a.post(`/projects/${p}/dimensions/`, { name: `D ${value_type}`, value_type })
      expect(r.status).toBe(201)
      expect(r.body.value_type).toBe(value_type)
    }
  })

  it("accepts url-encoded and multipart bodies", async () => {
    const p = await newProject()
    const form = await a.send(
      "POST",
      `/projects/${p}/dimensions/`,
      new URLSearchParams({ name: "Quarter", value_type: "number", auto_attach_to_new_agents: "true" }),
      "application/x-www-form-urlencoded",
    )
    expect(form.status).toBe(201)
    expect(form.body).toMatchObject({
      name: "Quarter",
      value_type: "number",
      auto_attach_to_new_agents: true,
    })
    const fd = new FormData()
    fd.set("name", "2024")
    fd.set("example_values", "a,b")
    const multi = await a.send("POST", `/projects/${p}/dimensions/`, fd)
    expect(multi.status).toBe(201)
    expect(multi.body).toMatchObject({
      name: "2024",
      example_values: "a,b",
      auto_attach_to_new_agents: false,
    })
    const patchForm = await a.send(
      "PATCH",
      `/projects/${p}/dimensions/${form.body.id}/`,
      new URLSearchParams({ description: "Q1-Q4" }),
      "application/x-www-form-urlencoded",
    )
    expect(patchForm.status).toBe(200)
    expect(patchForm.body).toMatchObject({ name: "Quarter", description: "Q1-Q4", value_type: "number" })
  })

  it("rejects names colliding with another dimension, Document or a tag key with 409", async () => {
    const p = await newProject()
    expect((await a.post(`/projects/${p}/dimensions/`, { name: "Region" })).status).toBe(201)
    const dup = await a.post(`/projects/${p}/dimensions/`, { name: "REGION" })
    expectProblem(dup, 409)
    expect(dup.body.detail).toContain("Region")
    const doc = await a.post(`/projects/${p}/dimensions/`, { name: "document" })
    expectProblem(doc, 409)
    expect(doc.body.detail).toContain("Document")
    await insertTaggedDocument(p, "a.pdf", { Customer: "ACME" })
    const tag = await a.post(`/projects/${p}/dimensions/`, { name: "customer" })
    expectProblem(tag, 409)
    expect(tag.body.detail).toContain("tag key")
    // The same names are free in another project.
    const other = await newProject()
    for (const name of ["region", "customer"])
      expect((await a.post(`/projects/${other}/dimensions/`, { name })).status).toBe(201)
  })

  it("applies the collision rules to renames", async () => {
    const p = await newProject()
    const region = await a.post(`/projects/${p}/dimensions/`, { name: "Region" })
    const year = await a.post(`/projects/${p}/dimensions/`, { name: "Year" })
    await insertTaggedDocument(p, "b.pdf", { Segment: "Retail" })
    const path = `/projects/${p}/dimensions/${year.body.id}/`
    expectProblem(await a.patch(path, { name: "region" }), 409)
    expectProblem(await a.patch(path, { name: "Document" }), 409)
    expectProblem(await a.patch(path, { name: "SEGMENT" }), 409)
    // Renaming to itself in another case is fine.
    const recased = await a.patch(path, { name: "YEAR" })
    expect(recased.status).toBe(200)
    expect(recased.body.name).toBe("YEAR")
    const renamed = await a.patch(`/projects/${p}/dimensions/${region.body.id}/`, { name: "Country" })
    expect(renamed.status).toBe(200)
    expect(renamed.body).toEqual({ ...region.body, name: "Country" })
  })

  it("patches only the supplied fields", async () => {
    const p = await newProject()
    const d = await a.post(`/projects/${p}/dimensions/`, {
      name: "Region",
      description: "Sales region",
      example_values: "EU, US",
    })
    const path = `/projects/${p}/dimensions/${d.body.id}/`
    const r = await a.patch(path, { value_type: "number" })
    expect(r.status).toBe(200)
    expect(r.body).toEqual({ ...d.body, value_type: "number" })
    const r2 = await a.patch(path, {
      description: "",
      example_values: "APAC",
      auto_attach_to_new_agents: true,
    })
    expect(r2.body).toEqual({
      ...d.body,
      value_type: "number",
      description: "",
      example_values: "APAC",
      auto_attach_to_new_agents: true,
    })
    const empty = await a.patch(path, {})
    expect(empty.status).toBe(200)
    expect(empty.body).toEqual(r2.body)
    expect((await a.get(path)).body).toEqual(r2.body)
  })

  it("rejects bad input with 400", async () => {
    const p = await newProject()
    expectProblem(await a.post(`/projects/${p}/dimensions/`, {}), 400)
    expectProblem(await a.post(`/projects/${p}/dimensions/`, { name: "" }), 400)
    expectProblem(await a.post(`/projects/${p}/dimensions/`, { name: "   " }), 400)
    expectProblem(await a.post(`/projects/${p}/dimensions/`, { name: "x", value_type: "money" }), 400)
    expectProblem(await a.post(`/projects/${p}/dimensions/`, { name: 12 }), 400)
    expectProblem(await a.send("POST", `/projects/${p}/dimensions/`, "{nope", "application/json"), 400)
    const d = await a.post(`/projects/${p}/dimensions/`, { name: "Region" })
    expectProblem(await a.patch(`/projects/${p}/dimensions/${d.body.id}/`, { name: "" }), 400)
    expectProblem(await a.get(`/projects/${p}/dimensions/not-a-uuid/`), 400)
    expectProblem(await a.get(`/projects/not-a-uuid/dimensions/`), 400)
  })

  it("protects the system-managed dimensions", async () => {
    const p = await newProject()
    const [document] = (await a.get(`/projects/${p}/dimensions/`)).body
    const path = `/projects/${p}/dimensions/${document.id}/`
    const rename = await a.patch(path, { name: "File" })
    expectProblem(rename, 409)
    expect(rename.body.detail).toContain("system-managed")
    const del = await a.delete(path)
    expectProblem(del, 409)
    expect(del.body.detail).toContain("cannot be deleted")
    // Its other fields can change, and supplying the current name is not a rename.
    const described = await a.patch(path, { name: "Document", description: "Each file" })
    expect(described.status).toBe(200)
    expect(described.body).toEqual({ ...document, description: "Each file" })

    await insertTaggedDocument(p, "c.pdf", { Vendor: "Initech" })
    const tag = await db
      .insertInto("dimensions")
      .values({ project_id: p, name: "Vendor", tag_key: "Vendor", source: "TAG" })
      .returning("id")
      .executeTakeFirstOrThrow()
    expectProblem(await a.delete(`/projects/${p}/dimensions/${tag.id}/`), 409)
    expectProblem(await a.patch(`/projects/${p}/dimensions/${tag.id}/`, { name: "Supplier" }), 409)
    expect((await a.get(`/projects/${p}/dimensions/${tag.id}/`)).body).toMatchObject({
      name: "Vendor",
      source: "TAG",
    })
  })

  it("deletes a custom dimension with 204, detaching it from agents", async () => {
    const p = await newProject()
    const d = await a.post(`/projects/${p}/dimensions/`, { name: "Region" })
    const agent = await a.post(`/projects/${p}/agents/`, {
      name: "Revenue",
      dimensions: [{ dimension_id: d.body.id, values: ["EU", "US"] }],
    })
    expect(agent.status).toBe(201)
    expect(agent.body.dimensions).toHaveLength(1)
    const del = await a.delete(`/projects/${p}/dimensions/${d.body.id}/`)
    expect(del.status).toBe(204)
    expect(del.text).toBe("")
    expectProblem(await a.get(`/projects/${p}/dimensions/${d.body.id}/`), 404)
    expectProblem(await a.delete(`/projects/${p}/dimensions/${d.body.id}/`), 404)
    expect((await a.get(`/projects/${p}/agents/${agent.body.id}/`)).body.dimensions).toEqual([])
    // The name is free again.
    expect((await a.post(`/projects/${p}/dimensions/`, { name: "region" })).status).toBe(201)
  })

  it("answers 404 for a dimension of another project and for unknown ids", async () => {
    const p1 = await newProject()
    const p2 = await newProject()
    const d = await a.post(`/projects/${p1}/dimensions/`, { name: "Region" })
    const elsewhere = `/projects/${p2}/dimensions/${d.body.id}/`
    expectProblem(await a.get(elsewhere), 404)
    expectProblem(await a.patch(elsewhere, { name: "x" }), 404)
    expectProblem(await a.delete(elsewhere), 404)
    expectProblem(await a.get(`/projects/${p1}/dimensions/${randomUUID()}/`), 404)
    expectProblem(await a.get(`/projects/${randomUUID()}/dimensions/`), 404)
  })

  it("is tenant-scoped: another organisation's project and dimensions are 404 and never listed", async () => {
    const p = await newProject(a)
    const d = await a.post(`/projects/${p}/dimensions/`, { name: "Secret" })
    expectProblem(await b.get(`/projects/${p}/dimensions/`), 404)
    expectProblem(await b.post(`/projects/${p}/dimensions/`, { name: "Mine" }), 404)
    expectProblem(await b.get(`/projects/${p}/dimensions/${d.body.id}/`), 404)
    expectProblem(await b.patch(`/projects/${p}/dimensions/${d.body.id}/`, { name: "stolen" }), 404)
    expectProblem(await b.delete(`/projects/${p}/dimensions/${d.body.id}/`), 404)
    const theirs = await newProject(b)
    expectProblem(await b.get(`/projects/${theirs}/dimensions/${d.body.id}/`), 404)
    const list = await b.get(`/projects/${theirs}/dimensions/`)
    expect(list.body.map((x: any) => x.id)).not.toContain(d.body.id)
    expect(list.body.map((x: any) => x.name)).toEqual(["Document"])
    expect((await a.get(`/projects/${p}/dimensions/${d.body.id}/`)).body.name).toBe("Secret")
    expectProblem(await api.client(undefined).get(`/projects/${p}/dimensions/`), 401)
  })
})
