import { type Kysely, sql } from "kysely"

// Frozen: never import application code here.

const AGENT_PROJECT = "(select a.project_id from agents a where a.id = r.agent_id)"

// Each watched table: how a row names its project (an expression over the row `r`), and the columns that
// matter to a project's progress (with the row's key and the columns the expression reads). An update
// that leaves all of them as they were (a task's heartbeat, a document's summary) notifies nothing.
const watched: ReadonlyArray<readonly [table: string, project: string, columns: string]> = [
  ["projects", "r.id", "id, output_mapping_status"],
  ["documents", "r.project_id", "id, project_id, status, version, archive_requested_at"],
  ["tasks", "r.project_id", "id, project_id, kind, status, lease_expirations, run_id"],
  ["runs", "r.project_id", "id, project_id, status"],
  ["agents", "r.project_id", "id, project_id, config_version, is_draft, agent_type, enable_web_search"],
  ["resolution_results", "r.project_id", "id, project_id, agent_id, agent_config_version, resolution_status"],
  ["agent_dimensions", AGENT_PROJECT, 'id, agent_id, dimension_id, are_values_dynamic, "values"'],
  [
    "extraction_pairs",
    AGENT_PROJECT,
    "agent_id, document_id, agent_config_version, document_version, dimensions_key, extracted_at",
  ],
  ["agent_resolutions", AGENT_PROJECT, "agent_id, agent_config_version, complete, resolved_at"],
  ["web_searches", AGENT_PROJECT, "atomic_value_id, agent_id, agent_config_version, searched_at"],
]

export async function up(db: Kysely<any>): Promise<void> {
  // One notification per project per statement on channel dxs_progress, payload the project's id.
  // Statement-level with transition tables (PostgreSQL 10+), one trigger per event since a trigger with
  // transition tables may have only one. PostgreSQL folds equal notifications of one transaction.
  await sql`
    create function dxs_notify_progress() returns trigger language plpgsql as $$
    declare
      project text := TG_ARGV[0];
      columns text := TG_ARGV[1];
      q text;
      id text;
    begin
      if TG_OP = 'INSERT' then
        q := format('select distinct %s from new_rows r', project);
      elsif TG_OP = 'DELETE' then
        q := format('select distinct %s from old_rows r', project);
      else
        q := format(
          'select distinct %1$s from ((select %2$s from new_rows except all select %2$s from old_rows)
             union all (select %2$s from old_rows except all select %2$s from new_rows)) r',
          project, columns);
      end if;
      for id in execute q loop
        if id is not null then
          perform pg_notify('dxs_progress', id);
        end if;
      end loop;
      return null;
    end
    $$`.execute(db)
  for (const [table, project, columns] of watched) {
    const args = sql`${sql.lit(project)}, ${sql.lit(columns)}`
    const t = sql.table(table)
    await sql`create trigger ${sql.id(`${table}_progress_insert`)} after insert on ${t}
      referencing new table as new_rows for each statement execute function dxs_notify_progress(${args})`.execute(
      db,
    )
    await sql`create trigger ${sql.id(`${table}_progress_update`)} after update on ${t}
      referencing old table as old_rows new table as new_rows
      for each statement execute function dxs_notify_progress(${args})`.execute(db)
    await sql`create trigger ${sql.id(`${table}_progress_delete`)} after delete on ${t}
      referencing old table as old_rows for each statement execute function dxs_notify_progress(${args})`.execute(
      db,
    )
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const [table] of watched)
    for (const event of ["insert", "update", "delete"])
      await sql`drop trigger if exists ${sql.id(`${table}_progress_${event}`)} on ${sql.table(table)}`.execute(
        db,
      )
  await sql`drop function if exists dxs_notify_progress()`.execute(db)
}
