/**
 * File-edit operations through HTTP: templates built here with exceljs and docx, filled from the results of a
 * real run (local model, a worker in this process), downloaded and read back with the same libraries.
 * A second server without a worker keeps its jobs running, for what happens meanwhile (409, cancel).
 */
import * as fs from "node:fs/promises"
import * as path from "node:path"
import { type Database, fileBlobStore, makeKysely } from "@dxs/db"
import * as TaskQueue from "@dxs/db/TaskQueue"
import { fileEditTaskHandler } from "@dxs/pipeline/fileedit/FillTask"
import { invoice } from "@dxs/testing/Documents"
import { type Client, createProject, expectProblem } from "@dxs/testing/RestClient"
import { createAgent, launchAndWait, until, upload, waitProcessed } from "@dxs/testing/Runs"
import { Document, Packer, Paragraph, TextRun } from "docx"
import ExcelJS from "exceljs"
import type { Kysely } from "kysely"
import PizZip from "pizzip"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { compileDescription, type Description, expectDescribed } from "./description.ts"
import { runTaskHandler, startTestApi, type TestApi } from "./harness.ts"

const XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
const DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"

let api: TestApi
let a: Client
let idle: TestApi
let b: Client
let description: Description
let db: Kysely<Database>

beforeAll(async () => {
  api = await startTestApi({ worker: {} })
  a = api.client(await api.newKey("acme"))
  idle = await startTestApi({ maxTemplateBytes: 64 * 1024 })
  b = idle.client(await idle.newKey("acme"))
  description = compileDescription((await a.get("/schema/?format=json")).body)
  db = makeKysely(idle.dbUrl, 1)
})

afterAll(async () => {
  await db?.destroy()
})

/** The stored files of the project's file-edit jobs. */
const storedFiles = (server: TestApi, projectId: string) =>
  fs
    .readdir(path.join(server.blobDir, "file-edit", projectId), { recursive: true })
    .then((entries) => entries.filter((e) => /\.(xlsx|docx)$/.test(e)))
    .catch(() => [])

const statusPath = "/api/v1/projects/{project_id}/file-edit/status/"

/** The body matches the description's schema of the operation's answer. */
const workbookBytes = async (build: (wb: ExcelJS.Workbook) => void): Promise<Uint8Array> => {
  const wb = new ExcelJS.Workbook()
  build(wb)
  return new Uint8Array(await wb.xlsx.writeBuffer())
}

const readWorkbook = async (bytes: ArrayBuffer) => {
  const wb = new ExcelJS.Workbook()
  await wb.xlsx.load(bytes)
  return wb
}

const send = (client: Client, projectId: string, name: string, bytes: Uint8Array) => {
  const form = new FormData()
  form.append("file", new Blob([bytes as Uint8Array<ArrayBuffer>]), name)
  return client.send("POST", `/projects/${projectId}/file-edit/`, form)
}

const waitFinished = (client: Client, projectId: string) =>
  until("the template to be filled", async () => {
    const r = await client.get(`/projects/${projectId}/file-edit/status/`)
    return r.body.state === "running" ? undefined : r
  })

const download = (base: string, key: string, projectId: string) =>
  fetch(`${base}/projects/${projectId}/file-edit/download/`, { headers: { "x-api-key": key } })

