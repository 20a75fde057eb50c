/**
 * The keys of the results grid's rows, read in the order of an index (see `Grid.ts`): by name through
 * `result_rows`, by an agent's value through that agent's current results, from an offset or from a row's
 * key; and how many rows pass a filter (from the tallies when they count it).
 */
import { type RawBuilder, sql } from "kysely"
import type { Conn } from "../../Db.ts"
import { pageWindow } from "../PageWindow.ts"
import { asReal } from "./CurrentResults.ts"
import type { GridFilter, GridKey, GridSort, GridWindow } from "./GridTypes.ts"

const STATUS_COLUMNS: Readonly<Record<string, string>> = {
  Resolved: "resolved",
  "Requires attention": "requires_attention",
  "Not resolved": "not_resolved",
  Ignored: "ignored",
  "No result": "no_result",
}

const escapeLike = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`)

/**
 * The results `c` of the project one of whose search texts' parts (a row's name, a dimension value, a value,
 * lower-cased) holds `part` (a LIKE pattern): the project's strings that hold it, through their trigram
 * index, then the results that have one of them, through the index of their parts' keys (migration
 * `2026_12_02_0003_search_strings`). The results read are the matches, whatever the project's size.
 */
const holding = (projectId: string, part: string) =>
  sql`c.search_keys && array(select s.key from search_strings s
    where s.project_id = ${projectId}::uuid and s.text like ${part})`

/** The cell conditions of the filter ("one of its cells matches all of them"), on results `c`. */
const cellConditions = (projectId: string, filter: GridFilter): Array<RawBuilder<unknown>> => {
  const where: Array<RawBuilder<unknown>> = []
  if (filter.agentId !== undefined) where.push(sql`c.agent_id = ${filter.agentId}::uuid`)
  if (filter.resolutionStatus !== undefined) where.push(sql`c.resolution_status = ${filter.resolutionStatus}`)
  if (filter.dimensionValue !== undefined) {
    // Part of a dimension value, case-insensitively: the parts that hold it narrow (a dimension value is
    // one), then one of the result's values must hold the part itself.
    const part = `%${escapeLike(filter.dimensionValue.toLowerCase())}%`
    where.push(sql`${holding(projectId, part)}
      and exists (select 1 from unnest(c.dimension_values) as dv(v) where lower(dv.v) like ${part})`)
  }
  if (filter.documentId !== undefined) where.push(sql`c.document_id = ${filter.documentId}::uuid`)
  if (filter.maxConfidence !== undefined)
    where.push(sql`c.confidence <= ${asReal(filter.maxConfidence)}::real`)
  if (filter.reviewStatus !== undefined)
    where.push(sql`coalesce(c.latest_review_status, 'none') = ${filter.reviewStatus}`)
  if (filter.source !== undefined) where.push(sql`c.is_overridden = ${filter.source === "manual"}`)
  return where
}

/** Only a resolution status: the rows that have a cell of it are read through their own index. */
const statusOnly = (filter: GridFilter) =>
  filter.resolutionStatus !== undefined &&
  filter.agentId === undefined &&
  filter.dimensionValue === undefined &&
  filter.documentId === undefined &&
  filter.maxConfidence === undefined &&
  filter.reviewStatus === undefined &&
  filter.source === undefined &&
  filter.search === undefined

/** What a row (with its key `r.row_hash`) must satisfy under the filter. */
const rowConditions = (projectId: string, filter: GridFilter, alias: string): Array<RawBuilder<unknown>> => {
  const hash = sql.ref(`${alias}.row_hash`)
  const where: Array<RawBuilder<unknown>> = []
  const cells = cellConditions(projectId, filter)
  const results = (conditions: ReadonlyArray<RawBuilder<unknown>>) =>
    sql`resolution_results c where c.project_id = ${projectId}::uuid and c.is_current and ${sql.join(conditions, sql` and `)}`
  // The rows of the results a search holds are probed by key, from an array of them: as `in (select …)`, the
  // planner (which cannot know how few they are: it guesses half a percent of the project's results for `&&`
  // against strings it has not read) hashed them against every row of the project.
  const held = (conditions: ReadonlyArray<RawBuilder<unknown>>) =>
    sql`${hash} = any(array(select distinct c.row_hash from ${results(conditions)}))`
  if (statusOnly(filter) && alias === "r")
    where.push(sql`${sql.ref(`r.${STATUS_COLUMNS[filter.resolutionStatus!] ?? "resolved"}`)} > 0`)
  else if (cells.length > 0)
    where.push(
      filter.dimensionValue !== undefined
        ? held(cells)
        : sql`${hash} in (select c.row_hash from ${results(cells)})`,
    )
  if (filter.search !== undefined)
    where.push(held([holding(projectId, `%${escapeLike(filter.search.toLowerCase())}%`)]))
  return where
}

const and = (parts: ReadonlyArray<RawBuilder<unknown>>) =>
  parts.length === 0 ? sql`true` : sql.join(parts, sql` and `)

/** The name keys of a row as a row value, and the same of a key. */
const NAME_COLUMNS = (alias: string) =>
  sql.raw(`${alias}.row_rank, ${alias}.row_sort, ${alias}.row_exact, ${alias}.row_hash`)
const nameKey = (key: GridKey) =>
  sql`(${key[4]}::smallint, ${key[5]}::text, ${key[6]}::text, ${key[7]}::uuid)`

export interface KeyRow {
  row_hash: string
  section: number
  rank: number
  num: string
  text: string
  row_rank: number
  row_sort: string
  row_exact: string
}

export const toKey = (r: KeyRow): GridKey => [
  r.section,
  r.rank,
  r.num,
  r.text,
  r.row_rank,
  r.row_sort,
  r.row_exact,
  r.row_hash,
]

/** From where a page is read: after a key (or from the start), or before a key (or from the end) backwards. */
interface Walk {
  readonly edge?: GridKey | undefined
  readonly backwards: boolean
}

const FORWARD: Walk = { backwards: false }

/** What rows by name are read from: the rows that pass the filter, those past the key, in which direction. */
const nameRange = (
  projectId: string,
  filter: GridFilter,
  descending: boolean,
  { edge, backwards }: Walk,
) => ({
  matching: [sql`r.project_id = ${projectId}::uuid`, ...rowConditions(projectId, filter, "r")],
  past:
    edge === undefined
      ? []
      : [sql`(${NAME_COLUMNS("r")}) ${sql.raw(descending !== backwards ? "<" : ">")} ${nameKey(edge)}`],
  // Reading backwards (before a key) reverses the direction; the caller reverses the rows.
  dir: sql.raw(descending !== backwards ? "desc" : "asc"),
})

/** Rows by name (either direction), from a key or an offset. */
const byName = (
  conn: Conn,
  projectId: string,
  filter: GridFilter,
  descending: boolean,
  walk: Walk,
  limit: number,
  offset: number,
) => {
  const { matching, past, dir } = nameRange(projectId, filter, descending, walk)
  return sql<KeyRow>`
    select r.row_hash, 0 as section, 0 as rank, '0' as num, '' as text, r.row_rank, r.row_sort, r.row_exact
    from result_rows r where ${and([...matching, ...past])}
    order by r.row_rank ${dir}, r.row_sort ${dir}, r.row_exact ${dir}, r.row_hash ${dir}
    ${pageWindow(limit, offset)}`
    .execute(conn)
    .then((r) => r.rows)
}

/**
 * Rows by name and how many rows pass the filter, in one statement, for a filter the tallies do not count:
 * the rows that pass it (a search's, a document's) are found once for both, not once for each.
 */
export const byNameCounted = async (
  conn: Conn,
  projectId: string,
  filter: GridFilter,
  descending: boolean,
  walk: Walk,
  limit: number,
  offset: number,
): Promise<{ readonly count: number; readonly rows: Array<KeyRow> }> => {
  const { matching, past, dir } = nameRange(projectId, filter, descending, walk)
  // The count comes with each row of the page, and alone (with no row) when the page has none.
  const { rows } = await sql<KeyRow & { n: number }>`
    with matched as materialized (
      select r.row_hash, r.row_rank, r.row_sort, r.row_exact from result_rows r where ${and(matching)}
    )
    select k.row_hash, 0 as section, 0 as rank, '0' as num, '' as text, k.row_rank, k.row_sort, k.row_exact, c.n
    from (select count(*)::int as n from matched) c
    left join (
      select r.* from matched r where ${and(past)}
      order by r.row_rank ${dir}, r.row_sort ${dir}, r.row_exact ${dir}, r.row_hash ${dir}
      ${pageWindow(limit, offset)}
    ) k on true
    order by k.row_rank ${dir}, k.row_sort ${dir}, k.row_exact ${dir}, k.row_hash ${dir}`.execute(conn)
  return {
    count: rows[0]?.n ?? 0,
    rows: rows.filter((r) => r.row_hash !== null).map(({ n: _, ...key }) => key),
  }
}

/** The value keys of an agent's results with a value, in the sort's direction. */
const valueOrder = (descending: boolean, backwards: boolean) => {
  const v = sql.raw(descending !== backwards ? "desc" : "asc")
  const n = sql.raw(backwards ? "desc" : "asc")
  return sql`rr.value_rank ${n}, rr.value_num ${v}, rr.value_text ${v}, rr.row_rank ${n}, rr.row_sort ${n}, rr.row_exact ${n}, rr.row_hash ${n}`
}

/**
 * The rows with a value of the agent, in the sort's order, from an offset or after (before) a key of that
 * section. The order mixes directions (the value one way, the name always ascending), which one row
 * comparison cannot express over an index, so past a key the rows are read as up to four index ranges in
 * turn: the same value with a later name, the same number and a later text, a later number, a later kind.
 */
const withValue = async (
  conn: Conn,
  projectId: string,
  filter: GridFilter,
  sort: Extract<GridSort, { by: "agent" }>,
  { edge, backwards }: Walk,
  limit: number,
  offset: number,
): Promise<Array<KeyRow>> => {
  const base = [
    sql`rr.agent_id = ${sort.agentId}::uuid`,
    sql`rr.is_current`,
    sql`rr.value_missing = 0`,
    ...rowConditions(projectId, filter, "rr"),
  ]
  const read = (where: ReadonlyArray<RawBuilder<unknown>>, n: number, skip: number) =>
    sql<KeyRow>`
      select rr.row_hash, 0 as section, rr.value_rank as rank, rr.value_num::text as num, rr.value_text as text,
             rr.row_rank, rr.row_sort, rr.row_exact
      from resolution_results rr where ${and([...base, ...where])}
      order by ${valueOrder(sort.descending, backwards)}
      ${pageWindow(n, skip)}`
      .execute(conn)
      .then((r) => r.rows)
  if (edge === undefined) return read([], limit, offset)
  const later = (descending: boolean) => sql.raw(descending !== backwards ? "<" : ">")
  const [, rank, num, text] = edge
  const ranges = [
    [
      sql`rr.value_rank = ${rank}::smallint`,
      sql`rr.value_num = ${num}::numeric`,
      sql`rr.value_text = ${text}::text`,
      sql`(${NAME_COLUMNS("rr")}) ${later(false)} ${nameKey(edge)}`,
    ],
    [
      sql`rr.value_rank = ${rank}::smallint`,
      sql`rr.value_num = ${num}::numeric`,
      sql`rr.value_text ${later(sort.descending)} ${text}::text`,
    ],
    [sql`rr.value_rank = ${rank}::smallint`, sql`rr.value_num ${later(sort.descending)} ${num}::numeric`],
    [sql`rr.value_rank ${later(false)} ${rank}::smallint`],
  ]
  const rows: Array<KeyRow> = []
  for (const range of ranges) {
    if (rows.length >= limit) break
    rows.push(...(await read(range, limit - rows.length, 0)))
  }
  return rows
}

/** The rows without a value of the agent (an empty one, or no cell of it), by name. */
const withoutValue = (
  conn: Conn,
  projectId: string,
  filter: GridFilter,
  sort: Extract<GridSort, { by: "agent" }>,
  { edge, backwards }: Walk,
  limit: number,
  offset: number,
) => {
  const dir = sql.raw(backwards ? "desc" : "asc")
  const past = (alias: string) =>
    edge === undefined
      ? []
      : [sql`(${NAME_COLUMNS(alias)}) ${sql.raw(backwards ? "<" : ">")} ${nameKey(edge)}`]
  const empty = [
    sql`rr.agent_id = ${sort.agentId}::uuid`,
    sql`rr.is_current`,
    sql`rr.value_missing = 1`,
    sql`rr.value_rank = 2`,
    sql`rr.value_num = 0`,
    sql`rr.value_text = ''`,
    ...rowConditions(projectId, filter, "rr"),
    ...past("rr"),
  ]
  const absent = [
    sql`r.project_id = ${projectId}::uuid`,
    sql`not exists (select 1 from resolution_results c where c.project_id = ${projectId}::uuid
      and c.row_hash = r.row_hash and c.agent_id = ${sort.agentId}::uuid and c.is_current)`,
    ...rowConditions(projectId, filter, "r"),
    ...past("r"),
  ]
  return sql<KeyRow>`
    select k.row_hash, 1 as section, 2 as rank, '0' as num, '' as text, k.row_rank, k.row_sort, k.row_exact
    from (
      (select rr.row_hash, rr.row_rank, rr.row_sort, rr.row_exact from resolution_results rr where ${and(empty)}
       order by rr.row_rank ${dir}, rr.row_sort ${dir}, rr.row_exact ${dir}, rr.row_hash ${dir})
      union all
      (select r.row_hash, r.row_rank, r.row_sort, r.row_exact from result_rows r where ${and(absent)}
       order by r.row_rank ${dir}, r.row_sort ${dir}, r.row_exact ${dir}, r.row_hash ${dir})
    ) k
    order by k.row_rank ${dir}, k.row_sort ${dir}, k.row_exact ${dir}, k.row_hash ${dir}
    ${pageWindow(limit, offset)}`
    .execute(conn)
    .then((r) => r.rows)
}

/** How many rows have a value of the agent under the filter (for an offset past them). */
const countWithValue = (conn: Conn, projectId: string, filter: GridFilter, agentId: string) =>
  sql<{ n: number }>`select count(*)::int as n from resolution_results rr
    where rr.agent_id = ${agentId}::uuid and rr.is_current and rr.value_missing = 0
      and ${and(rowConditions(projectId, filter, "rr"))}`
    .execute(conn)
    .then((r) => r.rows[0]?.n ?? 0)

/** Whether the tallies count the rows that pass the filter: for none, a status, an agent or both. */
export const tallied = (filter: GridFilter) =>
  filter.dimensionValue === undefined &&
  filter.documentId === undefined &&
  filter.maxConfidence === undefined &&
  filter.search === undefined &&
  filter.reviewStatus === undefined &&
  filter.source === undefined

/** How many rows pass the filter: from the tallies for none, a status, an agent or both; else counted. */
export const countRows = async (conn: Conn, projectId: string, filter: GridFilter): Promise<number> => {
  const { agentId, resolutionStatus } = filter
  const untallied = !tallied(filter)
  if (!untallied && agentId !== undefined) {
    // One current result per agent and row: the agent's rows are its results.
    const { rows } = await sql<{ n: number }>`select coalesce(sum(n), 0)::int as n from result_tallies
      where agent_id = ${agentId}::uuid
        ${resolutionStatus === undefined ? sql`` : sql`and resolution_status = ${resolutionStatus}`}
        and agent_id in (select id from agents where project_id = ${projectId}::uuid)`.execute(conn)
    return rows[0]?.n ?? 0
  }
  if (!untallied) {
    const column = resolutionStatus === undefined ? "rows" : (STATUS_COLUMNS[resolutionStatus] ?? "rows")
    const { rows } = await sql<{
      n: number
    }>`select ${sql.ref(`t.${column}`)}::int as n from result_row_tallies t
      where t.project_id = ${projectId}::uuid`.execute(conn)
    return rows[0]?.n ?? 0
  }
  const { rows } = await sql<{ n: number }>`select count(*)::int as n from result_rows r
    where r.project_id = ${projectId}::uuid and ${and(rowConditions(projectId, filter, "r"))}`.execute(conn)
  return rows[0]?.n ?? 0
}

/** From where a window reads (see `Walk`), and its offset. */
export const walkOf = (window: GridWindow): { readonly walk: Walk; readonly offset: number } =>
  "offset" in window
    ? { walk: FORWARD, offset: window.offset }
    : { walk: { edge: window.after ?? window.before, backwards: window.before !== undefined }, offset: 0 }

/** The keys of a page of rows, in the grid's order. */
export const pageKeys = async (
  conn: Conn,
  projectId: string,
  filter: GridFilter,
  sort: GridSort,
  window: GridWindow,
): Promise<ReadonlyArray<KeyRow>> => {
  const { walk, offset } = walkOf(window)
  const { edge, backwards } = walk
  if (sort.by === "name") {
    const rows = await byName(conn, projectId, filter, sort.descending, walk, window.limit, offset)
    return backwards ? rows.reverse() : rows
  }
  // By an agent: the rows with a value (section 0), then those without (section 1); a key names its section.
  if (backwards) {
    const rows =
      edge![0] === 1 ? await withoutValue(conn, projectId, filter, sort, walk, window.limit, 0) : []
    if (rows.length < window.limit)
      rows.push(
        ...(await withValue(
          conn,
          projectId,
          filter,
          sort,
          edge![0] === 1 ? { backwards: true } : walk,
          window.limit - rows.length,
          0,
        )),
      )
    return rows.reverse()
  }
  if (edge !== undefined && edge[0] === 1)
    return withoutValue(conn, projectId, filter, sort, walk, window.limit, 0)
  const valued = await withValue(conn, projectId, filter, sort, walk, window.limit, offset)
  if (valued.length === window.limit) return valued
  // Past the rows with a value: an offset beyond them continues among the rows without one.
  const skip =
    edge !== undefined || valued.length > 0
      ? 0
      : offset - (await countWithValue(conn, projectId, filter, sort.agentId))
  const rest = await withoutValue(
    conn,
    projectId,
    filter,
    sort,
    FORWARD,
    window.limit - valued.length,
    Math.max(0, skip),
  )
  return [...valued, ...rest]
}
