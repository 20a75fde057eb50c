import { execFileSync } from "node:child_process"
import { randomUUID } from "node:crypto"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import { type BlobStoreShape, fileBlobStore, makeKysely } from "@dxs/db"
import { backgroundHousekeeping, sweepOrphanBlobs, sweepSpool } from "@dxs/services"
import { onePagePdf } from "@dxs/testing/Documents"
import { createProject } from "@dxs/testing/RestClient"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startTestApi, type TestApi } from "./harness.ts"
import { multipartBody, rawRequest } from "./rawHttp.ts"

let api: TestApi
let key: string
let db: ReturnType<typeof makeKysely>
let port: number
let spoolRoot: string
let blobs: BlobStoreShape

beforeAll(async () => {
  spoolRoot = await fs.mkdtemp(path.join(os.tmpdir(), "dxs-spool-test-"))
  api = await startTestApi({ spoolRoot })
  key = await api.newKey("acme")
  db = makeKysely(api.dbUrl, 2)
  port = Number(new URL(api.origin).port)
  blobs = fileBlobStore(api.blobDir)
})

afterAll(async () => {
  await db?.destroy()
  await fs.rm(spoolRoot, { recursive: true, force: true })
})

/** Every file under the blob directory, as keys relative to it. */
const blobFiles = async () =>
  (await fs.readdir(api.blobDir, { recursive: true, withFileTypes: true }))
    .filter((e) => e.isFile())
    .map((e) => path.relative(api.blobDir, path.join(e.parentPath, e.name)).split(path.sep).join("/"))

const documentKeys = async () =>
  (await db.selectFrom("documents").select("blob_key").execute()).map((r) => r.blob_key)

/**
 * Waits (bounded) until every request cut off has finished: no spool folder left, and the number of
 * documents no longer changing.
 */
const settle = async () => {
  let last = -1
  for (let i = 0; i < 80; i++) {
    const n = (await documentKeys()).length
    const spooling = (await fs.readdir(spoolRoot)).length
    if (n === last && spooling === 0) return
    last = n
    await new Promise((r) => setTimeout(r, 250))
  }
}

/** One upload on a raw socket, waiting for the answer. */
const uploadAnswer = (projectId: string, fileName: string) => {
  const { body, contentType } = multipartBody([
    { name: "file", filename: fileName, contentType: "application/pdf", body: onePagePdf() },
  ])
  return rawRequest({
    port,
    method: "POST",
    path: `/api/v1/projects/${projectId}/documents/`,
    headers: { "X-API-Key": key, "Content-Type": contentType, "Content-Length": String(body.length) },
    body,
  })
}

describe("uploads cut off by the client", () => {
  it("never leave a document without its file, nor answer 5xx", async () => {
    const projectId = await createProject(api.client(key))
    const statuses: Array<number> = []
    // Cuts fall 0-40 ms after the last byte, or over twice an uncut upload's time on a slower machine, so
    // some land before the commit and some after it.
    const started = Date.now()
    expect((await uploadAnswer(projectId, "whole.pdf")).status).toBe(201)
    const window = Math.max(40, 2 * (Date.now() - started))
    const upload = async (i: number) => {
      const { body, contentType } = multipartBody([
        { name: "file", filename: `cut-${i}.pdf`, contentType: "application/pdf", body: onePagePdf() },
      ])
      // Most are cut 0-40 ms after the last byte; every fifth half way through the body.
      const midBody = i % 5 === 0
      const outcome = await rawRequest({
        port,
        method: "POST",
        path: `/api/v1/projects/${projectId}/documents/`,
        headers: { "X-API-Key": key, "Content-Type": contentType, "Content-Length": String(body.length) },
        body,
        ...(midBody
          ? { sendBytes: Math.floor(body.length / 2), cutAfterMs: 0 }
          : { cutAfterMs: Math.floor(Math.random() * (window + 1)) }),
      })
      if (!midBody && outcome.status !== undefined) statuses.push(outcome.status)
    }
    for (let i = 0; i < 100; i++) await upload(i)
    await settle()
    // Everything counts as old enough: whatever no document refers to goes.
    await Effect.runPromise(sweepOrphanBlobs(db, blobs, { olderThan: new Date(Date.now() + 60_000) }))
    const keys = await documentKeys()
    const files = await blobFiles()
    expect(keys.length).toBeGreaterThan(1)
    expect(keys.filter((k) => !files.includes(k))).toEqual([])
    expect(files.filter((f) => !keys.includes(f))).toEqual([])
    expect(await fs.readdir(spoolRoot)).toEqual([])
    expect(statuses.filter((s) => s >= 500)).toEqual([])
  })
})

