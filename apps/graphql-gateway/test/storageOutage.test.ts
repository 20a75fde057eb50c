/**
 * Object storage out of reach, through GraphQL: the gateway over a real S3-protocol server behind a
 * switchable TCP proxy (refusing connections, or accepting them and never answering). An operation that
 * needs storage answers SERVICE_UNAVAILABLE with `retry_after` within the store's deadline, as REST answers
 * 503 (never INTERNAL_SERVER_ERROR, never held); reads that need only the database still answer; once
 * storage is back the same operation succeeds.
 */
import { randomUUID } from "node:crypto"
import { type S3BlobStore, s3BlobStore } from "@dxs/db/S3BlobStore"
import { startTestApi, type TestApi } from "@dxs/rest-api/TestApi"
import { onePagePdf } from "@dxs/testing/Documents"
import { type Client, createProject } from "@dxs/testing/RestClient"
import { upload, waitProcessed } from "@dxs/testing/Runs"
import { startTcpProxy, type TcpProxy } from "@dxs/testing/TcpProxy"
import { startTestS3Server, type TestS3Server } from "@dxs/testing/TestS3Server"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import { type GraphqlServer, startGraphqlServer } from "../src/index.ts"
import { call, ok } from "./support.ts"

/** The store's deadline (the SDK's retries included): a hanging store is given up on after it. */
const DEADLINE_MS = 1_500

let s3: TestS3Server
let proxy: TcpProxy
let store: S3BlobStore
let api: TestApi
let gql: GraphqlServer
let key: string
let a: Client

beforeAll(async () => {
  s3 = await startTestS3Server()
  proxy = await startTcpProxy(s3.port)
  store = s3BlobStore({ ...s3.options("gql-outage/", proxy.port), timeoutMs: DEADLINE_MS })
  api = await startTestApi({ worker: {}, blobs: store })
  gql = await startGraphqlServer({
    port: 0,
    host: "127.0.0.1",
    dbUrl: api.dbUrl,
    blobDir: api.blobDir,
    blobs: store,
    publicUrl: api.origin,
    appUrl: api.origin,
    rateLimitPerMinute: 100_000,
    authThrottle: { signInAttemptsPerMinute: 100_000, authFailuresPerMinute: 100_000 },
  })
  key = await api.newKey(`gql-outage-${randomUUID()}`)
  a = api.client(key)
})

afterEach(() => proxy.setMode("pass"))

afterAll(async () => {
  await gql?.close()
  store?.close()
  await proxy?.stop()
  await s3?.stop()
})

const REPARSE = `mutation ($p: ID!, $d: ID!) { reparseDocument(projectId: $p, documentId: $d) { id version status } }`
const DOCUMENT = `query ($p: ID!) { project(id: $p) { documents { id status } } }`

describe.each(["refuse", "hang"] as const)("object storage that %ss", (mode) => {
  it("answers what needs storage SERVICE_UNAVAILABLE with retry_after, and works again once it is back", async () => {
    const projectId = await createProject(a)
    const documentId = await upload(a, projectId, "before.pdf", onePagePdf(randomUUID()))
    await waitProcessed(a, projectId)

    await proxy.setMode(mode)
    const started = Date.now()
    const refused = await call(gql, key, REPARSE, { p: projectId, d: documentId })
    // Within the store's deadline and a margin for the request itself: never held for as long as storage.
    expect(Date.now() - started).toBeLessThan(DEADLINE_MS + 10_000)
    expect(refused.data ?? null).toBeNull()
    expect(refused.errors).toHaveLength(1)
    expect(refused.errors![0]!.extensions).toMatchObject({
      code: "SERVICE_UNAVAILABLE",
      status: 503,
      retry_after: expect.any(Number),
    })
    expect(refused.errors![0]!.message).toMatch(/storage/i)
    // Nothing half-done: the document was not given a new version.
    const read = ok(await call(gql, key, DOCUMENT, { p: projectId }))
    expect(read.project.documents).toEqual([{ id: documentId, status: "Processed" }])
    expect((await a.get(`/projects/${projectId}/documents/${documentId}/`)).body.version).toBe(1)

    await proxy.setMode("pass")
    const reparsed = ok(await call(gql, key, REPARSE, { p: projectId, d: documentId })).reparseDocument
    expect(reparsed).toMatchObject({ id: documentId, version: 2, status: "Pending" })
    const documents = await waitProcessed(a, projectId)
    expect(documents.map((d) => d.status)).toEqual(["Processed"])
  })
})
