/**
 * Webhook subscriptions, their deliveries and each delivery's attempts, and the reads of `events` that
 * feed the fan-out. Secrets and header values arrive and leave encrypted: the caller holds the key.
 * Functions that write several rows expect to run in the caller's transaction.
 */
import { Effect } from "effect"
import { type Selectable, sql } from "kysely"
import type { Conn } from "../Db.ts"
import type {
  EventRow,
  WebhookAttemptsTable,
  WebhookDeliveriesTable,
  WebhookSubscriptionsTable,
} from "../Schema.ts"

// ---------------------------------------------------------------------------------------------------
// Subscriptions

const columns = [
  "id",
  "name",
  "url",
  "subscribed_events",
  "is_active",
  "headers",
  "created_at",
  "updated_at",
] as const

/** A subscription as its owner sees it (`headers`: name → encrypted value; the secret stays out). */
export type SubscriptionRow = Pick<Selectable<WebhookSubscriptionsTable>, (typeof columns)[number]>

/** A subscription as delivery needs it: with its encrypted secret. */
export type SubscriptionForDeliveryRow = Selectable<WebhookSubscriptionsTable>

/** The active subscription `id` of the organisation. */
export const findActiveSubscription = (
  db: Conn,
  organizationId: string,
  id: string,
): Effect.Effect<SubscriptionRow | undefined> =>
  Effect.promise(() =>
    db
      .selectFrom("webhook_subscriptions")
      .select(columns)
      .where("id", "=", id)
      .where("organization_id", "=", organizationId)
      .where("is_active", "=", true)
      .executeTakeFirst(),
  )

/** The organisation's active subscriptions, newest first. */
export const listActiveSubscriptions = (
  db: Conn,
  organizationId: string,
): Effect.Effect<ReadonlyArray<SubscriptionRow>> =>
  Effect.promise(() =>
    db
      .selectFrom("webhook_subscriptions")
      .select(columns)
      .where("organization_id", "=", organizationId)
      .where("is_active", "=", true)
      .orderBy("created_at", "desc")
      .orderBy("id", "desc")
      .execute(),
  )

export interface NewSubscriptionRow {
  readonly organizationId: string
  readonly name: string
  readonly url: string
  /** JSON text of the event names. */
  readonly subscribedEvents: string
  /** JSON text of header name → encrypted value. */
  readonly headers: string
  /** Encrypted. */
  readonly secret: string
}

export const insertSubscription = (db: Conn, s: NewSubscriptionRow): Effect.Effect<SubscriptionRow> =>
  Effect.promise(() =>
    db
      .insertInto("webhook_subscriptions")
      .values({
        organization_id: s.organizationId,
        name: s.name,
        url: s.url,
        subscribed_events: s.subscribedEvents,
        headers: s.headers,
        secret: s.secret,
      })
      .returning(columns)
      .executeTakeFirstOrThrow(),
  )

/** The members to change (JSON text for `subscribedEvents` and `headers`, as on insert). */
export interface SubscriptionPatch {
  readonly name?: string
  readonly url?: string
  readonly subscribedEvents?: string
  readonly headers?: string
}

/** Changes the supplied members and stamps `updated_at`; the subscription as it is now. */
export const updateSubscription = (
  db: Conn,
  id: string,
  patch: SubscriptionPatch,
): Effect.Effect<SubscriptionRow> =>
  Effect.promise(() =>
    db
      .updateTable("webhook_subscriptions")
      .set({
        ...(patch.name !== undefined ? { name: patch.name } : {}),
        ...(patch.url !== undefined ? { url: patch.url } : {}),
        ...(patch.subscribedEvents !== undefined ? { subscribed_events: patch.subscribedEvents } : {}),
        ...(patch.headers !== undefined ? { headers: patch.headers } : {}),
        updated_at: sql`now()`,
      })
      .where("id", "=", id)
      .returning(columns)
      .executeTakeFirstOrThrow(),
  )

/** Replaces the (encrypted) signing secret and stamps `updated_at`. */
export const replaceSubscriptionSecret = (db: Conn, id: string, secret: string): Effect.Effect<void> =>
  Effect.promise(() =>
    db
      .updateTable("webhook_subscriptions")
      .set({ secret, updated_at: sql`now()` })
      .where("id", "=", id)
      .execute(),
  ).pipe(Effect.asVoid)

/** Deletes the organisation's subscription (its deliveries and attempts go with it); whether it existed. */
export const deleteSubscription = (db: Conn, organizationId: string, id: string): Effect.Effect<boolean> =>
  Effect.promise(() =>
    db
      .deleteFrom("webhook_subscriptions")
      .where("id", "=", id)
      .where("organization_id", "=", organizationId)
      .executeTakeFirst(),
  ).pipe(Effect.map((deleted) => Number(deleted.numDeletedRows) > 0))

