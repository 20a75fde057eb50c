import type { Client } from "@dxs/testing/RestClient"
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

describe("folders", () => {
  it("create, list (by name), get, rename, move, delete — projects inside become unfiled", async () => {
    const legal = await a.post("/folders/", { name: "Legal" })
    expect(legal.status).toBe(201)
    expect(legal.body).toEqual({
      id: expect.any(String),
      name: "Legal",
      parent_id: null,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    })
    const form = await a.send(
      "POST",
      "/folders/",
      new URLSearchParams({ name: "contracts", parent_id: legal.body.id }),
      "application/x-www-form-urlencoded",
    )
    expect(form.status).toBe(201)
    expect(form.body.parent_id).toBe(legal.body.id)

    const list = await a.get("/folders/")
    expect(list.body.map((f: any) => f.name)).toEqual(["contracts", "Legal"])
    expect((await a.get(`/folders/${legal.body.id}/`)).body.name).toBe("Legal")

    const renamed = await a.patch(`/folders/${legal.body.id}/`, { name: "Legal dept" })
    expect(renamed.status).toBe(200)
    expect(renamed.body.name).toBe("Legal dept")

    const cycle = await a.patch(`/folders/${legal.body.id}/`, { parent_id: form.body.id })
    expect(cycle.status).toBe(400)
    expect(cycle.body.detail).toContain("itself")

    const project = await a.post("/projects/", { name: "In a folder", folder_id: form.body.id })
    expect(project.body.folder_id).toBe(form.body.id)
    expect((await a.delete(`/folders/${legal.body.id}/`)).status).toBe(204)
    expect((await a.get(`/folders/${form.body.id}/`)).status).toBe(404)
    const after = await a.get(`/projects/${project.body.id}/`)
    expect(after.status).toBe(200)
    expect(after.body.folder_id).toBeNull()
  })

  it("rejects an empty name and an unknown parent", async () => {
    const empty = await a.post("/folders/", { name: "  " })
    expect(empty.status).toBe(400)
    expect(empty.body.errors).toEqual([{ path: "name", message: "must not be empty" }])
    expect((await a.post("/folders/", {})).status).toBe(400)
    expect(
      (await a.post("/folders/", { name: "x", parent_id: "00000000-0000-4000-8000-000000000000" })).status,
    ).toBe(400)
  })

  it("is tenant-scoped", async () => {
    const mine = await a.post("/folders/", { name: "Mine" })
    expect((await b.get(`/folders/${mine.body.id}/`)).status).toBe(404)
    expect((await b.patch(`/folders/${mine.body.id}/`, { name: "x" })).status).toBe(404)
    expect((await b.delete(`/folders/${mine.body.id}/`)).status).toBe(404)
    expect((await b.post("/folders/", { name: "x", parent_id: mine.body.id })).status).toBe(400)
    expect((await b.get("/folders/")).body.map((f: any) => f.id)).not.toContain(mine.body.id)
  })
})
