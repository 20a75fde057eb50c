/**
 * Webhook delivery end to end: subscriptions made through the REST API, events from launched runs (and
 * written directly), a worker loop in this process, and real HTTPS receivers on loopback with a
 * self-signed certificate the deliveries trust. Retries use a shortened schedule (50 ms between attempts).
 */
import { makeKysely } from "@dxs/db"
import { enqueueFanout } from "@dxs/pipeline/webhooks/Queue"
import { verifyWebhook } from "@dxs/pipeline/webhooks/Signing"
import { onePagePdf } from "@dxs/testing/Documents"
import { type Client, createProject, timestamp, uuid } from "@dxs/testing/RestClient"
import { createAgent, launchAndWait, until, upload, waitProcessed } from "@dxs/testing/Runs"
import {
  type ReceivedRequest,
  type Responder,
  selfSignedCertificate,
  startWebhookReceiver,
  type WebhookReceiver,
} from "@dxs/testing/TestReceiver"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import { startTestApi, type TestApi } from "./harness.ts"

// Made with the openssl command, into a temporary directory, when this file starts.
const certificate = selfSignedCertificate()
const SHORT_SCHEDULE = Array.from({ length: 10 }, (_, i) => (i === 0 ? 0 : 50))

let api: TestApi
let db: ReturnType<typeof makeKysely>
const receivers: WebhookReceiver[] = []

beforeAll(async () => {
  api = await startTestApi({
    worker: {},
    webhooks: { allowLoopback: true, ca: certificate.cert, retrySchedule: SHORT_SCHEDULE },
  })
  db = makeKysely(api.dbUrl, 2)
})

afterEach(async () => {
  await Promise.all(receivers.splice(0).map((r) => r.close()))
})

afterAll(async () => {
  await db?.destroy()
})

const receiver = async (respond?: Responder) => {
  const r = await startWebhookReceiver({ tls: certificate, ...(respond ? { respond } : {}) })
  receivers.push(r)
  return r
}

let orgs = 0
/** A client of a new organisation (subscriptions are per organisation) and the organisation's id. */
const newTenant = async () => {
  const name = `webhooks-${++orgs}-${Date.now()}`
  const client = api.client(await api.newKey(name))
  const org = await db
    .selectFrom("organizations")
    .select("id")
    .where("name", "=", name)
    .executeTakeFirstOrThrow()
  return { client, organizationId: org.id }
}

const subscribe = async (client: Client, body: Record<string, unknown>) => {
  const r = await client.post("/webhooks/", body)
  expect(r.status, r.text).toBe(201)
  expect(r.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/)
  return r.body as { id: string; secret: string; headers: Record<string, string> }
}

const deliveriesOf = (subscriptionId: string) =>
  db
    .selectFrom("webhook_deliveries")
    .selectAll()
    .where("subscription_id", "=", subscriptionId)
    .orderBy("created_at")
    .execute()

const attemptsOf = (deliveryId: string) =>
  db
    .selectFrom("webhook_attempts")
    .selectAll()
    .where("delivery_id", "=", deliveryId)
    .orderBy("number")
    .execute()

/** Waits until the subscription's only delivery is no longer pending; returns it. */
const settledDelivery = (subscriptionId: string) =>
  until(
    "the delivery to settle",
    async () => {
      const rows = await deliveriesOf(subscriptionId)
      return rows.length === 1 && rows[0]!.status !== "pending" ? rows[0]! : undefined
    },
    60_000,
  )

const header = (request: ReceivedRequest, name: string) => {
  const value = request.headers[name.toLowerCase()]
  return Array.isArray(value) ? value.join(", ") : value
}

