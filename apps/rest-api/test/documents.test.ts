import { createHash, createHmac, randomUUID } from "node:crypto"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import { makeKysely } from "@dxs/db"
import { decryptSecret } from "@dxs/pipeline/webhooks/Encryption"
import { onePagePdf as pdfBytes } from "@dxs/testing/Documents"
import {
  type Client,
  createProject,
  expectProblem,
  type Reply,
  timestamp,
  uuid,
} from "@dxs/testing/RestClient"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startTestApi, type TestApi } from "./harness.ts"

const MAX_UPLOAD = 64 * 1024

let api: TestApi
let a: Client
let b: Client
let db: ReturnType<typeof makeKysely>

beforeAll(async () => {
  api = await startTestApi({ maxUploadBytes: MAX_UPLOAD })
  a = api.client(await api.newKey("acme"))
  b = api.client(await api.newKey("globex"))
  db = makeKysely(api.dbUrl, 2)
})

afterAll(async () => {
  await db?.destroy()
})

const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex")

/** GET without a key, for signed links. */
const read = async (url: string | URL) => {
  const res = await fetch(url)
  const text = await res.text()
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined }
}

const newProject = (client: Client = a) => createProject(client)

const upload = (
  client: Client,
  projectId: string,
  fileName: string,
  bytes: Uint8Array = pdfBytes(),
  fields: Record<string, string> = {},
): Promise<Reply> => {
  const form = new FormData()
  form.set("file", new Blob([bytes as Uint8Array<ArrayBuffer>]), fileName)
  for (const [k, v] of Object.entries(fields)) form.set(k, v)
  return client.send("POST", `/projects/${projectId}/documents/`, form)
}

const uploadOk = async (projectId: string, fileName = "report.pdf", fields: Record<string, string> = {}) => {
  const r = await upload(a, projectId, fileName, pdfBytes(), fields)
  expect(r.status).toBe(201)
  return r.body
}

const row = (id: string) => db.selectFrom("documents").selectAll().where("id", "=", id).executeTakeFirst()
const exists = (file: string) =>
  fs.stat(file).then(
    () => true,
    () => false,
  )
const markProcessed = (ids: ReadonlyArray<string>) =>
  db
    .updateTable("documents")
    .set({
      status: "Processed",
      page_count: 3,
      summary: "A summary",
      metadata: '{"pages":3}',
      last_parsed_at: new Date(),
    })
    .where("id", "in", ids)
    .execute()

/** Like the server: HMAC-SHA256 over id, version and expiry with the shared secret (stored encrypted). */
const signedUrl = async (documentId: string, version: number, expires: number) => {
  const secret = await db
    .selectFrom("server_secrets")
    .select("value")
    .where("name", "=", "file_url_signing_key")
    .executeTakeFirstOrThrow()
  const signature = createHmac(
    "sha256",
    Buffer.from(decryptSecret(api.encryptionKey, secret.value), "base64url"),
  )
    .update(`${documentId}\n${version}\n${expires}`)
    .digest("base64url")
  return `${api.base}/files/${documentId}?expires=${expires}&signature=${signature}`
}

