import { type Kysely, sql } from "kysely"
import { changesByEvent, REFERENCING, resultTallyBody, STATUSES, statusColumns } from "./Statements.ts"

// Frozen, as the migration that runs it: never import application code here.

/** Result tallies, the grid's rows, and the extraction pairs that count for progress. */
export async function resultTallies(db: Kysely<any>): Promise<void> {
  await resultTalliesAndRows(db)
  await countedExtractionPairs(db)
}

/** Result tallies and the grid's rows: their tables, the triggers that keep them, and their counts so far. */
async function resultTalliesAndRows(db: Kysely<any>): Promise<void> {
  // ---------------------------------------------------------------------------------------------------
  // Result tallies and the grid's rows.
  await sql`
    create table result_tallies (
      agent_id uuid not null references agents(id) on delete cascade,
      resolution_status text not null,
      n integer not null default 0,
      primary key (agent_id, resolution_status)
    )`.execute(db)
  await sql`
    create table result_rows (
      project_id uuid not null references projects(id) on delete cascade,
      row_hash uuid not null,
      row_name text not null,
      dimension_key text not null,
      cells integer not null default 0,
      ${sql.raw(statusColumns.map((c) => `${c} integer not null default 0`).join(",\n      "))},
      row_rank smallint generated always as (case when row_name = 'All documents' then 0 else 1 end) stored,
      row_sort text generated always as (lower(left(row_name, 200))) stored,
      row_exact text generated always as (left(row_name, 200)) stored,
      primary key (project_id, row_hash)
    )`.execute(db)
  await sql`create index result_rows_by_name on result_rows (project_id, row_rank, row_sort, row_exact, row_hash)`.execute(
    db,
  )
  for (const column of statusColumns)
    await sql`create index ${sql.id(`result_rows_${column}`)} on result_rows
      (project_id, row_rank, row_sort, row_exact, row_hash) where ${sql.id(column)} > 0`.execute(db)
  await sql`
    create table result_row_tallies (
      project_id uuid primary key references projects(id) on delete cascade,
      rows integer not null default 0,
      ${sql.raw(statusColumns.map((c) => `${c} integer not null default 0`).join(",\n      "))}
    )`.execute(db)

  // Each tally is kept by one function per event: what changed is read from the statement's transition
  // tables (a row counts +1 as it is after the statement, -1 as it was before).
  const resultColumns = "project_id, agent_id, row_hash, row_name, dimension_key, resolution_status"
  for (const [event, changes] of changesByEvent(resultColumns, "is_current")) {
    await sql`
      create function ${sql.id(`dxs_result_tally_${event}`)}() returns trigger language plpgsql as $$${sql.raw(resultTallyBody(event, changes, "joined"))}$$`.execute(
      db,
    )
    await sql`create trigger ${sql.id(`resolution_results_tally_${event}`)} after ${sql.raw(event)} on resolution_results
      referencing ${sql.raw(REFERENCING[event])} for each statement execute function ${sql.id(`dxs_result_tally_${event}`)}()`.execute(
      db,
    )
  }

  await sql`
    insert into result_tallies (agent_id, resolution_status, n)
      select agent_id, resolution_status, count(*) from resolution_results where is_current
      group by agent_id, resolution_status`.execute(db)
  await sql`
    insert into result_rows (project_id, row_hash, row_name, dimension_key, cells, ${sql.raw(statusColumns.join(", "))})
      select project_id, row_hash, max(row_name), max(dimension_key), count(*),
             ${sql.raw(STATUSES.map(([, s]) => `count(*) filter (where resolution_status = '${s}')`).join(", "))}
      from resolution_results where is_current group by project_id, row_hash`.execute(db)
  await sql`
    insert into result_row_tallies (project_id, rows, ${sql.raw(statusColumns.join(", "))})
      select project_id, count(*), ${sql.raw(statusColumns.map((c) => `count(*) filter (where ${c} > 0)`).join(", "))}
      from result_rows group by project_id`.execute(db)
}

