/**
 * Every page the API reads of a project costs what the page costs: each statement of the results list (with
 * each filter, an offset and a cursor), the grid (by name, by an agent's value both ways, with a status, a
 * search, a dimension value), the documents page and the agents' states is run under EXPLAIN ANALYZE with
 * sequential scans made as costly as the planner allows (`enable_seqscan = off`). No statement may scan a
 * large table (results, grid rows, documents, extraction records) whole, and together they may read only a
 * page's worth of its rows: a project of 1,200 results is read 20 rows at a time, so a statement that reads
 * them all (a sequential scan, or an index walked in full to be sorted) is caught. A grid page's cells are
 * read from their index alone (an index-only scan that reads no result row once the table is vacuumed).
 */
import { Effect } from "effect"
import { sql } from "kysely"
import { beforeAll, describe, expect, it } from "vitest"
import { pageOfDocuments } from "../src/repositories/Documents.ts"
import { agentStateInputs } from "../src/repositories/ProjectReads.ts"
import { projectStatusRows } from "../src/repositories/Projects.ts"
import {
  type GridSort,
  gridContext,
  gridPageJson,
  replaceDocumentExtractionsOfAgents,
  resultsListPage,
  reviewQueueNeighbours,
  reviewQueuePage,
  reviewTotals,
} from "../src/repositories/Results.ts"
import {
  documentsAndAgents,
  newOrganizationProject,
  planningDatabase,
  writeAgentsResults,
} from "./fixtures.ts"

const { db, statements, recorded, explainer } = await planningDatabase()

const run = Effect.runPromise
/** Tables a page must never read whole. */
const LARGE = [
  "resolution_results",
  "review_documents",
  "result_rows",
  "documents",
  "extraction_pairs",
  "atomic_values",
  "extractions",
]
/** The project: enough rows for the planner to choose as it would on a large one. */
const DOCUMENTS = 300
const AGENTS = 4
/** Rows of large tables a read of one page (of 10 or 20) may touch: well under the project's 1,200 results. */
const PAGE_ROWS = 150

let organizationId = ""
let projectId = ""
const agentIds: Array<string> = []

beforeAll(async () => {
  await explainer.connect()
  ;({ organizationId, projectId } = await newOrganizationProject(db))
  const seeded = await documentsAndAgents(db, projectId, { documents: DOCUMENTS, agents: AGENTS }, (k) =>
    k === 0 ? "number" : "string",
  )
  const { documents, atomics } = seeded
  agentIds.push(...seeded.agentIds)
  for (const [j, d] of documents.entries())
    await run(
      replaceDocumentExtractionsOfAgents(db, {
        projectId,
        documentId: d.id,
        documentVersion: 1,
        agents: agentIds.map((agentId, k) => ({
          agentId,
          agentConfigVersion: 1,
          dimensionsKey: "k",
          extractions: [
            {
              atomicValueId: atomics[j * AGENTS + k]!.id,
              value: `${j}`,
              relevantPassage: `${j}`,
              reasoning: "",
              pageNumber: 1,
            },
          ],
        })),
      }),
    )
  await writeAgentsResults(db, projectId, seeded, (j, k) => ({
    value: k === 0 ? j * 10 : `Supplier ${j % 97}`,
    status: j % 40 === 0 ? "Requires attention" : "Resolved",
    confidence: (j % 100) / 100,
  }))
  await sql`analyze`.execute(db)
})

/**
 * What every statement of `read` scans of the large tables: sequential scans, rows touched, and how it read
 * the results (the scans that ran, and the rows an index-only scan still read from the table).
 */
const plansOf = async (read: () => Promise<unknown>) => {
  statements.length = 0
  await read()
  const found: Array<{
    readonly sql: string
    readonly seq: ReadonlyArray<string>
    readonly rows: number
    readonly results: ReadonlyArray<string>
    readonly heapFetches: number
    /** How many times the statement's scans of the results ran (a look-up per row runs one per row). */
    readonly resultScans: number
  }> = []
  await explainer.query("set enable_seqscan = off")
  for (const s of statements) {
    const { rows } = await explainer.query(`explain (analyze, format json) ${s.sql}`, [...s.parameters])
    const seq: Array<string> = []
    const results: Array<string> = []
    let touched = 0
    let heapFetches = 0
    let resultScans = 0
    const walk = (node: any) => {
      const relation = node["Relation Name"]
      if (relation === "resolution_results" && (node["Actual Loops"] ?? 0) > 0) {
        results.push(node["Node Type"])
        heapFetches += node["Heap Fetches"] ?? 0
        resultScans += node["Actual Loops"]
      }
      if (LARGE.includes(relation)) {
        if (node["Node Type"] === "Seq Scan") seq.push(relation)
        touched +=
          ((node["Actual Rows"] ?? 0) +
            (node["Rows Removed by Filter"] ?? 0) +
            (node["Rows Removed by Index Recheck"] ?? 0)) *
          (node["Actual Loops"] ?? 1)
      }
      for (const child of node.Plans ?? []) walk(child)
    }
    walk(rows[0]["QUERY PLAN"][0].Plan)
    if (touched > PAGE_ROWS && process.env.SHOW_PLANS)
      console.log(
        (await explainer.query(`explain (analyze, costs off) ${s.sql}`, [...s.parameters])).rows
          .map((r: any) => r["QUERY PLAN"])
          .join("\n"),
      )
    found.push({
      sql: s.sql.replace(/\s+/g, " ").slice(0, 160),
      seq,
      rows: touched,
      results,
      heapFetches,
      resultScans,
    })
  }
  expect(found.length).toBeGreaterThan(0)
  return found
}

