/**
 * The documents panel's endpoints (beyond the contract) through HTTP: a page of documents with paging and
 * filters, re-parsing a document as a new version, and deleting or archiving many documents at once. Every
 * answer is checked against the OpenAPI description the server serves.
 */
import { randomUUID } from "node:crypto"
import { fileBlobStore, makeKysely } from "@dxs/db"
import type { TaskRow } from "@dxs/db/Schema"
import * as TaskQueue from "@dxs/db/TaskQueue"
import { onePagePdf } from "@dxs/testing/Documents"
import { type Client, createProject, expectProblem, type Reply, uuid } from "@dxs/testing/RestClient"
import { backgroundTaskHandlers, type TaskHandler } from "@dxs/worker"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { compileDescription, type Description, errorsText } from "./description.ts"
import { runTaskHandler, startTestApi, type TestApi, taskContext } from "./harness.ts"

let api: TestApi
let a: Client
let b: Client
let db: ReturnType<typeof makeKysely>
let handlers: Readonly<Record<string, TaskHandler>>
let description: Description

beforeAll(async () => {
  api = await startTestApi()
  a = api.client(await api.newKey("acme"))
  b = api.client(await api.newKey("globex"))
  db = makeKysely(api.dbUrl, 4)
  handlers = backgroundTaskHandlers({ blobs: fileBlobStore(api.blobDir), parsing: { timeoutMs: 60_000 } })
  description = compileDescription((await a.get("/schema/?format=json")).body)
})

afterAll(async () => {
  await db?.destroy()
})

const WORKER = "test-worker"

/** Runs due tasks with the real handlers (parsing included), as the worker loop does, until none is due. */
const work = async () => {
  const ran: Array<TaskRow> = []
  for (let round = 0; round < 50; round++) {
    const claimed = await TaskQueue.claim(db, {
      workerId: WORKER,
      kinds: Object.keys(handlers),
      leaseMs: 120_000,
      limit: 8,
    })
    if (claimed.length === 0) return ran
    await Promise.all(
      claimed.map(async (task) => {
        ran.push(task)
        try {
          await runTaskHandler(handlers[task.kind]!, task, taskContext(db, task, WORKER))
          await TaskQueue.complete(db, task.id, WORKER)
        } catch (e) {
          await TaskQueue.fail(db, task.id, WORKER, e instanceof Error ? e.message : String(e), { now: true })
        }
      }),
    )
  }
  throw new Error("tasks keep coming")
}

/** The answer matches the schema the description declares for the operation and status. */
const documented = (r: Reply, method: string, path: string) => {
  const type = r.status >= 400 ? "application/problem+json" : "application/json"
  const validate = description.validator([
    "paths",
    `/api/v1${path}`,
    method,
    "responses",
    String(r.status),
    "content",
    type,
    "schema",
  ])
  expect(validate(r.body), errorsText(validate.errors)).toBe(true)
  return r
}

const PAGE = "/projects/{project_id}/documents/page/"
const REPARSE = "/projects/{project_id}/documents/{document_id}/reparse/"
const BULK = "/projects/{project_id}/documents/bulk/"

const text = (s: string) => new TextEncoder().encode(s)

const upload = async (client: Client, projectId: string, fileName: string, bytes: Uint8Array) => {
  const form = new FormData()
  form.set("file", new Blob([bytes as Uint8Array<ArrayBuffer>]), fileName)
  const r = await client.send("POST", `/projects/${projectId}/documents/`, form)
  expect(r.status, r.text).toBe(201)
  return r.body as { id: string; file_name: string }
}

const page = async (projectId: string, query = "") => {
  const r = await a.get(`/projects/${projectId}/documents/page/${query}`)
  expect(r.status, r.text).toBe(200)
  return documented(r, "get", PAGE).body as {
    count: number
    next: string | null
    previous: string | null
    results: Array<any>
  }
}

const names = (p: { results: Array<any> }) => p.results.map((d) => d.file_name)