describe("upload", () => {
  it("answers 201 with the spec's Document, stores the file first and enqueues parsing", async () => {
    const p = await newProject()
    const bytes = pdfBytes("hello")
    const r = await upload(a, p, "report.pdf", bytes)
    expect(r.status).toBe(201)
    expect(r.body).toEqual({
      id: uuid,
      project_id: p,
      file_url: expect.stringMatching(
        new RegExp(`^${api.origin}/api/v1/files/${r.body.id}\\?expires=\\d+&signature=[A-Za-z0-9_-]+$`),
      ),
      uploaded_at: timestamp,
      type: "PDF",
      page_count: 0,
      version: 1,
      summary: "",
      metadata: "",
      status: "Pending",
      uses_agentic_extraction: false,
      last_parsed_at: null,
      archive_requested_at: null,
      tags: [],
      file_name: "report.pdf",
      failure_reason: null,
      parent_document_id: null,
    })
    const id = r.body.id as string
    const stored = await row(id)
    expect(stored).toMatchObject({
      sha256: sha256(bytes),
      size_bytes: String(bytes.length),
      content_type: "application/pdf",
      blob_key: `${p}/${id}/v1/report.pdf`,
    })
    const onDisk = await fs.readFile(path.join(api.blobDir, stored!.blob_key))
    expect(sha256(onDisk)).toBe(sha256(bytes))
    const task = await db
      .selectFrom("tasks")
      .selectAll()
      .where("idempotency_key", "=", `parse:${id}:1`)
      .executeTakeFirstOrThrow()
    expect(task).toMatchObject({ kind: "parse", project_id: p, status: "pending" })
    expect(task.payload).toMatchObject({ document_id: id, version: 1 })
    const project = await a.get(`/projects/${p}/`)
    expect(project.body.document_count).toBe(1)
    const got = await a.get(`/projects/${p}/documents/${id}/`)
    expect(got.status).toBe(200)
    expect({ ...got.body, file_url: "" }).toEqual({ ...r.body, file_url: "" })
  })

  it("infers the type from the extension and refuses unknown ones with 415", async () => {
    const p = await newProject()
    const cases: Array<[string, string]> = [
      ["notes.TXT", "Text"],
      ["deck.pptx", "PPT"],
      ["sheet.xlsx", "Excel"],
      ["letter.docx", "Word Document"],
      ["scan.png", "Image"],
      ["mail.eml", "Email"],
      ["page.html", "Website"],
    ]
    for (const [name, type] of cases) {
      const r = await upload(a, p, name, new TextEncoder().encode(`content of ${name}`))
      expect(r.status, name).toBe(201)
      expect(r.body.type, name).toBe(type)
    }
    const bad = await upload(a, p, "data.xyz")
    expectProblem(bad, 415)
    expect(bad.body.detail).toContain(".pdf")
    expect(bad.body.detail).toContain(".docx")
    expectProblem(await upload(a, p, "no-extension"), 415)
    const count = await db
      .selectFrom("documents")
      .select((eb) => eb.fn.countAll<string>().as("n"))
      .where("project_id", "=", p)
      .executeTakeFirstOrThrow()
    expect(Number(count.n)).toBe(cases.length)
  })

  it("refuses a file above the limit with 413 problem+json and keeps nothing", async () => {
    const p = await newProject()
    const before = await fs.readdir(api.blobDir, { recursive: true })
    // Just above the limit (spooled, then measured) and far above it (the parser stops reading).
    for (const size of [MAX_UPLOAD + 1, 8 * 1024 * 1024]) {
      const r = await upload(a, p, "big.txt", new Uint8Array(size).fill(65))
      expectProblem(r, 413)
      expect(r.body.detail).toContain(String(MAX_UPLOAD))
    }
    expect(await db.selectFrom("documents").select("id").where("project_id", "=", p).execute()).toEqual([])
    const after = await fs.readdir(api.blobDir, { recursive: true })
    expect(after.filter((f) => !before.includes(f))).toEqual([])
    // A file right at the limit is fine.
    const ok = await upload(a, p, "limit.txt", new Uint8Array(MAX_UPLOAD).fill(66))
    expect(ok.status).toBe(201)
  })

  it("refuses a missing file field, an empty file, a non-multipart body and bad tags with 400", async () => {
    const p = await newProject()
    const form = new FormData()
    form.set("name", "nothing")
    const missing = await a.send("POST", `/projects/${p}/documents/`, form)
    expectProblem(missing, 400)
    expect(missing.body.detail).toContain("file")
    expectProblem(await upload(a, p, "empty.pdf", new Uint8Array(0)), 400)
    expectProblem(await a.post(`/projects/${p}/documents/`, { file: "report.pdf" }), 400)
    expectProblem(await upload(a, p, "t.pdf", pdfBytes(), { tags: "not json" }), 400)
    expectProblem(await upload(a, p, "t.pdf", pdfBytes(), { tags: '{"k": 1}' }), 400)
    expectProblem(await upload(a, p, "t.pdf", pdfBytes(), { tags: '{"": "v"}' }), 400)
    expect(await db.selectFrom("documents").select("id").where("project_id", "=", p).execute()).toEqual([])
  })

  it("answers 404 for an unknown project or another organisation's", async () => {
    expectProblem(await upload(a, randomUUID(), "report.pdf"), 404)
    const theirs = await newProject(b)
    expectProblem(await upload(a, theirs, "report.pdf"), 404)
  })

  it("takes tags as a JSON object string and keeps them sorted by key", async () => {
    const p = await newProject()
    const doc = await uploadOk(p, "tagged.pdf", { tags: JSON.stringify({ region: "EU", client: "Acme" }) })
    expect(doc.tags).toEqual([
      { key: "client", value: "Acme" },
      { key: "region", value: "EU" },
    ])
    const dims = await a.get(`/projects/${p}/dimensions/`)
    expect(dims.status).toBe(200)
    expect(
      dims.body
        .filter((d: any) => d.source === "TAG")
        .map((d: any) => d.name)
        .sort(),
    ).toEqual(["client", "region"])
  })
})

