import { type Kysely, sql } from "kysely"

// Frozen: never import application code here.
//
// Writing results at less cost, the same rows and counts:
// - A result's `summary_json` (the results list's `resolution_result`, a stored generated column) is made
//   by `dxs_summary_json`, a SQL function PostgreSQL cannot inline (`json_build_object` is stable): each
//   call ran as a query of its own, about 66 µs, the most of what a result's own columns cost to write (a
//   resolution writes one per result). The same expression in PL/pgSQL, as the grid's cell is made
//   (`dxs_grid_cell`), is evaluated as one expression: the same text, byte for byte, about a fifth of the
//   cost. The stored values do not change.
// - The review queue's count of a statement's documents (`dxs_review_documents`) counted every document's
//   current results twice: once to make its queue row, even when the row was there (the conflict was found
//   after the count), then again under the row's lock. The first count is now made only for documents
//   without a row; a row another transaction is making is still waited for (the insert's conflict), and
//   every document is still counted under its lock.
const SUMMARY = `json_build_object('id', id, 'value', dxs_present_value(value, value_type), 'resolution_status', status,
        'references', coalesce(refs, '{}'::jsonb), 'justification_for_resolution_status', justification,
        'source_type', source_type, 'updated_by_email', updated_by, 'confidence', confidence)::text`

const summary = (language: "plpgsql" | "sql") => sql`
  create or replace function dxs_summary_json(id uuid, value jsonb, value_type text, status text, refs jsonb,
                                              justification text, source_type text, updated_by text, confidence real)
  returns text language ${sql.raw(language)} immutable as $$
    ${sql.raw(language === "plpgsql" ? `begin return ${SUMMARY}; end` : `select ${SUMMARY}`)} $$`

const COUNTS = `count(*)::int as n,
  (count(*) filter (where rr.latest_review_status in ('positive', 'negative') or rr.is_overridden))::int as reviewed,
  (count(*) filter (where rr.resolution_status = 'Requires attention'))::int as attention,
  min(rr.confidence) as least`

/** The queue's count of documents; `onlyMissing`: the first count only for documents without a row. */
const reviewDocuments = (onlyMissing: boolean) => sql`
  create or replace function dxs_review_documents(docs uuid[]) returns void language plpgsql as $$
  begin
    -- Each document's row, counted as this transaction sees it; a row being made by another
    -- transaction is waited for (and kept: it is counted again below).
    insert into review_documents as r (project_id, document_id, "values", reviewed, requires_attention, min_confidence)
      select d.project_id, d.id, c.n, c.reviewed, c.attention, c.least
      from documents d
      join projects p on p.id = d.project_id
      join lateral (
        select ${sql.raw(COUNTS)}
        from resolution_results rr where rr.document_id = d.id and rr.is_current) c on c.n > 0
      where d.id = any(docs)
        ${sql.raw(onlyMissing ? "and not exists (select 1 from review_documents q where q.document_id = d.id)" : "")}
      order by d.id
      on conflict (document_id) do nothing;
    -- One transaction after the other per document, in the documents' order.
    perform 1 from review_documents where document_id = any(docs) order by document_id for update;
    -- Counted again with a new snapshot: what an earlier transaction committed is in it.
    with counted as (
      select rr.document_id, ${sql.raw(COUNTS)}
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
  end $$`

export async function up(db: Kysely<any>): Promise<void> {
  await summary("plpgsql").execute(db)
  await reviewDocuments(true).execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await summary("sql").execute(db)
  await reviewDocuments(false).execute(db)
}
