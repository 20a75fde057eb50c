import { type Kysely, sql } from "kysely"

// Frozen, as the migration that runs it: never import application code here.

/** Results: what their reads need on the row (kept by triggers), their JSON parts and their indexes. */
export async function resultColumns(db: Kysely<any>, trigram: boolean): Promise<void> {
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

  await resultReadColumns(db)
  await resultPageIndexes(db, trigram)
}

/** The columns of a result that its reads need, its JSON parts, and the triggers that keep them. */
async function resultReadColumns(db: Kysely<any>): Promise<void> {
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
}

/** The indexes that pages of current results are read through, and how often their statistics are renewed. */
async function resultPageIndexes(db: Kysely<any>, trigram: boolean): Promise<void> {
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
}
