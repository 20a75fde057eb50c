/**
 * Object storage out of reach, through the public REST API: a real S3-protocol server (s3rver) behind a
 * switchable TCP proxy that passes, refuses connections or accepts them and never answers. A request that
 * needs storage answers 503 problem+json with Retry-After within its deadline (never 500, never held); when
 * storage is back, everything works again and documents accepted before the outage end Processed.
 */
import { randomUUID } from "node:crypto"
import { makeKysely } from "@dxs/db"
import { type S3BlobStore, s3BlobStore } from "@dxs/db/S3BlobStore"
import { onePagePdf } from "@dxs/testing/Documents"
import { type Client, createProject } from "@dxs/testing/RestClient"
import { until, upload, waitProcessed } from "@dxs/testing/Runs"
import { startTcpProxy, type TcpProxy } from "@dxs/testing/TcpProxy"
import { startTestS3Server, type TestS3Server } from "@dxs/testing/TestS3Server"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import { startTestApi, type TestApi } from "./harness.ts"

let s3: TestS3Server
let proxy: TcpProxy
let store: S3BlobStore
let api: TestApi
let a: Client
let key: string

beforeAll(async () => {
  s3 = await startTestS3Server()
  proxy = await startTcpProxy(s3.port)
  // A short deadline (the SDK's retries included), so that the hanging store is given up on quickly.
  store = s3BlobStore({ ...s3.options("outage/", proxy.port), timeoutMs: 1_500 })
  api = await startTestApi({ worker: {}, blobs: store })
  key = await api.newKey("acme")
  a = api.client(key)
})

afterEach(() => proxy.setMode("pass"))

afterAll(async () => {
  store?.close()
  await proxy?.stop()
  await s3?.stop()
})

const uploadReply = (projectId: string, name = "outage.pdf") => {
  const form = new FormData()
  form.append("file", new Blob([onePagePdf(randomUUID()) as Uint8Array<ArrayBuffer>]), name)
  return a.send("POST", `/projects/${projectId}/documents/`, form)
}

const expectUnavailable = (r: { status: number; headers: Headers; body: any }) => {
  expect(r.status).toBe(503)
  expect(r.headers.get("content-type")).toContain("application/problem+json")
  expect(Number(r.headers.get("retry-after"))).toBeGreaterThan(0)
  expect(r.body).toMatchObject({ status: 503, unavailable: "storage", retry_after: expect.any(Number) })
  expect(r.body.detail).toMatch(/storage/i)
}

describe.each(["refuse", "hang"] as const)("object storage that %ss", (mode) => {
  it("answers uploads and downloads 503 with Retry-After, and serves again once storage is back", async () => {
    const projectId = await createProject(a)
    const before = await upload(a, projectId, "before.pdf", onePagePdf(randomUUID()))
    await waitProcessed(a, projectId)

    const ready = await fetch(`${api.origin}/readyz`)
    expect(ready.status).toBe(200)
    expect(await ready.json()).toEqual({
      status: "ready",
      checks: { database: "ok", migrations: "ok", storage: "ok" },
    })

    await proxy.setMode(mode)
    // Alive, but not ready: the failing part is named.
    expect((await fetch(`${api.origin}/healthz`)).status).toBe(200)
    const notReady = await fetch(`${api.origin}/readyz`)
    expect(notReady.status).toBe(503)
    expect(notReady.headers.get("content-type")).toContain("application/problem+json")
    const report = (await notReady.json()) as any
    expect(report).toMatchObject({
      status: 503,
      failing: ["storage"],
      checks: { database: "ok", migrations: "ok" },
    })
    expect(report.detail).toMatch(/storage/)
    expectUnavailable(await uploadReply(projectId))
    expectUnavailable(await a.get(`/projects/${projectId}/documents/${before}/file/`))
    // Nothing half-written: the refused upload left no document.
    const listed = await a.get(`/projects/${projectId}/documents/`)
    expect(listed.body.map((d: any) => d.id)).toEqual([before])

    await proxy.setMode("pass")
    expect((await fetch(`${api.origin}/readyz`)).status).toBe(200)
    const after = await uploadReply(projectId, "after.pdf")
    expect(after.status).toBe(201)
    const file = await fetch(`${api.base}/projects/${projectId}/documents/${before}/file/`, {
      headers: { "x-api-key": key },
    })
    expect(file.status).toBe(200)
    const documents = await waitProcessed(a, projectId)
    expect(documents.map((d) => d.status)).toEqual(["Processed", "Processed"])
  })
})

describe("a worker whose storage refuses", () => {
  let worker: TcpProxy
  let workerStore: S3BlobStore
  let split: TestApi
  let b: Client

  beforeAll(async () => {
    // The API reaches the server directly, the worker through a proxy of its own: uploads are accepted
    // while every parse meets the outage.
    worker = await startTcpProxy(s3.port)
    workerStore = s3BlobStore({ ...s3.options("split/", worker.port), timeoutMs: 1_500 })
    split = await startTestApi({
      worker: { blobs: workerStore },
      blobs: s3BlobStore({ ...s3.options("split/"), timeoutMs: 1_500 }),
    })
    b = split.client(await split.newKey("acme"))
  })

  afterAll(async () => {
    workerStore?.close()
    await worker?.stop()
  })

  it("keeps the documents Pending through the outage (however few their attempts) and parses them once it ends", async () => {
    const db = makeKysely(split.dbUrl, 2)
    try {
      await worker.setMode("refuse")
      const projectId = await createProject(b)
      const ids = [
        await upload(b, projectId, "one.pdf", onePagePdf(randomUUID())),
        await upload(b, projectId, "two.pdf", onePagePdf(randomUUID())),
      ]
      // One attempt each: before, the first failure to reach storage failed the document for good.
      await db.updateTable("tasks").set({ max_attempts: 1 }).where("kind", "=", "parse").execute()
      // Every parse has met the outage at least twice (its first failure, then a retry's).
      const seen = new Set<string>()
      await until("every parse to meet the outage twice", async () => {
        const rows = await db
          .selectFrom("tasks")
          .select(["id", "updated_at", "last_error", "status"])
          .where("kind", "=", "parse")
          .execute()
        // Each failure is a new `updated_at` of a pending task that says why.
        for (const row of rows)
          if (row.status === "pending" && row.last_error?.includes("object storage unavailable"))
            seen.add(`${row.id}@${row.updated_at.getTime()}`)
        const failures = (id: string) => [...seen].filter((k) => k.startsWith(`${id}@`)).length
        return rows.length === 2 && rows.every((r) => failures(r.id) >= 2) ? true : undefined
      })
      const during = await b.get(`/projects/${projectId}/documents/`)
      expect(during.body.map((d: any) => d.status)).toEqual(["Pending", "Pending"])

      await worker.setMode("pass")
      const documents = await waitProcessed(b, projectId)
      expect(documents.map((d) => [d.id, d.status]).toSorted()).toEqual(
        ids.map((id) => [id, "Processed"]).toSorted(),
      )
      // Nothing stands in the way of a launch.
      expect((await b.post(`/projects/${projectId}/agents/launch/`)).status).toBe(202)
    } finally {
      await db.destroy()
    }
  })
})
