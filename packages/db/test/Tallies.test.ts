/**
 * The tallies the writes keep stay exact when everything that changes them happens at once: extractions
 * and resolutions written while people override and review results, documents are uploaded, deleted,
 * archived and re-parsed, and agents are reconfigured — each in its own transaction on its own connection,
 * as workers and API requests are. Afterwards every tally equals its recount from the rows.
 */
import { randomUUID } from "node:crypto"
import { useTestDatabase } from "@dxs/testing/TestDatabase"
import { Effect } from "effect"
import { sql } from "kysely"
import { afterAll, describe, expect, it } from "vitest"
import { makeKysely, transactionOn } from "../src/Db.ts"
import { updateAgent } from "../src/repositories/Agents.ts"
import { deleteDocuments, requestDocumentArchive, startNewVersion } from "../src/repositories/Documents.ts"
import { recordParseOutcome } from "../src/repositories/ParseTasks.ts"
import {
  ensureAtomicValue,
  ensureAtomicValues,
  overrideResult,
  type ResolvedRow,
  recordReview,
  replaceDocumentExtractionsOfAgents,
  writeResults,
} from "../src/repositories/Results.ts"
import { tallyDifferences } from "../src/repositories/Tallies.ts"
import { newDocumentDimension, newOrganizationProject, resolvedRow } from "./fixtures.ts"

const url = await useTestDatabase()
const db = makeKysely(url, 12)
afterAll(() => db.destroy())

const run = Effect.runPromise
const STATUSES = ["Resolved", "Requires attention", "Not resolved", "Ignored", "No result"]
const pick = <A>(xs: ReadonlyArray<A>): A => xs[Math.floor(Math.random() * xs.length)]!

/**
 * Retries a transaction the database refused, as a task is retried: a deadlock, or a row that another
 * actor removed meanwhile (a document deleted under an extraction); each attempt picks its rows again.
 */
const codeOf = (e: unknown): string | undefined => {
  for (let c: unknown = e; c !== null && typeof c === "object"; c = (c as { cause?: unknown }).cause)
    if (typeof (c as { code?: unknown }).code === "string") return (c as { code: string }).code
  // An Effect defect wraps the driver's error: its message still names the violation.
  const text = String(e)
  if (text.includes("deadlock detected")) return "40P01"
  // A row gone under the actor (a foreign key to it, or no row to update): it picks again.
  return /foreign key constraint|no result/.test(text) ? "23503" : undefined
}

const retried = async (f: () => Promise<unknown>, attempts = 25): Promise<void> => {
  for (let i = 1; ; i++) {
    try {
      await f()
      return
    } catch (e) {
      const code = codeOf(e)
      if (i >= attempts || !["40P01", "40001", "23503"].includes(code ?? "")) throw e
    }
  }
}

