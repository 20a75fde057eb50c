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
import { pageWindow } from "../PageWindow.ts"
import { type AgentStateInputRow, agentStateInputsQuery } from "../ProjectReads.ts"
import { unseen } from "../Unseen.ts"

/**
 * A number as the `real` it is compared with: rounded to single precision, so every double is accepted
 * (PostgreSQL refuses text such as 1e-200 as a `real`, out of range, where the rounding gives 0).
 */
export const asReal = (n: number): number => Math.fround(n)

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
      // As the API shows it (see the `dxs_present_value` function).
      sql<unknown>`dxs_present_value(rr.value, a.value_type)`.as("presented"),
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

const micros = (created: string) => sql`(timestamptz 'epoch' + ${created}::bigint * interval '1 microsecond')`

/** The list's order as a row value (the confidence first when filtering by it). */
const orderColumns = (byConfidence: boolean) =>
  sql.raw(`${byConfidence ? "rr.confidence, " : ""}rr.agent_created_at, rr.agent_id, rr.list_name, rr.id`)

const keyValue = (key: ResultKey, byConfidence: boolean) =>
  sql`(${sql.join([
    ...(byConfidence ? [sql`${asReal(key.confidence ?? 0)}::real`] : []),
    micros(key.created),
    sql`${key.agentId}::uuid`,
    sql`${key.name}::text`,
    sql`${key.id}::uuid`,
  ])})`

/**
 * The project out of the planner's sight (see `unseen`): a custom plan knew the project's share of the
 * results and a generic plan only the average project's; an offset's cost is estimated from the rows it
 * passes, so for every project but the largest the generic plan looked dearer and each execution of a page
 * was planned again. The plan is the same for every project (the list's index, or the filter's).
 */
const theProject = (projectId: string) => unseen(projectId, "uuid")

/** The filter's conditions on current results of the project (each matched by an index's columns). */
const conditions = (projectId: string, filter: CurrentResultsFilter): Array<RawBuilder<unknown>> => {
  const where: Array<RawBuilder<unknown>> = [
    sql`rr.project_id = ${theProject(projectId)}`,
    sql`rr.is_current`,
  ]
  if (filter.agentId !== undefined) where.push(sql`rr.agent_id = ${filter.agentId}::uuid`)
  if (filter.resolutionStatus !== undefined)
    // Out of the planner's sight as the project is (see `theProject`): a rare status made the generic plan
    // look dearer than a plan for it, and each execution was planned again; the index read is the same.
    where.push(sql`rr.resolution_status = ${unseen(filter.resolutionStatus, "text")}`)
  if (filter.dimensionValue !== undefined)
    // Out of the planner's sight (see `unseen`): with it in sight, every execution of the prepared statement
    // was planned again for its value (PostgreSQL kept custom plans, the value's statistics promising fewer
    // rows than a generic plan's), 1 ms of the database's time per request. Its matches are then read
    // through the GIN index whatever the estimate (see `resultsListPage`).
    where.push(sql`rr.dimension_values @> ${unseen([filter.dimensionValue], "text[]")}`)
  if (filter.maxConfidence !== undefined)
    // real against real: 0.3 as a double would exceed a stored 0.3 (its float4 rounding).
    where.push(sql`rr.confidence <= ${asReal(filter.maxConfidence)}::real`)
  return where
}

/** Only agent and resolution status: counted by the tallies (else by the matching rows, through an index). */
const tallied = (filter: CurrentResultsFilter) =>
  filter.dimensionValue === undefined && filter.maxConfidence === undefined

/**
 * The band of the confidence tallies a confidence (a `real`) falls in: its hundredth, as migration
 * `2026_11_29_0009_confidence_tallies` computes it.
 */
export const confidenceBand = (confidence: RawBuilder<unknown>) => sql`floor(${confidence}::float8 * 100)`

/**
 * A confidence, with an agent or none: counted by the confidence tallies (migration
 * `2026_11_29_0009_confidence_tallies`): the bands below the confidence's own from the tallies, its own
 * band's results at or below it through the confidence index (from half a band below, so that rounding
 * cannot leave one out; the band itself is compared exactly).
 */
const countedByBands = (projectId: string, filter: CurrentResultsFilter, maxConfidence: number) => {
  const band = confidenceBand(sql`${asReal(maxConfidence)}::real`)
  return sql`select null::uuid as id, null::timestamptz as created_at,
      ((select coalesce(sum(t.n), 0) from agents a join result_confidence_tallies t on t.agent_id = a.id
        where a.project_id = ${projectId}::uuid and t.band < ${band}
          ${filter.agentId === undefined ? sql`` : sql`and a.id = ${filter.agentId}::uuid`})
       + (select count(*) from resolution_results rr
          where ${sql.join(conditions(projectId, filter), sql` and `)}
            and rr.confidence >= ((${band} - 0.5) / 100)::real and ${confidenceBand(sql`rr.confidence`)} = ${band})
      )::int as n`
}

