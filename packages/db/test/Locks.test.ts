/**
 * The row locks writers take on a project and a document keep them in turn with each other, never with
 * the rows that merely reference them: a tag change (project held, then the document's tags written) and
 * a parse finishing at that moment (document held, then its status and the project's tallies written)
 * both complete, where holding the rows `for update` made each wait for the other's reference check (a
 * deadlock: the tag change answered 500 and the tag was lost).
 */
import { randomUUID } from "node:crypto"
import { useTestDatabase } from "@dxs/testing/TestDatabase"
import { Effect } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { makeKysely } from "../src/Db.ts"
import { lockDocument, replaceTags } from "../src/repositories/Documents.ts"
import { recordParseOutcome } from "../src/repositories/ParseTasks.ts"
import { lockProject, lockProjectPresence, lockProjectState } from "../src/repositories/Projects.ts"
import { newOrganizationProject } from "./fixtures.ts"

const url = await useTestDatabase()
const db = makeKysely(url, 4)
afterAll(() => db.destroy())

const pendingDocument = async (projectId: string) =>
  (
    await db
      .insertInto("documents")
      .values({
        project_id: projectId,
        file_name: `${randomUUID()}.pdf`,
        type: "PDF",
        page_count: 0,
        blob_key: randomUUID(),
        content_type: "application/pdf",
        size_bytes: 1,
        sha256: "0",
      })
      .returning("id")
      .executeTakeFirstOrThrow()
  ).id

const parsed = { _tag: "Parsed", status: "Processed", page_count: 1, summary: "s", metadata: "{}" } as const

describe("row locks of projects and documents", () => {
  const holdProject = {
    "lockProject (tag changes)": (trx: any, _org: string, projectId: string) => lockProject(trx, projectId),
    "lockProjectPresence (launches, archiving, tagged uploads)": (trx: any, org: string, projectId: string) =>
      lockProjectPresence(trx, org, projectId),
    "lockProjectState (deletions, archiving)": (trx: any, _org: string, projectId: string) =>
      lockProjectState(trx, projectId),
  }
  for (const [name, hold] of Object.entries(holdProject))
    it(`a tag change holding the project (${name}) and a parse finishing at once both complete`, async () => {
      const { organizationId, projectId } = await newOrganizationProject(db)
      const documentId = await pendingDocument(projectId)
      const tagChange = await db.startTransaction().execute()
      const parse = await db.startTransaction().execute()
      try {
        await Effect.runPromise(hold(tagChange, organizationId, projectId))
        await Effect.runPromise(lockDocument(parse, documentId))
        // Each now writes a row that references the row the other holds.
        const parseDone = Effect.runPromise(recordParseOutcome(parse, documentId, parsed)).then(() =>
          parse.commit().execute(),
        )
        const tagDone = Effect.runPromise(
          replaceTags(tagChange, documentId, [{ key: "source", value: "finance" }]),
        ).then(() => tagChange.commit().execute())
        const outcomes = await Promise.allSettled([parseDone, tagDone])
        expect(outcomes.map((o) => (o.status === "rejected" ? String(o.reason) : "committed"))).toEqual([
          "committed",
          "committed",
        ])
      } finally {
        await parse
          .rollback()
          .execute()
          .catch(() => undefined)
        await tagChange
          .rollback()
          .execute()
          .catch(() => undefined)
      }
      const document = await db
        .selectFrom("documents")
        .select("status")
        .where("id", "=", documentId)
        .executeTakeFirstOrThrow()
      const tags = await db
        .selectFrom("document_tags")
        .selectAll()
        .where("document_id", "=", documentId)
        .execute()
      expect(document.status).toBe("Processed")
      expect(tags.map((t) => [t.key, t.value])).toEqual([["source", "finance"]])
    })
})
