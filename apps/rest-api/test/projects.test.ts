import { makeKysely } from "@dxs/db"
import { type Client, createProject, expectProblem } from "@dxs/testing/RestClient"
import { sql } from "kysely"
import { beforeAll, describe, expect, it } from "vitest"
import { startTestApi, type TestApi } from "./harness.ts"

let api: TestApi
let a: Client
let b: Client

beforeAll(async () => {
  api = await startTestApi()
  a = api.client(await api.newKey("acme"))
  b = api.client(await api.newKey("globex"))
})

describe("authentication", () => {
  it("refuses a missing, malformed, unknown or revoked key with 401 problem+json", async () => {
    expectProblem(await api.client(undefined).get("/projects/"), 401)
    expectProblem(await api.client("nope").get("/projects/"), 401)
    expectProblem(await api.client(`dxs_live_${"a".repeat(32)}`).get("/projects/"), 401)
  })
})

describe("projects", () => {
  it("creates with 201 and the spec's fields", async () => {
    const r = await a.post("/projects/", {
      name: "Contracts",
      description: "NDAs",
      reference_date: "2026-01-31",
    })
    expect(r.status).toBe(201)
    expect(r.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      name: "Contracts",
      description: "NDAs",
      created_at: expect.any(String),
      last_visited_at: null,
      reference_date: "2026-01-31",
      auto_archive_after_days: null,
      document_count: 0,
      agent_count: 0,
      is_pinned: false,
      folder_id: null,
      project_modules: {},
      target_output_schema: null,
      output_mapping_status: "none",
    })
  })

  it("defaults reference_date to the creation date", async () => {
    const r = await a.post("/projects/", { name: "Dated" })
    expect(r.body.reference_date).toBe(new Date().toISOString().slice(0, 10))
  })

  it("accepts url-encoded and multipart bodies", async () => {
    const form = await a.send(
      "POST",
      "/projects/",
      new URLSearchParams({ name: "Form project", auto_archive_after_days: "30", is_pinned: "true" }),
      "application/x-www-form-urlencoded",
    )
    expect(form.status).toBe(201)
    expect(form.body).toMatchObject({ name: "Form project", auto_archive_after_days: 30, is_pinned: true })
    const fd = new FormData()
    fd.set("name", "123")
    fd.set("reference_date", "")
    const multi = await a.send("POST", "/projects/", fd)
    expect(multi.status).toBe(201)
    expect(multi.body).toMatchObject({ name: "123", reference_date: null })
  })

  it("rejects bad input with 400 problem+json naming the field", async () => {
    const missing = await a.post("/projects/", { description: "no name" })
    expectProblem(missing, 400)
    expect(missing.body.errors.some((e: any) => e.path === "name")).toBe(true)
    expectProblem(await a.post("/projects/", { name: "" }), 400)
    const badDate = await a.post("/projects/", { name: "x", reference_date: "31/01/2026" })
    expectProblem(badDate, 400)
    expect(badDate.body.detail).toContain("reference_date")
    expectProblem(
      await a.post("/projects/", { name: "x", folder_id: "00000000-0000-4000-8000-000000000000" }),
      400,
    )
    expectProblem(await a.send("POST", "/projects/", "{not json", "application/json"), 400)
    expectProblem(await a.get("/projects/not-a-uuid/"), 400)
  })

  it("lists live projects ordered by name, and filters by folder", async () => {
    const folder = await a.post("/folders/", { name: "Legal" })
    expect(folder.status).toBe(201)
    await a.post("/projects/", { name: "zeta", folder_id: folder.body.id })
    await a.post("/projects/", { name: "Alpha" })
    const all = await a.get("/projects/")
    expect(all.status).toBe(200)
    const names = all.body.map((p: any) => p.name)
    expect(names).toEqual(
      [...names].sort((x: string, y: string) => x.toLowerCase().localeCompare(y.toLowerCase())),
    )
    expect(names).toContain("zeta")
    const inFolder = await a.get(`/projects/?folder_id=${folder.body.id}`)
    expect(inFolder.body.map((p: any) => p.name)).toEqual(["zeta"])
    const unfiled = await a.get("/projects/?folder_id=")
    expect(unfiled.body.map((p: any) => p.name)).not.toContain("zeta")
    expect(unfiled.body.length).toBe(all.body.length - 1)
  })

  it("reads a project while a launch holds it, recording no visit then", async () => {
    const id = (await a.post("/projects/", { name: "Held" })).body.id
    const first = (await a.get(`/projects/${id}/`)).body.last_visited_at
    expect(first).not.toBeNull()
    const db = makeKysely(api.dbUrl, 1)
    try {
      // As a launch does, for as long as it plans its tasks.
      await db.transaction().execute(async (trx) => {
        await sql`select id from projects where id = ${id}::uuid for no key update`.execute(trx)
        const got = await a.get(`/projects/${id}/`)
        expect(got.status).toBe(200)
        expect(got.body.name).toBe("Held")
        expect(got.body.last_visited_at).toBe(first)
      })
    } finally {
      await db.destroy()
    }
    expect((await a.get(`/projects/${id}/`)).body.last_visited_at).not.toBe(first)
  })

  it("gets (recording the visit), patches only supplied fields, puts, and deletes", async () => {
    const created = await a.post("/projects/", { name: "Lifecycle", description: "d" })
    const id = created.body.id
    const got = await a.get(`/projects/${id}/`)
    expect(got.status).toBe(200)
    expect(got.body.last_visited_at).not.toBeNull()
    const patched = await a.patch(`/projects/${id}/`, { is_pinned: true, auto_archive_after_days: 7 })
    expect(patched.body).toMatchObject({
      name: "Lifecycle",
      description: "d",
      is_pinned: true,
      auto_archive_after_days: 7,
    })
    const put = await a.put(`/projects/${id}/`, { name: "Replaced" })
    expect(put.body).toMatchObject({
      name: "Replaced",
      description: "",
      is_pinned: false,
      auto_archive_after_days: null,
    })
    expectProblem(await a.put(`/projects/${id}/`, { description: "no name" }), 400)
    const del = await a.delete(`/projects/${id}/`)
    expect(del.status).toBe(204)
    expectProblem(await a.get(`/projects/${id}/`), 404)
    expectProblem(await a.delete(`/projects/${id}/`), 404)
  })

  it("reports status", async () => {
    const p = await a.post("/projects/", { name: "Status" })
    const s = await a.get(`/projects/${p.body.id}/status/`)
    expect(s.status).toBe(200)
    expect(s.body).toEqual({
      pipeline_running: false,
      schema_status: "none",
      parsing_state: "idle",
      document_count: 0,
      documents_by_status: { Pending: 0, Processed: 0, Failed: 0 },
    })
  })

  it("is tenant-scoped: another organisation's project is 404 and never listed", async () => {
    const mine = await a.post("/projects/", { name: "Secret" })
    const id = mine.body.id
    expectProblem(await b.get(`/projects/${id}/`), 404)
    expectProblem(await b.patch(`/projects/${id}/`, { name: "stolen" }), 404)
    expectProblem(await b.put(`/projects/${id}/`, { name: "stolen" }), 404)
    expectProblem(await b.delete(`/projects/${id}/`), 404)
    expectProblem(await b.get(`/projects/${id}/status/`), 404)
    const theirs = await b.get("/projects/")
    expect(theirs.body.map((p: any) => p.id)).not.toContain(id)
    const folder = await a.post("/folders/", { name: "Private" })
    expectProblem(await b.post("/projects/", { name: "x", folder_id: folder.body.id }), 400)
    expectProblem(await b.get(`/folders/${folder.body.id}/`), 404)
  })

  it("answers unknown routes with 404 problem+json", async () => {
    expectProblem(await a.get("/nothing-here/"), 404)
  })
})