/**
 * No statement of the read scans a large table whole, and (unless `rowsOf: "matches"`, for a search whose
 * index the planner weighs against the project's own on a table this small) each touches a page's worth of
 * its rows.
 */
const expectIndexed = async (read: () => Promise<unknown>, rowsOf: "page" | "matches" = "page") => {
  const plans = await plansOf(read)
  expect(plans.filter((p) => p.seq.length > 0)).toEqual([])
  if (rowsOf === "page") expect(plans.filter((p) => p.rows > PAGE_ROWS)).toEqual([])
}

const listPage = (
  filter: Parameters<typeof resultsListPage>[3],
  window: Parameters<typeof resultsListPage>[4],
) => run(resultsListPage(recorded, organizationId, projectId, filter, window))

const gridRead = (
  filter: Parameters<typeof gridPageJson>[2],
  sort: GridSort,
  window: Parameters<typeof gridPageJson>[4],
) => run(gridPageJson(recorded, projectId, filter, sort, window))

describe("the results list from any position", () => {
  const idsOf = (page: { readonly json: string }) =>
    (JSON.parse(page.json) as ReadonlyArray<{ readonly id: string }>).map((r) => r.id)

  it("answers from an offset or a cursor exactly the rows the whole list has there", async () => {
    for (const filter of [
      {},
      { resolutionStatus: "Requires attention" },
      { agentId: agentIds[2]! },
      { maxConfidence: 0.3 },
      { agentId: agentIds[1]!, maxConfidence: 0.05 },
      { dimensionValue: "invoice-7.pdf" },
    ]) {
      const whole = await run(
        resultsListPage(db, organizationId, projectId, filter, { limit: 5000, offset: 0 }),
      )
      const all = idsOf(whole)
      expect(all).toHaveLength(whole.count)
      expect(whole.count).toBeGreaterThan(0)
      // Inside the first agent, at the agents' borders (300 results each), the last row and past the end.
      for (const offset of [0, 1, 19, 299, 300, 301, 910, whole.count - 1, whole.count, whole.count + 7]) {
        const page = await run(resultsListPage(db, organizationId, projectId, filter, { limit: 20, offset }))
        expect({ offset, ids: idsOf(page), count: page.count }).toEqual({
          offset,
          ids: all.slice(offset, offset + 20),
          count: whole.count,
        })
      }
      // Following the cursors to the end, then back to the start.
      let page = await run(resultsListPage(db, organizationId, projectId, filter, { limit: 20, offset: 0 }))
      const forwards = [...idsOf(page)]
      while (page.offset + page.rows < whole.count) {
        page = await run(
          resultsListPage(db, organizationId, projectId, filter, {
            limit: 20,
            after: page.last,
            position: page.offset + page.rows,
          }),
        )
        expect(page.rows).toBeGreaterThan(0)
        forwards.push(...idsOf(page))
      }
      expect(forwards).toEqual(all)
      const backwards = [...idsOf(page)]
      while (page.offset > 0) {
        page = await run(
          resultsListPage(db, organizationId, projectId, filter, {
            limit: 20,
            before: page.first,
            position: page.offset,
          }),
        )
        backwards.unshift(...idsOf(page))
      }
      expect(backwards).toEqual(all)
    }
  })
})

