import { type Kysely, sql } from "kysely"

// Frozen: never import application code here.
//
// A page of the results grid reads its rows' cells from one index alone (an index-only scan), not from the
// results themselves (wide rows, one heap page per cell). Each result keeps, as generated columns:
// - `grid_cell_json`: its cell as the member of its row's `cells` object that the grid answers with
//   (`"<agent id>":{…}`, its review state and source included), replacing `cell_json` (the same object
//   without them, which only the grid read);
// - `grid_row_name`: its row's name;
// and the index a row's cells are read by carries both (with the result's id and atomic value). An atomic
// value keeps its dimension values as the grid shows them (`dimension_values_json`, an object of names to
// values). Being generated, they change in the statement that changes what they are made of (a
// resolution, a value set by hand, a review, a dimension renamed). An index entry has a size limit, so a
// cell or name longer than fits is kept as null and made from the result itself when read.
// The results are rewritten once here; an index-only scan reads a row's page of the table until a vacuum has
// marked the page all-visible (autovacuum, or `vacuum resolution_results` right after upgrading), so the
// saving arrives with the first vacuum.
export async function up(db: Kysely<any>): Promise<void> {
  // The cell as `cell_json` was made (`dxs_cell_json`'s members, then the review's, in this order and
  // spacing), as the member of its row's `cells`; null when longer than `bytes` (null: however long).
  // PL/pgSQL, which evaluates it as one expression: a SQL function that cannot be inlined (`json_build_object`
  // is stable) runs as a query of its own on every call, which made the cell cost each write of a result
  // several times what the expression does. (Declared immutable, as `dxs_cell_json`: what it is made of prints
  // the same in every session.)
  await sql`
    create function dxs_grid_cell(agent uuid, id uuid, value jsonb, value_type text, status text, confidence real,
                                  overridden boolean, review text, bytes integer)
    returns text language plpgsql immutable as $$
    declare
      cell text := '"' || agent || '":'
        || left(json_build_object('resolution_result_id', id, 'value', dxs_present_value(value, value_type),
                                  'resolution_status', status, 'confidence', confidence,
                                  'is_overridden', overridden)::text, -1)
        || ',"latest_review_status":' || coalesce(to_json(review)::text, 'null')
        || ',"source":' || case when overridden then '"manual"' else '"model"' end || '}';
    begin
      return case when bytes is null or octet_length(cell) <= bytes then cell end;
    end $$`.execute(db)
  // A text that fits in an index entry beside the others (at most `bytes`), else null.
  await sql`
    create function dxs_within(t text, bytes integer) returns text language sql immutable as $$
      select case when octet_length(t) <= bytes then t end $$`.execute(db)
  // One statement: the table is rewritten once, every row's new columns made as it is.
  await sql`
    alter table resolution_results
      drop column cell_json,
      add column grid_cell_json text generated always as (dxs_grid_cell(agent_id, id, value, value_type,
        resolution_status, confidence, is_overridden, latest_review_status, 1600)) stored,
      add column grid_row_name text generated always as (dxs_within(row_name, 800)) stored`.execute(db)
  await sql`
    create function dxs_dimension_values_json(dimension_values jsonb) returns text language sql immutable as $$
      select coalesce(json_object_agg(x.e->>'name', x.e->>'dimension_value' order by x.o), '{}'::json)::text
      from jsonb_array_elements(dimension_values) with ordinality as x(e, o) $$`.execute(db)
  await sql`alter table atomic_values add column dimension_values_json text
    generated always as (dxs_dimension_values_json(dimension_values)) stored`.execute(db)
  // The same keys as before (a row's current results, oldest agent first), with what a page of the grid
  // reads of them; the entry stays under the B-tree's limit of 2,704 bytes.
  await sql`drop index resolution_results_cells`.execute(db)
  await sql`create index resolution_results_cells on resolution_results (project_id, row_hash, agent_created_at, agent_id)
    include (id, atomic_value_id, grid_row_name, grid_cell_json) where is_current`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index resolution_results_cells`.execute(db)
  await sql`
    alter table resolution_results
      drop column grid_cell_json,
      drop column grid_row_name,
      add column cell_json text generated always as (dxs_cell_json(id, value, value_type, resolution_status, confidence,
        is_overridden)) stored`.execute(db)
  await sql`create index resolution_results_cells on resolution_results
    (project_id, row_hash, agent_created_at, agent_id) where is_current`.execute(db)
  await sql`alter table atomic_values drop column dimension_values_json`.execute(db)
  await sql`drop function dxs_dimension_values_json(jsonb)`.execute(db)
  await sql`drop function dxs_within(text, integer)`.execute(db)
  await sql`drop function dxs_grid_cell(uuid, uuid, jsonb, text, text, real, boolean, text, integer)`.execute(
    db,
  )
}
