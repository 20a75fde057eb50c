import { type Kysely, sql } from "kysely"
import { changesByEvent, REFERENCING } from "./Statements.ts"

// Frozen, as the migration that runs it: never import application code here.

/** Documents and web searches counted, and the model usage of runs. */
export async function counters(db: Kysely<any>, trigram: boolean): Promise<void> {
  // ---------------------------------------------------------------------------------------------------
  // Documents counted.
  await sql`
    create table document_tallies (
      project_id uuid not null references projects(id) on delete cascade,
      status text not null,
      is_attachment boolean not null,
      is_live boolean not null,
      slot smallint not null,
      n integer not null default 0,
      primary key (project_id, status, is_attachment, is_live, slot)
    )`.execute(db)
  const documentKey =
    "project_id, status, parent_document_id is not null as is_attachment, archive_requested_at is null as is_live"
  const documentSlot = ", pg_backend_pid() % 64 as slot"
  // Every update of a document fires it (a trigger with transition tables takes no column list); one that
  // leaves what is counted as it was changes nothing.
  for (const [event, changes] of changesByEvent(documentKey, "true", documentSlot)) {
    await sql`
      create function ${sql.id(`dxs_document_tally_${event}`)}() returns trigger language plpgsql as $$
      begin
        insert into document_tallies as t (project_id, status, is_attachment, is_live, slot, n)
          select project_id, status, is_attachment, is_live, slot, sum(d) from (${sql.raw(changes)}) c
          where exists (select 1 from projects p where p.id = c.project_id)
          group by 1, 2, 3, 4, 5 having sum(d) <> 0 order by 1, 2, 3, 4, 5
          on conflict (project_id, status, is_attachment, is_live, slot) do update set n = t.n + excluded.n;
        return null;
      end $$`.execute(db)
    await sql`create trigger ${sql.id(`documents_tally_${event}`)} after ${sql.raw(event)} on documents
      referencing ${sql.raw(REFERENCING[event])} for each statement execute function ${sql.id(`dxs_document_tally_${event}`)}()`.execute(
      db,
    )
  }
  await sql`
    insert into document_tallies (project_id, status, is_attachment, is_live, slot, n)
      select project_id, status, parent_document_id is not null, archive_requested_at is null,
             0, count(*)
      from documents group by 1, 2, 3, 4, 5`.execute(db)
  // The documents page: newest first, by status, and (with pg_trgm) a name search.
  await sql`create index documents_page on documents (project_id, uploaded_at desc, id desc) where parent_document_id is null`.execute(
    db,
  )
  await sql`create index documents_page_status on documents (project_id, status, uploaded_at desc, id desc)
    where parent_document_id is null`.execute(db)
  if (trigram)
    await sql`create index documents_name_search on documents using gin (file_name gin_trgm_ops)
      with (gin_pending_list_limit = 256)`.execute(db)

  // ---------------------------------------------------------------------------------------------------
  // Web searches counted.
  await sql`
    create table web_search_tallies (
      agent_id uuid not null references agents(id) on delete cascade,
      agent_config_version integer not null,
      total integer not null default 0,
      done integer not null default 0,
      primary key (agent_id, agent_config_version)
    )`.execute(db)
  for (const [event, changes] of changesByEvent(
    "agent_id, agent_config_version, (searched_at is not null)::int as searched",
    "true",
  )) {
    await sql`
      create function ${sql.id(`dxs_web_search_tally_${event}`)}() returns trigger language plpgsql as $$
      begin
        insert into web_search_tallies as t (agent_id, agent_config_version, total, done)
          select agent_id, agent_config_version, sum(d), sum(d * searched) from (${sql.raw(changes)}) c
          where exists (select 1 from agents a where a.id = c.agent_id)
          group by 1, 2 having sum(d) <> 0 or sum(d * searched) <> 0 order by 1, 2
          on conflict (agent_id, agent_config_version)
          do update set total = t.total + excluded.total, done = t.done + excluded.done;
        return null;
      end $$`.execute(db)
    await sql`create trigger ${sql.id(`web_searches_tally_${event}`)} after ${sql.raw(event)} on web_searches
      referencing ${sql.raw(REFERENCING[event])} for each statement execute function ${sql.id(`dxs_web_search_tally_${event}`)}()`.execute(
      db,
    )
  }
  await sql`
    insert into web_search_tallies (agent_id, agent_config_version, total, done)
      select agent_id, agent_config_version, count(*), count(searched_at) from web_searches group by 1, 2`.execute(
    db,
  )

  // ---------------------------------------------------------------------------------------------------
  // The model usage of runs, summed as their tasks record it (the runs list reads it live).
  await sql`
    create table run_usage (
      run_id uuid not null references runs(id) on delete cascade,
      slot smallint not null,
      requests bigint not null default 0,
      cache_hits bigint not null default 0,
      input_tokens bigint not null default 0,
      cached_input_tokens bigint not null default 0,
      output_tokens bigint not null default 0,
      primary key (run_id, slot)
    )`.execute(db)
  await sql`
    insert into run_usage (run_id, slot, requests, cache_hits, input_tokens, cached_input_tokens, output_tokens)
      select run_id, 0, coalesce(sum((usage->>'calls')::bigint), 0), coalesce(sum((usage->>'cacheHits')::bigint), 0),
             coalesce(sum((usage->>'promptTokens')::bigint), 0), coalesce(sum((usage->>'cachedTokens')::bigint), 0),
             coalesce(sum((usage->>'completionTokens')::bigint), 0)
      from tasks where run_id is not null and usage is not null group by run_id`.execute(db)
}
