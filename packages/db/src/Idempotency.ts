/**
 * Remembered answers of requests sent with an Idempotency-Key (the rule is in services' Idempotency).
 * A key is scoped to an organisation and an operation, and lives 24 hours.
 */
import { type Kysely, sql } from "kysely"
import type { Conn } from "./Db.ts"
import type { Database } from "./Schema.ts"

export const IDEMPOTENCY_TTL_HOURS = 24

export interface IdempotencyScope {
  readonly organizationId: string
  readonly operation: string
  readonly key: string
}

export interface RememberedAnswer {
  readonly fingerprint: string
  readonly status: number
  readonly body: unknown
}

const live = sql<boolean>`created_at > now() - make_interval(hours => ${IDEMPOTENCY_TTL_HOURS})`

/** The answer remembered for this key, if one was committed in the last 24 hours. */
export const findRememberedAnswer = async (
  db: Conn,
  scope: IdempotencyScope,
): Promise<RememberedAnswer | undefined> =>
  db
    .selectFrom("idempotency_keys")
    .select(["fingerprint", "status", "body"])
    .where("organization_id", "=", scope.organizationId)
    .where("operation", "=", scope.operation)
    .where("key", "=", scope.key)
    .where(live)
    .executeTakeFirst()

/**
 * Takes the key for this transaction: true when it was free (or only held by an expired answer). When
 * another transaction holds it, this waits until that one ends: false when it committed (its answer is
 * then visible to `findRememberedAnswer`), true when it rolled back.
 */
export const claimIdempotencyKey = async (
  trx: Conn,
  scope: IdempotencyScope,
  fingerprint: string,
): Promise<boolean> => {
  const row = await trx
    .insertInto("idempotency_keys")
    .values({
      organization_id: scope.organizationId,
      operation: scope.operation,
      key: scope.key,
      fingerprint,
      status: 0,
      body: null,
    })
    .onConflict((oc) =>
      oc
        .columns(["organization_id", "operation", "key"])
        .doUpdateSet({
          fingerprint,
          status: 0,
          body: null,
          created_at: sql<Date>`now()`,
        })
        .where(
          sql<boolean>`idempotency_keys.created_at <= now() - make_interval(hours => ${IDEMPOTENCY_TTL_HOURS})`,
        ),
    )
    .returning("key")
    .executeTakeFirst()
  return row !== undefined
}

/** Stores the answer of the request that claimed the key, in its transaction. */
export const rememberAnswer = async (
  trx: Conn,
  scope: IdempotencyScope,
  answer: { readonly status: number; readonly body: unknown },
): Promise<void> => {
  await trx
    .updateTable("idempotency_keys")
    .set({ status: answer.status, body: JSON.stringify(answer.body) })
    .where("organization_id", "=", scope.organizationId)
    .where("operation", "=", scope.operation)
    .where("key", "=", scope.key)
    .execute()
}

/** Housekeeping: forgets answers older than 24 hours. Returns how many. */
export const deleteExpiredIdempotencyKeys = async (db: Kysely<Database>): Promise<number> => {
  const result = await db
    .deleteFrom("idempotency_keys")
    .where(sql<boolean>`created_at <= now() - make_interval(hours => ${IDEMPOTENCY_TTL_HOURS})`)
    .executeTakeFirst()
  return Number(result.numDeletedRows)
}
