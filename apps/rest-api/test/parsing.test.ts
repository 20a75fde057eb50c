import { randomUUID } from "node:crypto"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import { type BlobStoreShape, fileBlobStore, makeKysely } from "@dxs/db"
import type { TaskRow } from "@dxs/db/Schema"
import * as TaskQueue from "@dxs/db/TaskQueue"
import { defaultLimits } from "@dxs/pipeline/parsing/Backend"
import { backgroundHousekeeping } from "@dxs/services"
import { onePagePdf as pdfBytes } from "@dxs/testing/Documents"
import { textImage } from "@dxs/testing/ImageFiles"
import { buildMsg } from "@dxs/testing/MsgFiles"
import { csvText, makeDocx, makePptx, makeXlsx } from "@dxs/testing/OfficeFiles"
import { type Client, createProject, expectProblem, type Reply, timestamp } from "@dxs/testing/RestClient"
import { backgroundTaskHandlers, type TaskHandler } from "@dxs/worker"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { runTaskHandler, startTestApi, type TestApi, taskContext } from "./harness.ts"

let api: TestApi
let a: Client
let aKey: string
let db: ReturnType<typeof makeKysely>
let blobs: BlobStoreShape
let handlers: Readonly<Record<string, TaskHandler>>

beforeAll(async () => {
  api = await startTestApi()
  aKey = await api.newKey("acme")
  a = api.client(aKey)
  db = makeKysely(api.dbUrl, 4)
  blobs = fileBlobStore(api.blobDir)
  handlers = backgroundTaskHandlers({ blobs, parsing: { timeoutMs: 60_000 } })
})

afterAll(async () => {
  await db?.destroy()
})

const WORKER = "test-worker"

/**
 * Runs due tasks with the real handlers, as the worker loop does (claim, run, complete or record the
 * failure, retrying at once), until none is due. Returns the tasks it ran.
 */
const work = async (options: { readonly handlers?: Readonly<Record<string, TaskHandler>> } = {}) => {
  const use = options.handlers ?? handlers
  const ran: Array<TaskRow> = []
  for (let round = 0; round < 50; round++) {
    const claimed = await TaskQueue.claim(db, {
      workerId: WORKER,
      kinds: Object.keys(use),
      leaseMs: 120_000,
      limit: 8,
    })
    if (claimed.length === 0) return ran
    await Promise.all(
      claimed.map(async (task) => {
        ran.push(task)
        const controller = new AbortController()
        try {
          await runTaskHandler(use[task.kind]!, task, {
            ...taskContext(db, task, WORKER),
            signal: controller.signal,
          })
          await TaskQueue.complete(db, task.id, WORKER)
        } catch (e) {
          await TaskQueue.fail(db, task.id, WORKER, e instanceof Error ? e.message : String(e), { now: true })
        }
      }),
    )
  }
  throw new Error("tasks keep coming")
}

const text = (s: string) => new TextEncoder().encode(s)

const upload = (
  projectId: string,
  fileName: string,
  bytes: Uint8Array,
  fields: Record<string, string> = {},
) => {
  const form = new FormData()
  form.set("file", new Blob([bytes as Uint8Array<ArrayBuffer>]), fileName)
  for (const [k, v] of Object.entries(fields)) form.set(k, v)
  return a.send("POST", `/projects/${projectId}/documents/`, form)
}

const uploadOk = async (
  projectId: string,
  fileName: string,
  bytes: Uint8Array,
  fields: Record<string, string> = {},
) => {
  const r = await upload(projectId, fileName, bytes, fields)
  expect(r.status, r.text).toBe(201)
  return r.body as { id: string; version: number; status: string }
}

const replace = (
  projectId: string,
  documentId: string,
  fileName: string,
  bytes: Uint8Array,
): Promise<Reply> => {
  const form = new FormData()
  form.set("file", new Blob([bytes as Uint8Array<ArrayBuffer>]), fileName)
  return a.send("PUT", `/projects/${projectId}/documents/${documentId}/file/`, form)
}

const getDocument = (projectId: string, id: string) => a.get(`/projects/${projectId}/documents/${id}/`)
const pageCount = async (documentId: string) =>
  (
    await db
      .selectFrom("pages")
      .select((eb) => eb.fn.countAll<string>().as("n"))
      .where("document_id", "=", documentId)
      .executeTakeFirstOrThrow()
  ).n
