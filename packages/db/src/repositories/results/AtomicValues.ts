/**
 * Dimension instances and atomic values (part of the results aggregate, see `../Results.ts`): the
 * combinations of dimension values an agent has a result for.
 */
import { dimensionKey } from "@dxs/domain/Combinations"
import { Effect } from "effect"
import { sql } from "kysely"
import type { Conn } from "../../Db.ts"
import type { StoredDimensionValue } from "../../Schema.ts"

const run = <A>(f: () => Promise<A>): Effect.Effect<A> => Effect.promise(f)

/** One dimension value of a result: the document's own for a Document dimension, else shared (null). */
export interface InstanceInput {
  readonly dimensionId: string
  /** The dimension's name, stored with the atomic value. */
  readonly name: string
  readonly value: string
  readonly documentId: string | null
}

export interface AtomicValue {
  readonly id: string
  readonly dimensionValues: ReadonlyArray<StoredDimensionValue>
}

/** An instance's identity: its dimension, value and document (null for a shared one). */
const instanceKey = (dimensionId: string, value: string, documentId: string | null) =>
  JSON.stringify([dimensionId, value, documentId])

/** Tries to make every missing row and reads back what exists, until nothing is missing (a few rounds at most). */
const untilComplete = async <K, R>(
  wanted: ReadonlyArray<K>,
  keyOf: (k: K) => string,
  round: (missing: ReadonlyArray<K>) => Promise<ReadonlyArray<R>>,
  keyOfRow: (r: R) => string,
): Promise<Map<string, R>> => {
  const found = new Map<string, R>()
  let missing = [...new Map(wanted.map((k) => [keyOf(k), k])).values()]
  // A row another transaction inserts meanwhile is not in this statement's snapshot: the next round reads it.
  for (let attempt = 0; missing.length > 0; attempt++) {
    if (attempt >= 5) throw new Error(`rows still missing after ${attempt} rounds: ${missing.length}`)
    for (const r of await round(missing)) found.set(keyOfRow(r), r)
    missing = missing.filter((k) => !found.has(keyOf(k)))
  }
  return found
}

/** The ids of the instances, created when missing (one statement for all of them). */
const ensureInstances = (conn: Conn, instances: ReadonlyArray<InstanceInput>) =>
  untilComplete(
    instances,
    (i) => instanceKey(i.dimensionId, i.value, i.documentId),
    async (missing) => {
      const { rows } = await sql<{
        id: string
        dimension_id: string
        value: string
        document_id: string | null
      }>`
        with wanted as (
          select * from unnest(${sql.val(missing.map((i) => i.dimensionId))}::uuid[],
                               ${sql.val(missing.map((i) => i.value))}::text[],
                               ${sql.val(missing.map((i) => i.documentId))}::uuid[]) as w(dimension_id, value, document_id)
        ), made as (
          insert into dimension_instances (dimension_id, value, document_id)
            select dimension_id, value, document_id from wanted
            -- One order for every writer: two statements making the same rows never wait on each other in turn.
            order by dimension_id, value, document_id
            on conflict (dimension_id, value, document_id) do nothing
            returning id, dimension_id, value, document_id
        )
        select id, dimension_id, value, document_id from made
        union all
        select di.id, di.dimension_id, di.value, di.document_id from dimension_instances di
          join wanted w on di.dimension_id = w.dimension_id and di.value = w.value
            and di.document_id is not distinct from w.document_id`.execute(conn)
      return rows
    },
    (r) => instanceKey(r.dimension_id, r.value, r.document_id),
  )

/**
 * The atomic values of agents for combinations of dimension instances (each keyed by its instance ids),
 * created when missing, in the order asked: two statements whatever their number (the instances, then the
 * atomic values), each `insert … on conflict do nothing` with a read of what existed, so callers may run it
 * outside their final transaction and hold no lock on a row that all tasks of an agent share.
 */