describe("tallies under concurrent writes", () => {
  it("equal their recount after extractions, resolutions, overrides, reviews and document and agent changes", async () => {
    const { projectId } = await newOrganizationProject(db)
    const dimension = await newDocumentDimension(db, projectId)
    const agentIds: Array<string> = []
    for (let i = 0; i < 4; i++)
      agentIds.push(
        (
          await db
            .insertInto("agents")
            .values({ project_id: projectId, name: `Agent ${i}` })
            .returning("id")
            .executeTakeFirstOrThrow()
        ).id,
      )
    const newDocument = async () =>
      (
        await db
          .insertInto("documents")
          .values({
            project_id: projectId,
            file_name: `doc-${randomUUID()}.txt`,
            type: "Text",
            status: "Processed",
            blob_key: randomUUID(),
            content_type: "text/plain",
            size_bytes: 1,
            sha256: "0",
          })
          .returning(["id", "file_name"])
          .executeTakeFirstOrThrow()
      ).id
    for (let i = 0; i < 12; i++) await newDocument()

    const liveDocuments = () =>
      db
        .selectFrom("documents")
        .select(["id", "file_name", "version", "status"])
        .where("project_id", "=", projectId)
        .where("archive_requested_at", "is", null)
        .execute()
    const agents = () =>
      db.selectFrom("agents").select(["id", "config_version"]).where("project_id", "=", projectId).execute()
    const atomicOf = (
      trx: Parameters<typeof ensureAtomicValue>[0],
      agentId: string,
      doc: { id: string; file_name: string },
    ) =>
      ensureAtomicValue(trx, {
        projectId,
        agentId,
        instances: [
          { dimensionId: dimension.id, name: "Document", value: doc.file_name, documentId: doc.id },
        ],
      })

    const extract = async () => {
      const doc = pick(await liveDocuments())
      const current = await agents()
      await transactionOn(db, (trx) =>
        Effect.gen(function* () {
          const atomics = yield* Effect.forEach(current, (a) => atomicOf(trx, a.id, doc))
          yield* replaceDocumentExtractionsOfAgents(trx, {
            projectId,
            documentId: doc.id,
            documentVersion: doc.version,
            agents: current.map((a, i) => ({
              agentId: a.id,
              agentConfigVersion: a.config_version,
              dimensionsKey: dimension.id,
              extractions: [
                {
                  atomicValueId: atomics[i]!.id,
                  value: "v",
                  relevantPassage: "v",
                  reasoning: "",
                  pageNumber: 1,
                },
              ],
            })),
          })
        }),
      ).pipe(run)
    }
    const resolve = async () => {
      const agent = pick(await agents())
      const docs = await liveDocuments()
      await transactionOn(db, (trx) =>
        Effect.gen(function* () {
          const rows: Array<ResolvedRow> = []
          for (const doc of docs) {
            const atomic = yield* atomicOf(trx, agent.id, doc)
            const status = pick(STATUSES)
            rows.push(
              resolvedRow({
                atomicValueId: atomic.id,
                resultName: doc.file_name,
                value: status === "No result" ? null : `${Math.random()}`,
                status,
                confidence: Math.random(),
              }),
            )
          }
          yield* writeResults(trx, {
            projectId,
            agentId: agent.id,
            configVersion: agent.config_version,
            rows,
          })
        }),
      ).pipe(run)
    }
    const someResult = () =>
      db
        .selectFrom("resolution_results")
        .select("id")
        .where("project_id", "=", projectId)
        .where("is_current", "=", true)
        .orderBy(sql`random()`)
        .limit(1)
        .executeTakeFirst()
    const override = async () => {
      const result = await someResult()
      if (result)
        await run(
          overrideResult(db, result.id, {
            value: pick([null, "by hand"]),
            resolutionStatus: pick(STATUSES),
            justification: null,
            updatedByEmail: null,
          }),
        )
    }
    const review = async () => {
      const result = await someResult()
      if (result)
        await run(recordReview(db, result.id, { status: "positive", comment: "", reviewedBy: null }))
    }
    const remove = async () => {
      const doc = pick(await liveDocuments())
      await transactionOn(db, (trx) => deleteDocuments(trx, [doc.id])).pipe(run)
      await newDocument()
    }
    const archive = async () => {
      const doc = pick(await liveDocuments())
      await transactionOn(db, (trx) => requestDocumentArchive(trx, doc.id)).pipe(run)
      await newDocument()
    }
    const reparse = async () => {
      const doc = pick(await liveDocuments())
      const next = await transactionOn(db, (trx) =>
        startNewVersion(trx, doc.id, {
          file_name: doc.file_name,
          type: "Text",
          version: doc.version + 1,
          status: "Pending",
          blob_key: randomUUID(),
          content_type: "text/plain",
          size_bytes: 1,
          sha256: "0",
        }),
      ).pipe(run)
      await transactionOn(db, (trx) =>
        recordParseOutcome(trx, next.id, {
          _tag: "Processed",
          status: "Processed",
          page_count: 1,
          summary: "",
          metadata: "",
        } as never),
      ).pipe(run)
    }
    const reconfigure = async () => {
      const agent = pick(await agents())
      await transactionOn(db, (trx) =>
        Effect.asVoid(
          updateAgent(trx, agent.id, { extraction_instructions: `${Math.random()}` } as never, true),
        ),
      ).pipe(run)
    }
    const draft = async () => {
      const agent = pick(await agents())
      const row = await db
        .selectFrom("agents")
        .select("is_draft")
        .where("id", "=", agent.id)
        .executeTakeFirstOrThrow()
      await db.updateTable("agents").set({ is_draft: !row.is_draft }).where("id", "=", agent.id).execute()
    }

    // Writers of results (workers) alongside people's changes, many at once.
    const weighted = [extract, extract, extract, resolve, resolve, override, review, remove, archive, reparse]
    const actors = Array.from({ length: 10 }, async () => {
      for (let i = 0; i < 25; i++) await retried(() => pick(weighted)())
    })
    actors.push(
      (async () => {
        for (let i = 0; i < 6; i++) await retried(pick([reconfigure, draft]))
      })(),
    )
    await Promise.all(actors)
    // Results were written, current and not: the check covers real rows.
    const counted = await db
      .selectFrom("resolution_results")
      .select((eb) => [eb.fn.countAll<string>().as("n")])
      .where("project_id", "=", projectId)
      .executeTakeFirstOrThrow()
    expect(Number(counted.n)).toBeGreaterThan(0)
    expect(await run(tallyDifferences(db))).toEqual([])
  }, 120_000)
})