const blobKey = async (documentId: string) =>
  (await db.selectFrom("documents").select("blob_key").where("id", "=", documentId).executeTakeFirstOrThrow())
    .blob_key
const exists = (file: string) =>
  fs.stat(file).then(
    () => true,
    () => false,
  )
const status = async (projectId: string) => (await a.get(`/projects/${projectId}/status/`)).body

const LETTER = [
  "Dear Ms Jones, thank you for your order of 14 March 2026. The goods will ship within ten working days.",
  "Payment is due 30 days after delivery. The total amount is EUR 12,400.00, including VAT at the standard rate.",
  "Please quote the order number 4471-B on every invoice and delivery note you send us about this order.",
  "Kind regards, Alex Smith, Purchasing.",
].join("\n\n")

describe("parsing an upload", () => {
  it("answers 201 Pending, then the worker makes it Processed with pages, summary and metadata", async () => {
    const projectId = await createProject(a)
    const doc = await uploadOk(projectId, "letter.txt", text(LETTER))
    expect(doc).toMatchObject({ status: "Pending", page_count: 0, version: 1, last_parsed_at: null })
    expect(await status(projectId)).toMatchObject({
      parsing_state: "parsing",
      documents_by_status: { Pending: 1 },
    })

    const ran = await work()
    expect(ran.map((t) => t.kind)).toEqual(["parse"])
    const parsed = (await getDocument(projectId, doc.id)).body
    expect(parsed).toMatchObject({ status: "Processed", page_count: 1, version: 1, failure_reason: null })
    expect(parsed.last_parsed_at).toEqual(timestamp)
    expect(parsed.summary).toMatch(/^Dear Ms Jones, thank you for your order of 14 March 2026\./)
    expect(parsed.summary).toMatch(/\(1 page\)$/)
    expect(parsed.summary.length).toBeLessThan(340)
    expect(parsed.summary).not.toContain("Alex Smith")
    expect(JSON.parse(parsed.metadata)).toMatchObject({ parser: "text" })
    expect(await status(projectId)).toMatchObject({
      parsing_state: "idle",
      documents_by_status: { Processed: 1 },
    })

    const page = await a.get(`/projects/${projectId}/documents/${doc.id}/pages/1/`)
    expect(page.status).toBe(200)
    expect(page.body).toEqual({
      document_id: doc.id,
      page_number: 1,
      text: expect.stringContaining("order number 4471-B"),
      width: null,
      height: null,
      unit: null,
      layout: [],
      tables: [],
    })
    // The page text is indexed for retrieval.
    const hit = await db
      .selectFrom("pages")
      .select("number")
      .where("document_id", "=", doc.id)
      .where((eb) =>
        eb("tsv", "@@", eb.fn<string>("plainto_tsquery", [eb.val("english"), eb.val("invoices")])),
      )
      .execute()
    expect(hit).toEqual([{ number: 1 }])
  })

  it("answers 404 problems for a missing page, an unparsed document, a bad page number, and page images of text", async () => {
    const projectId = await createProject(a)
    const doc = await uploadOk(projectId, "notes.txt", text("Just a line."))
    const pending = await a.get(`/projects/${projectId}/documents/${doc.id}/pages/1/`)
    expectProblem(pending, 404)
    expect(pending.body.detail).toContain("Pending")
    await work()
    const missing = await a.get(`/projects/${projectId}/documents/${doc.id}/pages/2/`)
    expectProblem(missing, 404)
    expect(missing.body.detail).toBe(`Document ${doc.id} has no page 2; it has 1 page`)
    expectProblem(await a.get(`/projects/${projectId}/documents/${doc.id}/pages/0/`), 400)
    expectProblem(await a.get(`/projects/${projectId}/documents/${doc.id}/pages/x/`), 400)
    const image = await a.get(`/projects/${projectId}/documents/${doc.id}/pages/1/image/`)
    expectProblem(image, 404)
    expect(image.body.detail).toContain("Page images are available for PDF and image documents")
    expect(image.body.detail).toContain("install LibreOffice to render Word/PowerPoint/Excel pages")
    expect(image.body.detail).toContain("Text document")
    const other = api.client(await api.newKey("globex"))
    expectProblem(await other.get(`/projects/${projectId}/documents/${doc.id}/pages/1/`), 404)
  })

  it("makes content that is not what its extension says Failed, with the reason in the document", async () => {
    const projectId = await createProject(a)
    const random = new Uint8Array(4096).map(() => Math.floor(Math.random() * 256))
    const doc = await uploadOk(projectId, "scan.pdf", random)
    await work()
    const failed = (await getDocument(projectId, doc.id)).body
    expect(failed).toMatchObject({ status: "Failed", page_count: 0, last_parsed_at: null })
    expect(failed.failure_reason).toEqual(expect.any(String))
    expect(failed.failure_reason).not.toMatch(/no parser/)
    expect(await pageCount(doc.id)).toBe("0")
    expect(await status(projectId)).toMatchObject({
      parsing_state: "failed",
      documents_by_status: { Failed: 1 },
    })
    const pages = await a.get(`/projects/${projectId}/documents/${doc.id}/pages/1/`)
    expectProblem(pages, 404)
    expect(pages.body.detail).toContain(failed.failure_reason)
  })

  it("makes a document whose stored file is gone before its parse Failed, saying so, at the first attempt", async () => {
    const projectId = await createProject(a)
    const doc = await uploadOk(projectId, "lost.pdf", pdfBytes("Never read"))
    const stored = await db
      .selectFrom("documents")
      .select("blob_key")
      .where("id", "=", doc.id)
      .executeTakeFirstOrThrow()
    await fs.rm(path.join(api.blobDir, stored.blob_key))
    const ran = await work()
    expect(ran.filter((t) => t.kind === "parse")).toHaveLength(1)
    const failed = (await getDocument(projectId, doc.id)).body
    expect(failed).toMatchObject({
      status: "Failed",
      page_count: 0,
      failure_reason: "the stored file is missing",
    })
  })

  it("draws a PDF page as a PNG", async () => {
    const projectId = await createProject(a)
    const doc = await uploadOk(projectId, "one.pdf", pdfBytes("Hello page image"))
    await work()
    const parsed = (await getDocument(projectId, doc.id)).body
    expect(parsed).toMatchObject({ status: "Processed", page_count: 1 })
    const page = await a.get(`/projects/${projectId}/documents/${doc.id}/pages/1/`)
    expect(page.body).toMatchObject({
      width: 612,
      height: 792,
      unit: "pt",
      text: expect.stringContaining("Hello"),
    })
    const res = await fetch(`${api.base}/projects/${projectId}/documents/${doc.id}/pages/1/image/`, {
      headers: { "x-api-key": aKey },
    })
    expect(res.status).toBe(200)
    expect(res.headers.get("content-type")).toBe("image/png")
    const png = new Uint8Array(await res.arrayBuffer())
    expect([...png.slice(0, 4)]).toEqual([0x89, 0x50, 0x4e, 0x47])
  })

  it("turns e-mail attachments into documents of the project, each parsed on its own", async () => {
    const projectId = await createProject(a)
    const eml = emailWith([
      { name: "minutes.txt", type: "text/plain", body: "Minutes of the board meeting held on 2 May." },
      { name: "blob.xyz", type: "application/octet-stream", body: "opaque" },
    ])
    const doc = await uploadOk(projectId, "mail.eml", text(eml))
    await work()
    const list = (await a.get(`/projects/${projectId}/documents/`)).body as Array<any>
    // The unreadable attachment is not made a (Failed, launch-blocking) document; the message lists it.
    expect(list).toHaveLength(2)
    const byName = Object.fromEntries(list.map((d) => [d.file_name, d]))
    expect(byName["mail.eml"]).toMatchObject({ status: "Processed", parent_document_id: null })
    expect(JSON.parse(byName["mail.eml"].metadata).skipped_attachments).toEqual([
      { file_name: "blob.xyz", reason: "unsupported file type" },
    ])
    expect(byName["minutes.txt"]).toMatchObject({
      status: "Processed",
      type: "Text",
      parent_document_id: doc.id,
    })
    expect(byName["blob.xyz"]).toBeUndefined()
    const minutes = await a.get(`/projects/${projectId}/documents/${byName["minutes.txt"].id}/pages/1/`)
    expect(minutes.body.text).toContain("board meeting")
  })
})

