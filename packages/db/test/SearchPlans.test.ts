/**
 * A project's search reads its own matches only: the grid's search and dimension value, and the results
 * list's dimension value, run under EXPLAIN ANALYZE on a database where another project holds the same
 * names and values. No statement may read another project's results to drop them (a filter on the project
 * after an index of every project's matches), and every answer is the project's own.
 */
import { Effect } from "effect"
import { sql } from "kysely"
import { beforeAll, describe, expect, it } from "vitest"
import {
  ensureAtomicValues,
  gridPageJson,
  resultsListPage,
  writeResults,
} from "../src/repositories/Results.ts"
import { newDocumentDimension, newOrganizationProject, planningDatabase, resolvedRow } from "./fixtures.ts"

const { db, statements, recorded, explainer } = await planningDatabase()
const run = Effect.runPromise

/** Results per project: each of `NAMES` suppliers on as many documents. */
const DOCUMENTS = 400
const NAMES = 50

/** A project of DOCUMENTS documents (`invoice-j.pdf`) whose one agent found `Supplier j % NAMES` in each. */
const seedProject = async () => {
  const { organizationId, projectId } = await newOrganizationProject(db)
  const dimension = await newDocumentDimension(db, projectId)
  const agentId = (
    await db
      .insertInto("agents")
      .values({ project_id: projectId, name: "Supplier", value_type: "string" })
      .returning("id")
      .executeTakeFirstOrThrow()
  ).id
  const atomics = await run(
    ensureAtomicValues(
      db,
      projectId,
      Array.from({ length: DOCUMENTS }, (_, j) => ({
        agentId,
        instances: [
          { dimensionId: dimension.id, name: "Document", value: `invoice-${j}.pdf`, documentId: null },
        ],
      })),
    ),
  )
  await run(
    writeResults(db, {
      projectId,
      agentId,
      configVersion: 1,
      rows: atomics.map((a, j) =>
        resolvedRow({
          atomicValueId: a.id,
          resultName: `invoice-${j}.pdf`,
          value: `Supplier ${j % NAMES}`,
          status: "Resolved",
        }),
      ),
    }),
  )
  return { organizationId, projectId }
}

let mine = { organizationId: "", projectId: "" }

beforeAll(async () => {
  await explainer.connect()
  mine = await seedProject()
  await seedProject()
  await sql`analyze`.execute(db)
})

/** The rows of results each statement of `read` read and then dropped by a condition on the project. */
const otherProjectsRead = async (read: () => Promise<unknown>) => {
  statements.length = 0
  await read()
  let dropped = 0
  // As on a large project, where the planner would not read a table whole for a search.
  await explainer.query("set enable_seqscan = off")
  for (const s of statements) {
    const { rows } = await explainer.query(`explain (analyze, format json) ${s.sql}`, [...s.parameters])
    const walk = (node: any) => {
      if (node["Relation Name"] === "resolution_results" && /project_id/.test(node.Filter ?? ""))
        dropped += (node["Rows Removed by Filter"] ?? 0) * (node["Actual Loops"] ?? 1)
      for (const child of node.Plans ?? []) walk(child)
    }
    walk(rows[0]["QUERY PLAN"][0].Plan)
  }
  expect(statements.length).toBeGreaterThan(0)
  return dropped
}

describe("a project's search", () => {
  it("reads none of another project's matches, and answers the project's own", async () => {
    const trigram = (
      await sql<{
        ok: boolean
      }>`select exists (select 1 from pg_extension where extname = 'pg_trgm') as ok`.execute(db)
    ).rows[0]?.ok
    const grid = (filter: Parameters<typeof gridPageJson>[2]) =>
      run(
        gridPageJson(
          recorded,
          mine.projectId,
          filter,
          { by: "name", descending: false },
          { limit: 10, offset: 0 },
        ),
      )
    const list = () =>
      run(
        resultsListPage(
          recorded,
          mine.organizationId,
          mine.projectId,
          { dimensionValue: "invoice-7.pdf" },
          {
            limit: 10,
            offset: 0,
          },
        ),
      )
    expect(await otherProjectsRead(list)).toBe(0)
    expect((await list()).count).toBe(1)
    if (trigram) {
      expect(await otherProjectsRead(() => grid({ search: "supplier 7" }))).toBe(0)
      expect((await grid({ search: "supplier 7" })).count).toBe(DOCUMENTS / NAMES)
      expect(await otherProjectsRead(() => grid({ dimensionValue: "voice-7." }))).toBe(0)
      expect((await grid({ dimensionValue: "voice-7." })).count).toBe(1)
    }
  })
})