describe("archiving a project", () => {
  it("hides it from the live list, keeps it readable, takes no launch, and restores it", async () => {
    const id = await createProject(a, { name: "To archive" })
    const archived = await a.post(`/projects/${id}/archive/`)
    expect(archived.status).toBe(200)
    expect(archived.body.id).toBe(id)
    expect((await a.get("/projects/")).body.map((p: any) => p.id)).not.toContain(id)
    expect((await a.get("/projects/?archived=true")).body.map((p: any) => p.id)).toContain(id)
    expect((await a.get(`/projects/${id}/`)).status).toBe(200)
    expectProblem(await a.post(`/projects/${id}/agents/launch/`), 404)
    const restored = await a.post(`/projects/${id}/unarchive/`)
    expect(restored.status).toBe(200)
    expect((await a.get("/projects/")).body.map((p: any) => p.id)).toContain(id)
    expect((await a.get("/projects/?archived=true")).body.map((p: any) => p.id)).not.toContain(id)
    expect((await a.post(`/projects/${id}/agents/launch/`)).status).toBe(202)
  })

  it("is tenant-scoped", async () => {
    const id = await createProject(a)
    const other = api.client(await api.newKey("other-archiver"))
    expectProblem(await other.post(`/projects/${id}/archive/`), 404)
  })
})