describe("pages of a project are read through indexes", () => {
  it("the results list, with each filter, an offset and a cursor", async () => {
    await expectIndexed(() => listPage({}, { limit: 20, offset: 0 }))
    // Deep: three agents stepped over by their tallies, a few rows skipped in the fourth's index.
    await expectIndexed(() => listPage({}, { limit: 20, offset: 910 }))
    await expectIndexed(() => listPage({ agentId: agentIds[1] }, { limit: 20, offset: 5 }))
    await expectIndexed(() => listPage({ resolutionStatus: "Requires attention" }, { limit: 20, offset: 0 }))
    await expectIndexed(() => listPage({ dimensionValue: "invoice-7.pdf" }, { limit: 20, offset: 0 }))
    await expectIndexed(() => listPage({ maxConfidence: 0.05 }, { limit: 20, offset: 0 }))
    // Most results are at or below it: counted by the confidence tallies, and one band's rows.
    await expectIndexed(() => listPage({ maxConfidence: 0.9 }, { limit: 20, offset: 0 }))
    await expectIndexed(() =>
      listPage({ agentId: agentIds[2], maxConfidence: 0.95 }, { limit: 20, offset: 0 }),
    )
    const first = await listPage({}, { limit: 20, offset: 0 })
    await expectIndexed(() => listPage({}, { limit: 20, after: first.last, position: 20 }))
    await expectIndexed(() => listPage({}, { limit: 20, before: first.last, position: 19 }))
  })

  it("the grid, by name and by an agent's value both ways, filtered, searched, from an offset and a cursor", async () => {
    const byName: GridSort = { by: "name", descending: false }
    const byValue = (descending: boolean): GridSort => ({
      by: "agent",
      agentId: agentIds[0]!,
      valueType: "number",
      descending,
    })
    await expectIndexed(() => run(gridContext(recorded, organizationId, projectId)))
    await expectIndexed(() => gridRead({}, byName, { limit: 10, offset: 0 }))
    await expectIndexed(() => gridRead({}, { by: "name", descending: true }, { limit: 10, offset: 100 }))
    await expectIndexed(() => gridRead({}, byValue(false), { limit: 10, offset: 0 }))
    await expectIndexed(() => gridRead({}, byValue(true), { limit: 10, offset: 0 }))
    await expectIndexed(() =>
      gridRead({ resolutionStatus: "Requires attention" }, byName, { limit: 10, offset: 0 }),
    )
    await expectIndexed(() => gridRead({ dimensionValue: "invoice-7.pdf" }, byName, { limit: 10, offset: 0 }))
    const trigram = (
      await sql<{
        ok: boolean
      }>`select exists (select 1 from pg_extension where extname = 'pg_trgm') as ok`.execute(db)
    ).rows[0]?.ok
    if (trigram) {
      await expectIndexed(
        () => gridRead({ search: "supplier 42" }, byName, { limit: 10, offset: 0 }),
        "matches",
      )
      await expectIndexed(
        () => gridRead({ dimensionValue: "voice-7" }, byName, { limit: 10, offset: 0 }),
        "matches",
      )
    }
    const first = await gridRead({}, byValue(false), { limit: 10, offset: 0 })
    await expectIndexed(() => gridRead({}, byValue(false), { limit: 10, after: first.last, position: 10 }))
    await expectIndexed(() => gridRead({}, byValue(true), { limit: 10, before: first.last, position: 9 }))
    // Filters the tallies do not count: the matching rows found once for the count and the page.
    await expectIndexed(() => gridRead({ source: "manual" }, byName, { limit: 10, offset: 0 }))
    await expectIndexed(() => gridRead({ reviewStatus: "positive" }, byName, { limit: 10, offset: 0 }))
    if (trigram) {
      const searched = await gridRead({ search: "supplier 4" }, byName, { limit: 10, offset: 0 })
      expect(searched.count).toBeGreaterThan(10)
      await expectIndexed(
        () => gridRead({ search: "supplier 4" }, byName, { limit: 10, after: searched.last, position: 10 }),
        "matches",
      )
      await expectIndexed(
        () =>
          gridRead(
            { search: "supplier 4" },
            { by: "name", descending: true },
            {
              limit: 10,
              before: searched.last,
              position: 9,
            },
          ),
        "matches",
      )
    }
  })

  it("reads a page's cells from their index alone, none from the results themselves", async () => {
    // Once vacuumed, the index knows every row is visible (as autovacuum leaves a settled table).
    await sql`vacuum resolution_results`.execute(db)
    const plans = await plansOf(() =>
      gridRead({}, { by: "name", descending: false }, { limit: 20, offset: 40 }),
    )
    const cells = plans.filter((p) => p.sql.trim().startsWith("select r.json from unnest("))
    expect(cells).toHaveLength(1)
    expect(cells[0]!.results).toEqual(["Index Only Scan"])
    expect(cells[0]!.heapFetches).toBe(0)
  })

  it("reads a results page's rows in order through the index once, not one look-up by id per row", async () => {
    const first = await listPage({}, { limit: 20, offset: 0 })
    // Each case with the scans of results its count makes besides the page (a confidence counts the rows of
    // its own band through the index; the others are counted by the tallies).
    for (const [filter, window, counting] of [
      [{}, { limit: 20, offset: 0 }, 0],
      // From an offset: the first row's key from the index alone, then the page from it.
      [{}, { limit: 20, offset: 910 }, 0],
      [{ resolutionStatus: "Resolved" }, { limit: 20, offset: 30 }, 0],
      [{ maxConfidence: 0.5 }, { limit: 20, offset: 25 }, 1],
      [{}, { limit: 20, after: first.last, position: 20 }, 0],
      [{}, { limit: 20, before: first.last, position: 19 }, 0],
    ] as const) {
      const plans = await plansOf(() => listPage(filter, window))
      expect(plans).toHaveLength(1)
      expect(plans[0]!.resultScans).toBeLessThanOrEqual(2 + counting)
    }
  })

  it("the documents page, the agents' states and the project's status", async () => {
    const documentsPage = (filter: Parameters<typeof pageOfDocuments>[3]) =>
      run(pageOfDocuments(recorded, organizationId, projectId, filter, { limit: 10, offset: 20 }))
    await expectIndexed(() => documentsPage({}))
    await expectIndexed(() => documentsPage({ status: "Processed" }))
    await expectIndexed(() => run(agentStateInputs(recorded, [projectId])))
    await expectIndexed(() => run(projectStatusRows(recorded, organizationId, [projectId])))
  })

  it("the review queue, its totals, and a page after a document's key", async () => {
    const first = await run(reviewQueuePage(recorded, projectId, { limit: 20 }))
    // Requiring attention first, then the least confident.
    expect(first.rows).toHaveLength(20)
    expect(first.rows.slice(0, 8).every((r) => r.requiresAttention > 0)).toBe(true)
    expect(first.rows[8]!.requiresAttention).toBe(0)
    expect(first.rows[8]!.leastConfidence).toBe(0)
    expect(first.rows[9]!.leastConfidence).toBeGreaterThanOrEqual(first.rows[8]!.leastConfidence!)
    expect(first.next).toBeDefined()
    await expectIndexed(() => run(reviewQueuePage(recorded, projectId, { limit: 20 })))
    await expectIndexed(() => run(reviewQueuePage(recorded, projectId, { limit: 20, after: first.next })))
    const second = await run(reviewQueuePage(recorded, projectId, { limit: 20, after: first.next }))
    expect(second.rows[0]!.documentId).not.toBe(first.rows[19]!.documentId)
    expect(second.rows.some((r) => first.rows.some((f) => f.documentId === r.documentId))).toBe(false)
    await expectIndexed(() => run(reviewTotals(recorded, projectId)))
    // The grid of one document, as the review screen reads it.
    const ofDocument = await gridRead(
      { documentId: first.rows[3]!.documentId },
      { by: "name", descending: false },
      {
        limit: 10,
        offset: 0,
      },
    )
    expect(ofDocument.count).toBe(1)
    await expectIndexed(() =>
      gridRead(
        { documentId: first.rows[3]!.documentId },
        { by: "name", descending: false },
        { limit: 10, offset: 0 },
      ),
    )
    // A document's neighbours in the queue, both ways, from its own key.
    const middle = second.rows[5]!
    const after = await run(reviewQueueNeighbours(db, projectId, middle.documentId, "after", 3))
    expect(after.map((r) => r.documentId)).toEqual(second.rows.slice(6, 9).map((r) => r.documentId))
    const before = await run(reviewQueueNeighbours(db, projectId, middle.documentId, "before", 3))
    expect(before.map((r) => r.documentId)).toEqual(
      second.rows
        .slice(2, 5)
        .reverse()
        .map((r) => r.documentId),
    )
    await expectIndexed(() => run(reviewQueueNeighbours(recorded, projectId, middle.documentId, "after", 1)))
    await expectIndexed(() => run(reviewQueueNeighbours(recorded, projectId, middle.documentId, "before", 1)))
    expect(await run(reviewTotals(db, projectId))).toEqual({ documents: DOCUMENTS, reviewed: 0 })
  })

  it("catches a page that no index serves", async () => {
    // A filter on a column no index leads with: the check sees the whole table read.
    const plans = await plansOf(() =>
      sql`select id from resolution_results where project_id = ${projectId}::uuid and is_current
        order by justification limit 10`.execute(recorded),
    )
    expect(plans.reduce((n, p) => n + p.rows, 0)).toBeGreaterThan(PAGE_ROWS)
  })
})