export const findSubscriptionForDelivery = (
  db: Conn,
  id: string,
): Effect.Effect<SubscriptionForDeliveryRow | undefined> =>
  Effect.promise(() =>
    db.selectFrom("webhook_subscriptions").selectAll().where("id", "=", id).executeTakeFirst(),
  )

export const deactivateSubscription = (db: Conn, id: string, reason: string): Effect.Effect<void> =>
  Effect.promise(() =>
    db
      .updateTable("webhook_subscriptions")
      .set({ is_active: false, deactivated_reason: reason, updated_at: sql`now()` })
      .where("id", "=", id)
      .execute(),
  ).pipe(Effect.asVoid)

// ---------------------------------------------------------------------------------------------------
// Events and fan-out

export const findEvent = (db: Conn, id: string): Effect.Effect<EventRow | undefined> =>
  Effect.promise(() => db.selectFrom("events").selectAll().where("id", "=", id).executeTakeFirst())

/**
 * The organisation's active subscriptions to events of `type`, oldest first, key-share locked: none can be
 * deleted while the caller's transaction creates their deliveries.
 */
export const lockSubscribersOf = (
  db: Conn,
  organizationId: string,
  type: string,
): Effect.Effect<ReadonlyArray<string>> =>
  Effect.promise(() =>
    db
      .selectFrom("webhook_subscriptions")
      .select("id")
      .where("organization_id", "=", organizationId)
      .where("is_active", "=", true)
      .where(sql<boolean>`subscribed_events @> ${JSON.stringify([type])}::jsonb`)
      .orderBy("created_at")
      .orderBy("id")
      .forKeyShare()
      .execute(),
  ).pipe(Effect.map((rows) => rows.map((r) => r.id)))

// ---------------------------------------------------------------------------------------------------
// Deliveries

export interface NewDeliveryRow {
  readonly subscriptionId: string
  /** Null for a test ping. */
  readonly eventId: string | null
  readonly eventType: string
  readonly data: Record<string, unknown>
  readonly occurredAt: Date | string
}

/** Creates a pending delivery, due now, once per event and subscription; its id, new or existing. */
export const insertDelivery = (db: Conn, delivery: NewDeliveryRow): Effect.Effect<string> =>
  Effect.promise(async () => {
    const inserted = await db
      .insertInto("webhook_deliveries")
      .values({
        subscription_id: delivery.subscriptionId,
        event_id: delivery.eventId,
        event_type: delivery.eventType,
        data: JSON.stringify(delivery.data),
        occurred_at: delivery.occurredAt,
        next_attempt_at: new Date(),
      })
      .onConflict((oc) =>
        oc.columns(["event_id", "subscription_id"]).where("event_id", "is not", null).doNothing(),
      )
      .returning("id")
      .executeTakeFirst()
    if (inserted !== undefined) return inserted.id
    const existing = await db
      .selectFrom("webhook_deliveries")
      .select("id")
      .where("event_id", "=", delivery.eventId)
      .where("subscription_id", "=", delivery.subscriptionId)
      .executeTakeFirstOrThrow()
    return existing.id
  })

export type DeliveryRow = Selectable<WebhookDeliveriesTable>

export const findDelivery = (db: Conn, id: string): Effect.Effect<DeliveryRow | undefined> =>
  Effect.promise(() =>
    db.selectFrom("webhook_deliveries").selectAll().where("id", "=", id).executeTakeFirst(),
  )

/** The delivery's status, its row locked for update until the caller's transaction ends. */
export const lockDeliveryStatus = (db: Conn, id: string): Effect.Effect<DeliveryRow["status"] | undefined> =>
  Effect.promise(() =>
    db
      .selectFrom("webhook_deliveries")
      .select(["status"])
      .where("id", "=", id)
      .forUpdate()
      .executeTakeFirst(),
  ).pipe(Effect.map((row) => row?.status))

export const countDeliveries = (db: Conn, subscriptionId: string): Effect.Effect<number> =>
  Effect.promise(() =>
    db
      .selectFrom("webhook_deliveries")
      .select((eb) => eb.fn.countAll<string>().as("count"))
      .where("subscription_id", "=", subscriptionId)
      .executeTakeFirstOrThrow(),
  ).pipe(Effect.map(({ count }) => Number(count)))

export type DeliveryListRow = Omit<DeliveryRow, "subscription_id" | "event_id" | "data" | "occurred_at">

