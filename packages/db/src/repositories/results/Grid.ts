/**
 * The results grid (part of the results aggregate, see `../Results.ts`): the project's current results as
 * a matrix, one row per combination of dimension instances (`result_rows`, kept by the database as results
 * are written) and one cell per agent, sorted, filtered and paged in SQL. A row's name is "All documents"
 * for results no dimension splits, else the result name; two combinations may share a name (two documents
 * of one file name) and are two rows.
 *
 * A page is read in the order of an index: by name through `result_rows`, by an agent's value through that
 * agent's current results (rows with a value first, then rows without one by name), from an offset or from
 * the key of a row (keyset), so a page deep in a project costs what the first does; its cells are then read
 * by the rows' keys, from one index alone. Counts come from the tallies when the filter is a resolution status
 * or an agent (or none), else from the matching rows (found once with a page's keys by name).
 */
import { Effect, Option, Stream } from "effect"
import { type Kysely, sql } from "kysely"
import { type Conn, scopedConnection } from "../../Db.ts"
import type { Database, ResultSource, StoredDimensionValue } from "../../Schema.ts"
import { byNameCounted, countRows, type KeyRow, pageKeys, tallied, toKey, walkOf } from "./GridKeys.ts"
import {
  ALL_DOCUMENTS,
  type GridCell,
  type GridFilter,
  type GridKey,
  type GridRow,
  type GridSort,
  type GridWindow,
} from "./GridTypes.ts"

export type { GridCell, GridFilter, GridKey, GridRow, GridSort, GridWindow }
export { ALL_DOCUMENTS }

const run = <A>(f: () => Promise<A>): Effect.Effect<A> => Effect.promise(f)

interface RawCellRow {
  position: number
  row_hash: string
  row_name: string
  dimension_values: ReadonlyArray<StoredDimensionValue> | null
  id: string
  agent_id: string
  value: unknown
  resolution_status: string
  confidence: number | null
  is_overridden: boolean
  latest_review_status: string | null
  sources: ReadonlyArray<ResultSource> | null
}

/** The cells of the rows (in the rows' order, then by agent, oldest first), by the rows' keys. */
const cellsOf = async (
  conn: Conn,
  projectId: string,
  keys: ReadonlyArray<KeyRow>,
  withSources: boolean,
): Promise<Array<GridRow>> => {
  if (keys.length === 0) return []
  const { rows } = await sql<RawCellRow>`
    select p.position, rr.row_hash, rr.row_name, av.dimension_values, rr.id, rr.agent_id,
           dxs_present_value(rr.value, rr.value_type) as value,
           rr.resolution_status, rr.confidence, rr.is_overridden, rr.latest_review_status,
           ${withSources ? sql`rr.sources` : sql`null::jsonb`} as sources
    from unnest(${sql.val(keys.map((k) => k.row_hash))}::uuid[]) with ordinality as p(row_hash, position)
    cross join lateral (select * from resolution_results rr
                        where rr.project_id = ${projectId}::uuid and rr.row_hash = p.row_hash and rr.is_current) rr
    join atomic_values av on av.id = rr.atomic_value_id
    order by p.position, rr.agent_created_at, rr.agent_id`.execute(conn)
  const out: Array<GridRow & { cells: Map<string, GridCell> }> = []
  for (const r of rows) {
    let row = out[out.length - 1]
    if (row === undefined || row.key !== r.row_hash) {
      row = {
        key: r.row_hash,
        name: r.row_name,
        dimension_values: r.dimension_values ?? [],
        cells: new Map(),
        position: toKey(keys[Number(r.position) - 1]!),
      }
      out.push(row)
    }
    row.cells.set(r.agent_id, {
      resolution_result_id: r.id,
      agent_id: r.agent_id,
      value: r.value,
      resolution_status: r.resolution_status,
      confidence: r.confidence,
      is_overridden: r.is_overridden,
      latest_review_status: r.latest_review_status,
      sources: r.sources ?? [],
    })
  }
  return out
}

/** What a page of the grid starts from: whether the project is the organisation's, its columns and its row count. */
export interface GridContext {
  readonly found: boolean
  /** Every agent of the project, oldest first. */
  readonly columns: ReadonlyArray<{
    readonly id: string
    readonly name: string
    readonly value_type: string
    readonly unit: string
  }>
  /** The project's dimension names by id (a dimension may have been renamed since its results were resolved). */
  readonly names: Readonly<Record<string, string>>
}

/** In one statement: the project's ownership, its agents (the grid's columns) and its dimensions' names. */
export const gridContext = (
  conn: Conn,
  organizationId: string,
  projectId: string,
): Effect.Effect<GridContext> =>
  run(async () => {
    const { rows } = await sql<GridContext>`
      select exists (select 1 from projects where id = ${projectId}::uuid and organization_id = ${organizationId}::uuid) as found,
        (select coalesce(json_agg(json_build_object('id', a.id, 'name', a.name, 'value_type', a.value_type, 'unit', a.unit)
                                  order by a.created_at, a.name, a.id), '[]'::json)
         from agents a where a.project_id = ${projectId}::uuid) as columns,
        (select coalesce(json_object_agg(d.id, d.name), '{}'::json) from dimensions d where d.project_id = ${projectId}::uuid) as names`.execute(
      conn,
    )
    return rows[0]!
  })

/** A page of the grid, its rows already the API's JSON. */
export interface GridPageJson {
  readonly count: number
  /** The offset of the page's first row. */
  readonly offset: number
  readonly rows: number
  /**
   * The rows, each a `V1ResultsGridRow`'s JSON, in order: one text per row, never the page's in one (a
   * text of over 128 kB, as a page of 50 rows is, is made outside the JavaScript heap's young generation
   * and kept until a full collection: the server's memory grew by 200 MB under pages of 50 rows).
   */
  readonly json: ReadonlyArray<string>
  readonly first?: GridKey | undefined
  readonly last?: GridKey | undefined
}