describe("replacing a file", () => {
  it("increments the version, clears the pages and parses the new file; refuses while Pending", async () => {
    const projectId = await createProject(a)
    const doc = await uploadOk(projectId, "v1.txt", text("First version of the contract."))
    expectProblem(await replace(projectId, doc.id, "v2.txt", text("too early")), 409)
    await work()
    const oldKey = await blobKey(doc.id)
    expect(await pageCount(doc.id)).toBe("1")

    const r = await replace(projectId, doc.id, "v2.md", text("Second version: the term is 24 months."))
    expect(r.status, r.text).toBe(200)
    expect(r.body).toMatchObject({
      id: doc.id,
      version: 2,
      status: "Pending",
      page_count: 0,
      summary: "",
      metadata: "",
      file_name: "v2.md",
      type: "Text",
    })
    expect(await pageCount(doc.id)).toBe("0")
    expect(await exists(path.join(api.blobDir, oldKey))).toBe(false)
    const download = await fetch(r.body.file_url)
    expect(await download.text()).toBe("Second version: the term is 24 months.")
    const tasks = await db.selectFrom("tasks").select("idempotency_key").where("kind", "=", "parse").execute()
    expect(tasks.map((t) => t.idempotency_key)).toContain(`parse:${doc.id}:2`)

    await work()
    const parsed = (await getDocument(projectId, doc.id)).body
    expect(parsed).toMatchObject({ status: "Processed", version: 2, page_count: 1 })
    expect((await a.get(`/projects/${projectId}/documents/${doc.id}/pages/1/`)).body.text).toContain(
      "24 months",
    )
  })

  it("refuses an unsupported type (415), a missing file (400) and unknown documents (404)", async () => {
    const projectId = await createProject(a)
    const doc = await uploadOk(projectId, "a.txt", text("A"))
    await work()
    expectProblem(await replace(projectId, doc.id, "a.exe", text("MZ")), 415)
    expectProblem(
      await a.send("PUT", `/projects/${projectId}/documents/${doc.id}/file/`, new FormData()),
      400,
    )
    expectProblem(await replace(projectId, randomUUID(), "a.txt", text("A")), 404)
    expect((await getDocument(projectId, doc.id)).body).toMatchObject({ version: 1, status: "Processed" })
  })
})

