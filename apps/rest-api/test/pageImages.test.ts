/**
 * Page images are drawn once per document version and page, stored beside the version's file
 * (`<version folder>/pages/<n>.png`) and read from there afterwards; concurrent requests wait for one
 * drawing. They carry a strong ETag (304 on a match, without reading the file), `no-cache` unless the
 * request names the current `version`, which makes them immutable; replacing or deleting the document
 * removes them.
 */
import * as fs from "node:fs/promises"
import * as path from "node:path"
import { makeKysely } from "@dxs/db"
import { pageImageRenderings } from "@dxs/services"
import { onePagePdf } from "@dxs/testing/Documents"
import { type Client, createProject, expectProblem } from "@dxs/testing/RestClient"
import { upload, waitProcessed } from "@dxs/testing/Runs"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startTestApi, type TestApi } from "./harness.ts"

let api: TestApi
let a: Client
let key: string
let db: ReturnType<typeof makeKysely>

beforeAll(async () => {
  api = await startTestApi({ worker: {} })
  key = await api.newKey("acme")
  a = api.client(key)
  db = makeKysely(api.dbUrl, 2)
})

afterAll(async () => {
  await db?.destroy()
})

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47]

const image = async (projectId: string, documentId: string, page = 1, query = "", headers = {}) => {
  const res = await fetch(
    `${api.base}/projects/${projectId}/documents/${documentId}/pages/${page}/image/${query}`,
    {
      headers: { "x-api-key": key, ...headers },
    },
  )
  const bytes = new Uint8Array(await res.arrayBuffer())
  return { status: res.status, headers: res.headers, bytes }
}

/** Where the image of page `page` of the document's current version is stored. */
const storedImage = async (documentId: string, page = 1) => {
  const row = await db
    .selectFrom("documents")
    .select("blob_key")
    .where("id", "=", documentId)
    .executeTakeFirstOrThrow()
  return path.join(api.blobDir, path.dirname(row.blob_key), "pages", `${page}.png`)
}

const exists = (file: string) =>
  fs.stat(file).then(
    () => true,
    () => false,
  )

const processedPdf = async (line: string) => {
  const projectId = await createProject(a)
  const documentId = await upload(a, projectId, "one.pdf", onePagePdf(line))
  const [document] = await waitProcessed(a, projectId)
  expect(document).toMatchObject({ status: "Processed", page_count: 1 })
  return { projectId, documentId }
}

