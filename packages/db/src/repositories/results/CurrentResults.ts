/**
 * The current results as the API reads them (part of the results aggregate, see `../Results.ts`): a result
 * counts only while its agent is published and at the config version it was resolved for (`is_current`,
 * kept by the database), so a result of an earlier configuration is absent until the next launch replaces
 * it. Pages are read through partial indexes of current results, from a position given by an offset or by
 * the key of a row (keyset): counts come from the tallies the writes keep wherever the filter allows it,
 * and an offset is found agent by agent from them, so a page deep in a project costs what the first does.
 */
import { Effect } from "effect"
import { type RawBuilder, sql } from "kysely"
import type { Conn } from "../../Db.ts"
import type { ExtractionRow } from "../../Schema.ts"

const run = <A>(f: () => Promise<A>): Effect.Effect<A> => Effect.promise(f)

const selectCurrent = (conn: Conn) =>
  conn
    .selectFrom("resolution_results as rr")
    .innerJoin("agents as a", "a.id", "rr.agent_id")
    .innerJoin("atomic_values as av", "av.id", "rr.atomic_value_id")
    .select([
      "rr.id",
      "rr.atomic_value_id",
      "rr.agent_id",
      "rr.agent_config_version",
      "rr.result_name",
      "rr.value",
      "rr.resolution_status",
      "rr.justification",
      "rr.references",
      "rr.sources",
      "rr.source_type",
      "rr.is_web_supplement",
      "rr.web_supplement",
      "rr.is_overridden",
      "rr.updated_by_email",
      "rr.latest_review_status",
      "rr.latest_review_comment",
      "rr.latest_review_at",
      "rr.latest_review_by",
      "rr.created_at",
      "rr.updated_at",
      "rr.confidence",
      "a.name as agent_name",
      "a.value_type",
      "a.unit",
      "av.dimension_values",
      // The row's key in the list's order, for a cursor: the agent's age exactly (microseconds).
      sql<string>`(extract(epoch from rr.agent_created_at) * 1000000)::bigint::text`.as("key_created"),
      "rr.list_name as key_name",
    ])
    .where("rr.is_current", "=", true)

/** A current result with its agent's name, value type and unit, and its atomic value's dimension values. */
export type CurrentResultRow = Awaited<
  ReturnType<ReturnType<typeof selectCurrent>["executeTakeFirstOrThrow"]>
>

/** The project's current result `resultId`. */
export const findCurrentResult = (
  conn: Conn,
  projectId: string,
  resultId: string,
): Effect.Effect<CurrentResultRow | undefined> =>
  run(() =>
    selectCurrent(conn)
      .where("rr.project_id", "=", projectId)
      .where("rr.id", "=", resultId)
      .executeTakeFirst(),
  )

export interface CurrentResultsFilter {
  readonly agentId?: string | undefined
  readonly resolutionStatus?: string | undefined
  /** Results with a dimension instance of exactly this value. */
  readonly dimensionValue?: string | undefined
  /** Results whose confidence is at or below this (0 to 1), listed least confident first. */
  readonly maxConfidence?: number | undefined
}

export interface RowWindow {
  readonly limit: number
  readonly offset: number
}

/**
 * Where a row stands in the list's order: its agent's age (microseconds since the epoch, exact), its
 * agent, its name's sort key, its id, and with `maxConfidence` its confidence, which comes first.
 */
export interface ResultKey {
  readonly created: string
  readonly agentId: string
  readonly name: string
  readonly id: string
  readonly confidence?: number | undefined
}

/** A page from a position: an offset, or the rows after (or before) a row's key at a known offset. */
export type ResultsWindow =
  | RowWindow
  | {
      readonly limit: number
      readonly after?: ResultKey | undefined
      readonly before?: ResultKey | undefined
      /** The offset of the page's first row (after) or of the row the key names (before). */
      readonly position: number
    }

export interface ResultsPageRows {
  readonly count: number
  /** The offset of the page's first row. */
  readonly offset: number
  readonly rows: ReadonlyArray<CurrentResultRow>
}

const keyOf = (row: CurrentResultRow, byConfidence: boolean): ResultKey => ({
  created: row.key_created,
  agentId: row.agent_id,
  name: row.key_name,
  id: row.id,
  ...(byConfidence && row.confidence !== null ? { confidence: row.confidence } : {}),
})

