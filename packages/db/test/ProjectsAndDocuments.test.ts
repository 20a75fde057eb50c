/**
 * The repositories of projects, folders, documents, tags, pages and parse tasks: what each write leaves
 * in the tables, and the lean project reads answering like the full one.
 */
import { randomUUID } from "node:crypto"
import { useTestDatabase } from "@dxs/testing/TestDatabase"
import { Effect } from "effect"
import { sql } from "kysely"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeKysely } from "../src/Db.ts"
import * as Documents from "../src/repositories/Documents.ts"
import * as Pages from "../src/repositories/Pages.ts"
import * as ParseTasks from "../src/repositories/ParseTasks.ts"
import * as Projects from "../src/repositories/Projects.ts"

const url = await useTestDatabase()
const db = makeKysely(url, 2)
const run = Effect.runPromise

let org: string
let otherOrg: string

beforeAll(async () => {
  const orgs = await db
    .insertInto("organizations")
    .values([{ name: "acme" }, { name: "other" }])
    .returning("id")
    .execute()
  org = orgs[0]!.id
  otherOrg = orgs[1]!.id
})

afterAll(() => db.destroy())

const newProject = (orgId = org) =>
  run(
    Projects.insertProject(db, {
      organization_id: orgId,
      name: randomUUID(),
      description: "",
      reference_date: null,
      auto_archive_after_days: null,
      auto_attach_document_dimension: true,
      is_pinned: false,
      folder_id: null,
    }),
  )

const newDocument = (projectId: string, parent: string | null = null) =>
  run(
    Documents.insertDocumentAndEnqueueParse(db, {
      id: randomUUID(),
      project_id: projectId,
      file_name: "a.pdf",
      type: "PDF",
      blob_key: randomUUID(),
      content_type: "application/pdf",
      size_bytes: 3,
      sha256: "0",
      parent_document_id: parent,
    }),
  )

const page = (documentId: string, number: number, text: string): Pages.NewPage => ({
  document_id: documentId,
  number,
  text,
  layout: "[]",
  width: null,
  height: null,
  unit: null,
})

describe("projects", () => {
  it("are inserted with their system Document dimension", async () => {
    const id = await newProject()
    const dimensions = await db.selectFrom("dimensions").selectAll().where("project_id", "=", id).execute()
    expect(dimensions.map((d) => [d.name, d.source, d.auto_attach_to_new_agents])).toEqual([
      [Projects.DOCUMENT_DIMENSION, "DOCUMENT", true],
    ])
  })

  it("are found with their counts by the full read and by the lean reads only in their organisation", async () => {
    const id = await newProject()
    await newDocument(id)
    const full = await run(Projects.findProject(db, org, id))
    expect([full?.document_count, full?.agent_count]).toEqual([1, 0])
    expect(await run(Projects.findProjectPresence(db, org, id))).toEqual({
      id,
      archived_at: null,
      archive_of_project_id: null,
    })
    expect(await run(Projects.findProject(db, otherOrg, id))).toBeUndefined()
    expect(await run(Projects.findProjectPresence(db, otherOrg, id))).toBeUndefined()
    await db.transaction().execute(async (trx) => {
      expect(await run(Projects.lockProjectPresence(trx, otherOrg, id))).toBeUndefined()
      expect((await run(Projects.lockProjectPresence(trx, org, id)))?.id).toBe(id)
    })
  })

  it("mark a visit without waiting for a writer that holds the project, and say when they did not", async () => {
    const id = await newProject()
    const visited = await run(Projects.markProjectVisited(db, id))
    expect(visited).toBeInstanceOf(Date)
    expect((await run(Projects.findProject(db, org, id)))!.last_visited_at).toEqual(visited)
    // An upload holds the project row for share, a launch for update, while they last: a read of the project
    // (which counts as a visit) must not wait for them.
    for (const mode of ["share", "update"] as const)
      await db.transaction().execute(async (writer) => {
        await run(Projects.lockProjectPresence(writer, org, id, mode))
        const during = await db.transaction().execute(async (reader) => {
          // Without the skip, the update would wait for the writer: it fails after this instead of hanging.
          await sql`set local lock_timeout = '3s'`.execute(reader)
          return run(Projects.markProjectVisited(reader, id))
        })
        expect(during).toBeUndefined()
      })
    expect((await run(Projects.findProject(db, org, id)))!.last_visited_at).toEqual(visited)
    expect(await run(Projects.markProjectVisited(db, id))).not.toEqual(visited)
  })

  it("keep the time of an earlier archival", async () => {
    const id = await newProject()
    await run(Projects.setProjectArchived(db, id, null, true))
    const first = (await run(Projects.findProjectPresence(db, org, id)))!.archived_at
    await run(Projects.setProjectArchived(db, id, first, true))
    expect((await run(Projects.findProjectPresence(db, org, id)))!.archived_at).toEqual(first)
    await run(Projects.setProjectArchived(db, id, first, false))
    expect((await run(Projects.findProjectPresence(db, org, id)))!.archived_at).toBeNull()
  })
})