describe("page images", () => {
  it("are drawn once, stored under the version's folder, and read from there afterwards", async () => {
    const { projectId, documentId } = await processedPdf("drawn once")
    const file = await storedImage(documentId)
    expect(await exists(file)).toBe(false)
    const before = pageImageRenderings()

    const first = await image(projectId, documentId)
    expect(first.status).toBe(200)
    expect(first.headers.get("content-type")).toBe("image/png")
    expect([...first.bytes.slice(0, 4)]).toEqual(PNG_SIGNATURE)
    expect(first.headers.get("cache-control")).toBe("private, no-cache")
    const etag = first.headers.get("etag")
    expect(etag).toMatch(/^"[^"]+"$/)
    expect(pageImageRenderings()).toBe(before + 1)
    expect(new Uint8Array(await fs.readFile(file))).toEqual(first.bytes)

    // The second answer is the stored file, not a new drawing.
    const marked = new Uint8Array([...first.bytes, 0x42])
    await fs.writeFile(file, marked)
    const second = await image(projectId, documentId)
    expect(second.status).toBe(200)
    expect(second.bytes).toEqual(marked)
    expect(second.headers.get("etag")).toBe(etag)
    expect(pageImageRenderings()).toBe(before + 1)
  })

  it("answer 304 to a matching If-None-Match without reading or drawing anything", async () => {
    const { projectId, documentId } = await processedPdf("not modified")
    const first = await image(projectId, documentId)
    const etag = first.headers.get("etag")!
    const file = await storedImage(documentId)
    await fs.rm(file)
    const before = pageImageRenderings()

    for (const ifNoneMatch of [etag, `"other", ${etag}`, `W/${etag}`, "*"]) {
      const notModified = await image(projectId, documentId, 1, "", { "if-none-match": ifNoneMatch })
      expect(notModified.status).toBe(304)
      expect(notModified.bytes).toHaveLength(0)
      expect(notModified.headers.get("etag")).toBe(etag)
      expect(notModified.headers.get("cache-control")).toBe("private, no-cache")
    }
    expect(await exists(file)).toBe(false)
    expect(pageImageRenderings()).toBe(before)

    const other = await image(projectId, documentId, 1, "", { "if-none-match": '"something else"' })
    expect(other.status).toBe(200)
    expect(other.bytes).toEqual(first.bytes)
  })

  it("are drawn once for many concurrent requests", async () => {
    const { projectId, documentId } = await processedPdf("concurrent")
    const before = pageImageRenderings()
    const replies = await Promise.all(Array.from({ length: 6 }, () => image(projectId, documentId)))
    for (const r of replies) {
      expect(r.status).toBe(200)
      expect(r.bytes).toEqual(replies[0]!.bytes)
    }
    expect(pageImageRenderings()).toBe(before + 1)
  })

  it("are immutable under ?version= of the current version; a stale version is 404 naming the current one", async () => {
    const { projectId, documentId } = await processedPdf("version one")
    const v1 = await image(projectId, documentId, 1, "?version=1")
    expect(v1.status).toBe(200)
    expect(v1.headers.get("cache-control")).toBe("private, max-age=31536000, immutable")
    const v1File = await storedImage(documentId)
    expect(await exists(v1File)).toBe(true)

    const form = new FormData()
    form.append("file", new Blob([onePagePdf("version two") as Uint8Array<ArrayBuffer>]), "two.pdf")
    const replaced = await a.send("PUT", `/projects/${projectId}/documents/${documentId}/file/`, form)
    expect(replaced.status, JSON.stringify(replaced.body)).toBe(200)
    expect(replaced.body.version).toBe(2)
    // The old version's images go with its file, after the commit.
    expect(await exists(v1File)).toBe(false)
    await waitProcessed(a, projectId)

    const stale = await image(projectId, documentId, 1, "?version=1")
    expect(stale.status).toBe(404)
    expect(JSON.parse(new TextDecoder().decode(stale.bytes)).detail).toMatch(/current version is 2/)
    const v2 = await image(projectId, documentId, 1, "?version=2")
    expect(v2.status).toBe(200)
    expect(v2.headers.get("cache-control")).toBe("private, max-age=31536000, immutable")
    expect(v2.headers.get("etag")).not.toBe(v1.headers.get("etag"))
    expect(v2.bytes).not.toEqual(v1.bytes)
    expect(await exists(await storedImage(documentId))).toBe(true)

    expectProblem(
      await a.get(`/projects/${projectId}/documents/${documentId}/pages/1/image/?version=two`),
      400,
    )
  })

  it("are removed with their document", async () => {
    const { projectId, documentId } = await processedPdf("deleted")
    expect((await image(projectId, documentId)).status).toBe(200)
    const file = await storedImage(documentId)
    expect(await exists(file)).toBe(true)
    expect((await a.delete(`/projects/${projectId}/documents/${documentId}/`)).status).toBe(204)
    expect(await exists(file)).toBe(false)
  })

  it("are removed with their project", async () => {
    const { projectId, documentId } = await processedPdf("project deleted")
    expect((await image(projectId, documentId)).status).toBe(200)
    const file = await storedImage(documentId)
    expect(await exists(file)).toBe(true)
    expect((await a.delete(`/projects/${projectId}/`)).status).toBe(204)
    expect(await exists(file)).toBe(false)
  })
})
