import { randomUUID } from "node:crypto"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import { makeKysely } from "@dxs/db"
import { backgroundHousekeeping } from "@dxs/services"
import { onePagePdf } from "@dxs/testing/Documents"
import { createProject, expectProblem, type Reply } from "@dxs/testing/RestClient"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { openApiDocument } from "../src/index.ts"
import { startTestApi, type TestApi } from "./harness.ts"
import { multipartBody, rawRequest } from "./rawHttp.ts"

let api: TestApi
let key: string
let otherKey: string
let db: ReturnType<typeof makeKysely>

beforeAll(async () => {
  api = await startTestApi()
  key = await api.newKey("acme")
  otherKey = await api.newKey("globex")
  db = makeKysely(api.dbUrl, 2)
})

afterAll(async () => {
  await db?.destroy()
})

const read = async (res: Response): Promise<Reply> => {
  const text = await res.text()
  return {
    status: res.status,
    headers: res.headers,
    body: /json/.test(res.headers.get("content-type") ?? "") ? JSON.parse(text) : text,
    text,
  }
}

const upload = async (
  projectId: string,
  options: {
    readonly idempotencyKey?: string
    readonly bytes?: Uint8Array
    readonly name?: string
    readonly tags?: string
    readonly apiKey?: string
  } = {},
) => {
  const form = new FormData()
  form.set(
    "file",
    new Blob([(options.bytes ?? SAME_PDF) as Uint8Array<ArrayBuffer>], { type: "application/pdf" }),
    options.name ?? "a.pdf",
  )
  if (options.tags !== undefined) form.set("tags", options.tags)
  return read(
    await fetch(`${api.base}/projects/${projectId}/documents/`, {
      method: "POST",
      headers: {
        "x-api-key": options.apiKey ?? key,
        ...(options.idempotencyKey === undefined ? {} : { "idempotency-key": options.idempotencyKey }),
      },
      body: form,
    }),
  )
}

const SCHEMA = JSON.stringify({ type: "object", properties: { total: { type: "number" } } })
const SAME_PDF = onePagePdf("the same bytes")

const extract = async (idempotencyKey: string | undefined, fields: Record<string, string> = {}) => {
  const form = new FormData()
  form.append("files", new Blob([SAME_PDF as Uint8Array<ArrayBuffer>], { type: "application/pdf" }), "a.pdf")
  form.append("schema", fields.schema ?? SCHEMA)
  form.append("auto_map", fields.auto_map ?? "false")
  if (fields.project_name !== undefined) form.append("project_name", fields.project_name)
  return read(
    await fetch(`${api.base}/extract/`, {
      method: "POST",
      headers: {
        "x-api-key": key,
        ...(idempotencyKey === undefined ? {} : { "idempotency-key": idempotencyKey }),
      },
      body: form,
    }),
  )
}

const documentsOf = (projectId: string) =>
  db.selectFrom("documents").select(["id", "blob_key"]).where("project_id", "=", projectId).execute()

const filesOf = async (projectId: string) =>
  (
    await fs
      .readdir(path.join(api.blobDir, projectId), { recursive: true, withFileTypes: true })
      .catch(() => [])
  )
    .filter((e) => e.isFile())
    .map((e) => e.name)