/** Which extraction pairs count for an agent's extraction progress (kept by triggers), and their tallies. */
async function countedExtractionPairs(db: Kysely<any>): Promise<void> {
  // ---------------------------------------------------------------------------------------------------
  // Extraction pairs that count for an agent's extraction progress.
  await sql`alter table extraction_pairs add column counted boolean not null default false`.execute(db)
  await sql`
    update extraction_pairs p set counted = true from documents d, agents a
      where d.id = p.document_id and a.id = p.agent_id and d.project_id = a.project_id and d.version = p.document_version
        and d.status = 'Processed' and d.archive_requested_at is null`.execute(db)
  // The document is locked for share, so a concurrent change of its version or state waits for this
  // transaction and then finds its pairs.
  await sql`
    create function dxs_pair_counted() returns trigger language plpgsql as $$
    begin
      perform 1 from documents d where d.id = new.document_id for share;
      new.counted := exists (
        select 1 from documents d join agents a on a.project_id = d.project_id
        where d.id = new.document_id and a.id = new.agent_id and d.version = new.document_version
          and d.status = 'Processed' and d.archive_requested_at is null);
      return new;
    end $$`.execute(db)
  await sql`create trigger extraction_pairs_counted before insert or update of agent_id, document_id, document_version
    on extraction_pairs for each row execute function dxs_pair_counted()`.execute(db)
  await sql`
    create function dxs_document_pairs() returns trigger language plpgsql as $$
    begin
      update extraction_pairs p set counted = (
          new.status = 'Processed' and new.archive_requested_at is null and p.document_version = new.version
          and exists (select 1 from agents a where a.id = p.agent_id and a.project_id = new.project_id))
        where p.document_id = new.id
          and p.counted is distinct from (
            new.status = 'Processed' and new.archive_requested_at is null and p.document_version = new.version
            and exists (select 1 from agents a where a.id = p.agent_id and a.project_id = new.project_id));
      return null;
    end $$`.execute(db)
  await sql`create trigger documents_pairs after update of version, status, archive_requested_at, project_id on documents
    for each row when (old.version is distinct from new.version or old.status is distinct from new.status
                       or old.archive_requested_at is distinct from new.archive_requested_at
                       or old.project_id is distinct from new.project_id)
    execute function dxs_document_pairs()`.execute(db)

  await sql`
    create table pair_tallies (
      agent_id uuid not null references agents(id) on delete cascade,
      agent_config_version integer not null,
      dimensions_key text not null,
      slot smallint not null,
      n integer not null default 0,
      primary key (agent_id, agent_config_version, dimensions_key, slot)
    )`.execute(db)
  const pairSlot = ", pg_backend_pid() % 64 as slot"
  for (const [event, changes] of changesByEvent(
    "agent_id, agent_config_version, dimensions_key",
    "counted",
    pairSlot,
  )) {
    await sql`
      create function ${sql.id(`dxs_pair_tally_${event}`)}() returns trigger language plpgsql as $$
      begin
        insert into pair_tallies as t (agent_id, agent_config_version, dimensions_key, slot, n)
          select agent_id, agent_config_version, dimensions_key, slot, sum(d) from (${sql.raw(changes)}) c
          where exists (select 1 from agents a where a.id = c.agent_id)
          group by agent_id, agent_config_version, dimensions_key, slot having sum(d) <> 0
          order by agent_id, agent_config_version, dimensions_key, slot
          on conflict (agent_id, agent_config_version, dimensions_key, slot) do update set n = t.n + excluded.n;
        return null;
      end $$`.execute(db)
    await sql`create trigger ${sql.id(`extraction_pairs_tally_${event}`)} after ${sql.raw(event)} on extraction_pairs
      referencing ${sql.raw(REFERENCING[event])} for each statement execute function ${sql.id(`dxs_pair_tally_${event}`)}()`.execute(
      db,
    )
  }
  await sql`
    insert into pair_tallies (agent_id, agent_config_version, dimensions_key, slot, n)
      select agent_id, agent_config_version, dimensions_key, 0, count(*)
      from extraction_pairs where counted group by 1, 2, 3, 4`.execute(db)
  // An agent's latest extraction (its resolution is complete only if newer).
  await sql`create index extraction_pairs_latest on extraction_pairs (agent_id, extracted_at)`.execute(db)
}
