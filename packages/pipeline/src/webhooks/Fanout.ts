/**
 * The `webhook-fanout` task, enqueued with each event: one delivery per active subscription of the event's
 * organisation that subscribed to its type, created in the transaction that completes the task. Running it
 * twice creates nothing twice (one delivery per event and subscription).
 */
import type { TaskRow } from "@dxs/db"
import type { TaskDb, TaskTrx } from "@dxs/db/TaskQueue"
import { sql } from "kysely"
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
  const event = await trx.selectFrom("events").selectAll().where("id", "=", eventId).executeTakeFirst()
  if (!event) return []
  // Key-share locks: a subscription cannot be deleted while its delivery is being created.
  const subscriptions = await trx
    .selectFrom("webhook_subscriptions")
    .select("id")
    .where("organization_id", "=", event.organization_id)
    .where("is_active", "=", true)
    .where(sql<boolean>`subscribed_events @> ${JSON.stringify([event.type])}::jsonb`)
    .orderBy("created_at")
    .orderBy("id")
    .forKeyShare()
    .execute()
  const ids: string[] = []
  for (const subscription of subscriptions)
    ids.push(
      await createDelivery(trx, {
        subscriptionId: subscription.id,
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