describe("Idempotency-Key on uploads", () => {
  it("gives the first answer again to a repeated request, and creates nothing more", async () => {
    const p = await createProject(api.client(key))
    const k = `upload-${randomUUID()}`
    const first = await upload(p, { idempotencyKey: k, tags: '{"region":"EU"}' })
    expect(first.status).toBe(201)
    expect(first.headers.get("idempotent-replayed")).toBeNull()
    const again = await upload(p, { idempotencyKey: k, tags: '{"region":"EU"}' })
    expect(again.status).toBe(201)
    expect(again.headers.get("idempotent-replayed")).toBe("true")
    expect(again.body).toEqual(first.body)
    expect(await documentsOf(p)).toHaveLength(1)
    expect(await filesOf(p)).toHaveLength(1)
    // Without a key, or with another one, it is a new upload.
    expect((await upload(p)).status).toBe(201)
    expect((await upload(p, { idempotencyKey: `${k}-2`, tags: '{"region":"EU"}' })).status).toBe(201)
    expect(await documentsOf(p)).toHaveLength(3)
  })

  it("refuses the same key for a different request with 422", async () => {
    const p = await createProject(api.client(key))
    const q = await createProject(api.client(key))
    const k = `upload-${randomUUID()}`
    expect((await upload(p, { idempotencyKey: k })).status).toBe(201)
    const variants = [
      ["another project", () => upload(q, { idempotencyKey: k })],
      ["another file", () => upload(p, { idempotencyKey: k, bytes: onePagePdf("other bytes") })],
      ["another name", () => upload(p, { idempotencyKey: k, name: "b.pdf" })],
      ["other tags", () => upload(p, { idempotencyKey: k, tags: '{"region":"US"}' })],
    ] as const
    for (const [what, send] of variants) {
      const r = await send()
      expectProblem(r, 422)
      expect(r.body.detail, what).toContain("different request")
    }
    expect(await documentsOf(p)).toHaveLength(1)
    expect(await documentsOf(q)).toHaveLength(0)
    expect(await filesOf(q)).toEqual([])
  })

  it("scopes a key to the organisation and the operation", async () => {
    const k = `shared-${randomUUID()}`
    const mine = await createProject(api.client(key))
    const theirs = await createProject(api.client(otherKey))
    expect((await upload(mine, { idempotencyKey: k })).status).toBe(201)
    const r = await upload(theirs, { idempotencyKey: k, apiKey: otherKey })
    expect(r.status).toBe(201)
    expect(r.headers.get("idempotent-replayed")).toBeNull()
    const e = await extract(k)
    expect(e.status).toBe(202)
    expect(e.headers.get("idempotent-replayed")).toBeNull()
  })

  it("does not remember a refused request", async () => {
    const p = await createProject(api.client(key))
    const k = `refused-${randomUUID()}`
    expectProblem(await upload(p, { idempotencyKey: k, name: "tool.exe" }), 415)
    const ok = await upload(p, { idempotencyKey: k })
    expect(ok.status).toBe(201)
    expect(ok.headers.get("idempotent-replayed")).toBeNull()
  })

  it("creates one document for concurrent requests with one key, each answered with it", async () => {
    const p = await createProject(api.client(key))
    const k = `race-${randomUUID()}`
    const answers = await Promise.all(Array.from({ length: 8 }, () => upload(p, { idempotencyKey: k })))
    expect(answers.map((r) => r.status)).toEqual(answers.map(() => 201))
    expect(new Set(answers.map((r) => r.body.id)).size).toBe(1)
    expect(answers.filter((r) => r.headers.get("idempotent-replayed") === null)).toHaveLength(1)
    expect(await documentsOf(p)).toHaveLength(1)
    // The losers removed their files again.
    expect(await filesOf(p)).toHaveLength(1)
  })

  it("refuses a key that is empty, too long or not printable ASCII with 400", async () => {
    const p = await createProject(api.client(key))
    expectProblem(await upload(p, { idempotencyKey: "x".repeat(256) }), 400)
    expect((await upload(p, { idempotencyKey: "x".repeat(255) })).status).toBe(201)
    expectProblem(await upload(p, { idempotencyKey: "" }), 400)
    const { body, contentType } = multipartBody([
      { name: "file", filename: "a.pdf", contentType: "application/pdf", body: SAME_PDF },
    ])
    for (const bad of ["schlüssel", "tab\there"]) {
      const r = await rawRequest({
        port: Number(new URL(api.origin).port),
        method: "POST",
        path: `/api/v1/projects/${p}/documents/`,
        headers: {
          "X-API-Key": key,
          "Content-Type": contentType,
          "Content-Length": String(body.length),
          "Idempotency-Key": Buffer.from(bad, "utf8").toString("latin1"),
        },
        body,
      })
      expect(r.status, bad).toBe(400)
      expect(JSON.parse(r.body).errors.map((e: any) => e.path)).toContain("idempotency-key")
    }
    expect(await documentsOf(p)).toHaveLength(1)
  })

  it("forgets an answer after 24 hours; housekeeping deletes it", async () => {
    const p = await createProject(api.client(key))
    const k = `old-${randomUUID()}`
    const first = await upload(p, { idempotencyKey: k })
    const age = async (hours: number) =>
      db
        .updateTable("idempotency_keys")
        .set({ created_at: new Date(Date.now() - hours * 3600_000) })
        .where("key", "=", k)
        .execute()
    await age(23)
    expect((await upload(p, { idempotencyKey: k })).body.id).toBe(first.body.id)
    await age(25)
    const fresh = await upload(p, { idempotencyKey: k })
    expect(fresh.status).toBe(201)
    expect(fresh.body.id).not.toBe(first.body.id)
    expect(fresh.headers.get("idempotent-replayed")).toBeNull()
    await age(25)
    expect(await Effect.runPromise(backgroundHousekeeping(db))).toBeGreaterThanOrEqual(1)
    expect(await db.selectFrom("idempotency_keys").select("key").where("key", "=", k).execute()).toEqual([])
  })
})

describe("Idempotency-Key on /extract/", () => {
  it("gives the first answer again, refuses another request with the key, and makes one project at once", async () => {
    const k = `extract-${randomUUID()}`
    const first = await extract(k)
    expect(first.status).toBe(202)
    const again = await extract(k)
    expect(again.status).toBe(202)
    expect(again.headers.get("idempotent-replayed")).toBe("true")
    expect(again.body).toEqual(first.body)
    const others: ReadonlyArray<Record<string, string>> = [
      { schema: JSON.stringify({ type: "object" }) },
      { auto_map: "true" },
      { project_name: "Other" },
    ]
    for (const fields of others) {
      const r = await extract(k, fields)
      expectProblem(r, 422)
    }
    const projects = () =>
      db.selectFrom("projects").select("id").where("name", "=", "API Extraction").execute()
    const before = (await projects()).length
    const race = `extract-race-${randomUUID()}`
    const answers = await Promise.all(Array.from({ length: 5 }, () => extract(race)))
    expect(answers.map((r) => r.status)).toEqual(answers.map(() => 202))
    expect(new Set(answers.map((r) => r.body.project_id)).size).toBe(1)
    expect((await projects()).length).toBe(before + 1)
  })

  it("is documented as a header parameter of both operations", () => {
    const doc = openApiDocument() as any
    for (const op of [
      doc.paths["/api/v1/projects/{project_id}/documents/"].post,
      doc.paths["/api/v1/extract/"].post,
    ]) {
      const header = op.parameters.find((p: any) => p.in === "header" && /^idempotency-key$/i.test(p.name))
      expect(header).toBeDefined()
      expect(header.required).toBe(false)
      expect(Object.keys(op.responses)).toContain("422")
    }
  })
})