/** The key of a page's first and last rows (undefined for an empty page). */
export const pageEdges = (
  rows: ReadonlyArray<CurrentResultRow>,
  filter: CurrentResultsFilter,
): { readonly first?: ResultKey; readonly last?: ResultKey } => {
  const byConfidence = filter.maxConfidence !== undefined
  const first = rows[0]
  const last = rows[rows.length - 1]
  return {
    ...(first ? { first: keyOf(first, byConfidence) } : {}),
    ...(last ? { last: keyOf(last, byConfidence) } : {}),
  }
}

const micros = (created: string) => sql`(timestamptz 'epoch' + ${created}::bigint * interval '1 microsecond')`

/** The list's order as a row value (the confidence first when filtering by it). */
const orderColumns = (byConfidence: boolean) =>
  sql.raw(`${byConfidence ? "rr.confidence, " : ""}rr.agent_created_at, rr.agent_id, rr.list_name, rr.id`)

const keyValue = (key: ResultKey, byConfidence: boolean) =>
  sql`(${sql.join([
    ...(byConfidence ? [sql`${key.confidence ?? 0}::real`] : []),
    micros(key.created),
    sql`${key.agentId}::uuid`,
    sql`${key.name}::text`,
    sql`${key.id}::uuid`,
  ])})`

/** The filter's conditions on current results of the project (each matched by an index's columns). */
const conditions = (projectId: string, filter: CurrentResultsFilter): Array<RawBuilder<unknown>> => {
  const where: Array<RawBuilder<unknown>> = [sql`rr.project_id = ${projectId}::uuid`, sql`rr.is_current`]
  if (filter.agentId !== undefined) where.push(sql`rr.agent_id = ${filter.agentId}::uuid`)
  if (filter.resolutionStatus !== undefined)
    where.push(sql`rr.resolution_status = ${filter.resolutionStatus}`)
  if (filter.dimensionValue !== undefined)
    where.push(sql`rr.dimension_values @> array[${filter.dimensionValue}::text]`)
  if (filter.maxConfidence !== undefined)
    // real against real: 0.3 as a double would exceed a stored 0.3 (its float4 rounding).
    where.push(sql`rr.confidence <= ${filter.maxConfidence}::real`)
  return where
}

/** Only agent and resolution status: counted by the tallies (else by the matching rows, through an index). */
const tallied = (filter: CurrentResultsFilter) =>
  filter.dimensionValue === undefined && filter.maxConfidence === undefined

/** Per agent of the project (oldest first), its current results that pass an agent/status filter. */
const agentCounts = (conn: Conn, projectId: string, filter: CurrentResultsFilter) =>
  sql<{ agent_id: string; n: number }>`
    select a.id as agent_id, coalesce(sum(t.n), 0)::int as n
    from agents a join result_tallies t on t.agent_id = a.id
    where a.project_id = ${projectId}::uuid
      ${filter.agentId === undefined ? sql`` : sql`and a.id = ${filter.agentId}::uuid`}
      ${filter.resolutionStatus === undefined ? sql`` : sql`and t.resolution_status = ${filter.resolutionStatus}`}
    group by a.id, a.created_at
    having sum(t.n) > 0
    order by a.created_at, a.id`
    .execute(conn)
    .then((r) => r.rows)

const countMatching = (conn: Conn, projectId: string, filter: CurrentResultsFilter) =>
  sql<{ n: number }>`select count(*)::int as n from resolution_results rr
    where ${sql.join(conditions(projectId, filter), sql` and `)}`
    .execute(conn)
    .then((r) => r.rows[0]?.n ?? 0)

const pageQuery = (
  conn: Conn,
  projectId: string,
  filter: CurrentResultsFilter,
  extra: ReadonlyArray<RawBuilder<unknown>>,
  descending: boolean,
  limit: number,
  offset: number,
) => {
  const byConfidence = filter.maxConfidence !== undefined
  const direction = sql.raw(descending ? "desc" : "asc")
  const order = byConfidence
    ? sql`rr.confidence ${direction}, rr.agent_created_at ${direction}, rr.agent_id ${direction}, rr.list_name ${direction}, rr.id ${direction}`
    : sql`rr.agent_created_at ${direction}, rr.agent_id ${direction}, rr.list_name ${direction}, rr.id ${direction}`
  // The page's ids from the index alone (the rows skipped by an offset are never fetched), in order, then
  // its rows by id.
  const ids = sql`select rr.id from resolution_results rr
    where ${sql.join([...conditions(projectId, filter), ...extra], sql` and `)}
    order by ${order} limit ${limit} offset ${offset}`
  return selectCurrent(conn)
    .innerJoin(
      sql<{
        id: string
        position: number
      }>`(select u.id, u.position from unnest(array(${ids})) with ordinality as u(id, position))`.as("p"),
      (join) => join.onRef("p.id", "=", "rr.id"),
    )
    .orderBy("p.position")
    .execute()
}

