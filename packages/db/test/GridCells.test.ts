/**
 * The grid's kept text follows the writes that change it: after each write of results (a resolution, a value
 * set by hand, a review, a value settled by its review, a result removed, a dimension renamed, and values and
 * names too long for the index), a page of the grid answers exactly (byte for byte) what the grid answered
 * when it built each cell from its result's own columns: the statement below, as the grid ran it before its
 * cells were kept. Each result's kept summary (the results list's) is checked likewise.
 */
import { useTestDatabase } from "@dxs/testing/TestDatabase"
import { Effect } from "effect"
import { sql } from "kysely"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeKysely } from "../src/Db.ts"
import {
  ensureAtomicValues,
  gridPageJson,
  overrideResult,
  type ResolvedRow,
  recordReview,
  settleByReview,
  writeResults,
} from "../src/repositories/Results.ts"
import { newOrganizationProject, resolvedRow } from "./fixtures.ts"

const url = await useTestDatabase()
const db = makeKysely(url, 2)
afterAll(() => db.destroy())

const run = Effect.runPromise
const REGIONS = ["North", "South", "East", "West"]
let projectId = ""
let dimensionId = ""
const agents: Array<{ readonly id: string; readonly valueType: string }> = []
/** Per agent, its atomic values by region. */
const atomics = new Map<string, Map<string, string>>()

beforeAll(async () => {
  ;({ projectId } = await newOrganizationProject(db))
  dimensionId = (
    await db
      .insertInto("dimensions")
      .values({ project_id: projectId, name: "Region" })
      .returning("id")
      .executeTakeFirstOrThrow()
  ).id
  for (const [name, valueType] of [
    ["Total", "number"],
    ["Supplier", "string"],
    ["Due", "date"],
  ] as const)
    agents.push({
      id: (
        await db
          .insertInto("agents")
          .values({ project_id: projectId, name, value_type: valueType })
          .returning("id")
          .executeTakeFirstOrThrow()
      ).id,
      valueType,
    })
  const made = await run(
    ensureAtomicValues(
      db,
      projectId,
      agents.flatMap((a) =>
        REGIONS.map((region) => ({
          agentId: a.id,
          instances: [{ dimensionId, name: "Region", value: region, documentId: null }],
        })),
      ),
    ),
  )
  for (const [k, a] of agents.entries())
    atomics.set(a.id, new Map(REGIONS.map((region, j) => [region, made[k * REGIONS.length + j]!.id])))
})

const resolved = (
  agent: (typeof agents)[number],
  region: string,
  value: unknown,
  status = "Resolved",
  resultName = region,
): ResolvedRow =>
  resolvedRow({
    atomicValueId: atomics.get(agent.id)!.get(region)!,
    resultName,
    value,
    status,
    confidence: value === null ? null : 0.75,
  })

const write = (agent: (typeof agents)[number], rows: ReadonlyArray<ResolvedRow>) =>
  run(writeResults(db, { projectId, agentId: agent.id, configVersion: 1, rows }))

/** The rows of the keys as the grid built them from each result's own columns (its statement before). */
const builtFromResults = async (keys: ReadonlyArray<string>) => {
  const { rows } = await sql<{ json: string }>`
    select '[' || coalesce(string_agg('{"key":"' || r.row_hash || '","name":' || to_json(r.row_name)::text
             || ',"dimension_values":' || (select coalesce(json_object_agg(x.e->>'name', x.e->>'dimension_value' order by x.o),
                                                           '{}'::json)::text
                                           from atomic_values av, jsonb_array_elements(av.dimension_values)
                                                with ordinality as x(e, o)
                                           where av.id = r.first_atomic)
             || ',"cells":{' || r.cells || '}}', ',' order by r.position), '') || ']' as json
    from (
      select p.position, p.row_hash, c.row_name, c.first_atomic, c.cells
      from unnest(${sql.val(keys)}::uuid[]) with ordinality as p(row_hash, position)
      cross join lateral (
        select min(rr.row_name) as row_name,
               (array_agg(rr.atomic_value_id order by rr.agent_created_at, rr.agent_id))[1] as first_atomic,
               string_agg('"' || rr.agent_id || '":'
                          || left(dxs_cell_json(rr.id, rr.value, rr.value_type, rr.resolution_status, rr.confidence, rr.is_overridden), -1)
                          || ',"latest_review_status":' || coalesce(to_json(rr.latest_review_status)::text, 'null')
                          || ',"source":' || case when rr.is_overridden then '"manual"' else '"model"' end || '}', ','
                          order by rr.agent_created_at, rr.agent_id) as cells
        from resolution_results rr
        where rr.project_id = ${projectId}::uuid and rr.row_hash = p.row_hash and rr.is_current
      ) c
      where c.cells is not null
    ) r`.execute(db)
  return rows[0]!.json
}

/**
 * Every result's kept `summary_json` (the results list's `resolution_result`) is the text its columns make,
 * as `dxs_summary_json` made it when it was a SQL function.
 */
const summariesMatchResults = async () => {
  const { rows } = await sql<{ results: number; different: number }>`
    select count(*)::int as results,
           (count(*) filter (where rr.summary_json is distinct from json_build_object('id', rr.id,
              'value', dxs_present_value(rr.value, rr.value_type), 'resolution_status', rr.resolution_status,
              'references', coalesce(rr."references", '{}'::jsonb), 'justification_for_resolution_status',
              rr.justification, 'source_type', rr.source_type, 'updated_by_email', rr.updated_by_email,
              'confidence', rr.confidence)::text))::int as different
    from resolution_results rr where rr.project_id = ${projectId}::uuid`.execute(db)
  expect(rows[0]!.results).toBeGreaterThan(0)
  expect(rows[0]!.different).toBe(0)
}

