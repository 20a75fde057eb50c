import { type Kysely, sql } from "kysely"

// Frozen: never import application code here.
//
// The review queue: a project's documents with at least one current result, each with its values counted
// (all, reviewed, requiring attention) and its least confidence, kept by the results' writes in the same
// transaction, so that a page of the queue (requiring attention first, then least confident first) is read
// through an index and its totals from a tally.
// - `resolution_results.document_id`: the document of the result's Document dimension instance, if any
//   (set by a BEFORE trigger from its atomic value);
// - `review_documents`: one row per document with current results; a value is reviewed when it has a
//   review (positive or negative) or a value set by hand;
// - `review_tallies`: per project and slot (by the writing connection, as the other tallies), the documents
//   of the queue and those whose every value is reviewed; a project's totals are the sums of its slots.
// A statement's changed results name the documents to count again (from their own current results, by
// `resolution_results_document`), one transaction after the other per document and in the documents'
// order; a document or project being removed in the same transaction is left out.

/** The review tally kept by a trigger per row of the queue (replaced by `2026_12_02_0002_review_tallies_per_statement`). */
export const reviewTallyPerRow = async (db: Kysely<any>): Promise<void> => {
  await sql`
    create function dxs_review_tally() returns trigger language plpgsql as $$
    declare
      project uuid := case when tg_op = 'DELETE' then old.project_id else new.project_id end;
      added_documents integer := 0;
      added_reviewed integer := 0;
    begin
      if tg_op in ('UPDATE', 'DELETE') then
        added_documents := added_documents - 1;
        added_reviewed := added_reviewed - (old.reviewed = old."values")::int;
      end if;
      if tg_op in ('INSERT', 'UPDATE') then
        added_documents := added_documents + 1;
        added_reviewed := added_reviewed + (new.reviewed = new."values")::int;
      end if;
      -- Nothing to count, or the project is being removed (its tallies go with it).
      if (added_documents = 0 and added_reviewed = 0) or not exists (select 1 from projects p where p.id = project) then
        return null;
      end if;
      insert into review_tallies as t (project_id, slot, documents, reviewed)
        values (project, pg_backend_pid() % 64, added_documents, added_reviewed)
        on conflict (project_id, slot) do update
          set documents = t.documents + excluded.documents, reviewed = t.reviewed + excluded.reviewed;
      return null;
    end $$`.execute(db)
  await sql`create trigger review_documents_tally after insert or update or delete on review_documents
    for each row execute function dxs_review_tally()`.execute(db)
}