describe("download", () => {
  it("serves the original bytes through the signed file_url without a key", async () => {
    const p = await newProject()
    const bytes = pdfBytes("download me")
    const doc = (await upload(a, p, "Prüfbericht (final) 2026.pdf", bytes)).body
    const res = await fetch(doc.file_url)
    expect(res.status).toBe(200)
    expect(res.headers.get("content-type")).toBe("application/pdf")
    expect(res.headers.get("content-length")).toBe(String(bytes.length))
    const disposition = res.headers.get("content-disposition") ?? ""
    expect(disposition).toMatch(/^attachment;/)
    expect(disposition).toContain("filename*=UTF-8''Pr%C3%BCfbericht%20%28final%29%202026.pdf")
    expect(new Uint8Array(await res.arrayBuffer())).toEqual(bytes)
  })

  it("refuses a tampered, expired or incomplete link", async () => {
    const p = await newProject()
    const doc = await uploadOk(p)
    const url = new URL(doc.file_url)
    const signature = url.searchParams.get("signature")!
    const tampered = new URL(url)
    tampered.searchParams.set("signature", (signature[0] === "A" ? "B" : "A") + signature.slice(1))
    expectProblem(await read(tampered), 403)
    const later = new URL(url)
    later.searchParams.set("expires", String(Number(url.searchParams.get("expires")) + 3600))
    expectProblem(await read(later), 403)
    const other = await uploadOk(p)
    expectProblem(await read(`${api.base}/files/${other.id}${url.search}`), 403)
    const expired = await read(await signedUrl(doc.id, 1, Math.floor(Date.now() / 1000) - 10))
    expectProblem(expired, 403)
    expect(expired.body.detail).toContain("expired")
    // A correctly signed link of our own making works, so the refusals above are about the signature.
    expect((await fetch(await signedUrl(doc.id, 1, Math.floor(Date.now() / 1000) + 60))).status).toBe(200)
    expectProblem(await read(`${api.base}/files/${doc.id}`), 400)
    expectProblem(await read(`${api.base}/files/${randomUUID()}${url.search}`), 404)
  })

  it("serves the bytes at the authenticated file endpoint", async () => {
    const p = await newProject()
    const bytes = new TextEncoder().encode("plain text body\n")
    const doc = (await upload(a, p, "notes.txt", bytes)).body
    const res = await a.get(`/projects/${p}/documents/${doc.id}/file/`)
    expect(res.status).toBe(200)
    expect(res.headers.get("content-type")).toContain("text/plain")
    expect(res.headers.get("content-disposition")).toContain("filename*=UTF-8''notes.txt")
    expect(res.text).toBe("plain text body\n")
    expectProblem(await api.client(undefined).get(`/projects/${p}/documents/${doc.id}/file/`), 401)
    expectProblem(await a.get(`/projects/${p}/documents/${randomUUID()}/file/`), 404)
  })
})

