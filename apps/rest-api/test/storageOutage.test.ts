/**
 * Object storage out of reach, through the public REST API: a real S3-protocol server (s3rver) behind a
 * switchable TCP proxy that passes, refuses connections or accepts them and never answers. A request that
 * needs storage answers 503 problem+json with Retry-After within its deadline (never 500, never held); when
 * storage is back, everything works again and documents accepted before the outage end Processed.
 */
import { randomUUID } from "node:crypto"
import { type S3BlobStore, s3BlobStore } from "@dxs/db/S3BlobStore"
import { startTcpProxy, type TcpProxy } from "@dxs/testing/TcpProxy"
import { startTestS3Server, type TestS3Server } from "@dxs/testing/TestS3Server"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import { type Client, createProject, onePagePdf, startTestApi, type TestApi } from "./harness.ts"
import { upload, waitProcessed } from "./runs.ts"

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

    await proxy.setMode(mode)
    expectUnavailable(await uploadReply(projectId))
    expectUnavailable(await a.get(`/projects/${projectId}/documents/${before}/file/`))
    // Nothing half-written: the refused upload left no document.
    const listed = await a.get(`/projects/${projectId}/documents/`)
    expect(listed.body.map((d: any) => d.id)).toEqual([before])

    await proxy.setMode("pass")
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
