/**
 * Deliveries as work: one `webhook_deliveries` row per event and subscription (idempotent), and the
 * `webhook-deliver` task that sends it, enqueued in the same transaction.
 */
import type { Conn } from "@dxs/db"
import { enqueue } from "@dxs/db/TaskQueue"

export const WEBHOOK_DELIVER_TASK = "webhook-deliver"
export const WEBHOOK_FANOUT_TASK = "webhook-fanout"

export interface NewDelivery {
  readonly subscriptionId: string
  /** Null for a test ping. */
  readonly eventId: string | null
  readonly eventType: string
  readonly data: Record<string, unknown>
  readonly occurredAt: Date | string
}

/** Creates the delivery (once per event and subscription) and enqueues its task; returns its id. */
export const createDelivery = async (conn: Conn, delivery: NewDelivery): Promise<string> => {
  const inserted = await conn
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
  const id =
    inserted?.id ??
    (
      await conn
        .selectFrom("webhook_deliveries")
        .select("id")
        .where("event_id", "=", delivery.eventId)
        .where("subscription_id", "=", delivery.subscriptionId)
        .executeTakeFirstOrThrow()
    ).id
  await enqueue(conn, {
    kind: WEBHOOK_DELIVER_TASK,
    idempotencyKey: `${WEBHOOK_DELIVER_TASK}:${id}`,
    payload: { deliveryId: id },
    maxAttempts: 1000,
  })
  return id
}

/** Enqueued with an event (same transaction): creates the event's deliveries. */
export const enqueueFanout = (conn: Conn, eventId: string) =>
  enqueue(conn, {
    kind: WEBHOOK_FANOUT_TASK,
    idempotencyKey: `${WEBHOOK_FANOUT_TASK}:${eventId}`,
    payload: { eventId },
  })
