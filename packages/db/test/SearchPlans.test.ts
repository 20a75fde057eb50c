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

/** The plan nodes of each statement `read` runs, as it runs again under EXPLAIN ANALYZE. */
const planNodes = async (read: () => Promise<unknown>) => {
  statements.length = 0
  await read()
  // As on a large project, where the planner would not read a table whole for a search.
  await explainer.query("set enable_seqscan = off")
  const plans: Array<Array<any>> = []
  for (const s of statements) {
    const { rows } = await explainer.query(`explain (analyze, format json) ${s.sql}`, [...s.parameters])
    const nodes: Array<any> = []
    const walk = (node: any) => {
      nodes.push(node)
      for (const child of node.Plans ?? []) walk(child)
    }
    walk(rows[0]["QUERY PLAN"][0].Plan)
    plans.push(nodes)
  }
  expect(plans.length).toBeGreaterThan(0)
  return plans
}

/** The rows of results each statement of `read` read and then dropped by a condition on the project. */
const otherProjectsRead = async (read: () => Promise<unknown>) =>
  (await planNodes(read))
    .flat()
    .filter((node) => node["Relation Name"] === "resolution_results" && /project_id/.test(node.Filter ?? ""))
    .reduce((sum, node) => sum + (node["Rows Removed by Filter"] ?? 0) * (node["Actual Loops"] ?? 1), 0)

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

  it("reads the project's strings that hold it, then only the results that have one of them", async () => {
    const grid = (search: string) =>
      run(
        gridPageJson(
          recorded,
          mine.projectId,
          { search },
          { by: "name", descending: false },
          { limit: 10, offset: 0 },
        ),
      )
    // "supplier 1" is held by 11 of the 50 names (1, 10–19): 88 of the project's 400 results.
    for (const [search, matches] of [
      ["supplier 7", DOCUMENTS / NAMES],
      ["supplier 1", (11 * DOCUMENTS) / NAMES],
    ] as const) {
      expect((await grid(search)).count).toBe(matches)
      const searching = (await planNodes(() => grid(search))).filter((nodes) =>
        nodes.some((node) => node["Relation Name"] === "search_strings"),
      )
      expect(searching.length).toBeGreaterThan(0)
      for (const nodes of searching) {
        // The results are read through their parts' keys, and each one read is a match: none is read to be
        // dropped, as a trigram index of the results' own texts reads every result of a common trigram.
        const results = nodes.filter((node) => node["Relation Name"] === "resolution_results")
        expect(results.length).toBeGreaterThan(0)
        for (const node of results) {
          const index = node["Index Name"] ?? node.Plans?.[0]?.["Index Name"]
          expect(index).toBe("resolution_results_search_keys")
          expect(node["Rows Removed by Index Recheck"] ?? 0).toBe(0)
          expect(node["Rows Removed by Filter"] ?? 0).toBe(0)
          expect(node["Actual Rows"] * node["Actual Loops"]).toBe(matches)
        }
      }
    }
  })
})
