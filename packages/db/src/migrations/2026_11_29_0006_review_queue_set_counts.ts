import { type Kysely, sql } from "kysely"

// Frozen: never import application code here.
//
// The review queue's documents counted again as a set, under row locks. The queue's triggers took a
// transaction-scoped advisory lock per document whose results a statement changed: a resolution writes an
// agent's results for every document of its project in one statement, and the locks of one transaction
// come from a table of bounded size that all connections share (about max_locks_per_transaction ×
// max_connections entries), so a project of some 25,000 documents could no longer be resolved ("out of
// shared memory"). Now each changed document's queue row (made first when missing) is locked, in the
// documents' order, before the documents are counted again from their current results, all in a few
// statements whatever their number. A row lock is kept in the row itself, not in that table. The rule is
// the same: two transactions that change one document's results count it one after the other (the later
// waits on the row, and its count, a new snapshot, reads what the earlier committed besides its own).
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create function dxs_review_documents(docs uuid[]) returns void language plpgsql as $$
    begin
      -- Each document's row, counted as this transaction sees it; a row being made by another
      -- transaction is waited for (and kept: it is counted again below).
      insert into review_documents as r (project_id, document_id, "values", reviewed, requires_attention, min_confidence)
        select d.project_id, d.id, c.n, c.reviewed, c.attention, c.least
        from documents d
        join projects p on p.id = d.project_id
        join lateral (
          select count(*)::int as n,
                 (count(*) filter (where rr.latest_review_status in ('positive', 'negative') or rr.is_overridden))::int as reviewed,
                 (count(*) filter (where rr.resolution_status = 'Requires attention'))::int as attention,
                 min(rr.confidence) as least
          from resolution_results rr where rr.document_id = d.id and rr.is_current) c on c.n > 0
        where d.id = any(docs)
        order by d.id
        on conflict (document_id) do nothing;
      -- One transaction after the other per document, in the documents' order.
      perform 1 from review_documents where document_id = any(docs) order by document_id for update;
      -- Counted again with a new snapshot: what an earlier transaction committed is in it.
      with counted as (
        select rr.document_id, count(*)::int as n,
               (count(*) filter (where rr.latest_review_status in ('positive', 'negative') or rr.is_overridden))::int as reviewed,
               (count(*) filter (where rr.resolution_status = 'Requires attention'))::int as attention,
               min(rr.confidence) as least
        from resolution_results rr
        where rr.document_id = any(docs) and rr.is_current
        group by rr.document_id)
      update review_documents r
        set "values" = c.n, reviewed = c.reviewed, requires_attention = c.attention, min_confidence = c.least
        from counted c
        where r.document_id = c.document_id
          and (r."values", r.reviewed, r.requires_attention, r.min_confidence)
            is distinct from (c.n, c.reviewed, c.attention, c.least);
      -- A document left with no current result (or no longer there) leaves the queue.
      delete from review_documents r
        where r.document_id = any(docs)
          and not exists (select 1 from resolution_results rr where rr.document_id = r.document_id and rr.is_current);
    end $$`.execute(db)
  for (const [event, from] of QUEUE_TRIGGERS) {
    await sql`
      create or replace function ${sql.id(`dxs_review_queue_${event}`)}() returns trigger language plpgsql as $$
      begin
        perform dxs_review_documents(array(
          select distinct c.document_id from (${sql.raw(from)}) c where c.document_id is not null));
        return null;
      end $$`.execute(db)
  }
  await sql`drop function dxs_review_document(uuid)`.execute(db)
}

/** The documents a statement's changed results name, by the kind of statement. */
const QUEUE_TRIGGERS = [
  ["insert", "select document_id from new_rows"],
  ["update", "select document_id from new_rows union select document_id from old_rows"],
  ["delete", "select document_id from old_rows"],
] as const

export async function down(db: Kysely<any>): Promise<void> {
  await sql`
    create function dxs_review_document(doc uuid) returns void language plpgsql as $$
    begin
      perform pg_advisory_xact_lock(hashtext('review-document'), hashtext(doc::text));
      perform dxs_review_documents(array[doc]);
    end $$`.execute(db)
  for (const [event, from] of QUEUE_TRIGGERS) {
    await sql`
      create or replace function ${sql.id(`dxs_review_queue_${event}`)}() returns trigger language plpgsql as $$
      declare
        doc uuid;
      begin
        for doc in select distinct c.document_id from (${sql.raw(from)}) c
                   where c.document_id is not null order by 1 loop
          perform dxs_review_document(doc);
        end loop;
        return null;
      end $$`.execute(db)
  }
}
