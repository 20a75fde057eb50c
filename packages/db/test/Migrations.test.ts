import { useTestDatabase } from "@dxs/testing/TestDatabase"
import { sql } from "kysely"
import { afterAll, describe, expect, it } from "vitest"
import { makeKysely } from "../src/Db.ts"
import { migrateToLatest } from "../src/Migrations.ts"

const url = await useTestDatabase()
const db = makeKysely(url, 4)
afterAll(() => db.destroy())

describe("migrations", () => {
  it("leave the template fully migrated, and a second run applies nothing", async () => {
    const outcome = await migrateToLatest(db)
    expect(outcome.applied).toEqual([])
    const tables = await sql<{
      n: number
    }>`select count(*)::int as n from information_schema.tables where table_schema = 'public' and table_name in ('projects','documents','agents','dimensions','tasks')`.execute(
      db,
    )
    expect(tables.rows[0]?.n).toBe(5)
  })

  it("are safe when several processes migrate at once (advisory lock)", async () => {
    const fresh = await sql<{ d: string }>`select current_database() as d`.execute(db)
    expect(fresh.rows[0]?.d).toMatch(/^dxs_t_/)
    const dbs = [1, 2, 3].map(() => makeKysely(url, 1))
    const results = await Promise.all(dbs.map((d) => migrateToLatest(d)))
    await Promise.all(dbs.map((d) => d.destroy()))
    expect(results.flatMap((r) => r.applied)).toEqual([])
  })

  it("keep `date` columns as YYYY-MM-DD strings", async () => {
    const org = await db
      .insertInto("organizations")
      .values({ name: "dates" })
      .returning("id")
      .executeTakeFirstOrThrow()
    const p = await db
      .insertInto("projects")
      .values({ organization_id: org.id, name: "p", reference_date: "2026-02-03", project_modules: "{}" })
      .returning("reference_date")
      .executeTakeFirstOrThrow()
    expect(p.reference_date).toBe("2026-02-03")
  })

  it("keep a project's target schema and mapping as written, keys in their order", async () => {
    const org = await db
      .insertInto("organizations")
      .values({ name: "key order" })
      .returning("id")
      .executeTakeFirstOrThrow()
    const schema =
      '{"type":"object","properties":{"zeta":{"type":"string"},"alpha":{"type":"number"}},"$id":"x"}'
    const mapping = '{"properties":{"alpha":{"kind":"scalar_from_agent","agent_name":"A"}},"kind":"object"}'
    const p = await db
      .insertInto("projects")
      .values({
        organization_id: org.id,
        name: "p",
        project_modules: "{}",
        target_output_schema: schema,
        output_mapping: mapping,
      })
      .returning(["target_output_schema", "output_mapping"])
      .executeTakeFirstOrThrow()
    expect(JSON.stringify(p.target_output_schema)).toBe(schema)
    expect(JSON.stringify(p.output_mapping)).toBe(mapping)
  })
})