describe("deleting", () => {
  it("removes the document's pages and stored file", async () => {
    const projectId = await createProject(a)
    const doc = await uploadOk(projectId, "gone.txt", text("Soon gone."))
    await work()
    const key = await blobKey(doc.id)
    expect(await pageCount(doc.id)).toBe("1")
    expect((await a.delete(`/projects/${projectId}/documents/${doc.id}/`)).status).toBe(204)
    expect(await pageCount(doc.id)).toBe("0")
    expect(await exists(path.join(api.blobDir, key))).toBe(false)
  })

  it("a parse task of a deleted document, or of a version that moved on, completes doing nothing", async () => {
    const projectId = await createProject(a)
    const doc = await uploadOk(projectId, "brief.txt", text("Brief."))
    expect((await a.delete(`/projects/${projectId}/documents/${doc.id}/`)).status).toBe(204)
    const other = await uploadOk(projectId, "other.txt", text("Other."))
    await TaskQueue.enqueue(db, {
      kind: "parse",
      idempotencyKey: `parse:${other.id}:7`,
      payload: { document_id: other.id, version: 7 },
      projectId,
    })
    const ran = await work()
    expect(ran).toHaveLength(3)
    const tasks = await db
      .selectFrom("tasks")
      .select(["status", "attempts", "last_error"])
      .where(
        "id",
        "in",
        ran.map((t) => t.id),
      )
      .execute()
    expect(tasks.every((t) => t.status === "succeeded" && t.attempts === 1 && t.last_error === null)).toBe(
      true,
    )
    expect((await getDocument(projectId, other.id)).body).toMatchObject({ status: "Processed", version: 1 })
  })
})

