import { type Kysely, sql } from "kysely"

// Frozen: never import application code here.
//
// A project's search (the grid's search box, part of a dimension value) at the cost of its matches, not of
// the project. Each current result's search text (its row's name, dimension values and value, joined by
// U+001F) was indexed by its trigrams: the lists of the trigrams every value shares ("sup", "ier" of a
// supplier's name) held a project's every result, and a search read them whole. At 1,000,000 results a
// search for one supplier cost the database ten times its cost at 100,000.
//
// The parts of the search texts are now kept once per project, in `search_strings` (a part is a name, a
// dimension value or a value, lower-cased; the same supplier in 5,000 results is one string), and these are
// what the trigrams index. A result keeps the keys of its parts (`search_keys`, md5 as a uuid, so that a
// long value is never an index key), indexed exactly. A search finds its project's strings that hold it, then
// the current results that have one of them: the results read are its matches. A part never holds U+001F,
// so a search matches within one part, as the search text's separator meant it to.
//
// Strings are added by the statements that write results (after insert or update, from their transition
// tables, in key order so that two writers of the same strings wait rather than deadlock), for the results
// that are current (a result that becomes current is updated). A string no
// result has any more stays until its project goes: the results are the truth, the strings only narrow.
// Without pg_trgm the strings are scanned (a project's distinct strings, not its results); without
// btree_gin the indexes do not lead with the project.

const has = async (db: Kysely<any>, extension: string) =>
  (
    await sql<{
      ok: boolean
    }>`select exists (select 1 from pg_extension where extname = ${extension}) as ok`.execute(db)
  ).rows[0]?.ok === true

/**
 * Adds the strings of the current results of `rows` (the table, or a statement's transition table) that their
 * project does not have yet: each string hashed once per statement (a resolution's 5,000 results share a
 * few of them), not once per result, half the cost; none for a project being removed (its strings go with
 * it).
 */
const addStrings = (rows: string) => `
  insert into search_strings (project_id, key, text)
    select s.project_id, md5(s.part)::uuid, s.part
    from (select distinct n.project_id, p.part
          from ${rows} n, unnest(string_to_array(n.search_text, chr(31))) p(part)
          where n.is_current and p.part <> '') s
    where exists (select 1 from projects pr where pr.id = s.project_id)
    order by 1, 2
    on conflict do nothing`

export async function up(db: Kysely<any>): Promise<void> {
  const trigram = await has(db, "pg_trgm")
  const btreeGin = await has(db, "btree_gin")
  // A loop of simple expressions, evaluated without a query per call (see migration 0008): about 6 µs a
  // result, against 9 µs with each part kept once (a row's name is often its dimension value too; the index
  // keeps a key once per result anyway) and 7 µs for a SQL function's sub-select.
  await sql`
    create function dxs_search_keys(search text) returns uuid[] language plpgsql immutable parallel safe as $$
    declare
      part text;
      keys uuid[] := '{}';
    begin
      foreach part in array string_to_array(search, chr(31)) loop
        continue when part = '';
        keys := keys || md5(part)::uuid;
      end loop;
      return keys;
    end $$`.execute(db)
  await sql`alter table resolution_results
    add column search_keys uuid[] generated always as (dxs_search_keys(search_text)) stored`.execute(db)
  await sql`
    create table search_strings (
      project_id uuid not null references projects(id) on delete cascade,
      key uuid not null,
      text text not null,
      primary key (project_id, key)
    )`.execute(db)
  await sql.raw(addStrings("resolution_results")).execute(db)
  await sql`
    create function dxs_search_strings() returns trigger language plpgsql as $$
    begin
      ${sql.raw(addStrings("new_rows"))};
      return null;
    end $$`.execute(db)
  for (const event of ["insert", "update"])
    await sql`create trigger ${sql.id(`resolution_results_search_strings_${event}`)} after ${sql.raw(event)}
      on resolution_results referencing new table as new_rows
      for each statement execute function dxs_search_strings()`.execute(db)
  const project = sql.raw(btreeGin ? "project_id, " : "")
  if (trigram)
    await sql`create index search_strings_text on search_strings
      using gin (${project}text gin_trgm_ops)`.execute(db)
  await sql`create index resolution_results_search_keys on resolution_results
    using gin (${project}search_keys) with (gin_pending_list_limit = 256) where is_current`.execute(db)
  await sql`drop index if exists resolution_results_project_search`.execute(db)
  await sql`drop index if exists resolution_results_search`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  if (await has(db, "pg_trgm")) {
    if (await has(db, "btree_gin"))
      await sql`create index resolution_results_project_search on resolution_results
        using gin (project_id, search_text gin_trgm_ops) with (gin_pending_list_limit = 256) where is_current`.execute(
        db,
      )
    else
      await sql`create index resolution_results_search on resolution_results using gin (search_text gin_trgm_ops)
        with (gin_pending_list_limit = 256) where is_current`.execute(db)
  }
  for (const event of ["insert", "update"])
    await sql`drop trigger ${sql.id(`resolution_results_search_strings_${event}`)} on resolution_results`.execute(
      db,
    )
  await sql`drop function dxs_search_strings()`.execute(db)
  await sql`drop table search_strings`.execute(db)
  await sql`alter table resolution_results drop column search_keys`.execute(db)
  await sql`drop function dxs_search_keys(text)`.execute(db)
}