describe("list and get", () => {
  it("lists newest first and filters by tag", async () => {
    const p = await newProject()
    const first = await uploadOk(p, "one.pdf", { tags: '{"region":"EU"}' })
    const second = await uploadOk(p, "two.pdf", { tags: '{"region":"US"}' })
    const third = await uploadOk(p, "three.pdf", { tags: '{"region":"EU","kind":"nda"}' })
    const all = await a.get(`/projects/${p}/documents/`)
    expect(all.status).toBe(200)
    expect(all.body.map((d: any) => d.id)).toEqual([third.id, second.id, first.id])
    const eu = await a.get(`/projects/${p}/documents/?tag_key=region&tag_value=EU`)
    expect(eu.body.map((d: any) => d.id)).toEqual([third.id, first.id])
    const none = await a.get(`/projects/${p}/documents/?tag_key=region&tag_value=APAC`)
    expect(none.body).toEqual([])
    expectProblem(await a.get(`/projects/${p}/documents/?tag_key=region`), 400)
    expectProblem(await a.get(`/projects/${p}/documents/?tag_value=EU`), 400)
    expectProblem(await a.get(`/projects/${randomUUID()}/documents/`), 404)
  })

  it("answers 404 for a document of another project", async () => {
    const p = await newProject()
    const q = await newProject()
    const doc = await uploadOk(p)
    expect((await a.get(`/projects/${p}/documents/${doc.id}/`)).status).toBe(200)
    expectProblem(await a.get(`/projects/${q}/documents/${doc.id}/`), 404)
    expectProblem(await a.get(`/projects/${p}/documents/${randomUUID()}/`), 404)
    expectProblem(await a.get(`/projects/${p}/documents/not-a-uuid/`), 400)
  })
})

describe("tags", () => {
  it("replaces tags from a list or an object and keeps one TAG dimension per key", async () => {
    const p = await newProject()
    const doc = await uploadOk(p)
    const put = await a.put(`/projects/${p}/documents/${doc.id}/tags/`, {
      tags: [
        { key: "region", value: "EU" },
        { key: "client", value: "Acme" },
      ],
    })
    expect(put.status).toBe(200)
    expect(put.body.tags).toEqual([
      { key: "client", value: "Acme" },
      { key: "region", value: "EU" },
    ])
    const tagDims = async () =>
      (await a.get(`/projects/${p}/dimensions/`)).body
        .filter((d: any) => d.source === "TAG")
        .map((d: any) => d.name)
        .sort()
    expect(await tagDims()).toEqual(["client", "region"])
    const obj = await a.put(`/projects/${p}/documents/${doc.id}/tags/`, { tags: { year: "2026" } })
    expect(obj.status).toBe(200)
    expect(obj.body.tags).toEqual([{ key: "year", value: "2026" }])
    expect(await tagDims()).toEqual(["year"])
    const form = await a.send(
      "PUT",
      `/projects/${p}/documents/${doc.id}/tags/`,
      new URLSearchParams({ tags: '{"form":"yes"}' }),
      "application/x-www-form-urlencoded",
    )
    expect(form.status).toBe(200)
    expect(form.body.tags).toEqual([{ key: "form", value: "yes" }])
    const cleared = await a.put(`/projects/${p}/documents/${doc.id}/tags/`, { tags: [] })
    expect(cleared.body.tags).toEqual([])
    expect(await tagDims()).toEqual([])
    expect((await a.get(`/projects/${p}/documents/${doc.id}/`)).body.tags).toEqual([])
  })

  it("refuses empty, long and duplicate keys (400) and dimension names (409)", async () => {
    const p = await newProject()
    const doc = await uploadOk(p)
    const at = `/projects/${p}/documents/${doc.id}/tags/`
    expectProblem(await a.put(at, { tags: [{ key: " ", value: "x" }] }), 400)
    expectProblem(await a.put(at, { tags: [{ key: "k".repeat(101), value: "x" }] }), 400)
    expect((await a.put(at, { tags: [{ key: "k".repeat(100), value: "x" }] })).status).toBe(200)
    const dup = await a.put(at, {
      tags: [
        { key: "a", value: "1" },
        { key: "A", value: "2" },
      ],
    })
    expectProblem(dup, 400)
    expect(dup.body.errors[0].path).toBe("tags/1/key")
    expectProblem(await a.put(at, { tags: "nope" }), 400)
    expectProblem(await a.put(at, {}), 400)
    expectProblem(await a.put(at, { tags: { Document: "x" } }), 409)
    const custom = await a.post(`/projects/${p}/dimensions/`, { name: "Region" })
    expect(custom.status).toBe(201)
    expectProblem(await a.put(at, { tags: { region: "EU" } }), 409)
    // A refused change leaves the previous tags.
    expect((await a.get(`/projects/${p}/documents/${doc.id}/`)).body.tags).toEqual([
      { key: "k".repeat(100), value: "x" },
    ])
  })

  it("keeps a key's spelling consistent across the project's documents", async () => {
    const p = await newProject()
    await uploadOk(p, "one.pdf", { tags: '{"Client":"Acme"}' })
    const other = await uploadOk(p, "two.pdf")
    expectProblem(await a.put(`/projects/${p}/documents/${other.id}/tags/`, { tags: { client: "B" } }), 400)
    expect(
      (await a.put(`/projects/${p}/documents/${other.id}/tags/`, { tags: { Client: "B" } })).status,
    ).toBe(200)
  })
})