/** Writes a file into the blob directory, last modified `ageMs` ago. */
const writeBlob = async (key: string, ageMs: number) => {
  const file = path.join(api.blobDir, key)
  await fs.mkdir(path.dirname(file), { recursive: true })
  await fs.writeFile(file, "bytes")
  const at = new Date(Date.now() - ageMs)
  await fs.utimes(file, at, at)
}

const HOUR = 60 * 60 * 1000

/** A process id that no longer exists (a child that has exited). */
const deadPid = () => {
  const pid = Number(
    execFileSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"]).toString(),
  )
  try {
    process.kill(pid, 0)
  } catch {
    return pid
  }
  throw new Error(`process ${pid} is still alive`)
}

describe("housekeeping of leftovers", () => {
  it("removes files no document refers to, older than an hour, and keeps the rest", async () => {
    const projectId = await createProject(api.client(key))
    const r = await uploadAnswer(projectId, "kept.pdf")
    expect(r.status).toBe(201)
    const documentId = JSON.parse(r.body).id as string
    const [original] = (
      await db.selectFrom("documents").select("blob_key").where("id", "=", documentId).execute()
    ).map((d) => d.blob_key)
    const folder = path.posix.dirname(original!)
    const old = 2 * HOUR
    await fs.utimes(path.join(api.blobDir, original!), new Date(Date.now() - old), new Date(Date.now() - old))
    const pageImage = `${folder}/pages/1.png`
    const orphan = `${projectId}/${randomUUID()}/v1/gone.pdf`
    const orphanPage = `${projectId}/${randomUUID()}/v1/pages/1.png`
    const unfinished = `${original}.${randomUUID()}.tmp`
    const previousVersion = `${projectId}/${documentId}/v0/old.pdf`
    const young = `${projectId}/${randomUUID()}/v1/young.pdf`
    const foreign = "not-dxs/notes.txt"
    for (const k of [pageImage, orphan, orphanPage, unfinished, previousVersion, foreign])
      await writeBlob(k, old)
    await writeBlob(young, 0)

    const removed = await Effect.runPromise(backgroundHousekeeping(db, { blobs, spoolRoot }))
    expect(removed).toBeGreaterThanOrEqual(4)
    const files = await blobFiles()
    expect(files).toEqual(expect.arrayContaining([original!, pageImage, young, foreign]))
    for (const gone of [orphan, orphanPage, unfinished, previousVersion])
      expect(files, gone).not.toContain(gone)
    // The document's file is still served.
    const file = await fetch(`${api.base}/projects/${projectId}/documents/${documentId}/file/`, {
      headers: { "x-api-key": key },
    })
    expect(file.status).toBe(200)
    await file.arrayBuffer()
  })

  it("removes spool folders of processes that are gone, and any older than a day", async () => {
    const dead = path.join(spoolRoot, `${deadPid()}-${randomUUID().slice(0, 8)}`)
    const living = path.join(spoolRoot, `${process.pid}-${randomUUID().slice(0, 8)}`)
    const stale = path.join(spoolRoot, `${process.pid}-${randomUUID().slice(0, 8)}`)
    for (const dir of [dead, living, stale]) {
      await fs.mkdir(dir)
      await fs.writeFile(path.join(dir, "1"), "partial upload")
    }
    const twoDaysAgo = new Date(Date.now() - 48 * HOUR)
    await fs.utimes(stale, twoDaysAgo, twoDaysAgo)
    expect(await sweepSpool({ root: spoolRoot })).toBe(2)
    expect(await fs.readdir(spoolRoot)).toEqual([path.basename(living)])
    await fs.rm(living, { recursive: true })
    // A missing spool root is nothing to sweep.
    expect(await sweepSpool({ root: path.join(spoolRoot, "absent") })).toBe(0)
  })
})