/**
 * The project's current results that pass `filter`, by agent (oldest first) then result name (with
 * `maxConfidence`, least confident first, then so), one window of them, with how many pass in all and the
 * offset of the window's first row.
 */
export const listCurrentResults = (
  conn: Conn,
  projectId: string,
  filter: CurrentResultsFilter,
  window: ResultsWindow,
): Effect.Effect<ResultsPageRows> =>
  run(async () => {
    const byConfidence = filter.maxConfidence !== undefined
    const perAgent = tallied(filter) ? await agentCounts(conn, projectId, filter) : undefined
    const count = perAgent
      ? perAgent.reduce((n, a) => n + a.n, 0)
      : await countMatching(conn, projectId, filter)
    if ("offset" in window) {
      let skip = window.offset
      const extra: Array<RawBuilder<unknown>> = []
      if (perAgent) {
        // Whole agents before the offset are stepped over by their counts; the rest by the index.
        let i = 0
        while (i < perAgent.length - 1 && skip >= perAgent[i]!.n) skip -= perAgent[i++]!.n
        const from = perAgent[i]
        if (from === undefined || window.offset >= count) return { count, offset: window.offset, rows: [] }
        extra.push(
          sql`(rr.agent_created_at, rr.agent_id) >= ((select created_at from agents where id = ${from.agent_id}::uuid), ${from.agent_id}::uuid)`,
        )
      }
      const rows = await pageQuery(conn, projectId, filter, extra, false, window.limit, skip)
      return { count, offset: window.offset, rows }
    }
    if (window.before !== undefined) {
      const extra = [sql`(${orderColumns(byConfidence)}) < ${keyValue(window.before, byConfidence)}`]
      const rows = (await pageQuery(conn, projectId, filter, extra, true, window.limit, 0)).reverse()
      return { count, offset: Math.max(0, window.position - rows.length), rows }
    }
    const extra =
      window.after === undefined
        ? []
        : [sql`(${orderColumns(byConfidence)}) > ${keyValue(window.after, byConfidence)}`]
    const rows = await pageQuery(conn, projectId, filter, extra, false, window.limit, 0)
    return { count, offset: window.position, rows }
  })

/** An extraction behind a result, with the name of its document (null for a web or derived one). */
export type ResultExtractionRow = ExtractionRow & { readonly document_name: string | null }

/**
 * The extractions a result was resolved from (its atomic value's, at the result's config version): web
 * ones first, then consistent (true, false, not yet evaluated), then by document name and page; one window
 * of them, with how many there are.
 */
export const extractionsOfResult = (
  conn: Conn,
  result: { readonly atomicValueId: string; readonly agentId: string; readonly agentConfigVersion: number },
  window: RowWindow,
): Effect.Effect<{ readonly total: number; readonly rows: ReadonlyArray<ResultExtractionRow> }> => {
  const base = () =>
    conn
      .selectFrom("extractions as e")
      .leftJoin("documents as d", "d.id", "e.document_id")
      .where("e.atomic_value_id", "=", result.atomicValueId)
      .where("e.agent_id", "=", result.agentId)
      .where("e.agent_config_version", "=", result.agentConfigVersion)
  return run(async () => {
    const [total, rows] = await Promise.all([
      base().select(sql<number>`count(*)::int`.as("n")).executeTakeFirstOrThrow(),
      base()
        .selectAll("e")
        .select("d.file_name as document_name")
        .orderBy(sql`(e.source_type = 'web')`, "desc")
        .orderBy(sql`case when e.consistent then 0 when not e.consistent then 1 else 2 end`)
        .orderBy(sql`d.file_name nulls last`)
        .orderBy(sql`e.page_number nulls last`)
        .orderBy("e.extracted_at")
        .orderBy("e.id")
        .limit(window.limit)
        .offset(window.offset)
        .execute(),
    ])
    return { total: total.n, rows }
  })
}
