/**
 * Dimension instances and atomic values (part of the results aggregate, see `../Results.ts`): the
 * combinations of dimension values an agent has a result for.
 */
import { dimensionKey } from "@dxs/domain/Combinations"
import { Effect } from "effect"
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

const ensureInstance = (conn: Conn, instance: InstanceInput) =>
  run(() =>
    conn
      .insertInto("dimension_instances")
      .values({ dimension_id: instance.dimensionId, value: instance.value, document_id: instance.documentId })
      .onConflict((oc) => oc.columns(["dimension_id", "value", "document_id"]).doNothing())
      .returning("id")
      .executeTakeFirst()
      .then(
        (inserted) =>
          inserted ??
          conn
            .selectFrom("dimension_instances")
            .select("id")
            .where("dimension_id", "=", instance.dimensionId)
            .where("value", "=", instance.value)
            .where((eb) =>
              instance.documentId === null
                ? eb("document_id", "is", null)
                : eb("document_id", "=", instance.documentId),
            )
            .executeTakeFirstOrThrow(),
      ),
  )

/**
 * The atomic value of an agent for one combination of dimension instances (keyed by the instance ids),
 * created when missing: `insert … on conflict do nothing`, then a read, so callers may run
 * it outside their final transaction and hold no lock on a row that all tasks of the agent share.
 */
export const ensureAtomicValue = (
  conn: Conn,
  input: {
    readonly projectId: string
    readonly agentId: string
    readonly instances: ReadonlyArray<InstanceInput>
  },
): Effect.Effect<AtomicValue> =>
  Effect.gen(function* () {
    const stored: Array<StoredDimensionValue> = []
    for (const instance of input.instances) {
      const row = yield* ensureInstance(conn, instance)
      stored.push({
        id: row.id,
        dimension_id: instance.dimensionId,
        name: instance.name,
        dimension_value: instance.value,
        document_id: instance.documentId,
      })
    }
    const key = dimensionKey(stored.map((s) => s.id))
    const atomic = yield* run(() =>
      conn
        .insertInto("atomic_values")
        .values({
          project_id: input.projectId,
          agent_id: input.agentId,
          dimension_key: key,
          dimension_values: JSON.stringify(stored),
        })
        .onConflict((oc) => oc.columns(["agent_id", "dimension_key"]).doNothing())
        .returning("id")
        .executeTakeFirst()
        .then(
          (inserted) =>
            inserted ??
            conn
              .selectFrom("atomic_values")
              .select("id")
              .where("agent_id", "=", input.agentId)
              .where("dimension_key", "=", key)
              .executeTakeFirstOrThrow(),
        ),
    )
    return { id: atomic.id, dimensionValues: stored }
  })

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
