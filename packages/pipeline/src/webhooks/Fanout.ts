/**
 * The `webhook-fanout` task, enqueued with each event: one delivery per active subscription of the event's
 * organisation that subscribed to its type, created in the transaction that completes the task. Running it
 * twice creates nothing twice (one delivery per event and subscription).
 */
import type { TaskRow } from "@dxs/db"
import * as Webhooks from "@dxs/db/repositories/Webhooks"
import type { TaskDb, TaskTrx } from "@dxs/db/TaskQueue"
import { Effect } from "effect"
import { createDelivery } from "./Queue.ts"

/** What the webhook handlers get besides their task (a structural subset of the worker's context). */
export interface WebhookTaskContext {
  readonly workerId: string
  readonly db: TaskDb
  readonly signal: AbortSignal
  readonly complete: (trx: TaskTrx) => Promise<void>
}

const eventIdOf = (task: TaskRow): string | undefined => {
  const id = (task.payload as { eventId?: unknown }).eventId
  return typeof id === "string" ? id : undefined
}

/** Creates the deliveries of one event (idempotent); returns their ids. */
export const fanOutEvent = async (trx: TaskTrx, eventId: string): Promise<ReadonlyArray<string>> => {
  const event = await Effect.runPromise(Webhooks.findEvent(trx, eventId))
  if (!event) return []
  const subscriptionIds = await Effect.runPromise(
    Webhooks.lockSubscribersOf(trx, event.organization_id, event.type),
  )
  const ids: string[] = []
  for (const subscriptionId of subscriptionIds)
    ids.push(
      await createDelivery(trx, {
        subscriptionId,
        eventId: event.id,
        eventType: event.type,
        data: event.data,
        occurredAt: event.occurred_at,
      }),
    )
  return ids
}

export const webhookFanoutHandler = async (task: TaskRow, ctx: WebhookTaskContext): Promise<void> => {
  const eventId = eventIdOf(task)
  await ctx.db.transaction().execute(async (trx) => {
    if (eventId !== undefined) await fanOutEvent(trx, eventId)
    await ctx.complete(trx)
  })
}
