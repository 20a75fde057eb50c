/**
 * BLOB_STORE=s3 end to end: the REST API and a worker over a bucket of a real S3-protocol server on
 * loopback (s3rver in a process of its own). Uploads, parsing, downloads, page images, copies, deletion and
 * the orphan sweep all go through the bucket; nothing is written to the directory store.
 */
import { createHash, randomUUID } from "node:crypto"
import * as fs from "node:fs/promises"
import { type BlobStoreShape, makeKysely } from "@dxs/db"
import { type S3BlobStore, s3BlobStore } from "@dxs/db/S3BlobStore"
import { sweepOrphanBlobs } from "@dxs/services"
import { onePagePdf } from "@dxs/testing/Documents"
import { type Client, createProject, expectProblem } from "@dxs/testing/RestClient"
import { upload, waitProcessed } from "@dxs/testing/Runs"
import { startTestS3Server, type TestS3Server } from "@dxs/testing/TestS3Server"
import { Chunk, Effect, Stream } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startTestApi, type TestApi } from "./harness.ts"

let s3: TestS3Server
let store: S3BlobStore
/** The whole bucket, prefix and all, as another client sees it. */
let bucket: S3BlobStore
let api: TestApi
let a: Client
let key: string
let db: ReturnType<typeof makeKysely>

const PREFIX = "dxs-e2e/"

beforeAll(async () => {
  s3 = await startTestS3Server()
  store = s3BlobStore(s3.options(PREFIX))
  bucket = s3BlobStore(s3.options())
  api = await startTestApi({ worker: {}, blobs: store })
  key = await api.newKey("acme")
  a = api.client(key)
  db = makeKysely(api.dbUrl, 2)
})

afterAll(async () => {
  await db?.destroy()
  store?.close()
  bucket?.close()
  await s3?.stop()
})

const keysIn = async (blobs: BlobStoreShape) =>
  Chunk.toReadonlyArray(await Effect.runPromise(Stream.runCollect(blobs.list())))
    .map((e) => e.key)
    .toSorted()

const blobKeyOf = async (documentId: string) =>
  (await db.selectFrom("documents").select("blob_key").where("id", "=", documentId).executeTakeFirstOrThrow())
    .blob_key

const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex")

const download = async (url: string, headers: Record<string, string> = {}) => {
  const res = await fetch(url, { headers })
  return { status: res.status, headers: res.headers, bytes: new Uint8Array(await res.arrayBuffer()) }
}

describe("files in an S3 bucket", () => {
  it("stores the upload in the bucket, parses it, serves it, draws its page once, and deletes it", async () => {
    const projectId = await createProject(a)
    const pdf = onePagePdf(`stored in a bucket ${randomUUID()}`)
    const documentId = await upload(a, projectId, "Prüfbericht.pdf", pdf)
    // Stored before the 201: the object is in the bucket under the prefix, and the directory stays empty.
    const blobKey = await blobKeyOf(documentId)
    expect(blobKey.startsWith(`${projectId}/${documentId}/v1/`)).toBe(true)
    expect(await keysIn(bucket)).toContain(PREFIX + blobKey)
    expect(await fs.readdir(api.blobDir)).toEqual([])

    const [document] = await waitProcessed(a, projectId)
    expect(document).toMatchObject({ id: documentId, status: "Processed", page_count: 1 })

    const file = await download(`${api.base}/projects/${projectId}/documents/${documentId}/file/`, {
      "x-api-key": key,
    })
    expect(file.status).toBe(200)
    expect(file.headers.get("content-length")).toBe(String(pdf.length))
    expect(sha256(file.bytes)).toBe(sha256(pdf))
    const signed = await download(
      (await a.get(`/projects/${projectId}/documents/${documentId}/`)).body.file_url,
    )
    expect(signed.status).toBe(200)
    expect(sha256(signed.bytes)).toBe(sha256(pdf))

    const imageUrl = `${api.base}/projects/${projectId}/documents/${documentId}/pages/1/image/`
    const first = await download(imageUrl, { "x-api-key": key })
    expect(first.status).toBe(200)
    expect(first.headers.get("content-type")).toBe("image/png")
    expect([...first.bytes.slice(1, 4)]).toEqual([0x50, 0x4e, 0x47])
    const imageKey = blobKey.replace(/[^/]+$/, "pages/1.png")
    expect(await keysIn(store)).toContain(imageKey)
    // Read back from the bucket, not drawn again: the same bytes, and the ETag answers 304.
    const again = await download(imageUrl, { "x-api-key": key })
    expect(sha256(again.bytes)).toBe(sha256(first.bytes))
    const etag = first.headers.get("etag")!
    expect((await download(imageUrl, { "x-api-key": key, "if-none-match": etag })).status).toBe(304)

    expect((await a.delete(`/projects/${projectId}/documents/${documentId}/`)).status).toBe(204)
    const left = await keysIn(store)
    expect(left).not.toContain(blobKey)
    expect(left).not.toContain(imageKey)
    expectProblem(await a.get(`/projects/${projectId}/documents/${documentId}/file/`), 404)
  })

  it("copies a document's file inside the bucket and keeps it through the orphan sweep", async () => {
    const source = await createProject(a)
    const target = await createProject(a)
    const pdf = onePagePdf(`copied ${randomUUID()}`)
    const documentId = await upload(a, source, "copy me.pdf", pdf)
    await waitProcessed(a, source)
    const r = await a.post(`/projects/${source}/documents/copy/`, {
      target_project_id: target,
      document_ids: [documentId],
    })
    expect(r.status).toBe(201)
    const copyId = r.body.document_id_mappings[0].copied_document_id as string
    const copyKey = await blobKeyOf(copyId)
    expect(copyKey.startsWith(`${target}/${copyId}/`)).toBe(true)
    const copied = await download((await a.get(`/projects/${target}/documents/${copyId}/`)).body.file_url)
    expect(sha256(copied.bytes)).toBe(sha256(pdf))

    // An object in dxs's layout that no document refers to (a process killed before its commit).
    const orphan = `${target}/${randomUUID()}/v1/orphan.pdf`
    await Effect.runPromise(store.put(orphan, new Uint8Array([1, 2, 3])))
    const removed = await Effect.runPromise(
      sweepOrphanBlobs(db, store, { olderThan: new Date(Date.now() + 60_000) }),
    )
    expect(removed).toBeGreaterThanOrEqual(1)
    const left = await keysIn(store)
    expect(left).not.toContain(orphan)
    expect(left).toContain(copyKey)
    expect(left).toContain(await blobKeyOf(documentId))
  })

  it("answers 404, not 500, for a document whose object has gone from the bucket", async () => {
    const projectId = await createProject(a)
    const documentId = await upload(a, projectId, "vanishing.pdf", onePagePdf())
    await waitProcessed(a, projectId)
    await Effect.runPromise(store.remove(await blobKeyOf(documentId)))
    expectProblem(await a.get(`/projects/${projectId}/documents/${documentId}/file/`), 404)
  })
})
