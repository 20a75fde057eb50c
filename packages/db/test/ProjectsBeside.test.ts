/**
 * A project's pages cost what they cost alone when a larger project shares the database. The planner's
 * statistics of the results are mostly the larger project's: unless it knows that an agent decides its
 * project, it multiplies the project's share of the results by the agent's, expects a few of a small
 * project's agent where there are hundreds, and reads them all through the agent's index to sort them for
 * a page (migration `2026_12_01_0001_agent_project_statistics`).
 */
import { Effect } from "effect"
import { sql } from "kysely"
import { beforeAll, describe, expect, it } from "vitest"
import { resultsListPage } from "../src/repositories/Results.ts"
import { planningDatabase, supplierProject } from "./fixtures.ts"

const { db, statements, recorded, explainer } = await planningDatabase()
const run = Effect.runPromise
const AGENTS = 2
/** Documents of the small project, and of the larger one beside it. */
const SMALL = 300
const LARGE = 3000
const PAGE = 10

let small = { organizationId: "", projectId: "", agentId: "" }

beforeAll(async () => {
  await explainer.connect()
  small = await supplierProject(db, { documents: SMALL, agents: AGENTS })
  await supplierProject(db, { documents: LARGE, agents: AGENTS })
  await sql`analyze`.execute(db)
})

/** How many rows the planner expects a statement to return, and how many it does. */
const expectedAndActual = async (text: string, values: ReadonlyArray<unknown>) => {
  const { rows } = await explainer.query(`explain (analyze, format json) ${text}`, [...values])
  const plan = rows[0]["QUERY PLAN"][0].Plan
  return { expected: plan["Plan Rows"] as number, actual: plan["Actual Rows"] as number }
}

describe("a project beside a larger one", () => {
  it("is expected to have as many results of its agent as it has", async () => {
    // The results list filtered by an agent reads them in the list's order while the planner expects more
    // than a page; expecting a few, it read them all through the agent's index to sort them (at 100,000
    // results beside 1,000,000: 156 expected, 5,000 read and sorted for a page of 100).
    const { expected, actual } = await expectedAndActual(
      "select id from resolution_results where project_id = $1 and agent_id = $2 and is_current",
      [small.projectId, small.agentId],
    )
    expect(actual).toBe(SMALL)
    expect(expected).toBeGreaterThanOrEqual(actual / 2)
    expect(expected).toBeLessThanOrEqual(actual * 2)
  })

  it("reads a page of its agent's results in the list's order", async () => {
    statements.length = 0
    const page = await run(
      resultsListPage(
        recorded,
        small.organizationId,
        small.projectId,
        { agentId: small.agentId },
        { limit: PAGE, offset: 0 },
      ),
    )
    expect(page.count).toBe(SMALL)
    const [statement] = statements
    const { rows } = await explainer.query(`explain (format json) ${statement!.sql}`, [
      ...statement!.parameters,
    ])
    expect(JSON.stringify(rows[0]["QUERY PLAN"])).toContain('"Index Name":"resolution_results_list"')
  })
})
