import { type Kysely, sql } from "kysely"

// Frozen: never import application code here.
//
// Reads that cost what their page costs. A result carries what its reads filter and sort by (whether it is
// current, its agent's age and value type, its row of the grid, its dimension values, a search text and
// its value's sort keys), set by a BEFORE trigger from its agent and atomic value, so pages are read through
// partial indexes of current results with no join. Counts are tallies that the writes keep in the same
// transaction, by statement-level triggers over transition tables:
// - `result_tallies`: current results per agent and resolution status;
// - `result_rows` (one row per row of the results grid: a combination of dimension instances with at
//   least one current result, with its cells counted by status) and `result_row_tallies` (per project:
//   rows, and rows with a cell of each status);
// - `pair_tallies`: extraction pairs that count for progress (the document processed, live, at the pair's
//   version, in the agent's project), per agent, config version, dimensions key and slot;
// - `document_tallies`: documents per project, status, attachment or not, live or not, and slot;
// - `web_search_tallies`: web searches per agent and config version, recorded and done.
// Slots (by the writing connection) spread the counters that concurrent writers of one project share over
// several rows: a connection never waits on its own slot, two connections rarely share one.
// A change is added to its counter row (made when missing), unless the project or agent it belongs to is
// being removed in the same transaction (its counters go with it).

import { counters } from "./2026_11_29_0001_result_tallies/Counters.ts"
import { resultColumns } from "./2026_11_29_0001_result_tallies/ResultColumns.ts"
import { resultTallies } from "./2026_11_29_0001_result_tallies/ResultTallies.ts"

export async function up(db: Kysely<any>): Promise<void> {
  // Trigram indexes make substring searches indexed where the server has pg_trgm (a trusted extension since
  // PostgreSQL 13); without it, the same searches scan, and nothing else changes.
  await sql`
    do $$ begin
      create extension if not exists pg_trgm;
    exception when others then
      raise notice 'pg_trgm is not available: substring searches will not be indexed';
    end $$`.execute(db)
  const trigram = (
    await sql<{
      ok: boolean
    }>`select exists (select 1 from pg_extension where extname = 'pg_trgm') as ok`.execute(db)
  ).rows[0]?.ok

  await resultColumns(db, trigram === true)
  await resultTallies(db)
  await counters(db, trigram === true)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table if exists run_usage`.execute(db)
  for (const [table, trigger] of [
    ["web_searches", "web_searches_tally_insert"],
    ["web_searches", "web_searches_tally_update"],
    ["web_searches", "web_searches_tally_delete"],
    ["documents", "documents_tally_insert"],
    ["documents", "documents_tally_update"],
    ["documents", "documents_tally_delete"],
    ["documents", "documents_pairs"],
    ["extraction_pairs", "extraction_pairs_tally_insert"],
    ["extraction_pairs", "extraction_pairs_tally_update"],
    ["extraction_pairs", "extraction_pairs_tally_delete"],
    ["extraction_pairs", "extraction_pairs_counted"],
    ["resolution_results", "resolution_results_tally_insert"],
    ["resolution_results", "resolution_results_tally_update"],
    ["resolution_results", "resolution_results_tally_delete"],
    ["resolution_results", "resolution_results_columns_insert"],
    ["resolution_results", "resolution_results_columns_update"],
    ["agents", "agents_results"],
    ["dimensions", "dimensions_renamed"],
  ] as const)
    await sql`drop trigger if exists ${sql.id(trigger)} on ${sql.table(table)}`.execute(db)
  for (const fn of [
    ...["dxs_web_search_tally", "dxs_document_tally", "dxs_pair_tally", "dxs_result_tally"].flatMap((f) =>
      ["insert", "update", "delete"].map((event) => `${f}_${event}`),
    ),
    "dxs_document_pairs",
    "dxs_pair_counted",
    "dxs_agent_results",
    "dxs_result_columns",
    "dxs_dimension_renamed",
  ])
    await sql`drop function if exists ${sql.id(fn)}()`.execute(db)
  await sql`alter table resolution_results drop column cell_json, drop column summary_json`.execute(db)
  for (const fn of [
    "dxs_cell_json(uuid, jsonb, text, text, real, boolean)",
    "dxs_summary_json(uuid, jsonb, text, text, jsonb, text, text, text, real)",
    "dxs_present_value(jsonb, text)",
    "dxs_iso(timestamptz)",
  ])
    await sql`drop function if exists ${sql.raw(fn)}`.execute(db)
  for (const table of [
    "web_search_tallies",
    "document_tallies",
    "pair_tallies",
    "result_row_tallies",
    "result_rows",
    "result_tallies",
  ])
    await sql`drop table if exists ${sql.id(table)}`.execute(db)
  await sql`drop index if exists documents_name_search`.execute(db)
  await sql`drop index if exists documents_page_status`.execute(db)
  await sql`drop index if exists documents_page`.execute(db)
  await sql`drop index if exists extraction_pairs_latest`.execute(db)
  await sql`alter table extraction_pairs drop column counted`.execute(db)
  for (const index of [
    "resolution_results_search",
    "resolution_results_dimension_values",
    "resolution_results_value_desc",
    "resolution_results_value_asc",
    "resolution_results_cells",
    "resolution_results_confidence",
    "resolution_results_status",
    "resolution_results_list",
  ])
    await sql`drop index if exists ${sql.id(index)}`.execute(db)
  await sql`
    alter table resolution_results
      drop column value_text, drop column value_num, drop column value_rank, drop column value_missing,
      drop column row_exact, drop column row_sort, drop column row_rank, drop column row_hash, drop column list_name,
      drop column search_text, drop column row_name, drop column dimension_values, drop column dimension_key,
      drop column value_type, drop column agent_created_at, drop column is_current`.execute(db)
  await sql`create index resolution_results_confidence on resolution_results (project_id, confidence)`.execute(
    db,
  )
  await sql`create index resolution_results_row on resolution_results (project_id, result_name)`.execute(db)
}