describe("filling templates from a run's results", () => {
  let projectId: string
  let key: string

  beforeAll(async () => {
    key = await api.newKey("acme")
    projectId = await createProject(a)
    await upload(
      a,
      projectId,
      "invoice-a.pdf",
      await invoice({
        number: "INV-1001",
        date: "March 3, 2024",
        seller: "Acme Supplies Inc.",
        currency: "USD",
        subtotal: "$1,000.00",
        tax: "$200.00",
        total: "$1,200.00",
      }),
    )
    await upload(
      a,
      projectId,
      "invoice-b.pdf",
      await invoice({
        number: "INV-2002",
        date: "April 9, 2024",
        seller: "Acme Supplies Inc.",
        currency: "USD",
        subtotal: "$2,000.00",
        tax: "$400.00",
        total: "$2,400.00",
      }),
    )
    await waitProcessed(a, projectId)
    const dimensions = await a.get(`/projects/${projectId}/dimensions/`)
    const documentDimension = dimensions.body.find((d: any) => d.source === "DOCUMENT")
    await createAgent(a, projectId, {
      name: "Total Amount",
      extraction_instructions: "The total amount due on the invoice",
      value_type: "number",
      dimensions: [{ dimension_id: documentDimension.id }],
    })
    await createAgent(a, projectId, {
      name: "Invoice Number",
      extraction_instructions: "The invoice number",
      dimensions: [{ dimension_id: documentDimension.id }],
    })
    await createAgent(a, projectId, {
      name: "Invoiced Sum",
      extraction_instructions: "The total amount due on the invoice",
      value_type: "number",
      enable_complex_calculations_in_resolution: true,
      resolution_instructions: "Add up the totals of all invoices",
    })
    await launchAndWait(a, projectId)
  })

  it("is idle before any job, and there is nothing to download", async () => {
    const other = await createProject(a)
    const r = await a.get(`/projects/${other}/file-edit/status/`)
    expect(r.status).toBe(200)
    expect(r.body).toEqual({
      state: "idle",
      template_name: null,
      progress: { completed: 0, total: 0 },
      error: null,
      problems: [],
      started_at: null,
      finished_at: null,
      download_url: null,
    })
    expectDescribed(description, r.body, "get", statusPath, 200)
    expectProblem(await a.get(`/projects/${other}/file-edit/download/`), 404)
  })

  it("fills a workbook: placeholders, qualified ones, a table per combination, problems left as written", async () => {
    const template = await workbookBytes((wb) => {
      const summary = wb.addWorksheet("Summary")
      summary.getCell("A1").value = "Sum"
      summary.getCell("B1").value = "{{Invoiced Sum}}"
      summary.getCell("B1").font = { bold: true }
      summary.getCell("B2").value = "{{ total amount | Document=invoice-a.pdf }}"
      summary.getCell("B3").value = "Sum is {{Invoiced Sum}} in total"
      summary.getCell("B4").value = "{{Nobody}}"
      summary.getCell("B5").value = "{{Total Amount}}"
      summary.getCell("B6").value = "{{Total Amount | Region=EU}}"
      // A label over its placeholder, not a table.
      const form = wb.addWorksheet("Form")
      form.getCell("A1").value = "Invoiced Sum"
      form.getCell("A2").value = "{{Invoiced Sum}}"
      const table = wb.addWorksheet("Table")
      table.getCell("A1").value = "Document"
      table.getCell("B1").value = "Invoice Number"
      table.getCell("C1").value = "total amount"
      const blocked = wb.addWorksheet("Blocked")
      blocked.getCell("A1").value = "Document"
      blocked.getCell("B1").value = "Total Amount"
      blocked.getCell("B3").value = "keep me"
    })
    const started = await send(a, projectId, "Quarterly report.xlsx", template)
    expect(started.status).toBe(202)
    expect(started.body).toMatchObject({ state: "running", template_name: "Quarterly report.xlsx" })
    expectDescribed(description, started.body, "post", "/api/v1/projects/{project_id}/file-edit/", 202)

    const done = await waitFinished(a, projectId)
    expectDescribed(description, done.body, "get", statusPath, 200)
    expect(done.body).toMatchObject({
      state: "succeeded",
      template_name: "Quarterly report.xlsx",
      error: null,
      download_url: `/api/v1/projects/${projectId}/file-edit/download/`,
    })
    expect(done.body.progress.completed).toBe(done.body.progress.total)
    expect(done.body.finished_at).not.toBeNull()
    const problems = Object.fromEntries(done.body.problems.map((p: any) => [p.location, p]))
    expect(Object.keys(problems).sort()).toEqual(["Blocked!A1:B1", "Summary!B4", "Summary!B5", "Summary!B6"])
    expect(problems["Summary!B4"]).toMatchObject({ placeholder: "{{Nobody}}" })
    expect(problems["Summary!B4"].message).toMatch(/No agent is named "Nobody"/)
    expect(problems["Summary!B5"]).toMatchObject({ placeholder: "{{Total Amount}}" })
    expect(problems["Summary!B5"].message).toMatch(/2 results .*Document/)
    expect(problems["Summary!B6"].message).toMatch(/Region/)
    expect(problems["Blocked!A1:B1"].message).toMatch(/Blocked!B3 is not empty/)

    const file = await download(api.base, key, projectId)
    expect(file.status).toBe(200)
    expect(file.headers.get("content-type")).toBe(XLSX)
    expect(file.headers.get("content-disposition")).toContain('filename="Quarterly report-filled.xlsx"')
    const wb = await readWorkbook(await file.arrayBuffer())
    const summary = wb.getWorksheet("Summary")!
    expect(summary.getCell("B1").value).toBe(3600)
    expect(summary.getCell("B1").font?.bold).toBe(true)
    expect(summary.getCell("B2").value).toBe(1200)
    expect(summary.getCell("B3").value).toBe("Sum is 3600 in total")
    expect(summary.getCell("B4").value).toBe("{{Nobody}}")
    expect(summary.getCell("B5").value).toBe("{{Total Amount}}")
    expect(wb.getWorksheet("Form")!.getCell("A2").value).toBe(3600)
    const table = wb.getWorksheet("Table")!
    const rows = [2, 3, 4].map((r) => [1, 2, 3].map((c) => table.getCell(r, c).value))
    expect(rows).toEqual([
      ["invoice-a.pdf", "INV-1001", 1200],
      ["invoice-b.pdf", "INV-2002", 2400],
      [null, null, null],
    ])
    const blocked = wb.getWorksheet("Blocked")!
    expect(blocked.getCell("A2").value).toBeNull()
    expect(blocked.getCell("B3").value).toBe("keep me")
  })

  it("fills a Word document, placeholders split across runs included", async () => {
    const doc = new Document({
      sections: [
        {
          children: [
            new Paragraph("Report"),
            new Paragraph({ children: [new TextRun("Sum: {{Invoiced Sum}}")] }),
            new Paragraph({
              children: [
                new TextRun("Second invoice: {{Total "),
                new TextRun({ text: "Amount | Document=invoice-b.pdf}}", bold: true }),
              ],
            }),
            new Paragraph("Signed by {{Nobody}}."),
          ],
        },
      ],
    })
    const bytes = new Uint8Array(await Packer.toBuffer(doc))
    expect((await send(a, projectId, "Résumé.docx", bytes)).status).toBe(202)
    const done = await waitFinished(a, projectId)
    expect(done.body.state).toBe("succeeded")
    expect(done.body.problems).toEqual([
      { placeholder: "{{Nobody}}", location: "paragraph 4", message: expect.stringMatching(/Nobody/) },
    ])
    const file = await download(api.base, key, projectId)
    expect(file.status).toBe(200)
    expect(file.headers.get("content-type")).toBe(DOCX)
    expect(file.headers.get("content-disposition")).toContain("filename*=UTF-8''R%C3%A9sum%C3%A9-filled.docx")
    const xml = new PizZip(new Uint8Array(await file.arrayBuffer())).file("word/document.xml")!.asText()
    const paragraphs = Array.from(xml.matchAll(/<w:p[\s>][\s\S]*?<\/w:p>/g), (p) =>
      Array.from(p[0].matchAll(/<w:t(?:\s[^>]*)?>([^<]*)<\/w:t>/g), (t) => t[1]).join(""),
    )
    expect(paragraphs).toEqual(["Report", "Sum: 3600", "Second invoice: 2400", "Signed by {{Nobody}}."])
  })

  it("fails a job whose template cannot be read, and says why", async () => {
    const doc = new Document({
      sections: [{ children: [new Paragraph("Start {{#Invoiced Sum}} with no end")] }],
    })
    const bytes = new Uint8Array(await Packer.toBuffer(doc))
    expect((await send(a, projectId, "broken.docx", bytes)).status).toBe(202)
    const done = await waitFinished(a, projectId)
    expectDescribed(description, done.body, "get", statusPath, 200)
    expect(done.body).toMatchObject({ state: "failed", download_url: null })
    expect(done.body.error).toMatch(/placeholders could not be read/)
    expectProblem(await a.get(`/projects/${projectId}/file-edit/download/`), 404)
  })

  it("replaces a finished job with the next one", async () => {
    const template = await workbookBytes((wb) => {
      wb.addWorksheet("S").getCell("A1").value = "{{Invoiced Sum}}"
    })
    expect((await send(a, projectId, "again.xlsx", template)).status).toBe(202)
    const done = await waitFinished(a, projectId)
    expect(done.body).toMatchObject({ state: "succeeded", template_name: "again.xlsx", problems: [] })
    const wb = await readWorkbook(await (await download(api.base, key, projectId)).arrayBuffer())
    expect(wb.getWorksheet("S")!.getCell("A1").value).toBe(3600)
  })

  it("clears a finished job: idle, no download, its files removed", async () => {
    const stored = () => storedFiles(api, projectId)
    expect((await stored()).sort()).toHaveLength(2)
    const r = await a.delete(`/projects/${projectId}/file-edit/status/`)
    expect(r.status).toBe(204)
    expect((await a.get(`/projects/${projectId}/file-edit/status/`)).body.state).toBe("idle")
    expectProblem(await a.get(`/projects/${projectId}/file-edit/download/`), 404)
    expect(await stored()).toEqual([])
    expect((await a.delete(`/projects/${projectId}/file-edit/status/`)).status).toBe(204)
  })
})