/** The Standard Webhooks signature of the request verifies with the secret. */
const expectSigned = (request: ReceivedRequest, secret: string) => {
  const id = header(request, "webhook-id")!
  const ts = Number(header(request, "webhook-timestamp"))
  expect(Math.abs(ts - Date.now() / 1000)).toBeLessThan(120)
  expect(header(request, "webhook-signature")).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/)
  expect(
    verifyWebhook({
      secret,
      id,
      timestamp: ts,
      body: request.body,
      signature: header(request, "webhook-signature")!,
      now: Math.floor(Date.now() / 1000),
    }),
  ).toBe(true)
  // Not with another secret, nor over another body.
  expect(
    verifyWebhook({
      secret: "whsec_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
      id,
      timestamp: ts,
      body: request.body,
      signature: header(request, "webhook-signature")!,
    }),
  ).toBe(false)
  expect(
    verifyWebhook({
      secret,
      id,
      timestamp: ts,
      body: `${request.body} `,
      signature: header(request, "webhook-signature")!,
    }),
  ).toBe(false)
}

/** A project with one processed one-page document and one agent; launches a run and waits for its end. */
const runProject = async (client: Client) => {
  const projectId = await createProject(client)
  await upload(client, projectId, "note.pdf", onePagePdf("Reference Number: ABC-123"))
  await waitProcessed(client, projectId)
  const agent = await createAgent(client, projectId, {
    name: "Reference Number",
    extraction_instructions: "The reference number of the note",
  })
  await launchAndWait(client, projectId)
  return { projectId, agent }
}