/** The grid's first page (every row), checked against the rows built from the results; parsed. */
const gridMatchesResults = async () => {
  await summariesMatchResults()
  const page = await run(
    gridPageJson(db, projectId, {}, { by: "name", descending: false }, { limit: 50, offset: 0 }),
  )
  const json = `[${page.json.join(",")}]`
  const keys = (JSON.parse(json) as Array<{ key: string }>).map((r) => r.key)
  expect(keys.length).toBeGreaterThan(0)
  expect(json).toBe(await builtFromResults(keys))
  return JSON.parse(json) as Array<{
    readonly key: string
    readonly name: string
    readonly dimension_values: Record<string, string>
    readonly cells: Record<string, any>
  }>
}

const resultOf = (agent: (typeof agents)[number], region: string) =>
  db
    .selectFrom("resolution_results")
    .select(["id", "grid_cell_json", "grid_row_name"])
    .where("atomic_value_id", "=", atomics.get(agent.id)!.get(region)!)
    .executeTakeFirstOrThrow()

describe("the grid's kept cells", () => {
  it("follow resolutions, values set by hand, reviews, removals and renames", async () => {
    const [total, supplier, due] = agents as [
      (typeof agents)[number],
      (typeof agents)[number],
      (typeof agents)[number],
    ]
    await write(
      total,
      REGIONS.map((r, i) => resolved(total, r, 100 * (i + 1))),
    )
    await write(
      supplier,
      REGIONS.map((r, i) =>
        resolved(supplier, r, i === 3 ? null : `Supplier "${r}"`, i === 3 ? "No result" : "Resolved"),
      ),
    )
    await write(
      due,
      REGIONS.map((r) => resolved(due, r, "2026-01-31", "Requires attention")),
    )
    expect(await gridMatchesResults()).toHaveLength(4)

    // A value set by hand.
    const north = await resultOf(total, "North")
    await run(
      overrideResult(db, north.id, {
        value: 123.5,
        resolutionStatus: "Resolved",
        justification: "checked",
        updatedByEmail: "a@example.com",
      }),
    )
    const byHand = (await gridMatchesResults()).find((r) => r.name === "North")!
    expect(byHand.cells[total.id]).toMatchObject({ value: 123.5, is_overridden: true, source: "manual" })

    // Reviews, and a value settled by its review.
    const south = await resultOf(due, "South")
    await run(recordReview(db, south.id, { status: "positive", comment: "", reviewedBy: "a@example.com" }))
    await run(settleByReview(db, south.id, { status: "Resolved", justification: "Marked correct" }))
    const east = await resultOf(supplier, "East")
    await run(recordReview(db, east.id, { status: "negative", comment: "no", reviewedBy: null }))
    const reviewed = await gridMatchesResults()
    expect(reviewed.find((r) => r.name === "South")!.cells[due.id]).toMatchObject({
      latest_review_status: "positive",
      resolution_status: "Resolved",
    })
    expect(reviewed.find((r) => r.name === "East")!.cells[supplier.id].latest_review_status).toBe("negative")

    // Resolved again: new values and statuses (the value set by hand stays), and a combination gone.
    await write(
      total,
      REGIONS.slice(0, 3).map((r, i) => resolved(total, r, 10 * (i + 1), "Requires attention")),
    )
    const again = await gridMatchesResults()
    expect(again.find((r) => r.name === "South")!.cells[total.id]).toMatchObject({
      value: 20,
      resolution_status: "Requires attention",
    })
    expect(again.find((r) => r.name === "West")!.cells[total.id]).toBeUndefined()
    expect(again.find((r) => r.name === "North")!.cells[total.id].value).toBe(123.5)

    // A dimension renamed: the atomic values' names, and the rows' dimension values with them.
    await db.updateTable("dimensions").set({ name: "Area" }).where("id", "=", dimensionId).execute()
    expect((await gridMatchesResults())[0]!.dimension_values).toEqual({ Area: "East" })
  })

  it("are made from the result itself when a value or a name is too long for the index", async () => {
    const [total, supplier] = agents as [(typeof agents)[number], (typeof agents)[number]]
    const long = `Supplier ${"é".repeat(1000)}`
    const west = await resultOf(supplier, "West")
    await run(
      overrideResult(db, west.id, {
        value: long,
        resolutionStatus: "Resolved",
        justification: null,
        updatedByEmail: null,
      }),
    )
    expect((await resultOf(supplier, "West")).grid_cell_json).toBeNull()
    // Every cell of the row named at length (a name is its cells' least).
    const name = `North ${"n".repeat(900)}`
    for (const agent of agents)
      await write(agent, [
        resolved(agent, "North", 1, "Resolved", name),
        ...["South", "East", "West"].map((r) =>
          resolved(agent, r, agent === supplier && r === "West" ? long : 2),
        ),
      ])
    expect((await resultOf(total, "North")).grid_row_name).toBeNull()
    const rows = await gridMatchesResults()
    expect(rows.map((r) => r.name)).toEqual(["East", name, "South", "West"])
    expect(rows[3]!.cells[supplier.id].value).toBe(long)
  })
})
