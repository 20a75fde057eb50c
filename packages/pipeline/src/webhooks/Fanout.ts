/**
 * The `webhook-fanout` task, enqueued with each event: one delivery per active subscription of the event's
 * organisation that subscribed to its type, created in the transaction that completes the task. Running it
 * twice creates nothing twice (one delivery per event and subscription).
 */
import { type TaskRow, transactionOn } from "@dxs/db"
import * as Webhooks from "@dxs/db/repositories/Webhooks"
import type { TaskDb, TaskTrx } from "@dxs/db/TaskQueue"
import { Effect } from "effect"
import { addDelivery } from "./Queue.ts"

/** What the webhook handlers get besides their task (a structural subset of the worker's context). */
export interface WebhookTaskContext {
  readonly workerId: string
  readonly db: TaskDb
  readonly complete: (trx: TaskTrx) => Promise<void>
}

const eventIdOf = (task: TaskRow): string | undefined => {
  const id = (task.payload as { eventId?: unknown }).eventId
  return typeof id === "string" ? id : undefined
}

/** Creates the deliveries of one event (idempotent); returns their ids. */
export const fanOutEvent = (trx: TaskTrx, eventId: string): Effect.Effect<ReadonlyArray<string>> =>
  Effect.gen(function* () {
    const event = yield* Webhooks.findEvent(trx, eventId)
    if (!event) return []
    const subscriptionIds = yield* Webhooks.lockSubscribersOf(trx, event.organization_id, event.type)
    return yield* Effect.forEach(subscriptionIds, (subscriptionId) =>
      addDelivery(trx, {
        subscriptionId,
        eventId: event.id,
        eventType: event.type,
        data: event.data,
        occurredAt: event.occurred_at,
      }),
    )
  })

export const webhookFanoutHandler = (task: TaskRow, ctx: WebhookTaskContext): Effect.Effect<void> => {
  const eventId = eventIdOf(task)
  return transactionOn(ctx.db, (trx) =>
    Effect.zipRight(
      eventId === undefined ? Effect.void : fanOutEvent(trx, eventId),
      Effect.promise(() => ctx.complete(trx)),
    ),
  )
}
