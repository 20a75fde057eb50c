/**
 * What a run changed (`run_value_changes`, written with the results by `Results.writeResults`): the values
 * of a run that differ from the values before it, for the same agent and combination of dimension values,
 * each side with its citations. Driver errors are defects.
 */
import { Effect } from "effect"
import { sql } from "kysely"
import type { Conn } from "../Db.ts"
import type { ResultSource, StoredDimensionValue } from "../Schema.ts"

const run = <A>(f: () => Promise<A>): Effect.Effect<A> => Effect.promise(f)

/** A run of the project by its number, with the number of the run before it (null for the first). */
export interface NumberedRun {
  readonly id: string
  readonly run_number: number
  readonly status: string
  readonly previous_run_number: number | null
}

export const findRunByNumber = (
  conn: Conn,
  projectId: string,
  runNumber: number,
): Effect.Effect<NumberedRun | undefined> =>
  run(async () => {
    const { rows } = await sql<NumberedRun>`
      select r.id, r.run_number, r.status,
             (select max(p.run_number) from runs p where p.project_id = r.project_id and p.run_number < r.run_number)
               as previous_run_number
      from runs r where r.project_id = ${projectId}::uuid and r.run_number = ${runNumber}::int`.execute(conn)
    return rows[0]
  })

export interface RunChangeRow {
  readonly id: string
  readonly agent_id: string
  readonly agent_name: string
  readonly atomic_value_id: string
  readonly result_name: string
  readonly dimension_values: ReadonlyArray<StoredDimensionValue> | null
  /** The agent's current result of that combination, when it still has one. */
  readonly resolution_result_id: string | null
  readonly previous_value: unknown
  readonly previous_status: string
  readonly previous_sources: ReadonlyArray<ResultSource>
  readonly previous_references: Record<string, readonly [string, number | null]>
  readonly value: unknown
  readonly status: string
  readonly sources: ReadonlyArray<ResultSource>
  readonly references: Record<string, readonly [string, number | null]>
}

/** How many values the run changed. */
export const countRunChanges = (conn: Conn, runId: string): Effect.Effect<number> =>
  run(async () => {
    const { rows } = await sql<{ n: number }>`
      select count(*)::int as n from run_value_changes where run_id = ${runId}::uuid`.execute(conn)
    return rows[0]?.n ?? 0
  })

/** A page of the run's changes, by agent (oldest first) and result name; values as the API presents them. */
export const listRunChanges = (
  conn: Conn,
  runId: string,
  page: { readonly limit: number; readonly offset: number },
): Effect.Effect<ReadonlyArray<RunChangeRow>> =>
  run(async () => {
    const { rows } = await sql<RunChangeRow>`
      select c.id, c.agent_id, a.name as agent_name, c.atomic_value_id, c.result_name, av.dimension_values,
             rr.id as resolution_result_id,
             dxs_present_value(c.previous_value, a.value_type) as previous_value, c.previous_status,
             c.previous_sources, c.previous_references,
             dxs_present_value(c.value, a.value_type) as value, c.status, c.sources, c."references"
      from run_value_changes c
      join agents a on a.id = c.agent_id
      join atomic_values av on av.id = c.atomic_value_id
      left join resolution_results rr on rr.atomic_value_id = c.atomic_value_id and rr.is_current
      where c.run_id = ${runId}::uuid
      order by a.created_at, a.id, c.result_name, c.id
      limit ${page.limit}::int offset ${page.offset}::int`.execute(conn)
    return rows
  })