describe("delete", () => {
  it("removes the row, its tags, its TAG dimension and the stored file", async () => {
    const p = await newProject()
    const keep = await uploadOk(p, "keep.pdf", { tags: '{"shared":"1"}' })
    const doc = await uploadOk(p, "gone.pdf", { tags: '{"shared":"2","only":"x"}' })
    const stored = await row(doc.id)
    const file = path.join(api.blobDir, stored!.blob_key)
    expect(await exists(file)).toBe(true)
    const del = await a.delete(`/projects/${p}/documents/${doc.id}/`)
    expect(del.status).toBe(204)
    expect(del.text).toBe("")
    expect(await row(doc.id)).toBeUndefined()
    expect(
      await db.selectFrom("document_tags").selectAll().where("document_id", "=", doc.id).execute(),
    ).toEqual([])
    expect(await exists(file)).toBe(false)
    const dims = (await a.get(`/projects/${p}/dimensions/`)).body
    expect(dims.filter((d: any) => d.source === "TAG").map((d: any) => d.name)).toEqual(["shared"])
    expectProblem(await a.get(`/projects/${p}/documents/${doc.id}/`), 404)
    expectProblem(await a.delete(`/projects/${p}/documents/${doc.id}/`), 404)
    expectProblem(await read(doc.file_url), 404)
    expect((await a.get(`/projects/${p}/`)).body.document_count).toBe(1)
    expect((await a.get(`/projects/${p}/documents/${keep.id}/`)).status).toBe(200)
  })
})