/**
 * Where a row's extraction status goes in the list's JSON: its agent's id after `\u0001` (which no JSON text
 * of a value can put right after this member's name), for the caller to put the agent's status in its place,
 * since the status is derived from the agents' records in code.
 */
export const EXTRACTION_STATUS_SLOT = {
  /** The text that opens a slot; the agent's id and a closing quote follow it. */
  opening: '"extraction_status":"\\u0001',
  agentIdLength: 36,
} as const

/**
 * A result as a row of the results list's JSON text (`V1ResultRow`): assembled from the parts the result
 * keeps (its `resolution_result`), its agent's name and its atomic value's dimension instances (their
 * dimensions' names kept current); its extraction status a slot (see above).
 */
const resultRowJson = sql`'{"id":"' || rr.atomic_value_id || '","atomic_value_id":"' || rr.atomic_value_id
    || '","agent_id":"' || rr.agent_id || '","agent_name":' || to_json(a.name)::text
    || ',"result_name":' || to_json(rr.result_name)::text || ',"value_type":' || to_json(a.value_type)::text
    || ',"extraction_status":"\\u0001' || rr.agent_id || '","resolution_result":' || rr.summary_json
    || ',"dimension_instances":' || av.dimension_values::text || '}'`

/** What the page reads of a result (of `matched` too, a dimension value's matches). */
const PAGE_COLUMNS = sql.raw(
  "rr.atomic_value_id, rr.agent_id, rr.result_name, rr.summary_json, rr.agent_created_at, rr.list_name, rr.id, rr.confidence",
)

/** A row's key in the list's order, as JSON (see `ResultKey`). */
const keyJson = sql`json_build_array((extract(epoch from rr.agent_created_at) * 1000000)::bigint::text, rr.agent_id,
  rr.list_name, rr.id, rr.confidence)`

const keyOf = (json: unknown, byConfidence: boolean): ResultKey | undefined => {
  if (!Array.isArray(json)) return undefined
  const [created, agentId, name, id, confidence] = json as [string, string, string, string, number | null]
  return { created, agentId, name, id, ...(byConfidence && confidence !== null ? { confidence } : {}) }
}

/** A page of the results list: the project's ownership, the count, the rows as the API's JSON. */
export interface ResultsListPage {
  readonly found: boolean
  /** How many current results pass the filter in all. */
  readonly count: number
  /** The offset of the page's first row. */
  readonly offset: number
  readonly rows: number
  /** The rows as a JSON array of `V1ResultRow`s, their extraction statuses slots (`EXTRACTION_STATUS_SLOT`). */
  readonly json: string
  readonly first?: ResultKey | undefined
  readonly last?: ResultKey | undefined
  /** The state inputs of the agents of the page's rows. */
  readonly states: ReadonlyArray<AgentStateInputRow>
}

/**
 * The current results that pass `filter`, by agent (oldest first) then result name (with `maxConfidence`,
 * least confident first, then so), one window of them, in one statement: whether the project is the
 * organisation's, how many pass (from the tallies when the filter is an agent, a status or none; else
 * counted through an index), the page as the list's JSON built by the database, and the state inputs of
 * the page's agents. An offset is stepped agent by agent with the tallies; the rows skipped inside an agent
 * are read from the index alone.
 */
