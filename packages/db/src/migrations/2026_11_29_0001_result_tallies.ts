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

const STATUSES = [
  ["resolved", "Resolved"],
  ["requires_attention", "Requires attention"],
  ["not_resolved", "Not resolved"],
  ["ignored", "Ignored"],
  ["no_result", "No result"],
] as const

const statusColumns = STATUSES.map(([c]) => c)

type TriggerEvent = "insert" | "update" | "delete"

const REFERENCING: Record<TriggerEvent, string> = {
  insert: "new table as new_rows",
  update: "old table as old_rows new table as new_rows",
  delete: "old table as old_rows",
}

/**
 * Per event, what a statement changed as rows of `columns` with `d`: +1 for each row after the statement,
 * -1 for each row before it (only the rows where `where` holds; `slot`, when given, is added as a column).
 */
const changesByEvent = (
  columns: string,
  where: string,
  extra = "",
): ReadonlyArray<readonly [TriggerEvent, string]> => {
  const side = (rows: string, d: number) => `select ${columns}${extra}, ${d} as d from ${rows} where ${where}`
  return [
    ["insert", side("new_rows", 1)],
    ["update", `${side("new_rows", 1)} union all ${side("old_rows", -1)}`],
    ["delete", side("old_rows", -1)],
  ]
}

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

  // ---------------------------------------------------------------------------------------------------
  // How a value and a time are shown, where the reads build their answers (one definition for them all): a
  // stored value as its agent's type shows it (a number for number agents, text for string agents, other
  // values as they are, anything else as its JSON text), and a time as ISO 8601 in UTC with milliseconds.
  await sql`
    create function dxs_present_value(value jsonb, value_type text) returns jsonb language sql immutable as $$
      select case
        when value is null or jsonb_typeof(value) = 'null' then 'null'::jsonb
        when value_type = 'number' and jsonb_typeof(value) in ('number', 'string') then value
        when value_type = 'string' then case when jsonb_typeof(value) = 'string' then value else to_jsonb(value::text) end
        when jsonb_typeof(value) in ('string', 'number', 'boolean') then value
        else to_jsonb(value::text) end $$`.execute(db)
  await sql`
    create function dxs_iso(at timestamptz) returns text language sql immutable as $$
      select to_char(at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') $$`.execute(db)

  // ---------------------------------------------------------------------------------------------------
  // An atomic value's dimension instances carry their dimension's name as it is now (a rename rewrites the
  // project's atomic values that have the dimension), so reads show them as stored.
  await sql`
    update atomic_values av set dimension_values = (
      select jsonb_agg(case when d.name is null then x.e else jsonb_set(x.e, '{name}', to_jsonb(d.name)) end order by x.o)
      from jsonb_array_elements(av.dimension_values) with ordinality as x(e, o)
      left join dimensions d on d.id = (x.e->>'dimension_id')::uuid)
    where jsonb_array_length(av.dimension_values) > 0`.execute(db)
  await sql`
    create function dxs_dimension_renamed() returns trigger language plpgsql as $$
    begin
      update atomic_values av set dimension_values = (
          select jsonb_agg(case when x.e->>'dimension_id' = new.id::text then jsonb_set(x.e, '{name}', to_jsonb(new.name))
                                else x.e end order by x.o)
          from jsonb_array_elements(av.dimension_values) with ordinality as x(e, o))
        where av.agent_id in (select a.id from agents a where a.project_id = new.project_id)
          and av.dimension_values @> jsonb_build_array(jsonb_build_object('dimension_id', new.id::text));
      return null;
    end $$`.execute(db)
  await sql`create trigger dimensions_renamed after update of name on dimensions for each row
    when (old.name is distinct from new.name) execute function dxs_dimension_renamed()`.execute(db)

  // ---------------------------------------------------------------------------------------------------
  // Results: what their reads need, on the row.
  await sql`
    alter table resolution_results
      add column is_current boolean not null default false,
      add column agent_created_at timestamptz,
      add column value_type text not null default 'string',
      add column dimension_key text not null default '[]',
      add column dimension_values text[] not null default '{}',
      add column row_name text not null default '',
      add column search_text text not null default ''`.execute(db)
  await sql`
    alter table resolution_results
      add column list_name text generated always as (left(result_name, 200)) stored,
      add column row_hash uuid generated always as (md5(dimension_key)::uuid) stored,
      add column row_rank smallint generated always as (case when row_name = 'All documents' then 0 else 1 end) stored,
      add column row_sort text generated always as (lower(left(row_name, 200))) stored,
      add column row_exact text generated always as (left(row_name, 200)) stored,
      add column value_missing smallint generated always as (
        case when value is null or jsonb_typeof(value) = 'null' or value = '""'::jsonb then 1 else 0 end) stored,
      add column value_rank smallint generated always as (
        case when jsonb_typeof(value) = 'number' then 0
             when value_type in ('date', 'datetime') and (value #>> '{}') ~ '^\\d{4}-\\d{2}-\\d{2}' then 1
             else 2 end) stored,
      add column value_num numeric generated always as (
        case when jsonb_typeof(value) = 'number' then (value #>> '{}')::numeric else 0 end) stored,
      add column value_text text generated always as (lower(left(coalesce(value #>> '{}', ''), 200))) stored`.execute(
    db,
  )
  // A result's parts of the answers that read it, as JSON text kept with it: the results list's
  // `resolution_result` (`V1ResolutionResultSummary`) and the grid's cell. Reads assemble pages from them
  // instead of building every member of every row. (Declared immutable: what they are built from, uuids,
  // texts, booleans, JSON and reals, prints the same in every session.)
  await sql`
    create function dxs_summary_json(id uuid, value jsonb, value_type text, status text, refs jsonb, justification text,
                                     source_type text, updated_by text, confidence real)
    returns text language sql immutable as $$
      select json_build_object('id', id, 'value', dxs_present_value(value, value_type), 'resolution_status', status,
        'references', coalesce(refs, '{}'::jsonb), 'justification_for_resolution_status', justification,
        'source_type', source_type, 'updated_by_email', updated_by, 'confidence', confidence)::text $$`.execute(
    db,
  )
  await sql`
    create function dxs_cell_json(id uuid, value jsonb, value_type text, status text, confidence real, overridden boolean)
    returns text language sql immutable as $$
      select json_build_object('resolution_result_id', id, 'value', dxs_present_value(value, value_type),
        'resolution_status', status, 'confidence', confidence, 'is_overridden', overridden)::text $$`.execute(
    db,
  )
  await sql`
    alter table resolution_results
      add column summary_json text generated always as (dxs_summary_json(id, value, value_type, resolution_status,
        "references", justification, source_type, updated_by_email, confidence)) stored,
      add column cell_json text generated always as (dxs_cell_json(id, value, value_type, resolution_status, confidence,
        is_overridden)) stored`.execute(db)

  // A result's own columns from its agent (locked for share, so a concurrent change of the agent's
  // configuration waits for this transaction and then sees its rows) and its atomic value.
  await sql`
    create function dxs_result_columns() returns trigger language plpgsql as $$
    declare
      agent record;
      atomic record;
    begin
      select a.created_at, a.value_type, a.config_version, a.is_draft into agent
        from agents a where a.id = new.agent_id for share;
      select av.dimension_key, av.dimension_values into atomic from atomic_values av where av.id = new.atomic_value_id;
      new.agent_created_at := agent.created_at;
      new.value_type := coalesce(agent.value_type, 'string');
      new.is_current := coalesce(not agent.is_draft and agent.config_version = new.agent_config_version, false);
      new.dimension_key := coalesce(atomic.dimension_key, '[]');
      new.dimension_values := coalesce(
        (select array_agg(e->>'dimension_value') from jsonb_array_elements(atomic.dimension_values) e), '{}');
      new.row_name := case when coalesce(jsonb_array_length(atomic.dimension_values), 0) = 0
                           then 'All documents' else new.result_name end;
      new.search_text := lower(new.row_name || chr(31) || array_to_string(new.dimension_values, chr(31))
                               || chr(31) || coalesce(new.value #>> '{}', ''));
      return new;
    end $$`.execute(db)
  await sql`
    update resolution_results rr set
      agent_created_at = a.created_at,
      value_type = a.value_type,
      is_current = (not a.is_draft and a.config_version = rr.agent_config_version),
      dimension_key = av.dimension_key,
      dimension_values = coalesce(
        (select array_agg(e->>'dimension_value') from jsonb_array_elements(av.dimension_values) e), '{}'),
      row_name = case when jsonb_array_length(av.dimension_values) = 0 then 'All documents' else rr.result_name end
    from agents a, atomic_values av
    where a.id = rr.agent_id and av.id = rr.atomic_value_id`.execute(db)
  await sql`
    update resolution_results set search_text = lower(row_name || chr(31) || array_to_string(dimension_values, chr(31))
      || chr(31) || coalesce(value #>> '{}', ''))`.execute(db)
  await sql`create trigger resolution_results_columns_insert before insert on resolution_results
    for each row execute function dxs_result_columns()`.execute(db)
  await sql`create trigger resolution_results_columns_update
    before update of agent_id, agent_config_version, atomic_value_id, result_name, value on resolution_results
    for each row execute function dxs_result_columns()`.execute(db)

  // A change of an agent's configuration, draft state or value type changes which of its results are current.
  await sql`
    create function dxs_agent_results() returns trigger language plpgsql as $$
    begin
      update resolution_results
        set is_current = (not new.is_draft and agent_config_version = new.config_version),
            value_type = new.value_type
        where agent_id = new.id
          and (is_current is distinct from (not new.is_draft and agent_config_version = new.config_version)
               or value_type is distinct from new.value_type);
      return null;
    end $$`.execute(db)
  await sql`create trigger agents_results after update of config_version, is_draft, value_type on agents
    for each row when (old.config_version is distinct from new.config_version or old.is_draft is distinct from new.is_draft
                       or old.value_type is distinct from new.value_type)
    execute function dxs_agent_results()`.execute(db)

  // Pages of current results: the list (by agent, then name), by status, by confidence; a grid row's cells;
  // the grid by one agent's value in either direction; a dimension value; a search.
  await sql`drop index if exists resolution_results_row`.execute(db)
  await sql`drop index if exists resolution_results_confidence`.execute(db)
  await sql`create index resolution_results_list on resolution_results
    (project_id, agent_created_at, agent_id, list_name, id) where is_current`.execute(db)
  await sql`create index resolution_results_status on resolution_results
    (project_id, resolution_status, agent_created_at, agent_id, list_name, id) where is_current`.execute(db)
  await sql`create index resolution_results_confidence on resolution_results
    (project_id, confidence, agent_created_at, agent_id, list_name, id) where is_current and confidence is not null`.execute(
    db,
  )
  await sql`create index resolution_results_cells on resolution_results
    (project_id, row_hash, agent_created_at, agent_id) where is_current`.execute(db)
  await sql`create index resolution_results_value_asc on resolution_results
    (agent_id, value_missing, value_rank, value_num, value_text, row_rank, row_sort, row_exact, row_hash)
    where is_current`.execute(db)
  await sql`create index resolution_results_value_desc on resolution_results
    (agent_id, value_missing, value_rank, value_num desc, value_text desc, row_rank, row_sort, row_exact, row_hash)
    where is_current`.execute(db)
  // GIN indexes keep new entries in a pending list that every search reads in full until it is merged
  // (at vacuum, or when it outgrows its limit, 4 MB by default): a small limit keeps a search of freshly
  // written results as cheap as one of settled ones, at the cost of more frequent, smaller merges.
  await sql`create index resolution_results_dimension_values on resolution_results using gin (dimension_values)
    with (gin_pending_list_limit = 256) where is_current`.execute(db)
  if (trigram)
    await sql`create index resolution_results_search on resolution_results using gin (search_text gin_trgm_ops)
      with (gin_pending_list_limit = 256) where is_current`.execute(db)
  // A page's plan depends on the project's share of the results (an index walk in order, or a sort of the
  // matches): statistics follow the table's growth closely (ANALYZE samples a bounded number of rows, so a
  // frequent one costs little), and inserted rows are vacuumed soon (index-only reads, merged GIN lists).
  await sql`alter table resolution_results set (autovacuum_analyze_scale_factor = 0.02,
    autovacuum_vacuum_insert_scale_factor = 0.05)`.execute(db)

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
  const sumBy = STATUSES.map(
    ([c, s]) => `coalesce(sum(d) filter (where resolution_status = '${s}'), 0)::int as ${c}`,
  ).join(", ")
  const add = (target: string, source: string) =>
    statusColumns.map((c) => `${c} = ${target}.${c} + ${source}.${c}`).join(", ")
  // Before: a row's counts less this statement's changes (its counts after are what the upsert returns).
  const became = (c: string) => `sum((r.${c} > 0)::int - (r.${c} - g.${c} > 0)::int)::int`
  const anyGrew = (t: string) => [`${t}rows > 0`, ...statusColumns.map((c) => `${t}${c} > 0`)].join(" or ")
  const resultColumns = "project_id, agent_id, row_hash, row_name, dimension_key, resolution_status"
  for (const [event, changes] of changesByEvent(resultColumns, "is_current")) {
    await sql`
      create function ${sql.id(`dxs_result_tally_${event}`)}() returns trigger language plpgsql as $$
      begin
        if not exists (
          select 1 from (${sql.raw(changes)}) c group by agent_id, row_hash, resolution_status having sum(d) <> 0
        ) then
          return null;
        end if;
        ${sql.raw(
          event === "delete"
            ? ""
            : `insert into result_row_tallies (project_id) select distinct project_id from new_rows where is_current
                 order by 1 on conflict do nothing;`,
        )}
        -- Writers of one project's results take its row tally first, so they queue there rather than
        -- deadlock over the grid's rows.
        perform 1 from result_row_tallies t
          where t.project_id in (select project_id from (${sql.raw(changes)}) c) order by t.project_id for update;

        insert into result_tallies as t (agent_id, resolution_status, n)
          select agent_id, resolution_status, sum(d) from (${sql.raw(changes)}) c
          group by agent_id, resolution_status having sum(d) > 0 order by agent_id, resolution_status
          on conflict (agent_id, resolution_status) do update set n = t.n + excluded.n;
        update result_tallies t set n = t.n + c.n
          from (select agent_id, resolution_status, sum(d) as n from (${sql.raw(changes)}) c
                group by agent_id, resolution_status having sum(d) < 0) c
          where t.agent_id = c.agent_id and t.resolution_status = c.resolution_status;

        with g as (
          select project_id, row_hash, max(row_name) as row_name, max(dimension_key) as dimension_key,
                 sum(d)::int as cells, ${sql.raw(sumBy)}
          from (${sql.raw(changes)}) c group by project_id, row_hash
        ), changed as (
          select * from g where cells <> 0 or ${sql.raw(statusColumns.map((c) => `${c} <> 0`).join(" or "))}
        ), grown as (
          insert into result_rows as r (project_id, row_hash, row_name, dimension_key, cells, ${sql.raw(statusColumns.join(", "))})
            select project_id, row_hash, row_name, dimension_key, cells, ${sql.raw(statusColumns.join(", "))}
            from changed where cells > 0 order by project_id, row_hash
            on conflict (project_id, row_hash) do update set cells = r.cells + excluded.cells, ${sql.raw(add("r", "excluded"))}
            returning r.project_id, r.row_hash, r.cells, ${sql.raw(statusColumns.map((c) => `r.${c}`).join(", "))}
        ), shrunk as (
          update result_rows r set cells = r.cells + g.cells, ${sql.raw(add("r", "g"))}
            from changed g where g.cells <= 0 and r.project_id = g.project_id and r.row_hash = g.row_hash
            returning r.project_id, r.row_hash, r.cells, ${sql.raw(statusColumns.map((c) => `r.${c}`).join(", "))}
        ), moved as (
          select r.project_id, ${sql.raw(became("cells"))} as rows,
                 ${sql.raw(statusColumns.map((c) => `${became(c)} as ${c}`).join(", "))}
          from (select * from grown union all select * from shrunk) r
          join changed g on g.project_id = r.project_id and g.row_hash = r.row_hash
          group by r.project_id
        ), counted as (
          insert into result_row_tallies as t (project_id, rows, ${sql.raw(statusColumns.join(", "))})
            select project_id, rows, ${sql.raw(statusColumns.join(", "))} from moved where ${sql.raw(anyGrew(""))}
            on conflict (project_id) do update set rows = t.rows + excluded.rows, ${sql.raw(add("t", "excluded"))}
            returning t.project_id
        )
        update result_row_tallies t set rows = t.rows + m.rows, ${sql.raw(add("t", "m"))}
          from moved m where t.project_id = m.project_id and not (${sql.raw(anyGrew("m."))});

        delete from result_rows r using (select distinct project_id, row_hash from (${sql.raw(changes)}) c) c
          where r.project_id = c.project_id and r.row_hash = c.row_hash and r.cells <= 0;
        return null;
      end $$`.execute(db)
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
