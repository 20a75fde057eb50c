/**
 * A page's statement is planned once per connection, not once per request. PostgreSQL plans a prepared
 * statement for its values five times, then keeps one generic plan unless the values' own plans look
 * cheaper. A value the planner has statistics for can make it plan every execution again: a document's name
 * among the results' dimension values, a few rows in a project of ten thousand, where a generic plan expects
 * half a percent of them. The statement is run as the repositories run theirs (prepared by name on one
 * connection) and PostgreSQL's own count of its plans is read.
 */
import { randomUUID } from "node:crypto"
import { Effect } from "effect"
import { sql } from "kysely"
import type pg from "pg"
import { beforeAll, describe, expect, it } from "vitest"
import { agentListing, projectAgentStates } from "../src/repositories/ProjectReads.ts"
import { resultsListPage } from "../src/repositories/Results.ts"
import { planningDatabase, type RanStatement, supplierProject } from "./fixtures.ts"

const { db, statements, recorded, explainer } = await planningDatabase()
const run = Effect.runPromise
const DOCUMENTS = 2500
const AGENTS = 4

let organizationId = ""
let projectId = ""
/** A smaller project beside it, as a database of many projects has. */
let smaller = { organizationId: "", projectId: "", agentId: "" }

beforeAll(async () => {
  await explainer.connect()
  ;({ organizationId, projectId } = await supplierProject(db, { documents: DOCUMENTS, agents: AGENTS }))
  smaller = await supplierProject(db, { documents: DOCUMENTS / 10, agents: AGENTS })
  await sql`analyze`.execute(db)
})

/** The results list's page filtered by a dimension value, and its statement as the repository ran it. */
const dimensionPage = async (limit: number) => {
  statements.length = 0
  const page = await run(
    resultsListPage(
      recorded,
      organizationId,
      projectId,
      { dimensionValue: "invoice-7.pdf" },
      { limit, offset: 0 },
    ),
  )
  const [statement] = statements
  if (statement === undefined) throw new Error("no statement ran")
  return { page, statement }
}

/** How PostgreSQL planned a statement the repositories ran, executed `times` times prepared on one connection. */
const plansOf = async (client: pg.Client, statement: RanStatement, times: number) => {
  const name = `page_${randomUUID().slice(0, 8)}`
  for (let k = 0; k < times; k++)
    await client.query({ name, text: statement.sql, values: [...statement.parameters] })
  const { rows } = await client.query<{ generic: number; custom: number }>(
    "select generic_plans::int as generic, custom_plans::int as custom from pg_prepared_statements where name = $1",
    [name],
  )
  return rows[0]!
}

/** The plan of a statement the repositories ran, as a generic plan (the one a connection keeps). */
const genericPlanOf = async (client: pg.Client, statement: RanStatement) => {
  const name = `generic_${randomUUID().slice(0, 8)}`
  await client.query("begin")
  try {
    await client.query("set local plan_cache_mode = force_generic_plan")
    await client.query(`prepare ${name} as ${statement.sql}`)
    const literal = (v: unknown) =>
      v === null ? "null" : client.escapeLiteral(Array.isArray(v) ? `{${v.join(",")}}` : String(v))
    const values = statement.parameters.map(literal)
    const { rows } = await client.query<{ "QUERY PLAN": string }>(
      `explain (analyze, costs off) execute ${name}(${values.join(", ")})`,
    )
    return rows.map((r) => r["QUERY PLAN"]).join("\n")
  } finally {
    await client.query("rollback")
  }
}

describe("a page's statement is planned once per connection", () => {
  it("the results list filtered by a dimension value", async () => {
    const { page, statement } = await dimensionPage(20)
    expect(page.count).toBe(AGENTS)
    const plans = await plansOf(explainer, statement, 10)
    // Five plans for the values, then the generic one for the rest.
    expect(plans).toEqual({ generic: 5, custom: 5 })
  })

  it("the results list of a project smaller than another, whole, by an agent and by a rare status", async () => {
    // A custom plan knows the project's share of the results (and a status's), a generic plan the average
    // project's: with an offset's cost estimated from the rows it passes, the generic plan looked dearer for
    // every project but the largest (and for a rare status), and each execution was planned again.
    const documents = DOCUMENTS / 10
    for (const [filter, count] of [
      [{}, documents * AGENTS],
      [{ agentId: smaller.agentId }, documents],
      [{ resolutionStatus: "Requires attention" }, (documents / 25) * AGENTS],
    ] as const) {
      statements.length = 0
      const page = await run(
        resultsListPage(recorded, smaller.organizationId, smaller.projectId, filter, {
          limit: 20,
          offset: 0,
        }),
      )
      expect(page.count).toBe(count)
      expect(await plansOf(explainer, statements[0]!, 10), JSON.stringify(filter)).toEqual({
        generic: 5,
        custom: 5,
      })
    }
  })

  it("the project screen's agents and their states, in an organisation of several projects", async () => {
    // The projects' ids as an array of unknown length: a generic plan expects ten of them (all of the
    // organisation's), a custom plan knows there is one.
    for (let p = 0; p < 3; p++) {
      const { id } = await db
        .insertInto("projects")
        .values({ organization_id: smaller.organizationId, name: `Beside ${p}` })
        .returning("id")
        .executeTakeFirstOrThrow()
      await db
        .insertInto("agents")
        .values(Array.from({ length: 20 }, (_, k) => ({ project_id: id, name: `Agent ${k}` })))
        .execute()
    }
    await sql`analyze`.execute(db)
    for (const read of [
      () => run(agentListing(recorded, smaller.organizationId, [smaller.projectId])),
      () => run(projectAgentStates(recorded, smaller.organizationId, [smaller.projectId])),
    ]) {
      statements.length = 0
      expect(JSON.stringify(await read())).toContain(smaller.agentId)
      expect(await plansOf(explainer, statements[0]!, 10)).toEqual({ generic: 5, custom: 5 })
    }
  })

  it("and its generic plan reads the value's matches, not the project's results in order", async () => {
    // A generic plan expects half a percent of the project to match: walking the list's ordered index
    // until a page is found looked cheaper than reading the matches, and read the whole project for a
    // value that has four.
    const plan = await genericPlanOf(explainer, (await dimensionPage(1)).statement)
    expect(plan).toContain("resolution_results_project_dimension_values")
    expect(plan).not.toContain("using resolution_results_list")
  })
})