describe("folders", () => {
  it("know which folders lie above another", async () => {
    const top = await run(Projects.insertFolder(db, { organization_id: org, name: "top", parent_id: null }))
    const mid = await run(Projects.insertFolder(db, { organization_id: org, name: "mid", parent_id: top.id }))
    const low = await run(Projects.insertFolder(db, { organization_id: org, name: "low", parent_id: mid.id }))
    expect(await run(Projects.isFolderAtOrAbove(db, top.id, low.id))).toBe(true)
    expect(await run(Projects.isFolderAtOrAbove(db, low.id, low.id))).toBe(true)
    expect(await run(Projects.isFolderAtOrAbove(db, low.id, top.id))).toBe(false)
  })
})

describe("documents", () => {
  it("are inserted Pending at version 1 with their parse task, under the one key format", async () => {
    const projectId = await newProject()
    const row = await newDocument(projectId)
    expect([row.status, row.version]).toEqual(["Pending", 1])
    const tasks = await db.selectFrom("tasks").selectAll().where("project_id", "=", projectId).execute()
    expect(tasks.map((t) => [t.kind, t.idempotency_key, t.payload])).toEqual([
      [ParseTasks.PARSE_TASK, `parse:${row.id}:1`, { document_id: row.id, version: 1 }],
    ])
    expect(ParseTasks.parseTaskKey(row.id, 1)).toBe(`parse:${row.id}:1`)
    expect(ParseTasks.parseTaskKey(row.id, 1, "r")).toBe(`parse:${row.id}:1:r`)
    // Enqueuing the same version's parse again adds nothing.
    await run(ParseTasks.enqueueParse(db, row.id, 1, projectId))
    expect(
      await db.selectFrom("tasks").select("id").where("project_id", "=", projectId).execute(),
    ).toHaveLength(1)
  })

  it("lose their pages and outcome when a new version starts", async () => {
    const projectId = await newProject()
    const row = await newDocument(projectId)
    await run(Pages.replacePages(db, row.id, [page(row.id, 1, "one"), page(row.id, 2, "two")]))
    await run(
      ParseTasks.recordParseOutcome(db, row.id, {
        _tag: "Parsed",
        status: "Processed",
        page_count: 2,
        summary: "one two (2 pages)",
        metadata: "{}",
      }),
    )
    expect((await run(Pages.pageTexts(db, row.id))).map((p) => p.text)).toEqual(["one", "two"])
    const next = await run(
      Documents.startNewVersion(db, row.id, {
        file_name: "b.pdf",
        type: "PDF",
        version: 2,
        status: "Pending",
        blob_key: randomUUID(),
        content_type: "application/pdf",
        size_bytes: 4,
        sha256: "1",
      }),
    )
    expect([next.version, next.status, next.page_count, next.summary, next.metadata]).toEqual([
      2,
      "Pending",
      0,
      "",
      "",
    ])
    expect(await run(Pages.pageTexts(db, row.id))).toEqual([])
  })

  it("are copied with their pages", async () => {
    const projectId = await newProject()
    const target = await newProject()
    const source = await newDocument(projectId)
    await run(Pages.replacePages(db, source.id, [page(source.id, 1, "hello")]))
    const id = randomUUID()
    await run(
      Documents.insertDocumentCopy(db, source, {
        id,
        project_id: target,
        blob_key: randomUUID(),
        parent_document_id: null,
      }),
    )
    expect((await run(Pages.pageTexts(db, id))).map((p) => p.text)).toEqual(["hello"])
    expect((await run(Documents.findDocumentInProject(db, target, id)))?.file_name).toBe("a.pdf")
  })

  it("count how many attachments up they are, and which documents came from them", async () => {
    const projectId = await newProject()
    const upload = await newDocument(projectId)
    const attachment = await newDocument(projectId, upload.id)
    const inner = await newDocument(projectId, attachment.id)
    expect(await run(Documents.attachmentLevel(db, null, 5))).toBe(0)
    expect(await run(Documents.attachmentLevel(db, inner.parent_document_id, 5))).toBe(2)
    expect(await run(Documents.attachmentLevel(db, inner.parent_document_id, 1))).toBe(1)
    const extracted = await run(Documents.documentsExtractedFrom(db, projectId, upload.id))
    expect(extracted.map((d) => d.id).sort()).toEqual([attachment.id, inner.id].sort())
  })

  it("keep tags, and tell the keys the other documents of the project use", async () => {
    const projectId = await newProject()
    const a = await newDocument(projectId)
    const b = await newDocument(projectId)
    await run(Documents.replaceTags(db, a.id, [{ key: "Region", value: "EU" }]))
    await run(Documents.replaceTags(db, b.id, [{ key: "year", value: "2024" }]))
    await run(Documents.replaceTags(db, b.id, [{ key: "kind", value: "invoice" }]))
    const tags = await run(Documents.tagsOfDocuments(db, [a.id, b.id]))
    expect(tags.get(a.id)).toEqual([{ key: "Region", value: "EU" }])
    expect(tags.get(b.id)).toEqual([{ key: "kind", value: "invoice" }])
    expect([...(await run(Documents.tagKeysOfProject(db, projectId, [b.id])))]).toEqual(["Region"])
    const listed = await run(Documents.listDocuments(db, [projectId], { key: "Region", value: "EU" }))
    expect(listed.map((d) => d.id)).toEqual([a.id])
  })
})