describe("while a job runs, and what is refused", () => {
  let projectId: string
  const template = () =>
    workbookBytes((wb) => {
      wb.addWorksheet("S").getCell("A1").value = "{{Anything}}"
    })

  beforeAll(async () => {
    projectId = await createProject(b)
  })

  it("refuses a second job with 409 and has nothing to download yet", async () => {
    const first = await send(b, projectId, "first.xlsx", await template())
    expect(first.status).toBe(202)
    expect(first.body).toMatchObject({ state: "running", progress: { completed: 0, total: 0 } })
    const second = await send(b, projectId, "second.xlsx", await template())
    expectProblem(second, 409)
    expect(second.body.detail).toMatch(/being filled/)
    const r = await b.get(`/projects/${projectId}/file-edit/status/`)
    expect(r.body).toMatchObject({ state: "running", template_name: "first.xlsx", download_url: null })
    expectProblem(await b.get(`/projects/${projectId}/file-edit/download/`), 404)
  })

  it("cancels a running job: its task and files are removed and the project is idle", async () => {
    const stored = () => storedFiles(idle, projectId)
    const tasks = () =>
      db
        .selectFrom("tasks")
        .select("id")
        .where("project_id", "=", projectId)
        .where("kind", "=", "file-edit")
        .execute()
    expect(await stored()).toHaveLength(1)
    expect(await tasks()).toHaveLength(1)
    expect((await b.delete(`/projects/${projectId}/file-edit/status/`)).status).toBe(204)
    expect((await b.get(`/projects/${projectId}/file-edit/status/`)).body.state).toBe("idle")
    expect(await stored()).toEqual([])
    expect(await tasks()).toEqual([])
    // A new job may start at once.
    expect((await send(b, projectId, "third.xlsx", await template())).status).toBe(202)
    expect((await b.delete(`/projects/${projectId}/file-edit/status/`)).status).toBe(204)
  })

  it("stops filling a job cancelled meanwhile and keeps no output", async () => {
    const cancelled = await createProject(b)
    expect((await send(b, cancelled, "t.xlsx", await template())).status).toBe(202)
    // The worker's own first progress write is followed by a DELETE, as if the user cancelled just then.
    const progressWrites = new WeakSet<object>()
    let cancelledOnce = false
    const workerDb = db.withPlugin({
      transformQuery: (args) => {
        if (args.node.kind === "UpdateQueryNode" && JSON.stringify(args.node).includes("file_edit_jobs"))
          progressWrites.add(args.queryId)
        return args.node
      },
      transformResult: async (args) => {
        if (progressWrites.has(args.queryId) && !cancelledOnce) {
          cancelledOnce = true
          expect((await b.delete(`/projects/${cancelled}/file-edit/status/`)).status).toBe(204)
        }
        return args.result
      },
    })
    const [task] = await TaskQueue.claim(db, { workerId: "test", kinds: ["file-edit"], leaseMs: 60_000 })
    expect(task?.project_id).toBe(cancelled)
    await runTaskHandler(fileEditTaskHandler(fileBlobStore(idle.blobDir)), task!, {
      workerId: "test",
      db: workerDb,
      signal: new AbortController().signal,
      complete: async (trx) => {
        await TaskQueue.complete(trx, task!.id, "test")
      },
    })
    expect(cancelledOnce).toBe(true)
    expect((await b.get(`/projects/${cancelled}/file-edit/status/`)).body.state).toBe("idle")
    expect(await storedFiles(idle, cancelled)).toEqual([])
    expectProblem(await b.get(`/projects/${cancelled}/file-edit/download/`), 404)
  })

  it("fails a job whose template is gone from storage at its first attempt, saying so", async () => {
    const lost = await createProject(b)
    expect((await send(b, lost, "t.xlsx", await template())).status).toBe(202)
    const [file] = await storedFiles(idle, lost)
    await fs.rm(path.join(idle.blobDir, "file-edit", lost, file!))
    const [task] = await TaskQueue.claim(db, { workerId: "test", kinds: ["file-edit"], leaseMs: 60_000 })
    expect(task).toMatchObject({ project_id: lost, attempts: 1 })
    expect(task!.attempts).toBeLessThan(task!.max_attempts)
    await runTaskHandler(fileEditTaskHandler(fileBlobStore(idle.blobDir)), task!, {
      workerId: "test",
      db,
      signal: new AbortController().signal,
      complete: async (trx) => {
        await TaskQueue.complete(trx, task!.id, "test")
      },
    })
    const status = (await b.get(`/projects/${lost}/file-edit/status/`)).body
    expect(status).toMatchObject({
      state: "failed",
      error: "the template's stored file is missing",
      download_url: null,
    })
  })

  it("removes a job's files with its project", async () => {
    const doomed = await createProject(b)
    expect((await send(b, doomed, "t.xlsx", await template())).status).toBe(202)
    expect(await storedFiles(idle, doomed)).toHaveLength(1)
    expect((await b.delete(`/projects/${doomed}/`)).status).toBe(204)
    expect(await storedFiles(idle, doomed)).toEqual([])
  })

  it("refuses files that are not templates with 415", async () => {
    const other = await createProject(b)
    const text = await send(b, other, "notes.txt", new TextEncoder().encode("{{Total}}"))
    expectProblem(text, 415)
    expectProblem(await send(b, other, "fake.xlsx", new TextEncoder().encode("not a zip at all")), 415)
    const word = new Uint8Array(await Packer.toBuffer(new Document({ sections: [{ children: [] }] })))
    const renamed = await send(b, other, "word.xlsx", word)
    expectProblem(renamed, 415)
    expect(renamed.body.detail).toMatch(/xl\/workbook\.xml/)
    expect((await b.get(`/projects/${other}/file-edit/status/`)).body.state).toBe("idle")
  })

  it("refuses a template over the limit with 413, and a missing file with 400", async () => {
    const other = await createProject(b)
    expectProblem(await send(b, other, "big.xlsx", new Uint8Array(65 * 1024)), 413)
    const form = new FormData()
    form.append("other", "x")
    expectProblem(await b.send("POST", `/projects/${other}/file-edit/`, form), 400)
  })

  it("answers 404 for another organisation's project", async () => {
    const stranger = idle.client(await idle.newKey("globex"))
    expectProblem(await stranger.get(`/projects/${projectId}/file-edit/status/`), 404)
    expectProblem(await send(stranger, projectId, "t.xlsx", await template()), 404)
    expectProblem(await stranger.delete(`/projects/${projectId}/file-edit/status/`), 404)
  })
})