describe("never left Pending", () => {
  it("a parse whose last attempt fails leaves the document Failed with the error", async () => {
    const projectId = await createProject(a)
    const doc = await uploadOk(projectId, "unlucky.txt", text("Unlucky."))
    await db
      .updateTable("tasks")
      .set({ max_attempts: 2 })
      .where("idempotency_key", "=", `parse:${doc.id}:1`)
      .execute()
    // Storage that cannot be read (not a parser fake: the parse never starts).
    const broken: BlobStoreShape = { ...blobs, read: () => Effect.die(new Error("disk on fire")) }
    await work({ handlers: backgroundTaskHandlers({ blobs: broken }) })
    const task = await db
      .selectFrom("tasks")
      .selectAll()
      .where("idempotency_key", "=", `parse:${doc.id}:1`)
      .executeTakeFirstOrThrow()
    expect(task).toMatchObject({ status: "failed", attempts: 2 })
    expect(task.last_error).toContain("disk on fire")
    const failed = (await getDocument(projectId, doc.id)).body
    expect(failed.status).toBe("Failed")
    expect(failed.failure_reason).toMatch(/^parsing could not complete after 2 attempts: .*disk on fire/)
  })

  it("a parse whose worker died on the last attempt is made Failed by housekeeping", async () => {
    const projectId = await createProject(a)
    const doc = await uploadOk(projectId, "orphan.txt", text("Orphan."))
    // As TaskQueue.claim leaves it when the lease of the last attempt expired.
    await db
      .updateTable("tasks")
      .set({
        status: "failed",
        attempts: 5,
        lease_expirations: 5,
        last_error: "lease expired during the last attempt",
      })
      .where("idempotency_key", "=", `parse:${doc.id}:1`)
      .execute()
    expect(await Effect.runPromise(backgroundHousekeeping(db))).toBe(1)
    expect((await getDocument(projectId, doc.id)).body).toMatchObject({
      status: "Failed",
      failure_reason: "parsing could not complete: lease expired during the last attempt",
    })
    expect(await Effect.runPromise(backgroundHousekeeping(db))).toBe(0)
  })

  it("the project status says stuck while a parse task's lease keeps expiring", async () => {
    const projectId = await createProject(a)
    const doc = await uploadOk(projectId, "stuck.txt", text("Stuck."))
    await db
      .updateTable("tasks")
      .set({ lease_expirations: 2 })
      .where("idempotency_key", "=", `parse:${doc.id}:1`)
      .execute()
    expect(await status(projectId)).toMatchObject({ parsing_state: "stuck" })
    await work()
    expect(await status(projectId)).toMatchObject({ parsing_state: "idle" })
  })
})

