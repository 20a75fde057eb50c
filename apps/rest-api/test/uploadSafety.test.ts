import * as fs from "node:fs/promises"
import * as path from "node:path"
import { makeKysely } from "@dxs/db"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createProject, onePagePdf, startTestApi, type TestApi } from "./harness.ts"
import { multipartBody, rawRequest } from "./rawHttp.ts"

let api: TestApi
let key: string
let db: ReturnType<typeof makeKysely>
let port: number

beforeAll(async () => {
  api = await startTestApi()
  key = await api.newKey("acme")
  db = makeKysely(api.dbUrl, 2)
  port = Number(new URL(api.origin).port)
})

afterAll(async () => {
  await db?.destroy()
})

/** Every file under the blob directory, as keys relative to it. */
const blobFiles = async () =>
  (await fs.readdir(api.blobDir, { recursive: true, withFileTypes: true }))
    .filter((e) => e.isFile())
    .map((e) => path.relative(api.blobDir, path.join(e.parentPath, e.name)).split(path.sep).join("/"))

const documentKeys = async (projectId: string) =>
  (await db.selectFrom("documents").select("blob_key").where("project_id", "=", projectId).execute()).map(
    (r) => r.blob_key,
  )

/** Waits (bounded) until the number of documents stops changing: requests cut off may still be finishing. */
const settle = async (projectId: string) => {
  let last = -1
  for (let i = 0; i < 40; i++) {
    const n = (await documentKeys(projectId)).length
    if (n === last) return
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
    await settle(projectId)
    const keys = await documentKeys(projectId)
    const files = new Set(await blobFiles())
    expect(keys.filter((k) => !files.has(k))).toEqual([])
    expect(statuses.filter((s) => s >= 500)).toEqual([])
  })
})
