import { randomUUID } from "node:crypto"
import { useTestDatabase } from "@dxs/testing/TestDatabase"
import { Effect } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { makeKysely } from "../../src/Db.ts"
import * as Access from "../../src/repositories/Access.ts"
import * as Webhooks from "../../src/repositories/Webhooks.ts"

const url = await useTestDatabase()
const db = makeKysely(url, 4)
afterAll(() => db.destroy())

const run = Effect.runPromise

const subscription = (organizationId: string, events: ReadonlyArray<string>) =>
  run(
    Webhooks.insertSubscription(db, {
      organizationId,
      name: "hook",
      url: "https://example.org/hook",
      subscribedEvents: JSON.stringify(events),
      headers: JSON.stringify({ "x-token": "encrypted" }),
      secret: "encrypted-secret",
    }),
  )

describe("the webhooks repository", () => {
  it("finds, changes and deletes an organisation's subscriptions, never another's", async () => {
    const org = await run(Access.ensureOrganization(db, "wh-subs"))
    const other = await run(Access.ensureOrganization(db, "wh-other"))
    const s = await subscription(org.id, ["run.completed"])
    expect(s).toMatchObject({ name: "hook", subscribed_events: ["run.completed"], is_active: true })
    expect(await run(Webhooks.findActiveSubscription(db, other.id, s.id))).toBeUndefined()
    expect((await run(Webhooks.listActiveSubscriptions(db, org.id))).map((r) => r.id)).toEqual([s.id])

    const changed = await run(Webhooks.updateSubscription(db, s.id, { name: "renamed" }))
    expect(changed).toMatchObject({ name: "renamed", url: s.url })
    expect(changed.updated_at.getTime()).toBeGreaterThanOrEqual(s.updated_at.getTime())
    await run(Webhooks.replaceSubscriptionSecret(db, s.id, "new-secret"))
    expect((await run(Webhooks.findSubscriptionForDelivery(db, s.id)))?.secret).toBe("new-secret")

    await run(Webhooks.deactivateSubscription(db, s.id, "gone"))
    expect(await run(Webhooks.findActiveSubscription(db, org.id, s.id))).toBeUndefined()
    expect(await run(Webhooks.deleteSubscription(db, other.id, s.id))).toBe(false)
    expect(await run(Webhooks.deleteSubscription(db, org.id, s.id))).toBe(true)
  })

  it("creates one delivery per event and subscription, to the subscribers of the event's type", async () => {
    const org = await run(Access.ensureOrganization(db, "wh-fanout"))
    const wanted = await subscription(org.id, ["run.completed", "run.failed"])
    await subscription(org.id, ["run.failed"])
    const event = await db
      .insertInto("events")
      .values({ organization_id: org.id, type: "run.completed", data: JSON.stringify({ n: 1 }) })
      .returning("id")
      .executeTakeFirstOrThrow()
    const found = (await run(Webhooks.findEvent(db, event.id)))!
    const subscribers = await db
      .transaction()
      .execute((trx) => run(Webhooks.lockSubscribersOf(trx, org.id, found.type)))
    expect(subscribers).toEqual([wanted.id])

    const delivery = {
      subscriptionId: wanted.id,
      eventId: found.id,
      eventType: found.type,
      data: found.data,
      occurredAt: found.occurred_at,
    }
    const first = await run(Webhooks.insertDelivery(db, delivery))
    expect(await run(Webhooks.insertDelivery(db, delivery))).toBe(first)
    expect(await run(Webhooks.countDeliveries(db, wanted.id))).toBe(1)
    // A ping has no event: every one is a delivery of its own.
    const ping = { ...delivery, eventId: null }
    expect(await run(Webhooks.insertDelivery(db, ping))).not.toBe(
      await run(Webhooks.insertDelivery(db, ping)),
    )
    expect(await run(Webhooks.findDelivery(db, first))).toMatchObject({ status: "pending", data: { n: 1 } })
  })

  it("records attempts, marks cut-off ones, and settles only a pending delivery", async () => {
    const org = await run(Access.ensureOrganization(db, "wh-attempts"))
    const s = await subscription(org.id, ["run.completed"])
    const id = await run(
      Webhooks.insertDelivery(db, {
        subscriptionId: s.id,
        eventId: null,
        eventType: "webhook.ping",
        data: {},
        occurredAt: new Date(),
      }),
    )
    const begin = (attemptId: string) =>
      db.transaction().execute((trx) =>
        run(
          Webhooks.beginAttempt(trx, {
            id: attemptId,
            deliveryId: id,
            url: s.url,
            interruptedError: "cut off",
          }),
        ),
      )
    const a1 = randomUUID()
    const a2 = randomUUID()
    expect(await begin(a1)).toBe(1)
    expect(await begin(a2)).toBe(2)
    await run(
      Webhooks.recordAttemptOutcome(db, a2, { status_code: 500, duration_ms: 12, response_body: "no" }),
    )
    expect(
      (await run(Webhooks.listAttempts(db, [id]))).map((a) => [
        a.number,
        a.status_code,
        a.error,
        a.duration_ms,
      ]),
    ).toEqual([
      [1, null, "cut off", 0],
      [2, 500, null, 12],
    ])
    expect(await run(Webhooks.listAttempts(db, []))).toEqual([])

    const status = await db.transaction().execute((trx) => run(Webhooks.lockDeliveryStatus(trx, id)))
    expect(status).toBe("pending")
    await run(
      Webhooks.settleDelivery(db, id, {
        status: "pending",
        lastError: "the endpoint answered 500",
        nextAttemptInMs: 60_000,
        attemptCount: 2,
        lastStatusCode: 500,
      }),
    )
    const [retrying] = await run(Webhooks.listDeliveries(db, s.id, { limit: 10, offset: 0 }))
    expect(retrying).toMatchObject({
      status: "pending",
      attempt_count: 2,
      last_status_code: 500,
      delivered_at: null,
    })
    expect(retrying?.next_attempt_at?.getTime()).toBeGreaterThan(Date.now() + 30_000)

    const settled = {
      status: "succeeded",
      lastError: null,
      nextAttemptInMs: null,
      attemptCount: 3,
      lastStatusCode: 200,
    } as const
    await run(Webhooks.settleDelivery(db, id, settled))
    await run(Webhooks.settleDelivery(db, id, { ...settled, status: "failed", lastError: "late" }))
    await run(Webhooks.failPendingDelivery(db, id, "subscription inactive"))
    expect(await run(Webhooks.findDelivery(db, id))).toMatchObject({
      status: "succeeded",
      last_error: null,
      next_attempt_at: null,
      attempt_count: 3,
    })
    expect((await run(Webhooks.findDelivery(db, id)))?.delivered_at).toBeInstanceOf(Date)
    expect(await begin(randomUUID())).toBeUndefined()
  })
})
