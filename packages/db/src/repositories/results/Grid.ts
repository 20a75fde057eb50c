/**
 * The results grid (part of the results aggregate, see `../Results.ts`): the project's current results as
 * a matrix, one row per combination of dimension values and one cell per agent, sorted, filtered and paged
 * in SQL. What a row is lives here (`ROW_KEY`): "All documents" for a result without dimension instances,
 * else its result name. Pages are read by offset (`gridPage`), a whole grid through a server-side cursor
 * (`gridRows`), so a whole project is never held in memory.
 */
import { Effect, Option, Stream } from "effect"
import { type Kysely, type RawBuilder, sql } from "kysely"
import { type Conn, scopedConnection } from "../../Db.ts"
import type { Database, ResultSource, StoredDimensionValue } from "../../Schema.ts"
import type { CurrentResultsFilter } from "./CurrentResults.ts"

const run = <A>(f: () => Promise<A>): Effect.Effect<A> => Effect.promise(f)

/** The name of the one row of results that no dimension splits. */
export const ALL_DOCUMENTS = "All documents"

/** A result's row: its combination of dimension values (see the module's comment). */
const ROW_KEY = sql<string>`case when jsonb_array_length(av.dimension_values) = 0 then ${ALL_DOCUMENTS}::text else rr.result_name end`

/**
 * The order of the rows: by name, or by one agent's value (numbers numerically, ISO dates of date agents
 * chronologically, other values as text case-insensitively; rows without a value last either way; ties by
 * name).
 */
export type GridSort =
  | { readonly by: "name"; readonly descending: boolean }
  | {
      readonly by: "agent"
      readonly agentId: string
      /** The agent's value type: `date` and `datetime` values in ISO form sort as dates. */
      readonly valueType: string
      readonly descending: boolean
    }

export interface GridFilter extends CurrentResultsFilter {
  /** Rows whose name, dimension values or a cell's value contain this (case-insensitively). */
  readonly search?: string | undefined
}

export interface GridCell {
  readonly resolution_result_id: string
  readonly agent_id: string
  readonly value: unknown
  readonly resolution_status: string
  readonly confidence: number | null
  readonly is_overridden: boolean
  /** Only when asked for (`withSources`); else empty. */
  readonly sources: ReadonlyArray<ResultSource>
}

export interface GridRow {
  readonly key: string
  /** The dimension instances of the row (of its oldest agent's result). */
  readonly dimension_values: ReadonlyArray<StoredDimensionValue>
  /** The row's cells, by agent id. */
  readonly cells: ReadonlyMap<string, GridCell>
}

const escapeLike = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`)

/** The current results of the project with their row key (`cur`) and the rows that pass the filter (`grouped`). */
const rowsWith = (projectId: string, filter: GridFilter, sort: GridSort) => {
  const cellConditions: Array<RawBuilder<boolean>> = []
  if (filter.agentId !== undefined) cellConditions.push(sql<boolean>`cur.agent_id = ${filter.agentId}::uuid`)
  if (filter.resolutionStatus !== undefined)
    cellConditions.push(sql<boolean>`cur.resolution_status = ${filter.resolutionStatus}`)
  if (filter.dimensionValue !== undefined)
    cellConditions.push(
      sql<boolean>`cur.dimension_values @> ${JSON.stringify([{ dimension_value: filter.dimensionValue }])}::jsonb`,
    )
  if (filter.maxConfidence !== undefined)
    cellConditions.push(sql<boolean>`cur.confidence <= ${filter.maxConfidence}::real`)
  const having: Array<RawBuilder<boolean>> = []
  if (cellConditions.length > 0) having.push(sql<boolean>`bool_or(${sql.join(cellConditions, sql` and `)})`)
  if (filter.search !== undefined) {
    const pattern = `%${escapeLike(filter.search)}%`
    having.push(
      sql<boolean>`(cur.row_key ilike ${pattern} or bool_or(cur.value #>> '{}' ilike ${pattern}) or bool_or(exists (select 1 from jsonb_array_elements(cur.dimension_values) dv where dv->>'dimension_value' ilike ${pattern})))`,
    )
  }
  // Dimension values are carried through the grouping only when a filter reads them.
  const dimensionValues =
    filter.dimensionValue !== undefined || filter.search !== undefined
      ? sql`av.dimension_values`
      : sql`null::jsonb`
  // So are values, when the search or the sort reads them.
  const value = filter.search !== undefined || sort.by === "agent" ? sql`rr.value` : sql`null::jsonb`
  const sortValue =
    sort.by === "agent"
      ? sql`(array_agg(cur.value) filter (where cur.agent_id = ${sort.agentId}::uuid))[1]`
      : sql`null::jsonb`
  return sql`
    with cur as (
      select rr.id, rr.agent_id, ${value} as value, rr.resolution_status, rr.confidence,
             ${dimensionValues} as dimension_values, ${ROW_KEY} as row_key
      from resolution_results rr
      join agents a on a.id = rr.agent_id and a.config_version = rr.agent_config_version
      join atomic_values av on av.id = rr.atomic_value_id
      where rr.project_id = ${projectId}::uuid and a.project_id = ${projectId}::uuid and a.is_draft = false
    ),
    grouped as (
      select cur.row_key, array_agg(cur.id) as cell_ids, ${sortValue} as sort_value
      from cur
      group by cur.row_key
      ${having.length > 0 ? sql`having ${sql.join(having, sql` and `)}` : sql``}
    )`
}