/**
 * The rows of a page as the grid's JSON, built by the database from their keys: per row its key, name,
 * dimension values (of its oldest agent's result, as its atomic value keeps them) and cells by agent.
 * A row's cells are read from their index alone (`resolution_results_cells` carries each one's kept text and
 * its row's name), already in the row's order, oldest agent first; a text too long for the index is null
 * there and made from the result itself.
 */
const rowsJson = async (
  conn: Conn,
  projectId: string,
  keys: ReadonlyArray<KeyRow>,
): Promise<ReadonlyArray<string>> => {
  if (keys.length === 0) return []
  // Assembled as text from the parts each result and atomic value keep, never built member by member. A
  // row's aggregate takes its cells in the order they come, the order of the index (PostgreSQL 15 sorts
  // for an aggregate's own order even when its input is in that order already); the rows in the keys'.
  const { rows } = await sql<{ json: string }>`
    select r.json
    from unnest(${sql.val(keys.map((k) => k.row_hash))}::uuid[]) with ordinality as p(row_hash, position)
    cross join lateral (
      select '{"key":"' || p.row_hash || '","name":' || to_json(min(c.row_name))::text
             || ',"dimension_values":' || coalesce((select av.dimension_values_json from atomic_values av
                                                    where av.id = (array_agg(c.atomic_value_id))[1]), '{}')
             || ',"cells":{' || string_agg(c.cell, ',') || '}}' as json
      from (select coalesce(rr.grid_row_name, (select x.row_name from resolution_results x where x.id = rr.id)) as row_name,
                   rr.atomic_value_id,
                   coalesce(rr.grid_cell_json,
                            (select dxs_grid_cell(x.agent_id, x.id, x.value, x.value_type, x.resolution_status, x.confidence,
                                                  x.is_overridden, x.latest_review_status, null)
                             from resolution_results x where x.id = rr.id)) as cell
            from resolution_results rr
            where rr.project_id = ${projectId}::uuid and rr.row_hash = p.row_hash and rr.is_current
            order by rr.agent_created_at, rr.agent_id) c
      -- A row whose cells went since its key was read is left out.
      having count(*) > 0
    ) r
    order by p.position`.execute(conn)
  return rows.map((r) => r.json)
}

/** How many rows pass the filter, and the keys of the page's rows. */
const countAndKeys = async (
  conn: Conn,
  projectId: string,
  filter: GridFilter,
  sort: GridSort,
  window: GridWindow,
): Promise<{ readonly count: number; readonly keys: ReadonlyArray<KeyRow> }> => {
  if (sort.by === "name" && !tallied(filter)) {
    const { walk, offset } = walkOf(window)
    const { count, rows } = await byNameCounted(
      conn,
      projectId,
      filter,
      sort.descending,
      walk,
      window.limit,
      offset,
    )
    return { count, keys: walk.backwards ? rows.reverse() : rows }
  }
  const [count, keys] = await Promise.all([
    countRows(conn, projectId, filter),
    pageKeys(conn, projectId, filter, sort, window),
  ])
  return { count, keys }
}

/**
 * One page of the grid's rows as its JSON, with how many rows pass the filter in all and the offset of its
 * first row: the count (from the tallies when it can), the keys of the page's rows in the order of an
 * index, then their cells.
 */
export const gridPageJson = (
  conn: Conn,
  projectId: string,
  filter: GridFilter,
  sort: GridSort,
  window: GridWindow,
): Effect.Effect<GridPageJson> =>
  run(async () => {
    const { count, keys } = await countAndKeys(conn, projectId, filter, sort, window)
    const json = await rowsJson(conn, projectId, keys)
    const offset =
      "offset" in window
        ? window.offset
        : window.before !== undefined
          ? Math.max(0, window.position - keys.length)
          : window.position
    const first = keys[0]
    const last = keys[keys.length - 1]
    return {
      count,
      offset,
      rows: keys.length,
      json,
      ...(first ? { first: toKey(first) } : {}),
      ...(last ? { last: toKey(last) } : {}),
    }
  })

/**
 * Every row of the grid, with each cell's citations, in batches as they are asked for: pages read by key
 * on a connection of its own in one read-only snapshot (so the rows are of one moment), `rowsPerFetch` rows
 * at a time; what is in memory here is one batch.
 */
export const gridRows = (
  kysely: Kysely<Database>,
  projectId: string,
  filter: GridFilter,
  sort: GridSort,
  rowsPerFetch: number,
): Stream.Stream<ReadonlyArray<GridRow>> =>
  Stream.unwrapScoped(
    Effect.gen(function* () {
      const conn = yield* scopedConnection(kysely)
      yield* Effect.acquireRelease(
        run(() => sql`begin isolation level repeatable read read only`.execute(conn)),
        () => Effect.ignore(run(() => sql`rollback`.execute(conn))),
      )
      const size = Math.max(1, Math.floor(rowsPerFetch))
      let after: GridKey | undefined
      let done = false
      return Stream.repeatEffectOption(
        Effect.gen(function* () {
          if (done) return yield* Effect.fail(Option.none())
          const keys = yield* run(() =>
            pageKeys(conn, projectId, filter, sort, { limit: size, after, position: 0 }),
          )
          if (keys.length < size) done = true
          const last = keys[keys.length - 1]
          if (last !== undefined) after = toKey(last)
          return yield* run(() => cellsOf(conn, projectId, keys, true))
        }),
      )
    }),
  )
