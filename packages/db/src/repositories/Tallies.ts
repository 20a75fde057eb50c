/**
 * The tallies the writes keep (see migration `2026_11_29_0001_result_tallies`), checked against a recount
 * from the rows they count: every difference, by tally and key. An empty answer means every count the
 * reads use is exact. It reads whole tables: for tests and for an operator's check, never for a request.
 */
import { Effect } from "effect"
import { sql } from "kysely"
import type { Conn } from "../Db.ts"
import { confidenceBand } from "./results/CurrentResults.ts"

const run = <A>(f: () => Promise<A>): Effect.Effect<A> => Effect.promise(f)

/** A tally that differs from its recount: which, for which key, what it says and what the rows say. */
export interface TallyDifference {
  readonly tally: string
  readonly key: string
  readonly kept: number
  readonly counted: number
}

const STATUS_COLUMNS = ["resolved", "requires_attention", "not_resolved", "ignored", "no_result"] as const
const STATUSES = ["Resolved", "Requires attention", "Not resolved", "Ignored", "No result"] as const

/** Rows of (key, kept, counted) where the kept count differs from the recount (missing rows count 0). */
const differences = (tally: string, kept: ReturnType<typeof sql>, counted: ReturnType<typeof sql>) =>
  sql<TallyDifference>`
    select ${tally} as tally, coalesce(k.key, c.key) as key, coalesce(k.n, 0)::int as kept, coalesce(c.n, 0)::int as counted
    from (${kept}) k full join (${counted}) c on c.key = k.key
    where coalesce(k.n, 0) <> coalesce(c.n, 0)`

/** Each project's distinct parts of its current results' search texts (see `search_strings`). */
const CURRENT_PARTS = sql`(select distinct rr.project_id, t.part
  from resolution_results rr, unnest(string_to_array(rr.search_text, chr(31))) t(part)
  where rr.is_current and t.part <> '')`

