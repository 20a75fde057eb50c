/**
 * Deliveries as work: one `webhook_deliveries` row per event and subscription (idempotent), and the
 * `webhook-deliver` task that sends it, enqueued in the same transaction.
 */
import type { Conn } from "@dxs/db"
import {
  WEBHOOK_DELIVER_TASK,
  WEBHOOK_FANOUT_TASK,
  webhookDeliverTaskKey,
  webhookFanoutTaskKey,
} from "@dxs/db/repositories/TaskKinds"
import * as Webhooks from "@dxs/db/repositories/Webhooks"
import { enqueue } from "@dxs/db/TaskQueue"
import { Effect } from "effect"

export { WEBHOOK_DELIVER_TASK, WEBHOOK_FANOUT_TASK } from "@dxs/db/repositories/TaskKinds"

export type NewDelivery = Webhooks.NewDeliveryRow

/** Creates the delivery (once per event and subscription) and enqueues its task; returns its id. */
export const addDelivery = (conn: Conn, delivery: NewDelivery): Effect.Effect<string> =>
  Effect.gen(function* () {
    const id = yield* Webhooks.insertDelivery(conn, delivery)
    yield* Effect.promise(() =>
      enqueue(conn, {
        kind: WEBHOOK_DELIVER_TASK,
        idempotencyKey: webhookDeliverTaskKey(id),
        payload: { deliveryId: id },
        maxAttempts: 1000,
      }),
    )
    return id
  })

/** Enqueued with an event (same transaction): creates the event's deliveries. */
export const enqueueFanout = (conn: Conn, eventId: string) =>
  enqueue(conn, {
    kind: WEBHOOK_FANOUT_TASK,
    idempotencyKey: webhookFanoutTaskKey(eventId),
    payload: { eventId },
  })