describe("copy", () => {
  it("copies processed documents with their bytes and tags, in the order given", async () => {
    const source = await newProject()
    const target = await newProject()
    const one = await uploadOk(source, "one.pdf", { tags: '{"region":"EU"}' })
    const two = await uploadOk(source, "two.pdf")
    await markProcessed([one.id, two.id])
    const r = await a.post(`/projects/${source}/documents/copy/`, {
      target_project_id: target,
      document_ids: [two.id, one.id],
    })
    expect(r.status).toBe(201)
    expect(r.body).toEqual({
      copied_count: 2,
      document_id_mappings: [
        { source_document_id: two.id, copied_document_id: uuid },
        { source_document_id: one.id, copied_document_id: uuid },
      ],
    })
    const copyOfOne = r.body.document_id_mappings[1].copied_document_id
    expect(copyOfOne).not.toBe(one.id)
    const copied = await a.get(`/projects/${target}/documents/${copyOfOne}/`)
    expect(copied.status).toBe(200)
    expect(copied.body).toMatchObject({
      project_id: target,
      file_name: "one.pdf",
      type: "PDF",
      status: "Processed",
      page_count: 3,
      summary: "A summary",
      metadata: '{"pages":3}',
      last_parsed_at: timestamp,
      tags: [{ key: "region", value: "EU" }],
    })
    const [src, dst] = [await row(one.id), await row(copyOfOne)]
    expect(dst!.blob_key).not.toBe(src!.blob_key)
    expect(dst!.blob_key.startsWith(`${target}/${copyOfOne}/`)).toBe(true)
    expect(dst!.sha256).toBe(src!.sha256)
    const bytes = await fs.readFile(path.join(api.blobDir, dst!.blob_key))
    expect(sha256(bytes)).toBe(src!.sha256)
    const download = await fetch(copied.body.file_url)
    expect(sha256(new Uint8Array(await download.arrayBuffer()))).toBe(src!.sha256)
    const dims = (await a.get(`/projects/${target}/dimensions/`)).body
    expect(dims.filter((d: any) => d.source === "TAG").map((d: any) => d.name)).toEqual(["region"])
    expect((await a.get(`/projects/${target}/`)).body.document_count).toBe(2)
    // The source is untouched; deleting the copy leaves the source's file.
    expect((await a.delete(`/projects/${target}/documents/${copyOfOne}/`)).status).toBe(204)
    expect(await exists(path.join(api.blobDir, src!.blob_key))).toBe(true)
  })

  it("refuses unprocessed or foreign documents, the same project, an empty list and other targets", async () => {
    const source = await newProject()
    const target = await newProject()
    const done = await uploadOk(source)
    const pending = await uploadOk(source)
    await markProcessed([done.id])
    const at = `/projects/${source}/documents/copy/`
    const unprocessed = await a.post(at, { target_project_id: target, document_ids: [done.id, pending.id] })
    expectProblem(unprocessed, 400)
    expect(unprocessed.body.detail).toContain(pending.id)
    expect(unprocessed.body.detail).not.toContain(done.id)
    const stranger = randomUUID()
    const unknown = await a.post(at, { target_project_id: target, document_ids: [stranger] })
    expectProblem(unknown, 400)
    expect(unknown.body.detail).toContain(stranger)
    expectProblem(await a.post(at, { target_project_id: source, document_ids: [done.id] }), 400)
    expectProblem(await a.post(at, { target_project_id: target, document_ids: [] }), 400)
    expectProblem(await a.post(at, { target_project_id: target, document_ids: [done.id, done.id] }), 400)
    expectProblem(await a.post(at, { document_ids: [done.id] }), 400)
    const foreign = await newProject(b)
    expectProblem(await a.post(at, { target_project_id: foreign, document_ids: [done.id] }), 404)
    expectProblem(await a.post(at, { target_project_id: randomUUID(), document_ids: [done.id] }), 404)
    expect(await db.selectFrom("documents").select("id").where("project_id", "=", target).execute()).toEqual(
      [],
    )
  })
  it("refuses with 409 a document whose stored file is gone, naming it, and copies nothing", async () => {
    const source = await newProject()
    const target = await newProject()
    const kept = await uploadOk(source, "kept.pdf")
    const lost = await uploadOk(source, "lost.pdf")
    await markProcessed([kept.id, lost.id])
    await fs.rm(path.join(api.blobDir, (await row(lost.id))!.blob_key))
    const r = await a.post(`/projects/${source}/documents/copy/`, {
      target_project_id: target,
      document_ids: [kept.id, lost.id],
    })
    expectProblem(r, 409)
    expect(r.body.detail).toContain(lost.id)
    expect(r.body.detail).not.toContain(kept.id)
    expect(await db.selectFrom("documents").select("id").where("project_id", "=", target).execute()).toEqual(
      [],
    )
    // The copy of the file that was there is removed again.
    const copiedFiles = await fs
      .readdir(path.join(api.blobDir, target), { recursive: true, withFileTypes: true })
      .catch(() => [])
    expect(copiedFiles.filter((e) => e.isFile()).map((e) => e.name)).toEqual([])
  })
})

describe("tenant isolation", () => {
  it("answers 404 to another organisation for every document endpoint", async () => {
    const p = await newProject()
    const doc = await uploadOk(p)
    await markProcessed([doc.id])
    const theirs = await newProject(b)
    const base = `/projects/${p}/documents`
    expectProblem(await b.get(`${base}/`), 404)
    expectProblem(await b.get(`${base}/${doc.id}/`), 404)
    expectProblem(await b.get(`${base}/${doc.id}/file/`), 404)
    expectProblem(await b.put(`${base}/${doc.id}/tags/`, { tags: { k: "v" } }), 404)
    expectProblem(await b.delete(`${base}/${doc.id}/`), 404)
    expectProblem(await upload(b, p, "x.pdf"), 404)
    expectProblem(await b.post(`${base}/copy/`, { target_project_id: theirs, document_ids: [doc.id] }), 404)
    expectProblem(await b.get(`/projects/${theirs}/documents/${doc.id}/`), 404)
    expect((await a.get(`${base}/${doc.id}/`)).body.tags).toEqual([])
    expect(await row(doc.id)).toBeDefined()
  })
})