export const tallyDifferences = (conn: Conn): Effect.Effect<ReadonlyArray<TallyDifference>> =>
  run(async () => {
    const checks = [
      differences(
        "result_tallies",
        sql`select agent_id || '/' || resolution_status as key, n from result_tallies`,
        sql`select agent_id || '/' || resolution_status as key, count(*) as n from resolution_results
            where is_current group by agent_id, resolution_status`,
      ),
      differences(
        "result_confidence_tallies",
        sql`select agent_id || '/' || band as key, n from result_confidence_tallies`,
        sql`select agent_id || '/' || ${confidenceBand(sql`confidence`)} as key, count(*) as n from resolution_results
            where is_current and confidence is not null group by 1`,
      ),
      // Each result is current exactly when its agent says so.
      differences(
        "resolution_results.is_current",
        sql`select rr.id::text as key, rr.is_current::int as n from resolution_results rr`,
        sql`select rr.id::text as key, (not a.is_draft and a.config_version = rr.agent_config_version)::int as n
            from resolution_results rr join agents a on a.id = rr.agent_id`,
      ),
      differences(
        "result_rows.cells",
        sql`select project_id || '/' || row_hash as key, cells as n from result_rows`,
        sql`select project_id || '/' || row_hash as key, count(*) as n from resolution_results
            where is_current group by project_id, row_hash`,
      ),
      ...STATUS_COLUMNS.map((column, i) =>
        differences(
          `result_rows.${column}`,
          sql`select project_id || '/' || row_hash as key, ${sql.ref(column)} as n from result_rows`,
          sql`select project_id || '/' || row_hash as key, count(*) as n from resolution_results
              where is_current and resolution_status = ${STATUSES[i]} group by project_id, row_hash`,
        ),
      ),
      ...["rows", ...STATUS_COLUMNS].map((column) =>
        differences(
          `result_row_tallies.${column}`,
          sql`select project_id::text as key, ${sql.ref(column)} as n from result_row_tallies`,
          sql`select project_id::text as key,
                count(*) filter (where ${sql.raw(column === "rows" ? "cells" : column)} > 0) as n
              from result_rows group by project_id`,
        ),
      ),
      // The review queue: each document's current results, counted again.
      ...(
        [
          ["values", "count(*)"],
          [
            "reviewed",
            "count(*) filter (where latest_review_status in ('positive', 'negative') or is_overridden)",
          ],
          ["requires_attention", "count(*) filter (where resolution_status = 'Requires attention')"],
          ["min_confidence", "coalesce(round(min(confidence)::numeric * 1000000), -1)"],
        ] as const
      ).map(([column, count]) =>
        differences(
          `review_documents.${column}`,
          column === "min_confidence"
            ? sql`select document_id::text as key, coalesce(round(min_confidence::numeric * 1000000), -1) as n from review_documents`
            : sql`select document_id::text as key, ${sql.ref(column)} as n from review_documents`,
          sql`select rr.document_id::text as key, ${sql.raw(count)} as n from resolution_results rr
              join documents d on d.id = rr.document_id
              where rr.is_current and rr.document_id is not null group by rr.document_id`,
        ),
      ),
      differences(
        "review_tallies.documents",
        sql`select project_id::text as key, sum(documents) as n from review_tallies group by project_id
            having sum(documents) <> 0`,
        sql`select project_id::text as key, count(*) as n from review_documents group by project_id`,
      ),
      differences(
        "review_tallies.reviewed",
        sql`select project_id::text as key, sum(reviewed) as n from review_tallies group by project_id
            having sum(reviewed) <> 0`,
        sql`select project_id::text as key, count(*) filter (where reviewed = "values") as n from review_documents
            group by project_id having count(*) filter (where reviewed = "values") > 0`,
      ),
      // Each part of a current result's search text is one of its project's search strings, under its key
      // (strings no result has any more may stay: they only narrow a search).
      differences(
        "search_strings",
        sql`select p.project_id || '/' || md5(p.part) as key, count(s.key) as n from ${CURRENT_PARTS} p
            left join search_strings s on s.project_id = p.project_id and s.key = md5(p.part)::uuid and s.text = p.part
            group by 1`,
        sql`select p.project_id || '/' || md5(p.part) as key, 1 as n from ${CURRENT_PARTS} p`,
      ),
      // And a result's keys are its parts', in order.
      differences(
        "resolution_results.search_keys",
        sql`select rr.id::text as key,
              (rr.search_keys = array(select md5(t.part)::uuid from unnest(string_to_array(rr.search_text, chr(31)))
                                      with ordinality t(part, i) where t.part <> '' order by t.i))::int as n
            from resolution_results rr`,
        sql`select rr.id::text as key, 1 as n from resolution_results rr`,
      ),
      differences(
        "extraction_pairs.counted",
        sql`select p.agent_id || '/' || p.document_id as key, p.counted::int as n from extraction_pairs p`,
        sql`select p.agent_id || '/' || p.document_id as key,
              (exists (select 1 from documents d join agents a on a.project_id = d.project_id
                       where d.id = p.document_id and a.id = p.agent_id and d.version = p.document_version
                         and d.status = 'Processed' and d.archive_requested_at is null))::int as n
            from extraction_pairs p`,
      ),
      differences(
        "pair_tallies",
        sql`select agent_id || '/' || agent_config_version || '/' || dimensions_key as key, sum(n) as n
            from pair_tallies group by agent_id, agent_config_version, dimensions_key`,
        sql`select agent_id || '/' || agent_config_version || '/' || dimensions_key as key, count(*) as n
            from extraction_pairs where counted group by agent_id, agent_config_version, dimensions_key`,
      ),
      differences(
        "document_tallies",
        sql`select project_id || '/' || status || '/' || is_attachment || '/' || is_live as key, sum(n) as n
            from document_tallies group by project_id, status, is_attachment, is_live`,
        sql`select project_id || '/' || status || '/' || (parent_document_id is not null) || '/'
              || (archive_requested_at is null) as key, count(*) as n
            from documents group by 1`,
      ),
      differences(
        "web_search_tallies.total",
        sql`select agent_id || '/' || agent_config_version as key, total as n from web_search_tallies`,
        sql`select agent_id || '/' || agent_config_version as key, count(*) as n from web_searches group by 1`,
      ),
      differences(
        "web_search_tallies.done",
        sql`select agent_id || '/' || agent_config_version as key, done as n from web_search_tallies`,
        sql`select agent_id || '/' || agent_config_version as key, count(searched_at) as n from web_searches group by 1`,
      ),
      ...(
        [
          ["requests", "calls"],
          ["cache_hits", "cacheHits"],
          ["input_tokens", "promptTokens"],
          ["cached_input_tokens", "cachedTokens"],
          ["output_tokens", "completionTokens"],
        ] as const
      ).map(([column, member]) =>
        differences(
          `run_usage.${column}`,
          sql`select run_id::text as key, sum(${sql.ref(column)}) as n from run_usage group by run_id`,
          sql`select run_id::text as key, sum(coalesce((usage->>${member})::bigint, 0)) as n from tasks
              where run_id is not null and usage is not null group by run_id`,
        ),
      ),
    ]
    const found: Array<TallyDifference> = []
    for (const check of checks) found.push(...(await check.execute(conn)).rows)
    return found
  })
