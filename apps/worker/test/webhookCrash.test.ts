/**
 * A worker killed mid-delivery (DESIGN §3, §4): worker process A sends a webhook and the receiver holds the
 * request open; A is killed with SIGKILL. Once A's lease expires, worker process B claims the task and
 * delivers the same message again: the same `webhook-id`, a new `Service-Delivery-Id`, a valid signature.
 * The delivery ends succeeded, once.
 */
import { randomBytes } from "node:crypto"
import { makeKysely } from "@dxs/db/Db"
import { INTERRUPTED } from "@dxs/pipeline/webhooks/Delivery"
import { encryptSecret } from "@dxs/pipeline/webhooks/Encryption"
import { enqueueFanout } from "@dxs/pipeline/webhooks/Queue"
import { verifyWebhook } from "@dxs/pipeline/webhooks/Signing"
import { useTestDatabase } from "@dxs/testing/TestDatabase"
// Brings in the `inject("dxsTemplateUrl")` typing that TestDatabase relies on.
import type {} from "@dxs/testing/TestGlobalSetup"
import {
  type ReceivedRequest,
  selfSignedCertificate,
  startWebhookReceiver,
  type WebhookReceiver,
} from "@dxs/testing/TestReceiver"
import { afterAll, afterEach, describe, expect, it } from "vitest"
import { killWorker, workerProcesses } from "./support/processes.ts"

const url = await useTestDatabase()
const db = makeKysely(url, 4)
afterAll(() => db.destroy())

const processes = workerProcesses("webhookWorkerProcess.ts", url)
const { outputs } = processes

const certificate = selfSignedCertificate()
const encryptionKey = randomBytes(32)

const receivers: WebhookReceiver[] = []