export const ensureAtomicValues = (
  conn: Conn,
  projectId: string,
  requests: ReadonlyArray<{ readonly agentId: string; readonly instances: ReadonlyArray<InstanceInput> }>,
  /** Agents' atomic values of no dimension instances already read, by agent: with them, no statement. */
  plain: ReadonlyMap<string, string | null> = new Map(),
): Effect.Effect<ReadonlyArray<AtomicValue>> => {
  const known = requests.map((r) => (r.instances.length === 0 ? plain.get(r.agentId) : null) ?? undefined)
  return known.every((id) => id !== undefined)
    ? Effect.succeed(known.map((id) => ({ id, dimensionValues: [] })))
    : run(async () => {
        const instances = await ensureInstances(
          conn,
          requests.flatMap((r) => r.instances),
        )
        const combinations = requests.map((r) => {
          const stored: Array<StoredDimensionValue> = r.instances.map((i) => ({
            id: instances.get(instanceKey(i.dimensionId, i.value, i.documentId))!.id,
            dimension_id: i.dimensionId,
            name: i.name,
            dimension_value: i.value,
            document_id: i.documentId,
          }))
          return { agentId: r.agentId, key: dimensionKey(stored.map((s) => s.id)), stored }
        })
        const atomic = await untilComplete(
          combinations,
          (c) => JSON.stringify([c.agentId, c.key]),
          async (missing) => {
            const { rows } = await sql<{ id: string; agent_id: string; dimension_key: string }>`
              with wanted as (
                select * from unnest(${sql.val(missing.map((c) => c.agentId))}::uuid[],
                                     ${sql.val(missing.map((c) => c.key))}::text[],
                                     ${sql.val(missing.map((c) => JSON.stringify(c.stored)))}::jsonb[])
                  with ordinality as w(agent_id, dimension_key, dimension_values, position)
              ), made as (
                -- Stamped a microsecond apart in the order asked: the order in which values were found (the
                -- order of dynamic dimension values) survives rows made by one statement.
                insert into atomic_values (project_id, agent_id, dimension_key, dimension_values, created_at)
                  select ${projectId}::uuid, agent_id, dimension_key, dimension_values,
                         now() + (position - 1) * interval '1 microsecond'
                  from wanted
                  order by agent_id, dimension_key
                  on conflict (agent_id, dimension_key) do nothing
                  returning id, agent_id, dimension_key
              )
              select id, agent_id, dimension_key from made
              union all
              select av.id, av.agent_id, av.dimension_key from atomic_values av
                join wanted w on av.agent_id = w.agent_id and av.dimension_key = w.dimension_key`.execute(
              conn,
            )
            return rows
          },
          (r) => JSON.stringify([r.agent_id, r.dimension_key]),
        )
        return combinations.map((c) => ({
          id: atomic.get(JSON.stringify([c.agentId, c.key]))!.id,
          dimensionValues: c.stored,
        }))
      })
}

/** The atomic value of an agent for one combination of dimension instances (see `ensureAtomicValues`). */
export const ensureAtomicValue = (
  conn: Conn,
  input: {
    readonly projectId: string
    readonly agentId: string
    readonly instances: ReadonlyArray<InstanceInput>
  },
): Effect.Effect<AtomicValue> =>
  Effect.map(ensureAtomicValues(conn, input.projectId, [input]), (values) => values[0]!)

/** The agent's atomic values that have an extraction at this config version. */
export const currentAtomicValues = (
  conn: Conn,
  agentId: string,
  configVersion: number,
): Effect.Effect<ReadonlyArray<{ id: string; dimension_values: ReadonlyArray<StoredDimensionValue> }>> =>
  run(() =>
    conn
      .selectFrom("atomic_values as av")
      .select(["av.id", "av.dimension_values"])
      .where("av.agent_id", "=", agentId)
      .where((eb) =>
        eb.exists(
          eb
            .selectFrom("extractions as e")
            .select("e.id")
            .whereRef("e.atomic_value_id", "=", "av.id")
            .where("e.agent_config_version", "=", configVersion),
        ),
      )
      .execute(),
  )