/** A page of the subscription's deliveries, newest first. */
export const listDeliveries = (
  db: Conn,
  subscriptionId: string,
  page: { readonly limit: number; readonly offset: number },
): Effect.Effect<ReadonlyArray<DeliveryListRow>> =>
  Effect.promise(() =>
    db
      .selectFrom("webhook_deliveries")
      .select([
        "id",
        "event_type",
        "status",
        "attempt_count",
        "last_status_code",
        "last_error",
        "created_at",
        "delivered_at",
        "next_attempt_at",
      ])
      .where("subscription_id", "=", subscriptionId)
      .orderBy("created_at", "desc")
      .orderBy("id", "desc")
      .limit(page.limit)
      .offset(page.offset)
      .execute(),
  )

/** A delivery that will not be sent because its subscription is inactive: failed, unless settled already. */
export const failPendingDelivery = (db: Conn, id: string, error: string): Effect.Effect<void> =>
  Effect.promise(() =>
    db
      .updateTable("webhook_deliveries")
      .set({ status: "failed", last_error: error, next_attempt_at: null })
      .where("id", "=", id)
      .where("status", "=", "pending")
      .execute(),
  ).pipe(Effect.asVoid)

/** How an attempt settles a pending delivery. */
export interface DeliverySettlement {
  readonly status: "pending" | "succeeded" | "failed"
  readonly lastError: string | null
  /** When still pending: the delay before the next attempt (from the database's clock); else null. */
  readonly nextAttemptInMs: number | null
  readonly attemptCount: number
  readonly lastStatusCode: number | null
}

/** Settles a still pending delivery; `delivered_at` is stamped when it succeeded. */
export const settleDelivery = (db: Conn, id: string, s: DeliverySettlement): Effect.Effect<void> =>
  Effect.promise(() =>
    db
      .updateTable("webhook_deliveries")
      .set({
        status: s.status,
        next_attempt_at:
          s.nextAttemptInMs === null
            ? null
            : sql<Date>`now() + ${s.nextAttemptInMs} * interval '1 millisecond'`,
        last_error: s.lastError,
        ...(s.status === "succeeded" ? { delivered_at: sql<Date>`now()` } : {}),
        attempt_count: s.attemptCount,
        last_status_code: s.lastStatusCode,
      })
      .where("id", "=", id)
      .where("status", "=", "pending")
      .execute(),
  ).pipe(Effect.asVoid)

// ---------------------------------------------------------------------------------------------------
// Attempts

export type AttemptRow = Omit<Selectable<WebhookAttemptsTable>, "url" | "response_body">

/** The attempts of these deliveries, in order of their number. */
export const listAttempts = (
  db: Conn,
  deliveryIds: ReadonlyArray<string>,
): Effect.Effect<ReadonlyArray<AttemptRow>> =>
  deliveryIds.length === 0
    ? Effect.succeed([])
    : Effect.promise(() =>
        db
          .selectFrom("webhook_attempts")
          .select(["id", "delivery_id", "number", "status_code", "error", "duration_ms", "attempted_at"])
          .where("delivery_id", "in", deliveryIds)
          .orderBy("number")
          .orderBy("attempted_at")
          .execute(),
      )

/**
 * Counts one more attempt of a pending delivery and records it, without an outcome yet, before anything
 * is sent: an attempt cut off by a crash stays in the log. Earlier attempts still without an answer or an
 * error are marked with `interruptedError`. The attempt's number, or undefined when the delivery is no
 * longer pending (or gone). Run in a transaction.
 */
export const beginAttempt = (
  db: Conn,
  attempt: {
    readonly id: string
    readonly deliveryId: string
    readonly url: string
    readonly interruptedError: string
  },
): Effect.Effect<number | undefined> =>
  Effect.promise(async () => {
    const counted = await db
      .updateTable("webhook_deliveries")
      .set((eb) => ({ attempt_count: eb("attempt_count", "+", 1) }))
      .where("id", "=", attempt.deliveryId)
      .where("status", "=", "pending")
      .returning("attempt_count")
      .executeTakeFirst()
    if (counted === undefined) return undefined
    await db
      .updateTable("webhook_attempts")
      .set({ error: attempt.interruptedError })
      .where("delivery_id", "=", attempt.deliveryId)
      .where("status_code", "is", null)
      .where("error", "is", null)
      .execute()
    await db
      .insertInto("webhook_attempts")
      .values({
        id: attempt.id,
        delivery_id: attempt.deliveryId,
        number: counted.attempt_count,
        url: attempt.url,
      })
      .execute()
    return counted.attempt_count
  })

/** What came of an attempt; members left out keep their stored value. */
export interface AttemptOutcomeRow {
  readonly status_code?: number | null
  readonly error?: string | null
  readonly duration_ms?: number
  readonly response_body?: string | null
}

export const recordAttemptOutcome = (db: Conn, id: string, outcome: AttemptOutcomeRow): Effect.Effect<void> =>
  Effect.promise(() => db.updateTable("webhook_attempts").set(outcome).where("id", "=", id).execute()).pipe(
    Effect.asVoid,
  )