const eventually = async <A>(
  what: string,
  f: () => Promise<A | undefined> | A | undefined,
  timeoutMs = 60_000,
  everyMs = 50,
): Promise<A> => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const a = await f()
    if (a !== undefined) return a
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms\n${outputs()}`)
    await new Promise((r) => setTimeout(r, everyMs))
  }
}

const startWorker = (id: string, env: Record<string, string> = {}) =>
  processes.start(
    id,
    { ENCRYPTION_KEY: encryptionKey.toString("hex"), WEBHOOK_CA: certificate.cert, POLL_MS: "100", ...env },
    (ready) => eventually(`worker ${id} ready`, ready, 90_000),
  )

afterEach(async () => {
  await processes.stopAll()
  await Promise.all(receivers.splice(0).map((r) => r.close()))
})

const header = (request: ReceivedRequest, name: string) => {
  const value = request.headers[name]
  return Array.isArray(value) ? value.join(", ") : value
}

/** An organisation with one subscription to completions at `target`; returns their ids and the secret. */
const seedSubscription = async (target: string) => {
  const org = await db
    .insertInto("organizations")
    .values({ name: `webhook-crash-${Date.now()}` })
    .returning("id")
    .executeTakeFirstOrThrow()
  const secret = `whsec_${randomBytes(24).toString("base64")}`
  const subscription = await db
    .insertInto("webhook_subscriptions")
    .values({
      organization_id: org.id,
      name: "crash",
      url: target,
      subscribed_events: JSON.stringify(["agent.completion.succeeded"]),
      headers: JSON.stringify({ "X-Team": encryptSecret(encryptionKey, "blue") }),
      secret: encryptSecret(encryptionKey, secret),
    })
    .returning("id")
    .executeTakeFirstOrThrow()
  return { organizationId: org.id, subscriptionId: subscription.id, secret }
}

describe("webhook delivery across worker processes", () => {
  it("a worker killed while its request is held open: another delivers after the lease expires, same webhook-id, once", async () => {
    // The first request is held open (no answer for ten minutes); later ones are answered at once.
    const receiver = await startWebhookReceiver({
      tls: certificate,
      respond: (_request, index) => (index === 0 ? { status: 200, delayMs: 600_000 } : { status: 200 }),
    })
    receivers.push(receiver)
    const seeded = await seedSubscription(receiver.url("/hook"))

    const a = await startWorker("proc-a", { LEASE_MS: "1500" })
    const data = { project_id: "1c9c7c52-57cb-4d0c-9d53-2e9a43c9b7a1", run_number: 1, agents: [] }
    await db.transaction().execute(async (trx) => {
      const event = await trx
        .insertInto("events")
        .values({
          organization_id: seeded.organizationId,
          type: "agent.completion.succeeded",
          project_id: null,
          run_id: null,
          data: JSON.stringify(data),
        })
        .returning("id")
        .executeTakeFirstOrThrow()
      await enqueueFanout(trx, event.id)
    })

    // A is sending, and the receiver holds the request.
    await eventually("A's request to arrive", () => (receiver.requests.length === 1 ? true : undefined))
    const delivery = await db
      .selectFrom("webhook_deliveries")
      .selectAll()
      .where("subscription_id", "=", seeded.subscriptionId)
      .executeTakeFirstOrThrow()
    const task = () =>
      db
        .selectFrom("tasks")
        .selectAll()
        .where("idempotency_key", "=", `webhook-deliver:${delivery.id}`)
        .executeTakeFirstOrThrow()
    expect(await task()).toMatchObject({ status: "running", locked_by: "proc-a" })

    const b = await startWorker("proc-b", { LEASE_MS: "1500" })
    // Still held by A (its heartbeats keep the lease while it waits for the answer).
    expect(receiver.requests).toHaveLength(1)
    expect(await task()).toMatchObject({ status: "running", locked_by: "proc-a" })
    await killWorker(a)

    const done = await eventually(
      "the delivery to succeed",
      async () => {
        const row = await db
          .selectFrom("webhook_deliveries")
          .selectAll()
          .where("id", "=", delivery.id)
          .executeTakeFirstOrThrow()
        return row.status === "pending" ? undefined : row
      },
      60_000,
    )
    expect(done, outputs()).toMatchObject({ status: "succeeded", last_status_code: 200, attempt_count: 2 })

    // Two requests: A's (cut off when A died) and B's, one message.
    expect(receiver.requests).toHaveLength(2)
    const [first, second] = receiver.requests as [ReceivedRequest, ReceivedRequest]
    expect(first.closedEarly).toBe(true)
    expect(header(first, "webhook-id")).toBe(delivery.id)
    expect(header(second, "webhook-id")).toBe(delivery.id)
    expect(header(first, "service-delivery-id")).not.toBe(header(second, "service-delivery-id"))
    for (const request of [first, second]) {
      const body = JSON.parse(request.body)
      expect(body).toMatchObject({
        id: header(request, "service-delivery-id"),
        event: "agent.completion.succeeded",
        subscription_id: seeded.subscriptionId,
        data,
      })
      expect(header(request, "x-team")).toBe("blue")
      expect(
        verifyWebhook({
          secret: seeded.secret,
          id: header(request, "webhook-id")!,
          timestamp: Number(header(request, "webhook-timestamp")),
          body: request.body,
          signature: header(request, "webhook-signature")!,
        }),
      ).toBe(true)
    }

    // Both attempts are in the log: A's, recorded before it sent and marked as cut off, then B's.
    const attempts = await db
      .selectFrom("webhook_attempts")
      .selectAll()
      .where("delivery_id", "=", delivery.id)
      .orderBy("number")
      .execute()
    expect(attempts).toEqual([
      expect.objectContaining({
        id: header(first, "service-delivery-id"),
        number: 1,
        status_code: null,
        error: INTERRUPTED,
      }),
      expect.objectContaining({
        id: header(second, "service-delivery-id"),
        number: 2,
        status_code: 200,
        error: null,
      }),
    ])
    const finished = await task()
    expect(finished).toMatchObject({ status: "succeeded", locked_by: "proc-b" })
    expect(finished.lease_expirations).toBeGreaterThanOrEqual(1)
    // One delivery for the event and subscription; nothing more arrives.
    await new Promise((r) => setTimeout(r, 500))
    expect(receiver.requests).toHaveLength(2)
    const all = await db
      .selectFrom("webhook_deliveries")
      .selectAll()
      .where("subscription_id", "=", seeded.subscriptionId)
      .execute()
    expect(all.map((d) => d.status)).toEqual(["succeeded"])
    expect(b.child.exitCode).toBeNull()
  })
})