export const resultsListPage = (
  conn: Conn,
  organizationId: string,
  projectId: string,
  filter: CurrentResultsFilter,
  window: ResultsWindow,
): Effect.Effect<ResultsListPage> =>
  run(async () => {
    const byConfidence = filter.maxConfidence !== undefined
    const perAgent = tallied(filter)
    const byOffset = "offset" in window
    const descending = !byOffset && window.before !== undefined
    const dir = sql.raw(descending ? "desc" : "asc")
    const order = byConfidence
      ? sql`rr.confidence ${dir}, rr.agent_created_at ${dir}, rr.agent_id ${dir}, rr.list_name ${dir}, rr.id ${dir}`
      : sql`rr.agent_created_at ${dir}, rr.agent_id ${dir}, rr.list_name ${dir}, rr.id ${dir}`
    // A dimension value has no ordered index: its matches are read first, through the GIN index (`matched`,
    // materialized), then counted, sorted and cut. Left to choose, a plan that expects many matches (a
    // generic plan expects half a percent of a project's results) walks the list's ordered index instead,
    // keeping the matches until it has a page: every result of the project for a value that has a few.
    const byDimension = filter.dimensionValue !== undefined
    const where = byDimension ? [] : [...conditions(projectId, filter)]
    // The page's rows are read once, in order, through the filter's index (no second look-up by id). From an
    // offset, the key of the page's first row is found first from the index alone (`head`), so that the rows
    // skipped are never read from the table: whole agents stepped over by their tallies, the rest counted in
    // the index. A dimension value's page is cut directly from its matches.
    let skip: RawBuilder<unknown> = pageWindow(window.limit, 0)
    let head: RawBuilder<unknown> | undefined
    if (byOffset && !byDimension) {
      const headWhere = [...where]
      let headSkip = pageWindow(1, window.offset)
      if (perAgent) {
        headWhere.push(sql`(rr.agent_created_at, rr.agent_id) >= (select s.created_at, s.id from start s)`)
        headSkip = sql`limit 1 offset (select s.skip from start s)`
      }
      head = sql`select ${orderColumns(byConfidence)} from resolution_results rr
        where ${sql.join(headWhere, sql` and `)} order by ${order} ${headSkip}`
      where.push(sql`(${orderColumns(byConfidence)}) >= (select * from head)`)
    } else if (byOffset) skip = pageWindow(window.limit, window.offset)
    else if (window.before !== undefined)
      where.push(sql`(${orderColumns(byConfidence)}) < ${keyValue(window.before, byConfidence)}`)
    else if (window.after !== undefined)
      where.push(sql`(${orderColumns(byConfidence)}) > ${keyValue(window.after, byConfidence)}`)
    const counts = perAgent
      ? sql`select a.id, a.created_at, sum(t.n)::int as n
          from agents a join result_tallies t on t.agent_id = a.id
          where a.project_id = ${projectId}::uuid
            ${filter.agentId === undefined ? sql`` : sql`and a.id = ${filter.agentId}::uuid`}
            ${filter.resolutionStatus === undefined ? sql`` : sql`and t.resolution_status = ${filter.resolutionStatus}`}
          group by a.id, a.created_at having sum(t.n) > 0`
      : byDimension
        ? sql`select null::uuid as id, null::timestamptz as created_at, (select count(*)::int from matched) as n`
        : filter.maxConfidence !== undefined && filter.resolutionStatus === undefined
          ? countedByBands(projectId, filter, filter.maxConfidence)
          : sql`select null::uuid as id, null::timestamptz as created_at,
          (select count(*)::int from resolution_results rr where ${sql.join(conditions(projectId, filter), sql` and `)}) as n`
    const offset = byOffset ? window.offset : 0
    const pageOrder = sql.raw(descending ? "desc" : "asc")
    const { rows } = await sql<{
      found: boolean
      count: number
      rows: number
      json: string
      first: unknown
      last: unknown
      states: ReadonlyArray<AgentStateInputRow>
    }>`
      with ${
        byDimension
          ? sql`matched as materialized (
        select ${PAGE_COLUMNS} from resolution_results rr where ${sql.join(conditions(projectId, filter), sql` and `)}
      ),`
          : sql``
      }
      counts as (${counts}),
      start as (
        select c.id, c.created_at, ${offset}::int - c.before as skip
        from (select id, created_at, n, coalesce(sum(n) over (order by created_at, id
                rows between unbounded preceding and 1 preceding), 0) as before from counts) c
        where c.before <= ${offset}::int and c.before + c.n > ${offset}::int
      ),
      ${head === undefined ? sql`` : sql`head as (${head}),`}
      page as (
        select ${PAGE_COLUMNS}, row_number() over (order by ${order}) as position
        from ${byDimension ? sql`matched` : sql`resolution_results`} rr
        where ${where.length === 0 ? sql`true` : sql.join(where, sql` and `)}
        order by ${order} ${skip}
      ),
      built as (
        select count(*)::int as rows,
               '[' || coalesce(string_agg(${resultRowJson}, ',' order by rr.position ${pageOrder}), '') || ']' as json,
               min(rr.position) as low, max(rr.position) as high,
               array_agg(distinct rr.agent_id) as agents
        from page rr
        join agents a on a.id = rr.agent_id
        join atomic_values av on av.id = rr.atomic_value_id
      )
      select exists (select 1 from projects where id = ${projectId}::uuid and organization_id = ${organizationId}::uuid) as found,
             (select coalesce(sum(n), 0)::int from counts) as count, b.rows, b.json,
             -- The keys of the page's first and last rows in the list's order (read backwards, the last read first).
             (select ${keyJson} from page rr where rr.position = ${sql.raw(descending ? "b.high" : "b.low")}) as first,
             (select ${keyJson} from page rr where rr.position = ${sql.raw(descending ? "b.low" : "b.high")}) as last,
             (select coalesce(json_agg(s), '[]'::json)
              from (${agentStateInputsQuery(theProject(projectId), sql`b.agents`)}) s) as states
      from built b`.execute(conn)
    const r = rows[0]!
    const page = {
      found: r.found,
      count: r.count,
      rows: r.rows,
      json: r.json,
      first: keyOf(r.first, byConfidence),
      last: keyOf(r.last, byConfidence),
      states: r.states,
    }
    if (byOffset) return { ...page, offset: window.offset }
    return { ...page, offset: descending ? Math.max(0, window.position - r.rows) : window.position }
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
