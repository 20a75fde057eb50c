/**
 * Writing results costs what is written, whatever the connection wrote before. The tallies of results and
 * the grid's rows are kept by statement-level triggers over the statement's transition tables, and
 * PL/pgSQL plans each of their statements once per connection, with the size of the transition table of
 * its first call. A connection that first writes one result (an override, a review, a small project's
 * resolution) and then a large resolution runs the large one under the small one's plan: there, a join
 * of two of the statement's own row sets is a nested loop, and compares every changed row with every
 * other (1,000 results: a million comparisons). Every nested statement of the write is logged with its
 * plan (auto_explain, sent to the client), and the rows that filters and join conditions discarded are
 * held to a few per row written.
 */
import { useTestDatabase } from "@dxs/testing/TestDatabase"
import { Effect } from "effect"
import { Kysely, PostgresDialect, sql } from "kysely"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Conn, makePool } from "../src/Db.ts"
import { writeResults } from "../src/repositories/Results.ts"
import type { Database } from "../src/Schema.ts"
import { documentsAndAgents, newOrganizationProject, resolvedRow } from "./fixtures.ts"

const url = await useTestDatabase()
/** One connection: a trigger's plans are kept per connection. */
const pool = makePool(url, 1)
const plans: Array<string> = []
pool.on("connect", (client) => client.on("notice", (notice) => plans.push(notice.message ?? "")))
const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) })
afterAll(() => db.destroy())

/** Results of the large write: enough that comparing each with each is caught, few enough to be quick. */
const DOCUMENTS = 1_000
/**
 * Rows the plans may discard per row written: the write's statements and triggers each filter the changed
 * rows or the agent's results once (about four per row in all).
 */
const DISCARDED_PER_ROW = 10

/** Rows the plans logged since `from` discarded, by filters and join conditions, in all. */
const discardedSince = (from: number) =>
  plans
    .slice(from)
    .flatMap((plan) => [...plan.matchAll(/Rows Removed by (?:Join )?Filter: (\d+)/g)])
    .reduce((sum, m) => sum + Number(m[1]), 0)

describe("the tallies kept by a write of results", () => {
  let projectId = ""
  let seeded: Awaited<ReturnType<typeof documentsAndAgents>>

  beforeAll(async () => {
    ;({ projectId } = await newOrganizationProject(db))
    seeded = await documentsAndAgents(db, projectId, { documents: DOCUMENTS, agents: 3 })
    // Each nested statement's plan, with its rows, comes back to this connection as a notice.
    await sql`load 'auto_explain'`.execute(db)
    await sql`set auto_explain.log_min_duration = 0`.execute(db)
    await sql`set auto_explain.log_analyze = on`.execute(db)
    await sql`set auto_explain.log_nested_statements = on`.execute(db)
    await sql`set client_min_messages = log`.execute(db)
  }, 120_000)

  /** Agent `k`'s results over the first `documents` documents, written as the resolution stage writes them. */
  const write = (k: number, documents: number, status = "Resolved", conn: Conn = db) =>
    Effect.runPromise(
      writeResults(conn, {
        projectId,
        agentId: seeded.agentIds[k]!,
        configVersion: 1,
        rows: seeded.documents.slice(0, documents).map((d, j) =>
          resolvedRow({
            atomicValueId: seeded.atomics[j * seeded.agentIds.length + k]!.id,
            resultName: d.file_name,
            value: `value ${j}`,
            status,
          }),
        ),
      }),
    )

  it("discard a few rows per result written, after a write of one on the same connection", async () => {
    // The first write of the connection: one result, so the triggers' plans are made for one row.
    await write(0, 1)
    const from = plans.length
    await write(1, DOCUMENTS)
    const written = plans.slice(from).filter((plan) => plan.includes("result_rows")).length
    expect(written, "the triggers' statements were logged").toBeGreaterThan(0)
    expect(discardedSince(from)).toBeLessThanOrEqual(DISCARDED_PER_ROW * DOCUMENTS)
    // The write itself is right: every result counted once, in its row of the grid.
    const tallies = await sql<{ n: number }>`select n from result_tallies
      where agent_id = ${seeded.agentIds[1]!}::uuid and resolution_status = 'Resolved'`.execute(db)
    expect(tallies.rows.map((r) => r.n)).toEqual([DOCUMENTS])
    const rows = await sql<{ rows: number; resolved: number }>`select rows, resolved from result_row_tallies
      where project_id = ${projectId}::uuid`.execute(db)
    expect(rows.rows).toEqual([{ rows: DOCUMENTS, resolved: DOCUMENTS }])
  }, 120_000)

  it("discard a few rows per result changed, after a change of one on the same connection", async () => {
    // Resolved again with another status: the results are updated, their old and new rows both counted.
    await write(0, 1, "Requires attention")
    const from = plans.length
    await write(1, DOCUMENTS, "Requires attention")
    expect(discardedSince(from)).toBeLessThanOrEqual(DISCARDED_PER_ROW * DOCUMENTS)
    const tallies = await sql<{ resolution_status: string; n: number }>`select resolution_status, n
      from result_tallies where agent_id = ${seeded.agentIds[1]!}::uuid and n <> 0`.execute(db)
    expect(tallies.rows).toEqual([{ resolution_status: "Requires attention", n: DOCUMENTS }])
    const rows = await sql<{ rows: number; resolved: number; requires_attention: number }>`
      select rows, resolved, requires_attention from result_row_tallies where project_id = ${projectId}::uuid`.execute(
      db,
    )
    // The first document's row has agent 0's result too, which is also to be looked at now.
    expect(rows.rows).toEqual([{ rows: DOCUMENTS, resolved: 0, requires_attention: DOCUMENTS }])
  }, 120_000)

  it("keep no tally by a statement per row written", async () => {
    // The functions the write's triggers call, and how often, as this transaction counts them.
    const calls = await db.transaction().execute(async (trx) => {
      await sql`set local track_functions = 'pl'`.execute(trx)
      await write(2, DOCUMENTS, "Resolved", trx)
      return (
        await sql<{ funcname: string; calls: number }>`select funcname, calls::int as calls
          from pg_stat_xact_user_functions`.execute(trx)
      ).rows
    })
    const tallies = calls.filter((f) => f.funcname.includes("tally"))
    expect(tallies.length, JSON.stringify(calls)).toBeGreaterThan(0)
    // Each tally function runs once per statement that changed its table, never once per row.
    for (const f of tallies) expect(f.calls, f.funcname).toBeLessThan(10)
    // The queue's tally: every document has results, none reviewed.
    const review = await sql<{ documents: number; reviewed: number }>`select sum(documents)::int as documents,
      sum(reviewed)::int as reviewed from review_tallies where project_id = ${projectId}::uuid`.execute(db)
    expect(review.rows).toEqual([{ documents: DOCUMENTS, reviewed: 0 }])
  }, 120_000)
})