describe("webhook delivery", () => {
  it("a launched run's completion reaches the subscribed HTTPS endpoint once, signed, with the spec's envelope and headers", async () => {
    const { client } = await newTenant()
    const hook = await receiver()
    const other = await receiver()
    const subscription = await subscribe(client, {
      name: "completions",
      url: hook.url("/hook"),
      subscribed_events: ["agent.completion.succeeded"],
      headers: { "X-Team": "blue" },
    })
    expect(subscription.headers).toEqual({ "X-Team": expect.not.stringContaining("blue") })
    // Subscribed to another event only: gets nothing from a successful run.
    const failedOnly = await subscribe(client, {
      url: other.url("/failed"),
      subscribed_events: ["agent.completion.failed"],
    })

    const { projectId, agent } = await runProject(client)
    const delivery = await settledDelivery(subscription.id)
    expect(delivery).toMatchObject({
      status: "succeeded",
      attempt_count: 1,
      last_status_code: 200,
      last_error: null,
      event_type: "agent.completion.succeeded",
    })
    expect(delivery.delivered_at).toBeInstanceOf(Date)

    expect(hook.requests).toHaveLength(1)
    const request = hook.requests[0]!
    expect(request.method).toBe("POST")
    expect(request.path).toBe("/hook")
    expect(header(request, "host")).toBe(`localhost:${hook.port}`)
    expect(header(request, "content-type")).toBe("application/json")
    expect(header(request, "x-team")).toBe("blue")
    expect(header(request, "webhook-id")).toBe(delivery.id)
    expectSigned(request, subscription.secret)

    const body = JSON.parse(request.body)
    expect(Object.keys(body).sort()).toEqual(["data", "event", "id", "occurred_at", "subscription_id"])
    expect(body).toEqual({
      id: uuid,
      event: "agent.completion.succeeded",
      occurred_at: timestamp,
      subscription_id: subscription.id,
      data: {
        project_id: projectId,
        run_number: 1,
        agents: [{ id: agent.id, name: "Reference Number", extraction_status: expect.any(String) }],
      },
    })
    expect(header(request, "service-delivery-id")).toBe(body.id)
    const event = await db
      .selectFrom("events")
      .selectAll()
      .where("project_id", "=", projectId)
      .executeTakeFirstOrThrow()
    expect(body.data).toEqual(event.data)
    expect(new Date(body.occurred_at).getTime()).toBe(event.occurred_at.getTime())

    // The attempt is recorded under the Service-Delivery-Id, and shown in the delivery log.
    const attempts = await attemptsOf(delivery.id)
    expect(attempts).toEqual([
      expect.objectContaining({
        id: body.id,
        number: 1,
        url: hook.url("/hook"),
        status_code: 200,
        error: null,
        response_body: "ok",
      }),
    ])
    const log = await client.get(`/webhooks/${subscription.id}/deliveries/`)
    expect(log.status).toBe(200)
    expect(log.body.results).toEqual([
      expect.objectContaining({
        id: delivery.id,
        status: "succeeded",
        attempts: [expect.objectContaining({ id: body.id, number: 1, status_code: 200 })],
      }),
    ])

    // Nothing for the subscription to another event type.
    expect(await deliveriesOf(failedOnly.id)).toEqual([])
    expect(other.requests).toEqual([])
  })

  it("a receiver that is down for two attempts (503) gets the event on the third: every attempt recorded, one success", async () => {
    const { client } = await newTenant()
    const hook = await receiver((_request, index) =>
      index < 2 ? { status: 503, body: "down for maintenance" } : { status: 204 },
    )
    const subscription = await subscribe(client, {
      url: hook.url("/hook"),
      subscribed_events: ["agent.completion.succeeded", "agent.completion.failed"],
    })
    const { projectId } = await runProject(client)
    const delivery = await settledDelivery(subscription.id)
    expect(delivery).toMatchObject({
      status: "succeeded",
      attempt_count: 3,
      last_status_code: 204,
      last_error: null,
    })

    expect(hook.requests).toHaveLength(3)
    const bodies = hook.requests.map((r) => JSON.parse(r.body))
    // The same message each time (same webhook-id, event and data), a new Service-Delivery-Id per attempt.
    for (const [i, request] of hook.requests.entries()) {
      expect(header(request, "webhook-id")).toBe(delivery.id)
      expect(header(request, "service-delivery-id")).toBe(bodies[i].id)
      expectSigned(request, subscription.secret)
      expect(bodies[i]).toMatchObject({
        event: "agent.completion.succeeded",
        subscription_id: subscription.id,
        data: { project_id: projectId, run_number: 1 },
      })
    }
    expect(new Set(bodies.map((b) => b.id)).size).toBe(3)

    const attempts = await attemptsOf(delivery.id)
    expect(attempts.map((a) => [a.number, a.status_code, a.response_body])).toEqual([
      [1, 503, "down for maintenance"],
      [2, 503, "down for maintenance"],
      [3, 204, ""],
    ])
    expect(attempts.map((a) => a.id)).toEqual(bodies.map((b) => b.id))
    expect(attempts.filter((a) => a.status_code !== null && a.status_code < 300)).toHaveLength(1)
    // One delivery for the event and subscription, and its task done.
    expect(await deliveriesOf(subscription.id)).toHaveLength(1)
    const task = await db
      .selectFrom("tasks")
      .selectAll()
      .where("idempotency_key", "=", `webhook-deliver:${delivery.id}`)
      .executeTakeFirstOrThrow()
    expect(task.status).toBe("succeeded")
  })

  it("an endpoint that is unreachable at first (connection refused) gets the event once it is up", async () => {
    const { client, organizationId } = await newTenant()
    const hook = await receiver()
    const subscription = await subscribe(client, {
      url: hook.url("/hook"),
      subscribed_events: ["agent.completion.failed"],
    })
    // The receiver goes away; its port stays the subscription's target.
    const port = hook.port
    await hook.close()
    receivers.splice(receivers.indexOf(hook), 1)

    await db.transaction().execute(async (trx) => {
      const event = await trx
        .insertInto("events")
        .values({
          organization_id: organizationId,
          type: "agent.completion.failed",
          project_id: null,
          run_id: null,
          data: JSON.stringify({ project_id: null, run_number: 3, failure_reason: "internal_error" }),
        })
        .returning("id")
        .executeTakeFirstOrThrow()
      await enqueueFanout(trx, event.id)
    })
    // Refused at least twice before the endpoint is back.
    const firstFailures = await until("two failed attempts", async () => {
      const [delivery] = await deliveriesOf(subscription.id)
      if (!delivery) return undefined
      const attempts = await attemptsOf(delivery.id)
      return attempts.length >= 2 ? attempts : undefined
    })
    expect(firstFailures[0]).toMatchObject({
      status_code: null,
      error: expect.stringMatching(/ECONNREFUSED/),
    })

    // Back on the same port.
    let back: WebhookReceiver | undefined
    await until("the port to be free again", async () => {
      back = await startWebhookReceiver({ tls: certificate, port }).catch(() => undefined)
      if (back) receivers.push(back)
      return back
    })
    const delivery = await settledDelivery(subscription.id)
    expect(delivery.status).toBe("succeeded")
    expect(back!.requests).toHaveLength(1)
    expectSigned(back!.requests[0]!, subscription.secret)
    const attempts = await attemptsOf(delivery.id)
    expect(attempts.at(-1)).toMatchObject({ status_code: 200, error: null })
    expect(attempts.slice(0, -1).every((a) => a.status_code === null)).toBe(true)
    expect(delivery.attempt_count).toBe(attempts.length)
  })

  it("410 Gone deactivates the subscription: one attempt, delivery failed, the subscription no longer listed", async () => {
    const { client } = await newTenant()
    const hook = await receiver(() => ({ status: 410, body: "gone" }))
    const subscription = await subscribe(client, {
      url: hook.url("/hook"),
      subscribed_events: ["agent.completion.succeeded"],
    })
    const ping = await client.post(`/webhooks/${subscription.id}/test/`)
    expect(ping.status).toBe(202)
    const delivery = await settledDelivery(subscription.id)
    expect(delivery).toMatchObject({ status: "failed", attempt_count: 1, last_status_code: 410 })
    expect(hook.requests).toHaveLength(1)
    const row = await db
      .selectFrom("webhook_subscriptions")
      .selectAll()
      .where("id", "=", subscription.id)
      .executeTakeFirstOrThrow()
    expect(row.is_active).toBe(false)
    expect(row.deactivated_reason).toMatch(/410/)
    expect((await client.get(`/webhooks/${subscription.id}/`)).status).toBe(404)
    const list = await client.get("/webhooks/")
    expect(list.body.map((s: { id: string }) => s.id)).not.toContain(subscription.id)

    // Later events do not reach it.
    await runProject(client)
    await new Promise((r) => setTimeout(r, 500))
    expect(await deliveriesOf(subscription.id)).toHaveLength(1)
    expect(hook.requests).toHaveLength(1)
  })

  it("a target that has become unsafe is refused at every attempt: nothing sent, each refusal recorded, then failed", async () => {
    const { client } = await newTenant()
    const hook = await receiver()
    const subscription = await subscribe(client, {
      url: hook.url("/hook"),
      subscribed_events: ["agent.completion.succeeded"],
    })
    // As if its name now pointed at the cloud metadata service.
    await db
      .updateTable("webhook_subscriptions")
      .set({ url: "https://169.254.169.254/latest/meta-data/" })
      .where("id", "=", subscription.id)
      .execute()
    expect((await client.post(`/webhooks/${subscription.id}/test/`)).status).toBe(202)
    const delivery = await settledDelivery(subscription.id)
    expect(delivery).toMatchObject({ status: "failed", attempt_count: 10, last_status_code: null })
    expect(delivery.last_error).toMatch(/target refused: .*169\.254\.169\.254.*the last/)
    const attempts = await attemptsOf(delivery.id)
    expect(attempts.map((a) => a.number)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10])
    for (const a of attempts)
      expect(a).toMatchObject({
        status_code: null,
        response_body: null,
        error: expect.stringMatching(/^target refused: /),
      })
    expect(new Set(attempts.map((a) => a.id)).size).toBe(10)
    expect(hook.requests).toEqual([])
  })

  it("plain http reaches a loopback receiver when loopback targets are allowed", async () => {
    const { client } = await newTenant()
    const plain = await startWebhookReceiver()
    receivers.push(plain)
    expect(plain.url()).toMatch(/^http:\/\/localhost:/)
    const subscription = await subscribe(client, {
      url: plain.url("/plain"),
      subscribed_events: ["agent.completion.succeeded"],
    })
    expect((await client.post(`/webhooks/${subscription.id}/test/`)).status).toBe(202)
    const delivery = await settledDelivery(subscription.id)
    expect(delivery.status).toBe("succeeded")
    expect(plain.requests).toHaveLength(1)
    expectSigned(plain.requests[0]!, subscription.secret)
  })

  it("the test ping arrives, signed, with webhook.ping and a message", async () => {
    const { client } = await newTenant()
    const hook = await receiver()
    const subscription = await subscribe(client, {
      url: hook.url("/ping"),
      subscribed_events: ["agent.completion.succeeded"],
      headers: { Authorization: "Bearer receiver-token" },
    })
    const ping = await client.post(`/webhooks/${subscription.id}/test/`)
    expect(ping.status).toBe(202)
    const delivery = await settledDelivery(subscription.id)
    expect(delivery).toMatchObject({
      id: ping.body.delivery_id,
      status: "succeeded",
      event_type: "webhook.ping",
    })
    expect(hook.requests).toHaveLength(1)
    const request = hook.requests[0]!
    expect(header(request, "authorization")).toBe("Bearer receiver-token")
    expect(header(request, "webhook-id")).toBe(ping.body.delivery_id)
    expectSigned(request, subscription.secret)
    const body = JSON.parse(request.body)
    expect(body).toEqual({
      id: header(request, "service-delivery-id"),
      event: "webhook.ping",
      occurred_at: timestamp,
      subscription_id: subscription.id,
      data: { message: expect.any(String) },
    })
  })

  it("an unknown failure_reason passes through untouched; fanning an event out again delivers nothing twice", async () => {
    const { client, organizationId } = await newTenant()
    const hook = await receiver()
    const subscription = await subscribe(client, {
      url: hook.url("/hook"),
      subscribed_events: ["agent.completion.failed"],
    })
    // Another organisation's subscription to the same event type gets nothing.
    const stranger = await newTenant()
    const strangerHook = await receiver()
    const strangers = await subscribe(stranger.client, {
      url: strangerHook.url("/hook"),
      subscribed_events: ["agent.completion.failed"],
    })

    const data = {
      project_id: "8d0c2b8e-0000-4000-8000-000000000001",
      run_number: 7,
      failure_reason: "quota_exhausted_in_the_future",
      detail: { nested: [1, "two", null, { x: 1.5 }] },
    }
    const eventId = await db.transaction().execute(async (trx) => {
      const event = await trx
        .insertInto("events")
        .values({
          organization_id: organizationId,
          type: "agent.completion.failed",
          project_id: null,
          run_id: null,
          data: JSON.stringify(data),
        })
        .returning("id")
        .executeTakeFirstOrThrow()
      await enqueueFanout(trx, event.id)
      return event.id
    })
    const delivery = await settledDelivery(subscription.id)
    expect(delivery.status).toBe("succeeded")
    expect(hook.requests).toHaveLength(1)
    const body = JSON.parse(hook.requests[0]!.body)
    expect(body.event).toBe("agent.completion.failed")
    expect(body.data).toEqual(data)
    expectSigned(hook.requests[0]!, subscription.secret)

    // Fanned out again (a second fan-out task for the same event): the same delivery, nothing sent again.
    await db.transaction().execute((trx) => enqueueFanout(trx, eventId))
    await db
      .insertInto("tasks")
      .values({
        kind: "webhook-fanout",
        idempotency_key: `webhook-fanout:${eventId}:again`,
        payload: JSON.stringify({ eventId }),
      })
      .execute()
    await until("the second fan-out to run", async () => {
      const t = await db
        .selectFrom("tasks")
        .select("status")
        .where("idempotency_key", "=", `webhook-fanout:${eventId}:again`)
        .executeTakeFirstOrThrow()
      return t.status === "succeeded" ? true : undefined
    })
    await new Promise((r) => setTimeout(r, 500))
    expect(await deliveriesOf(subscription.id)).toHaveLength(1)
    expect(hook.requests).toHaveLength(1)
    expect(await deliveriesOf(strangers.id)).toEqual([])
    expect(strangerHook.requests).toEqual([])
  })
})