describe("archiving", () => {
  const archiveOf = (projectId: string) =>
    db.selectFrom("projects").selectAll().where("archive_of_project_id", "=", projectId).execute()

  it("moves a requested document into the project's archive project, which stays retrievable but unlisted", async () => {
    const projectId = await createProject(a)
    const name = (await a.get(`/projects/${projectId}/`)).body.name as string
    const doc = await uploadOk(projectId, "old.txt", text("Old news."), { tags: '{"region":"EU"}' })
    const keep = await uploadOk(projectId, "keep.txt", text("Keep me."), { tags: '{"owner":"ops"}' })
    await work()

    const r = await a.post(`/projects/${projectId}/documents/${doc.id}/archive/`)
    expect(r.status).toBe(202)
    expect(r.body).toMatchObject({ id: doc.id, project_id: projectId, archive_requested_at: timestamp })
    const again = await a.post(`/projects/${projectId}/documents/${doc.id}/archive/`)
    expect(again.body.archive_requested_at).toBe(r.body.archive_requested_at)
    expect((await getDocument(projectId, doc.id)).status).toBe(200)

    const ran = await work()
    expect(ran.map((t) => t.kind)).toEqual(["archive"])
    expectProblem(await getDocument(projectId, doc.id), 404)
    const live = (await a.get(`/projects/${projectId}/documents/`)).body as Array<any>
    expect(live.map((d) => d.id)).toEqual([keep.id])

    const [archive, ...more] = await archiveOf(projectId)
    expect(more).toEqual([])
    expect(archive).toMatchObject({ name: `${name} (archive)`, archived_at: expect.any(Date) })
    const got = await a.get(`/projects/${archive!.id}/`)
    expect(got.status).toBe(200)
    expect(got.body).toMatchObject({ id: archive!.id, name: `${name} (archive)`, document_count: 1 })
    const listed = (await a.get("/projects/")).body as Array<any>
    expect(listed.map((p) => p.id)).toContain(projectId)
    expect(listed.map((p) => p.id)).not.toContain(archive!.id)
    const archived = (await a.get(`/projects/${archive!.id}/documents/${doc.id}/`)).body
    expect(archived).toMatchObject({
      project_id: archive!.id,
      status: "Processed",
      tags: [{ key: "region", value: "EU" }],
    })
    expect((await a.get(`/projects/${archive!.id}/documents/${doc.id}/pages/1/`)).body.text).toBe("Old news.")

    // TAG dimensions follow the documents.
    const dims = async (id: string) =>
      ((await a.get(`/projects/${id}/dimensions/`)).body as Array<any>)
        .map((d) => `${d.source}:${d.name}`)
        .sort()
    expect(await dims(projectId)).toEqual(["DOCUMENT:Document", "TAG:owner"])
    expect(await dims(archive!.id)).toEqual(["DOCUMENT:Document", "TAG:region"])

    // The archive project takes no uploads and no archive requests; a second archival reuses it.
    expectProblem(await upload(archive!.id, "x.txt", text("x")), 404)
    expect((await a.post(`/projects/${projectId}/documents/${keep.id}/archive/`)).status).toBe(202)
    await work()
    expect(await archiveOf(projectId)).toHaveLength(1)
    expect((await a.get(`/projects/${archive!.id}/`)).body.document_count).toBe(2)
    expect((await a.get(`/projects/${projectId}/`)).body.document_count).toBe(0)
  })

  it("the daily sweep requests archival of documents older than auto_archive_after_days, and queues the next sweep", async () => {
    const auto = await createProject(a, { auto_archive_after_days: 30 })
    const manual = await createProject(a)
    const old = await uploadOk(auto, "old.txt", text("Old."))
    const recent = await uploadOk(auto, "recent.txt", text("Recent."))
    const untouched = await uploadOk(manual, "ancient.txt", text("Ancient."))
    await work()
    await db
      .updateTable("documents")
      .set({ uploaded_at: new Date(Date.now() - 31 * 86_400_000) })
      .where("id", "in", [old.id, untouched.id])
      .execute()
    await db
      .updateTable("documents")
      .set({ uploaded_at: new Date(Date.now() - 29 * 86_400_000) })
      .where("id", "=", recent.id)
      .execute()
    await TaskQueue.enqueue(db, {
      kind: "archive-sweep",
      idempotencyKey: `archive-sweep:test-${auto}`,
      payload: {},
    })

    const ran = await work()
    expect(ran.map((t) => t.kind).sort()).toEqual(["archive", "archive-sweep"])
    const live = ((await a.get(`/projects/${auto}/documents/`)).body as Array<any>).map((d) => d.id)
    expect(live).toEqual([recent.id])
    expect((await getDocument(manual, untouched.id)).body).toMatchObject({ archive_requested_at: null })
    const [archive] = await archiveOf(auto)
    expect((await a.get(`/projects/${archive!.id}/documents/${old.id}/`)).status).toBe(200)

    const next = await db
      .selectFrom("tasks")
      .select(["idempotency_key", "run_after", "status"])
      .where("kind", "=", "archive-sweep")
      .where("status", "=", "pending")
      .execute()
    const tomorrow = new Date()
    tomorrow.setUTCHours(24, 0, 0, 0)
    expect(next).toEqual([
      {
        idempotency_key: `archive-sweep:${tomorrow.toISOString().slice(0, 10)}`,
        run_after: tomorrow,
        status: "pending",
      },
    ])
  })

  it("answers 404 for an unknown document or another organisation's", async () => {
    const projectId = await createProject(a)
    expectProblem(await a.post(`/projects/${projectId}/documents/${randomUUID()}/archive/`), 404)
    const doc = await uploadOk(projectId, "mine.txt", text("Mine."))
    const other = api.client(await api.newKey("globex"))
    expectProblem(await other.post(`/projects/${projectId}/documents/${doc.id}/archive/`), 404)
  })
})

