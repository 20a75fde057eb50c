import { type Kysely, sql } from "kysely"

// Frozen: never import application code here.
//
// A project's search (the grid's search box, part of a dimension value) and its dimension value filter went
// through GIN indexes of every project's results: the index gave the matches of all projects, and the
// project's own were kept by a filter, so a small project's search cost as much as the matches of the
// largest project beside it (a project of 100,000 results beside one of 400,000: 1,012 matches read for 207
// of its own, 11 ms). The indexes now lead with the project (btree_gin, shipped with PostgreSQL since 9.4,
// gives GIN the uuid's equality), and a search reads its project's matches alone. Without btree_gin the
// indexes stay as they were.

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    do $$ begin
      create extension if not exists btree_gin;
    exception when others then
      raise notice 'btree_gin is not available: searches stay indexed across projects';
    end $$`.execute(db)
  const has = async (name: string, kind: "extension" | "index") =>
    (
      await sql<{ ok: boolean }>`select exists (select 1 from ${sql.raw(
        kind === "extension" ? "pg_extension where extname" : "pg_indexes where indexname",
      )} = ${name}) as ok`.execute(db)
    ).rows[0]?.ok === true
  if (!(await has("btree_gin", "extension"))) return
  await sql`create index resolution_results_project_dimension_values on resolution_results
    using gin (project_id, dimension_values) with (gin_pending_list_limit = 256) where is_current`.execute(db)
  await sql`drop index if exists resolution_results_dimension_values`.execute(db)
  if (await has("resolution_results_search", "index")) {
    await sql`create index resolution_results_project_search on resolution_results
      using gin (project_id, search_text gin_trgm_ops) with (gin_pending_list_limit = 256) where is_current`.execute(
      db,
    )
    await sql`drop index resolution_results_search`.execute(db)
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  const exists = async (name: string) =>
    (
      await sql<{
        ok: boolean
      }>`select exists (select 1 from pg_indexes where indexname = ${name}) as ok`.execute(db)
    ).rows[0]?.ok === true
  if (await exists("resolution_results_project_search")) {
    await sql`create index resolution_results_search on resolution_results using gin (search_text gin_trgm_ops)
      with (gin_pending_list_limit = 256) where is_current`.execute(db)
    await sql`drop index resolution_results_project_search`.execute(db)
  }
  if (await exists("resolution_results_project_dimension_values")) {
    await sql`create index resolution_results_dimension_values on resolution_results using gin (dimension_values)
      with (gin_pending_list_limit = 256) where is_current`.execute(db)
    await sql`drop index resolution_results_project_dimension_values`.execute(db)
  }
}