export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table resolution_results add column document_id uuid`.execute(db)
  await sql`
    create function dxs_result_document() returns trigger language plpgsql as $$
    begin
      new.document_id := (
        select (e->>'document_id')::uuid from atomic_values av, jsonb_array_elements(av.dimension_values) e
        where av.id = new.atomic_value_id and e->>'document_id' is not null limit 1);
      return new;
    end $$`.execute(db)
  await sql`create trigger resolution_results_document_insert before insert on resolution_results
    for each row execute function dxs_result_document()`.execute(db)
  await sql`create trigger resolution_results_document_update before update of atomic_value_id on resolution_results
    for each row execute function dxs_result_document()`.execute(db)
  await sql`
    update resolution_results rr set document_id = (
      select (e->>'document_id')::uuid from atomic_values av, jsonb_array_elements(av.dimension_values) e
      where av.id = rr.atomic_value_id and e->>'document_id' is not null limit 1)`.execute(db)
  await sql`create index resolution_results_document on resolution_results (document_id)
    where is_current and document_id is not null`.execute(db)

  await sql`
    create table review_documents (
      project_id uuid not null references projects(id) on delete cascade,
      document_id uuid primary key references documents(id) on delete cascade,
      "values" integer not null,
      reviewed integer not null,
      requires_attention integer not null,
      min_confidence real,
      queue_rank smallint generated always as (case when requires_attention > 0 then 0 else 1 end) stored,
      queue_confidence real generated always as (coalesce(min_confidence, 2)) stored
    )`.execute(db)
  await sql`create index review_documents_queue on review_documents
    (project_id, queue_rank, queue_confidence, document_id)`.execute(db)
  await sql`
    create table review_tallies (
      project_id uuid not null references projects(id) on delete cascade,
      slot smallint not null,
      documents integer not null default 0,
      reviewed integer not null default 0,
      primary key (project_id, slot)
    )`.execute(db)

  // The tally follows the queue's rows, however they change (a document removed takes its row with it).
  await reviewTallyPerRow(db)

  // A document counted again from its current results (none: it leaves the queue).
  await sql`
    create function dxs_review_document(doc uuid) returns void language plpgsql as $$
    declare
      project uuid;
      counted record;
    begin
      -- A count, not a sum of changes: two transactions that change one document's results count it one
      -- after the other. The later waits here for the earlier to end, and each statement below then reads
      -- what that one committed besides its own changes (a new snapshot per statement), so the last count
      -- written is the count of everything committed.
      perform pg_advisory_xact_lock(hashtext('review-document'), hashtext(doc::text));
      select d.project_id into project from documents d join projects p on p.id = d.project_id where d.id = doc;
      if project is null then
        delete from review_documents where document_id = doc;
        return;
      end if;
      select count(*)::int as n,
             (count(*) filter (where latest_review_status in ('positive', 'negative') or is_overridden))::int as reviewed,
             (count(*) filter (where resolution_status = 'Requires attention'))::int as attention,
             min(confidence) as least
        into counted
        from resolution_results where document_id = doc and is_current;
      if counted.n = 0 then
        delete from review_documents where document_id = doc;
      else
        insert into review_documents as r (project_id, document_id, "values", reviewed, requires_attention, min_confidence)
          values (project, doc, counted.n, counted.reviewed, counted.attention, counted.least)
          on conflict (document_id) do update set "values" = excluded."values", reviewed = excluded.reviewed,
            requires_attention = excluded.requires_attention, min_confidence = excluded.min_confidence
          where (r."values", r.reviewed, r.requires_attention, r.min_confidence)
            is distinct from (excluded."values", excluded.reviewed, excluded.requires_attention, excluded.min_confidence);
      end if;
    end $$`.execute(db)
  for (const [event, from] of [
    ["insert", "select document_id from new_rows"],
    ["update", "select document_id from new_rows union select document_id from old_rows"],
    ["delete", "select document_id from old_rows"],
  ] as const) {
    await sql`
      create function ${sql.id(`dxs_review_queue_${event}`)}() returns trigger language plpgsql as $$
      declare
        doc uuid;
      begin
        for doc in select distinct c.document_id from (${sql.raw(from)}) c
                   where c.document_id is not null order by 1 loop
          perform dxs_review_document(doc);
        end loop;
        return null;
      end $$`.execute(db)
    // Named to run after the result tallies' triggers, which take the project's row tally first.
    await sql`create trigger ${sql.id(`resolution_results_tally_review_${event}`)}
      after ${sql.raw(event)} on resolution_results
      referencing ${sql.raw(event === "delete" ? "old table as old_rows" : event === "insert" ? "new table as new_rows" : "old table as old_rows new table as new_rows")}
      for each statement execute function ${sql.id(`dxs_review_queue_${event}`)}()`.execute(db)
  }
  // The queue as it stands, in one statement (counting each document by itself would read the results once
  // per document); the tally follows each row as it is inserted.
  await sql`analyze resolution_results`.execute(db)
  await sql`
    insert into review_documents (project_id, document_id, "values", reviewed, requires_attention, min_confidence)
      select d.project_id, rr.document_id, count(*)::int,
             (count(*) filter (where rr.latest_review_status in ('positive', 'negative') or rr.is_overridden))::int,
             (count(*) filter (where rr.resolution_status = 'Requires attention'))::int,
             min(rr.confidence)
        from resolution_results rr join documents d on d.id = rr.document_id
        where rr.document_id is not null and rr.is_current
        group by d.project_id, rr.document_id
        order by rr.document_id`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const event of ["insert", "update", "delete"]) {
    await sql`drop trigger if exists ${sql.id(`resolution_results_tally_review_${event}`)} on resolution_results`.execute(
      db,
    )
    await sql`drop function if exists ${sql.id(`dxs_review_queue_${event}`)}()`.execute(db)
  }
  await sql`drop function if exists dxs_review_document(uuid)`.execute(db)
  await sql`drop trigger if exists review_documents_tally on review_documents`.execute(db)
  await sql`drop function if exists dxs_review_tally()`.execute(db)
  await sql`drop table if exists review_tallies`.execute(db)
  await sql`drop table if exists review_documents`.execute(db)
  await sql`drop trigger if exists resolution_results_document_insert on resolution_results`.execute(db)
  await sql`drop trigger if exists resolution_results_document_update on resolution_results`.execute(db)
  await sql`drop function if exists dxs_result_document()`.execute(db)
  await sql`drop index if exists resolution_results_document`.execute(db)
  await sql`alter table resolution_results drop column if exists document_id`.execute(db)
}