/** A multipart/mixed e-mail with a text body and these attachments (base64). */
function emailWith(attachments: ReadonlyArray<{ name: string; type: string; body: string }>) {
  const boundary = "b-1234567890"
  const parts = [
    `--${boundary}\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nPlease find the files attached.\r\n`,
    ...attachments.map(
      (att) =>
        `--${boundary}\r\nContent-Type: ${att.type}; name="${att.name}"\r\nContent-Disposition: attachment; filename="${att.name}"\r\nContent-Transfer-Encoding: base64\r\n\r\n${Buffer.from(att.body).toString("base64")}\r\n`,
    ),
  ]
  return [
    "From: Alice <alice@example.com>",
    "To: Bob <bob@example.com>",
    "Subject: Board papers",
    "Date: Mon, 4 May 2026 10:00:00 +0000",
    "MIME-Version: 1.0",
    `Content-Type: multipart/mixed; boundary="${boundary}"`,
    "",
    `${parts.join("")}--${boundary}--\r\n`,
  ].join("\r\n")
}

describe("every supported type through the REST API", () => {
  it("ends Processed with the right pages: PDF, Word, PowerPoint, Excel, CSV, image, e-mail (.eml, .msg), HTML, Markdown", async () => {
    const projectId = await createProject(a)
    const files: ReadonlyArray<readonly [string, Uint8Array, string, number, string]> = [
      ["report.pdf", pdfBytes("Quarterly revenue grew"), "PDF", 1, "Quarterly revenue grew"],
      ["agreement.docx", await makeDocx(), "Word Document", 4, "Supply Agreement"],
      ["deck.pptx", await makePptx(), "PPT", 3, "Notes:"],
      ["book.xlsx", await makeXlsx(), "Excel", 2, "A1:"],
      ["table.csv", text(csvText), "Excel", 1, "A1:"],
      ["scan.png", textImage(["Invoice number 4711"]).png, "Image", 1, "4711"],
      ["mail.eml", text(emailWith([])), "Email", 1, "Subject:"],
      [
        "mail.msg",
        buildMsg({ subject: "Board papers", body: "See the minutes." }),
        "Email",
        1,
        "Board papers",
      ],
      [
        "page.html",
        text("<html><head><title>T</title></head><body><h1>Terms of service</h1></body></html>"),
        "Website",
        1,
        "Terms of service",
      ],
      ["notes.md", text("# Notes\n\nThe governing law is Delaware."), "Text", 1, "Delaware"],
    ]
    const ids = new Map<string, string>()
    for (const [name, bytes] of files) ids.set(name, (await uploadOk(projectId, name, bytes)).id)
    await work()
    for (const [name, , type, pages, needle] of files) {
      const doc = (await getDocument(projectId, ids.get(name)!)).body
      expect(doc, name).toMatchObject({ status: "Processed", type, page_count: pages, failure_reason: null })
      let all = ""
      for (let n = 1; n <= pages; n++)
        all += (await a.get(`/projects/${projectId}/documents/${doc.id}/pages/${n}/`)).body.text
      expect(all, name).toContain(needle)
    }
  })
})

