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
import { ensureAtomicValues, resultsListPage } from "../src/repositories/Results.ts"
import {
  newDocumentDimension,
  newOrganizationProject,
  planningDatabase,
  writeAgentsResults,
} from "./fixtures.ts"

const { db, statements, recorded, explainer } = await planningDatabase()
const run = Effect.runPromise
const DOCUMENTS = 2500
const AGENTS = 4

let organizationId = ""
let projectId = ""

beforeAll(async () => {
  await explainer.connect()
  ;({ organizationId, projectId } = await newOrganizationProject(db))
  const dimension = await newDocumentDimension(db, projectId)
  const agentIds: Array<string> = []
  for (let k = 0; k < AGENTS; k++)
    agentIds.push(
      (
        await db
          .insertInto("agents")
          .values({ project_id: projectId, name: `Field ${k}`, value_type: "string" })
          .returning("id")
          .executeTakeFirstOrThrow()
      ).id,
    )
  const names = Array.from({ length: DOCUMENTS }, (_, j) => `invoice-${j}.pdf`)
  const documents = await db
    .insertInto("documents")
    .values(
      names.map((name) => ({
        project_id: projectId,
        file_name: name,
        type: "PDF",
        status: "Processed",
        blob_key: randomUUID(),
        content_type: "application/pdf",
        size_bytes: 1,
        sha256: "0",
      })),
    )
    .returning("id")
    .execute()
  const atomics = await run(
    ensureAtomicValues(
      db,
      projectId,
      names.flatMap((name, j) =>
        agentIds.map((agentId) => ({
          agentId,
          instances: [
            { dimensionId: dimension.id, name: "Document", value: name, documentId: documents[j]!.id },
          ],
        })),
      ),
    ),
  )
  await writeAgentsResults(db, projectId, agentIds, atomics, names, (j) => ({
    value: `Supplier ${j % 97}`,
    status: "Resolved",
  }))
  await sql`analyze`.execute(db)
})

/** How PostgreSQL planned a statement the repositories ran, executed `times` times prepared on one connection. */
const plansOf = async (
  client: pg.Client,
  statement: { sql: string; parameters: ReadonlyArray<unknown> },
  times: number,
) => {
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
const genericPlanOf = async (
  client: pg.Client,
  statement: { sql: string; parameters: ReadonlyArray<unknown> },
) => {
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
    statements.length = 0
    const page = await run(
      resultsListPage(
        recorded,
        organizationId,
        projectId,
        { dimensionValue: "invoice-7.pdf" },
        { limit: 20, offset: 0 },
      ),
    )
    expect(page.count).toBe(AGENTS)
    const [statement] = statements
    if (statement === undefined) throw new Error("no statement ran")
    const plans = await plansOf(explainer, statement, 10)
    // Five plans for the values, then the generic one for the rest.
    expect(plans).toEqual({ generic: 5, custom: 5 })
  })

  it("and its generic plan reads the value's matches, not the project's results in order", async () => {
    // A generic plan expects half a percent of the project to match: walking the list's ordered index
    // until a page is found looked cheaper than reading the matches, and read the whole project for a
    // value that has four.
    statements.length = 0
    await run(
      resultsListPage(
        recorded,
        organizationId,
        projectId,
        { dimensionValue: "invoice-7.pdf" },
        { limit: 1, offset: 0 },
      ),
    )
    const [statement] = statements
    if (statement === undefined) throw new Error("no statement ran")
    const plan = await genericPlanOf(explainer, statement)
    expect(plan).toContain("resolution_results_project_dimension_values")
    expect(plan).not.toContain("using resolution_results_list")
  })
})