describe("the results of many documents written at once", () => {
  it("count every document in the review queue, holding no lock per document (the lock table is bounded)", async () => {
    const { projectId } = await newOrganizationProject(db)
    const dimension = await newDocumentDimension(db, projectId)
    const agent = await db
      .insertInto("agents")
      .values({ project_id: projectId, name: "Total" })
      .returning(["id", "config_version"])
      .executeTakeFirstOrThrow()
    // A resolution writes an agent's results for every document of its project in one statement. The locks
    // a transaction holds come from one table of bounded size shared by every connection (about
    // max_locks_per_transaction × max_connections): a lock per document ran it out ("out of shared memory")
    // for a project of 25,000 documents on a server with the default settings.
    const n = 3_000
    const { rows: documents } = await sql<{ id: string; file_name: string }>`
      insert into documents (project_id, file_name, type, status, blob_key, content_type, size_bytes, sha256)
      select ${projectId}::uuid, 'doc-' || i || '.txt', 'Text', 'Processed', gen_random_uuid()::text, 'text/plain', 1, '0'
      from generate_series(1, ${n}::int) i
      returning id, file_name`.execute(db)
    const atomics = await run(
      ensureAtomicValues(
        db,
        projectId,
        documents.map((d) => ({
          agentId: agent.id,
          instances: [{ dimensionId: dimension.id, name: "Document", value: d.file_name, documentId: d.id }],
        })),
      ),
    )
    const held = await transactionOn(db, (trx) =>
      Effect.gen(function* () {
        yield* writeResults(trx, {
          projectId,
          agentId: agent.id,
          configVersion: agent.config_version,
          rows: atomics.map((atomic, i) =>
            resolvedRow({
              atomicValueId: atomic.id,
              resultName: documents[i]!.file_name,
              value: `${i}`,
              status: i % 10 === 0 ? "Requires attention" : "Resolved",
              confidence: (i % 100) / 100,
            }),
          ),
        })
        return yield* Effect.promise(() =>
          sql<{ locktype: string; n: number }>`
            select locktype, count(*)::int as n from pg_locks where pid = pg_backend_pid() group by locktype`.execute(
            trx,
          ),
        )
      }),
    ).pipe(run)
    // The locks of the tables and indexes its writes touch (one per relation and mode: about a hundred, as
    // many as the schema has indexes), and of its own transaction; no lock of any other kind (advisory, tuple,
    // object), which a lock per document would be.
    const locks = Object.fromEntries(held.rows.map((r) => [r.locktype, r.n]))
    expect(Object.keys(locks).sort()).toEqual(["relation", "transactionid", "virtualxid"])
    expect(locks.relation).toBeLessThan(n / 10)
    const queue = await db
      .selectFrom("review_documents")
      .select((eb) => [
        eb.fn.countAll<string>().as("documents"),
        eb.fn.sum<string>("values").as("values"),
        eb.fn.sum<string>("requires_attention").as("attention"),
      ])
      .where("project_id", "=", projectId)
      .executeTakeFirstOrThrow()
    expect([Number(queue.documents), Number(queue.values), Number(queue.attention)]).toEqual([
      n,
      n,
      Math.ceil(n / 10),
    ])
    expect(await run(tallyDifferences(db))).toEqual([])
  }, 120_000)
})