/** A multipart/mixed e-mail with a text body and these attachments (base64). */
const emailWith = (attachments: ReadonlyArray<{ name: string; type: string; body: string }>) => {
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

describe("GET …/documents/page/", () => {
  it("pages top-level documents, most recent first, with next/previous links that keep the filters", async () => {
    const p = await createProject(a)
    for (let i = 1; i <= 5; i++) await upload(a, p, `report-${i}.txt`, text(`Report number ${i}.`))
    const first = await page(p, "?limit=2")
    expect(first.count).toBe(5)
    expect(names(first)).toEqual(["report-5.txt", "report-4.txt"])
    expect(first.previous).toBeNull()
    expect(first.next).toMatch(/^\?limit=2&cursor=[A-Za-z0-9_-]+$/)
    expect(first.results[0]).toMatchObject({
      id: uuid,
      project_id: p,
      status: "Pending",
      attachment_count: 0,
    })
    const second = await page(p, first.next!)
    expect(names(second)).toEqual(["report-3.txt", "report-2.txt"])
    expect(second.previous).toBe("?limit=2&offset=0")
    const last = await page(p, second.next!)
    expect(names(last)).toEqual(["report-1.txt"])
    expect(last.next).toBeNull()
    // Backwards by cursor from the last page.
    expect(last.previous).toMatch(/^\?limit=2&cursor=/)
    expect(names(await page(p, last.previous!))).toEqual(["report-3.txt", "report-2.txt"])
    expect(names(await page(p, "?limit=2&offset=1"))).toEqual(["report-4.txt", "report-3.txt"])
    // The default page holds 50; beyond the end is an empty page, still counted.
    expect(names(await page(p))).toHaveLength(5)
    const beyond = await page(p, "?offset=10")
    expect(beyond).toMatchObject({ count: 5, results: [], next: null })
    // The filters stay in the links.
    const searched = await page(p, "?search=REPORT&status=Pending&limit=1")
    expect(searched.next).toMatch(/^\?search=REPORT&status=Pending&limit=1&cursor=/)
    expect(names(await page(p, searched.next!))).toEqual(["report-4.txt"])
    // The contract's list is unchanged: an array of every document.
    const list = await a.get(`/projects/${p}/documents/`)
    expect(Array.isArray(list.body)).toBe(true)
    expect(list.body).toHaveLength(5)
  })

  it("searches names ignoring case, with % and _ taken literally, and filters by status and tag", async () => {
    const p = await createProject(a)
    await upload(a, p, "Invoice_March.txt", text("Invoice of March."))
    await upload(a, p, "invoiceXapril.txt", text("Invoice of April."))
    await upload(a, p, "100% done.txt", text("All done."))
    const broken = await upload(a, p, "broken.pdf", text("this is not a PDF"))
    await work()
    expect(names(await page(p, "?search=INVOICE"))).toEqual(["invoiceXapril.txt", "Invoice_March.txt"])
    expect(names(await page(p, "?search=e_m"))).toEqual(["Invoice_March.txt"])
    expect(names(await page(p, `?search=${encodeURIComponent("0%")}`))).toEqual(["100% done.txt"])
    expect(names(await page(p, "?search=nothing-like-it"))).toEqual([])
    const failed = await page(p, "?status=Failed")
    expect(failed.count).toBe(1)
    expect(failed.results[0]).toMatchObject({
      id: broken.id,
      status: "Failed",
      failure_reason: expect.any(String),
    })
    expect((await page(p, "?status=Processed")).count).toBe(3)
    expect((await page(p, "?status=Pending")).count).toBe(0)

    const tagged = (await page(p, "?search=April")).results[0]
    expect(
      (await a.put(`/projects/${p}/documents/${tagged.id}/tags/`, { tags: { region: "EU" } })).status,
    ).toBe(200)
    expect(names(await page(p, "?tag_key=region&tag_value=EU"))).toEqual(["invoiceXapril.txt"])
    expect(names(await page(p, "?tag_key=region&tag_value=US"))).toEqual([])
  })

  it("lists a message's attachments under parent_document_id, and counts them on the message", async () => {
    const p = await createProject(a)
    const mail = await upload(
      a,
      p,
      "mail.eml",
      text(
        emailWith([
          { name: "minutes.txt", type: "text/plain", body: "Minutes of the board meeting." },
          { name: "agenda.txt", type: "text/plain", body: "Agenda of the next meeting." },
        ]),
      ),
    )
    await upload(a, p, "other.txt", text("Something else."))
    await work()
    // Top level: the message (with its two attachments counted) and the other upload.
    const top = await page(p)
    expect(names(top).sort()).toEqual(["mail.eml", "other.txt"])
    expect(top.results.find((d) => d.id === mail.id).attachment_count).toBe(2)
    const attachments = await page(p, `?parent_document_id=${mail.id}`)
    expect(names(attachments).sort()).toEqual(["agenda.txt", "minutes.txt"])
    for (const d of attachments.results)
      expect(d).toMatchObject({ parent_document_id: mail.id, attachment_count: 0 })
    expect((await page(p, `?parent_document_id=${mail.id}&search=agenda`)).count).toBe(1)
    expect((await page(p, `?parent_document_id=${randomUUID()}`)).count).toBe(0)
  })

  it("refuses each bad parameter with 400 naming it, and unknown or foreign projects with 404", async () => {
    const p = await createProject(a)
    const bad = [
      ["limit=0", "limit"],
      ["limit=501", "limit"],
      ["limit=ten", "limit"],
      ["offset=-1", "offset"],
      ["search=", "search"],
      [`search=${"x".repeat(201)}`, "search"],
      ["status=Done", "status"],
      ["parent_document_id=not-a-uuid", "parent_document_id"],
      ["tag_key=region", "tag_value"],
      ["tag_value=EU", "tag_key"],
    ] as const
    for (const [query, field] of bad) {
      const r = await a.get(`/projects/${p}/documents/page/?${query}`)
      expectProblem(r, 400)
      documented(r, "get", PAGE)
      expect(
        (r.body.errors as Array<{ path: string }>).map((e) => e.path),
        query,
      ).toEqual([field])
    }
    expect((await a.get(`/projects/${p}/documents/page/?limit=500&search=${"x".repeat(200)}`)).status).toBe(
      200,
    )
    expectProblem(await a.get(`/projects/${randomUUID()}/documents/page/`), 404)
    expectProblem(await b.get(`/projects/${p}/documents/page/`), 404)
  })
})

describe("POST …/documents/{id}/reparse/", () => {
  it("parses the stored file again as version + 1: Pending, then Processed; 409 while Pending", async () => {
    const p = await createProject(a)
    const doc = await upload(a, p, "letter.pdf", onePagePdf("The term is 24 months."))
    const early = await a.post(`/projects/${p}/documents/${doc.id}/reparse/`)
    expectProblem(early, 409)
    documented(early, "post", REPARSE)
    expect(early.body.detail).toContain("Pending")
    await work()
    const before = (await a.get(`/projects/${p}/documents/${doc.id}/`)).body
    expect(before).toMatchObject({ status: "Processed", version: 1, page_count: 1 })

    const r = await a.post(`/projects/${p}/documents/${doc.id}/reparse/`)
    expect(r.status, r.text).toBe(202)
    documented(r, "post", REPARSE)
    expect(r.body).toMatchObject({
      id: doc.id,
      version: 2,
      status: "Pending",
      page_count: 0,
      file_name: "letter.pdf",
      type: "PDF",
    })
    // The same bytes, under the new version.
    const download = await fetch(r.body.file_url)
    expect(Buffer.from(await download.arrayBuffer()).toString("latin1")).toContain("%PDF")
    expectProblem(await a.post(`/projects/${p}/documents/${doc.id}/reparse/`), 409)
    const tasks = await db.selectFrom("tasks").select("idempotency_key").where("kind", "=", "parse").execute()
    expect(tasks.map((t) => t.idempotency_key)).toContain(`parse:${doc.id}:2`)

    await work()
    const after = (await a.get(`/projects/${p}/documents/${doc.id}/`)).body
    expect(after).toMatchObject({ status: "Processed", version: 2, page_count: 1, failure_reason: null })
    expect((await a.get(`/projects/${p}/documents/${doc.id}/pages/1/`)).body.text).toContain("24 months")
  })

  it("re-parses a failed document (it fails again, as a new version, with its reason)", async () => {
    const p = await createProject(a)
    const doc = await upload(a, p, "broken.pdf", text("not a PDF at all"))
    await work()
    expect((await a.get(`/projects/${p}/documents/${doc.id}/`)).body.status).toBe("Failed")
    const r = await a.post(`/projects/${p}/documents/${doc.id}/reparse/`)
    expect(r.status).toBe(202)
    expect(r.body).toMatchObject({ version: 2, status: "Pending", failure_reason: null })
    await work()
    expect((await a.get(`/projects/${p}/documents/${doc.id}/`)).body).toMatchObject({
      version: 2,
      status: "Failed",
      failure_reason: expect.any(String),
    })
  })

  it("answers 404 for an unknown document, an unknown project and another organisation's document", async () => {
    const p = await createProject(a)
    const doc = await upload(a, p, "a.txt", text("A"))
    await work()
    const unknown = await a.post(`/projects/${p}/documents/${randomUUID()}/reparse/`)
    expectProblem(unknown, 404)
    documented(unknown, "post", REPARSE)
    expectProblem(await a.post(`/projects/${randomUUID()}/documents/${doc.id}/reparse/`), 404)
    expectProblem(await b.post(`/projects/${p}/documents/${doc.id}/reparse/`), 404)
    expectProblem(await a.post(`/projects/${p}/documents/not-a-uuid/reparse/`), 400)
  })
})

describe("POST …/documents/bulk/", () => {
  it("deletes the listed documents; unknown ones are listed as failed and the others go on", async () => {
    const p = await createProject(a)
    const one = await upload(a, p, "one.txt", text("One."))
    const two = await upload(a, p, "two.txt", text("Two."))
    const three = await upload(a, p, "three.txt", text("Three."))
    await work()
    const missing = randomUUID()
    const r = await a.post(`/projects/${p}/documents/bulk/`, {
      action: "delete",
      document_ids: [one.id, missing, three.id],
    })
    expect(r.status, r.text).toBe(200)
    documented(r, "post", BULK)
    expect(r.body).toEqual({
      succeeded: [one.id, three.id],
      failed: [{ document_id: missing, status: 404, detail: expect.stringContaining(missing) }],
    })
    expect(names(await page(p))).toEqual(["two.txt"])
    expect((await a.get(`/projects/${p}/documents/${one.id}/`)).status).toBe(404)
    expect((await a.get(`/projects/${p}/documents/${two.id}/`)).status).toBe(200)
  })

  it("archives the listed documents as POST …/archive/ does", async () => {
    const p = await createProject(a)
    const one = await upload(a, p, "one.txt", text("One."))
    const two = await upload(a, p, "two.txt", text("Two."))
    await work()
    const foreign = await upload(b, await createProject(b), "theirs.txt", text("Theirs."))
    const r = await a.post(`/projects/${p}/documents/bulk/`, {
      action: "archive",
      document_ids: [one.id, foreign.id, two.id],
    })
    expect(r.status, r.text).toBe(200)
    documented(r, "post", BULK)
    expect(r.body.succeeded).toEqual([one.id, two.id])
    expect(r.body.failed).toEqual([{ document_id: foreign.id, status: 404, detail: expect.any(String) }])
    for (const id of [one.id, two.id])
      expect((await a.get(`/projects/${p}/documents/${id}/`)).body.archive_requested_at).not.toBeNull()
    await work()
    // Archived: moved out of the project.
    expect((await page(p)).count).toBe(0)
  })

  it("refuses an empty, too long, repeating or malformed list and an unknown action with 400; an unknown project with 404", async () => {
    const p = await createProject(a)
    const id = randomUUID()
    const bodies: ReadonlyArray<unknown> = [
      { action: "delete", document_ids: [] },
      { action: "delete", document_ids: Array.from({ length: 501 }, () => randomUUID()) },
      { action: "delete", document_ids: [id, id] },
      { action: "delete", document_ids: ["nope"] },
      { action: "shred", document_ids: [id] },
      { document_ids: [id] },
    ]
    for (const body of bodies) {
      const r = await a.post(`/projects/${p}/documents/bulk/`, body)
      expectProblem(r, 400)
      documented(r, "post", BULK)
    }
    const max = await a.post(`/projects/${p}/documents/bulk/`, {
      action: "delete",
      document_ids: Array.from({ length: 500 }, () => randomUUID()),
    })
    expect(max.status).toBe(200)
    expect(max.body.failed).toHaveLength(500)
    expectProblem(
      await a.post(`/projects/${randomUUID()}/documents/bulk/`, { action: "delete", document_ids: [id] }),
      404,
    )
  })
})