/**
 * The sort key of a row, every part not null: `missing` (1 when the row has no value to sort by, or an
 * empty text), `rank`
 * (what kind of value: 0 a number, 1 a date, 2 text; by name, 0 for "All documents" so it comes first),
 * `num`, `text` (lower case), then the row's name in lower case and as it is.
 */
const keyed = (sort: GridSort) => {
  if (sort.by === "name")
    return sql`keyed as (
      select g.row_key, g.cell_ids, 0 as missing,
             case when g.row_key = ${ALL_DOCUMENTS} then 0 else 1 end as rank,
             0::numeric as num, lower(g.row_key) as text, lower(g.row_key) as name
      from grouped g
    )`
  const dates = sort.valueType === "date" || sort.valueType === "datetime"
  return sql`keyed as (
    select g.row_key, g.cell_ids,
           case when g.sort_value is null or jsonb_typeof(g.sort_value) = 'null' or g.sort_value = '""'::jsonb then 1 else 0 end as missing,
           case when jsonb_typeof(g.sort_value) = 'number' then 0
                when ${sql.raw(dates ? "true" : "false")} and (g.sort_value #>> '{}') ~ '^\\d{4}-\\d{2}-\\d{2}' then 1
                else 2 end as rank,
           case when jsonb_typeof(g.sort_value) = 'number' then (g.sort_value #>> '{}')::numeric else 0 end as num,
           lower(coalesce(g.sort_value #>> '{}', '')) as text,
           lower(g.row_key) as name
    from grouped g
  )`
}

/**
 * The order: rows without a value last, then the kind of value, the value in the sort's direction, the
 * key; by name, all in the sort's direction ("All documents" first ascending, last descending).
 */
const ordering = (sort: GridSort) => {
  const dir = sql.raw(sort.descending ? "desc" : "asc")
  const byName = sql.raw(sort.by === "name" && sort.descending ? "desc" : "asc")
  return sql`k.missing asc, k.rank ${byName}, k.num ${dir}, k.text ${dir}, k.name ${byName}, k.row_key ${byName}`
}

interface RawCellRow {
  row_key: string
  dimension_values: ReadonlyArray<StoredDimensionValue> | null
  id: string
  agent_id: string
  value: unknown
  resolution_status: string
  confidence: number | null
  is_overridden: boolean
  sources: ReadonlyArray<ResultSource> | null
}

/** The grid's cells in the order of its rows (then by agent, oldest first). */
const cellsQuery = (
  projectId: string,
  filter: GridFilter,
  sort: GridSort,
  page: { readonly limit: number; readonly offset: number } | undefined,
  withSources: boolean,
) => sql<RawCellRow>`
    ${rowsWith(projectId, filter, sort)},
    ${keyed(sort)},
    page as (
      select k.*, row_number() over (order by ${ordering(sort)}) as position
      from keyed k
      order by ${ordering(sort)}
      ${page === undefined ? sql`` : sql`limit ${page.limit} offset ${page.offset}`}
    )
    select p.row_key, av.dimension_values, rr.id, rr.agent_id, rr.value, rr.resolution_status, rr.confidence, rr.is_overridden,
           ${withSources ? sql`rr.sources` : sql`null::jsonb`} as sources
    from page p
    cross join lateral unnest(p.cell_ids) as cell(id)
    join resolution_results rr on rr.id = cell.id
    join agents a on a.id = rr.agent_id
    join atomic_values av on av.id = rr.atomic_value_id
    order by p.position, a.created_at, a.id
  `