describe("Outlook .msg messages", () => {
  const documents = async (projectId: string) => {
    const list = (await a.get(`/projects/${projectId}/documents/`)).body as Array<any>
    return Object.fromEntries(list.map((d) => [d.file_name, d])) as Record<string, any>
  }

  it("are parsed, their attachments and attached messages become documents, and the project launches", async () => {
    const projectId = await createProject(a)
    const msg = buildMsg({
      subject: "Board papers",
      senderName: "Alice",
      senderEmail: "alice@example.com",
      recipients: [{ name: "Bob", email: "bob@example.com" }],
      date: new Date("2026-05-04T10:00:00Z"),
      body: "Please find the minutes and the forwarded order attached.",
      attachments: [
        {
          fileName: "minutes.txt",
          data: text("Minutes of the board meeting held on 2 May."),
          mimeType: "text/plain",
        },
        { fileName: "blob.xyz", data: text("opaque") },
        {
          displayName: "Order 7781",
          message: {
            subject: "Order 7781",
            body: "Please deliver 12 units.",
            attachments: [{ fileName: "terms.txt", data: text("Delivery terms: DAP Rotterdam.") }],
          },
        },
      ],
    })
    const doc = await uploadOk(projectId, "board.msg", msg)
    expect(doc).toMatchObject({ status: "Pending", type: "Email" })
    await work()
    const byName = await documents(projectId)
    expect(Object.keys(byName).sort()).toEqual(["Order 7781.msg", "board.msg", "minutes.txt", "terms.txt"])
    expect(byName["board.msg"]).toMatchObject({
      status: "Processed",
      type: "Email",
      parent_document_id: null,
    })
    expect(byName["minutes.txt"]).toMatchObject({
      status: "Processed",
      type: "Text",
      parent_document_id: doc.id,
    })
    expect(byName["Order 7781.msg"]).toMatchObject({
      status: "Processed",
      type: "Email",
      parent_document_id: doc.id,
    })
    expect(byName["terms.txt"]).toMatchObject({
      status: "Processed",
      parent_document_id: byName["Order 7781.msg"].id,
    })
    const page = (await a.get(`/projects/${projectId}/documents/${doc.id}/pages/1/`)).body.text
    expect(page).toBe(
      "From: Alice <alice@example.com>\nTo: Bob <bob@example.com>\nDate: 2026-05-04T10:00:00.000Z\n" +
        "Subject: Board papers\nAttachments: minutes.txt, blob.xyz, Order 7781.msg\n\n" +
        "Please find the minutes and the forwarded order attached.",
    )
    expect(JSON.parse(byName["board.msg"].metadata)).toMatchObject({
      parser: "msgreader",
      subject: "Board papers",
      skipped_attachments: [{ file_name: "blob.xyz", reason: "unsupported file type" }],
    })
    const minutes = await a.get(`/projects/${projectId}/documents/${byName["minutes.txt"].id}/pages/1/`)
    expect(minutes.body.text).toContain("board meeting")

    await a.post(`/projects/${projectId}/agents/`, {
      name: "Meeting date",
      extraction_instructions: "The date of the board meeting",
    })
    const launch = await a.post(`/projects/${projectId}/agents/launch/`)
    expect(launch.status, launch.text).toBe(202)
    await work()
  })

  it("a damaged .msg ends Failed with its reason", async () => {
    const projectId = await createProject(a)
    const msg = buildMsg({ subject: "cut", body: "a body long enough to need its own sector ".repeat(20) })
    const doc = await uploadOk(projectId, "cut.msg", msg.subarray(0, 1024))
    await work()
    const failed = (await getDocument(projectId, doc.id)).body
    expect(failed).toMatchObject({ status: "Failed", page_count: 0 })
    expect(failed.failure_reason).toMatch(/^the Outlook message is damaged: /)
  })

  it("attachments are bounded in number and in depth through attached messages", async () => {
    const bounded = backgroundTaskHandlers({
      blobs,
      parsing: { timeoutMs: 60_000, limits: { ...defaultLimits, maxAttachments: 2, maxAttachmentDepth: 2 } },
    })
    const projectId = await createProject(a)
    const note = (name: string) => ({ fileName: name, data: text(`This is ${name}.`) })
    const doc = await uploadOk(
      projectId,
      "outer.msg",
      buildMsg({
        subject: "outer",
        body: "level 0",
        attachments: [
          note("one.txt"),
          {
            displayName: "middle",
            message: {
              subject: "middle",
              body: "level 1",
              attachments: [
                {
                  displayName: "inner",
                  message: { subject: "inner", body: "level 2", attachments: [note("deep.txt")] },
                },
              ],
            },
          },
          note("three.txt"),
        ],
      }),
    )
    await work({ handlers: bounded })
    const byName = await documents(projectId)
    expect(Object.keys(byName).sort()).toEqual(["inner.msg", "middle.msg", "one.txt", "outer.msg"])
    for (const d of Object.values(byName)) expect(d.status, d.file_name).toBe("Processed")
    expect(byName["middle.msg"].parent_document_id).toBe(doc.id)
    expect(byName["inner.msg"].parent_document_id).toBe(byName["middle.msg"].id)
    expect(JSON.parse(byName["outer.msg"].metadata).skipped_attachments).toEqual([
      { file_name: "three.txt", reason: "the message has more than 2 attachments" },
    ])
    expect(JSON.parse(byName["inner.msg"].metadata).skipped_attachments).toEqual([
      { file_name: "deep.txt", reason: "attached more than 2 levels deep (in attached messages)" },
    ])
  })
})