type MutableRow = GridRow & { cells: Map<string, GridCell> }

/** Adds cell rows (in the query's order) to `out`, the last row of which may take more of its cells. */
const addCells = (out: Array<MutableRow>, rows: ReadonlyArray<RawCellRow>): Array<MutableRow> => {
  for (const r of rows) {
    let row = out[out.length - 1]
    if (row === undefined || row.key !== r.row_key) {
      row = {
        key: r.row_key,
        dimension_values: r.dimension_values ?? [],
        cells: new Map(),
      }
      out.push(row)
    }
    // One cell per agent: the first result of the agent in the row.
    if (!row.cells.has(r.agent_id))
      row.cells.set(r.agent_id, {
        resolution_result_id: r.id,
        agent_id: r.agent_id,
        value: r.value,
        resolution_status: r.resolution_status,
        confidence: r.confidence,
        is_overridden: r.is_overridden,
        sources: r.sources ?? [],
      })
  }
  return out
}

const readRows = async (
  conn: Conn,
  projectId: string,
  filter: GridFilter,
  sort: GridSort,
  page: { readonly limit: number; readonly offset: number },
  withSources: boolean,
): Promise<ReadonlyArray<GridRow>> => {
  const { rows } = await cellsQuery(projectId, filter, sort, page, withSources).execute(conn)
  return addCells([], rows)
}

/** One page of the grid's rows (by offset), with how many rows pass the filter in all. */
export const gridPage = (
  conn: Conn,
  projectId: string,
  filter: GridFilter,
  sort: GridSort,
  window: { readonly limit: number; readonly offset: number },
): Effect.Effect<{ readonly count: number; readonly rows: ReadonlyArray<GridRow> }> =>
  run(async () => {
    const [total, rows] = await Promise.all([
      sql<{ n: number }>`${rowsWith(projectId, filter, sort)} select count(*)::int as n from grouped`.execute(
        conn,
      ),
      readRows(conn, projectId, filter, sort, window, false),
    ])
    return { count: total.rows[0]?.n ?? 0, rows }
  })

/**
 * Every row of the grid, with each cell's citations, in batches as they are asked for: one query read
 * through a server-side cursor on a connection of its own (in one read-only snapshot, so the rows are of
 * one moment), `cellsPerFetch` cells at a time. The sorting and grouping are done once by the database;
 * what is in memory here is one fetch.
 */
export const gridRows = (
  kysely: Kysely<Database>,
  projectId: string,
  filter: GridFilter,
  sort: GridSort,
  cellsPerFetch: number,
): Stream.Stream<ReadonlyArray<GridRow>> =>
  Stream.unwrapScoped(
    Effect.gen(function* () {
      const conn = yield* scopedConnection(kysely)
      yield* Effect.acquireRelease(
        run(() => sql`begin isolation level repeatable read read only`.execute(conn)),
        () => Effect.ignore(run(() => sql`rollback`.execute(conn))),
      )
      const query = cellsQuery(projectId, filter, sort, undefined, true)
      yield* run(() => sql`declare grid_rows no scroll cursor for ${query}`.execute(conn))
      const size = Math.max(1, Math.floor(cellsPerFetch))
      // The last row of a fetch may have more cells in the next one: it is held back until then.
      let held: Array<MutableRow> = []
      let done = false
      return Stream.repeatEffectOption(
        Effect.gen(function* () {
          if (done) return yield* Effect.fail(Option.none())
          const { rows } = yield* run(() =>
            sql<RawCellRow>`fetch forward ${sql.raw(String(size))} from grid_rows`.execute(conn),
          )
          const grouped = addCells(held, rows)
          if (rows.length < size) {
            done = true
            held = []
            return grouped as ReadonlyArray<GridRow>
          }
          held = grouped.splice(grouped.length - 1, 1)
          return grouped as ReadonlyArray<GridRow>
        }),
      )
    }),
  )
