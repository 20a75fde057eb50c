import { randomBytes, randomUUID } from "node:crypto"
import { type Database, makeKysely } from "@dxs/db"
import { decryptSecret } from "@dxs/pipeline/webhooks/Encryption"
import { type Client, expectProblem, timestamp, uuid } from "@dxs/testing/RestClient"
import type { Kysely } from "kysely"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startTestApi, type TestApi } from "./harness.ts"

// Targets are IP literals (public addresses), so creation needs no DNS; nothing is delivered here.
const PUBLIC_URL = "https://93.184.216.34/hooks/dxs"
const OTHER_PUBLIC_URL = "https://[2606:4700:4700::1111]:8443/in"
const EVENTS = ["agent.completion.succeeded", "agent.completion.failed"]

const key = randomBytes(32)
let api: TestApi
let loopbackApi: TestApi
let a: Client
let b: Client
let dev: Client
let db: Kysely<Database>

beforeAll(async () => {
  api = await startTestApi({ webhooks: { encryptionKey: key } })
  loopbackApi = await startTestApi({ webhooks: { encryptionKey: key, allowLoopback: true } })
  a = api.client(await api.newKey("acme"))
  b = api.client(await api.newKey("globex"))
  dev = loopbackApi.client(await loopbackApi.newKey("acme"))
  db = makeKysely(api.dbUrl, 2)
})

afterAll(async () => {
  await db?.destroy()
})

const create = async (body: Record<string, unknown> = {}, client: Client = a) => {
  const r = await client.post("/webhooks/", { url: PUBLIC_URL, subscribed_events: EVENTS, ...body })
  expect(r.status, JSON.stringify(r.body)).toBe(201)
  return r.body
}

const row = (id: string) =>
  db.selectFrom("webhook_subscriptions").selectAll().where("id", "=", id).executeTakeFirstOrThrow()

describe("webhook subscriptions", () => {
  it("creates a subscription and shows its secret only in the create answer", async () => {
    const r = await a.post("/webhooks/", {
      name: "Orders",
      url: PUBLIC_URL,
      subscribed_events: ["agent.completion.succeeded"],
      headers: { Authorization: "Bearer s3cr3t", "X-Tenant": "acme" },
    })
    expect(r.status).toBe(201)
    expect(r.body).toEqual({
      id: uuid,
      name: "Orders",
      url: PUBLIC_URL,
      subscribed_events: ["agent.completion.succeeded"],
      is_active: true,
      headers: { Authorization: "********", "X-Tenant": "********" },
      created_at: timestamp,
      updated_at: timestamp,
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{32}$/),
    })
    expect(Buffer.from(r.body.secret.slice(6), "base64")).toHaveLength(24)

    const got = await a.get(`/webhooks/${r.body.id}/`)
    expect(got.status).toBe(200)
    const { secret, ...record } = r.body
    expect(got.body).toEqual(record)
    expect(got.text).not.toContain(secret)
    const list = await a.get("/webhooks/")
    expect(list.body.find((s: any) => s.id === r.body.id)).toEqual(record)
    expect(list.text).not.toContain(secret)

    // At rest: the secret and the header values are encrypted with the configured key.
    const stored = await row(r.body.id)
    expect(stored.secret).not.toContain(secret)
    expect(decryptSecret(key, stored.secret)).toBe(secret)
    expect(Object.keys(stored.headers).sort()).toEqual(["Authorization", "X-Tenant"])
    expect(JSON.stringify(stored.headers)).not.toContain("s3cr3t")
    expect(decryptSecret(key, stored.headers.Authorization!)).toBe("Bearer s3cr3t")
    expect(decryptSecret(key, stored.headers["X-Tenant"]!)).toBe("acme")
  })

  it("defaults name to empty and headers to none; accepts form bodies", async () => {
    const s = await create()
    expect(s.name).toBe("")
    expect(s.headers).toEqual({})
    const form = await a.send(
      "POST",
      "/webhooks/",
      new URLSearchParams({
        url: PUBLIC_URL,
        subscribed_events: JSON.stringify(["webhook.ping"]),
        headers: JSON.stringify({ "X-Form": "1" }),
      }),
      "application/x-www-form-urlencoded",
    )
    expect(form.status, JSON.stringify(form.body)).toBe(201)
    expect(form.body.subscribed_events).toEqual(["webhook.ping"])
    expect(form.body.headers).toEqual({ "X-Form": "********" })
  })

  it("requires url and subscribed_events", async () => {
    const none = await a.post("/webhooks/", { name: "x" })
    expectProblem(none, 400)
    const paths = none.body.errors.map((e: any) => e.path)
    expect(paths).toEqual(expect.arrayContaining(["url", "subscribed_events"]))
    const noEvents = await a.post("/webhooks/", { url: PUBLIC_URL })
    expectProblem(noEvents, 400)
    expect(noEvents.body.errors.map((e: any) => e.path)).toContain("subscribed_events")
    const empty = await a.post("/webhooks/", { url: PUBLIC_URL, subscribed_events: [] })
    expectProblem(empty, 400)
    expect(empty.body.errors).toEqual([
      { path: "subscribed_events", message: expect.stringContaining("at least one") },
    ])
  })

  it("refuses unknown events, naming them", async () => {
    const r = await a.post("/webhooks/", {
      url: PUBLIC_URL,
      subscribed_events: ["agent.completion.succeeded", "project.deleted", "nope"],
    })
    expectProblem(r, 400)
    expect(r.body.errors).toEqual([
      { path: "subscribed_events/1", message: expect.stringContaining('"project.deleted"') },
      { path: "subscribed_events/2", message: expect.stringContaining('"nope"') },
    ])
    expect(r.body.detail).toContain("project.deleted")
  })

  it.each([
    ["http://93.184.216.34/hook", "https"],
    ["ftp://93.184.216.34/hook", "https"],
    ["not a url", "absolute"],
    ["https://user:pass@93.184.216.34/", "credentials"],
    ["https://93.184.216.34/#x", "fragment"],
    ["https://10.0.0.1/hook", "private address"],
    ["https://192.168.1.20/hook", "private address"],
    ["https://169.254.169.254/latest/meta-data/", "cloud metadata address"],
    ["https://[fd00:ec2::254]/", "cloud metadata address"],
    ["https://[::1]/hook", "loopback address"],
    ["https://127.0.0.1/hook", "loopback address"],
    ["https://[::ffff:10.0.0.1]/hook", "private address"],
    ["https://localhost:8443/hook", "loopback address"],
    ["http://localhost:8080/hook", "https"],
    ["https://example.com:0/hook", "port 0"],
    ["https://[64:ff9b::7f00:1]/hook", "reserved address"],
  ])("refuses the target %s", async (url, words) => {
    const r = await a.post("/webhooks/", { url, subscribed_events: EVENTS })
    expectProblem(r, 400)
    expect(r.body.errors).toEqual([{ path: "url", message: expect.stringContaining(words) }])
    expect(r.body.detail).toContain(words)
  })

  it("accepts a host name that does not resolve yet: names are resolved and checked at every delivery", async () => {
    const r = await a.post("/webhooks/", { url: "https://nowhere.invalid/hook", subscribed_events: EVENTS })
    expect(r.status, JSON.stringify(r.body)).toBe(201)
  })

  it("allows loopback targets (over http too) only when configured; private ones stay refused", async () => {
    for (const url of ["http://localhost:8080/hook", "http://127.0.0.1:9/hook", "https://[::1]:8443/hook"]) {
      const r = await dev.post("/webhooks/", { url, subscribed_events: EVENTS })
      expect(r.status, `${url}: ${JSON.stringify(r.body)}`).toBe(201)
    }
    for (const url of [
      "http://93.184.216.34/hook",
      "https://10.0.0.1/",
      "https://169.254.169.254/",
      "https://[64:ff9b::7f00:1]/",
      "https://[2002:7f00:1::]/",
      "http://localhost:0/",
    ]) {
      expectProblem(await dev.post("/webhooks/", { url, subscribed_events: EVENTS }), 400)
    }
  })

  describe("custom headers", () => {
    const attempt = (headers: Record<string, string>) =>
      a.post("/webhooks/", { url: PUBLIC_URL, subscribed_events: EVENTS, headers })

    it("refuses an eleventh header", async () => {
      const r = await attempt(Object.fromEntries(Array.from({ length: 11 }, (_, i) => [`X-H${i}`, "v"])))
      expectProblem(r, 400)
      expect(r.body.errors).toEqual([{ path: "headers", message: expect.stringContaining("at most 10") }])
    })

    it("refuses a value over 1 KB and a total over 4 KB", async () => {
      expect((await attempt({ "X-Big": "a".repeat(1024) })).status).toBe(201)
      const big = await attempt({ "X-Big": "a".repeat(1025) })
      expectProblem(big, 400)
      expect(big.body.errors).toEqual([
        { path: "headers/X-Big", message: expect.stringContaining("1025 bytes") },
      ])
      const total = await attempt(
        Object.fromEntries([1, 2, 3, 4, 5].map((i) => [`X-H${i}`, "a".repeat(1000)])),
      )
      expectProblem(total, 400)
      expect(total.body.errors).toEqual([{ path: "headers", message: expect.stringContaining("4 KB") }])
    })

    it.each([
      "Host",
      "Connection",
      "content-length",
      "Transfer-Encoding",
      "Content-Type",
      "Service-Delivery-Id",
      "service-custom",
      "webhook-id",
      "Webhook-Timestamp",
      "webhook-signature",
    ])("refuses the reserved name %s", async (name) => {
      const r = await attempt({ [name]: "x" })
      expectProblem(r, 400)
      expect(r.body.errors).toEqual([
        { path: `headers/${name}`, message: expect.stringContaining("reserved") },
      ])
      expect(r.body.detail).toContain(`headers/${name}`)
    })

    it("refuses a name that is not an HTTP token and a value with a line break", async () => {
      const r = await attempt({ "X Bad Name": "x" })
      expectProblem(r, 400)
      expect(r.body.errors).toEqual([
        { path: "headers/X Bad Name", message: expect.stringContaining("not a valid HTTP header name") },
      ])
      const crlf = await attempt({ "X-Ok": "a\r\nInjected: yes" })
      expectProblem(crlf, 400)
      expect(crlf.body.errors[0].path).toBe("headers/X-Ok")
    })
  })

  it("patches members; headers replace all; a new url is checked", async () => {
    const s = await create({ name: "Before", headers: { "X-Old": "old" } })
    await new Promise((r) => setTimeout(r, 5))
    const r = await a.patch(`/webhooks/${s.id}/`, {
      name: "After",
      url: OTHER_PUBLIC_URL,
      subscribed_events: ["webhook.ping", "webhook.ping"],
      headers: { "X-New": "new" },
    })
    expect(r.status, JSON.stringify(r.body)).toBe(200)
    expect(r.body).toEqual({
      ...s,
      secret: undefined,
      name: "After",
      url: OTHER_PUBLIC_URL,
      subscribed_events: ["webhook.ping"],
      headers: { "X-New": "********" },
      updated_at: timestamp,
    })
    expect(r.body.secret).toBeUndefined()
    expect(Date.parse(r.body.updated_at)).toBeGreaterThan(Date.parse(s.updated_at))
    const stored = await row(s.id)
    expect(Object.keys(stored.headers)).toEqual(["X-New"])
    expect(decryptSecret(key, stored.headers["X-New"]!)).toBe("new")

    const nameOnly = await a.patch(`/webhooks/${s.id}/`, { name: "Only name" })
    expect(nameOnly.body).toMatchObject({
      name: "Only name",
      url: OTHER_PUBLIC_URL,
      headers: { "X-New": "********" },
    })
    const cleared = await a.patch(`/webhooks/${s.id}/`, { headers: {} })
    expect(cleared.body.headers).toEqual({})

    for (const body of [
      { url: "https://10.1.2.3/" },
      { url: "http://93.184.216.34/" },
      { subscribed_events: [] },
      { subscribed_events: ["x.y"] },
      { headers: { Host: "evil" } },
    ]) {
      const bad = await a.patch(`/webhooks/${s.id}/`, body)
      expectProblem(bad, 400)
    }
    expect((await a.get(`/webhooks/${s.id}/`)).body.url).toBe(OTHER_PUBLIC_URL)
    expectProblem(await a.patch(`/webhooks/${randomUUID()}/`, { name: "x" }), 404)
  })

  it("deletes permanently, with the deliveries", async () => {
    const s = await create()
    const ping = await a.post(`/webhooks/${s.id}/test/`)
    expect(ping.status).toBe(202)
    const del = await a.delete(`/webhooks/${s.id}/`)
    expect(del.status).toBe(204)
    expectProblem(await a.get(`/webhooks/${s.id}/`), 404)
    expectProblem(await a.delete(`/webhooks/${s.id}/`), 404)
    expect((await a.get("/webhooks/")).body.map((x: any) => x.id)).not.toContain(s.id)
    expect(
      await db.selectFrom("webhook_subscriptions").select("id").where("id", "=", s.id).execute(),
    ).toEqual([])
    expect(
      await db.selectFrom("webhook_deliveries").select("id").where("subscription_id", "=", s.id).execute(),
    ).toEqual([])
  })

  it("lists active subscriptions only, newest first", async () => {
    const first = await create({ name: "first" })
    const second = await create({ name: "second" })
    const ids = (await a.get("/webhooks/")).body.map((x: any) => x.id)
    expect(ids.indexOf(second.id)).toBeLessThan(ids.indexOf(first.id))
    await db
      .updateTable("webhook_subscriptions")
      .set({ is_active: false, deactivated_reason: "410 Gone" })
      .where("id", "=", first.id)
      .execute()
    expect((await a.get("/webhooks/")).body.map((x: any) => x.id)).not.toContain(first.id)
    expectProblem(await a.get(`/webhooks/${first.id}/`), 404)
    expectProblem(await a.post(`/webhooks/${first.id}/test/`), 404)
  })

  it("is tenant-scoped", async () => {
    const mine = await create()
    expectProblem(await b.get(`/webhooks/${mine.id}/`), 404)
    expectProblem(await b.patch(`/webhooks/${mine.id}/`, { name: "x" }), 404)
    expectProblem(await b.delete(`/webhooks/${mine.id}/`), 404)
    expectProblem(await b.post(`/webhooks/${mine.id}/test/`), 404)
    expectProblem(await b.get(`/webhooks/${mine.id}/deliveries/`), 404)
    expectProblem(await b.post(`/webhooks/${mine.id}/rotate-secret/`), 404)
    expect((await b.get("/webhooks/")).body.map((x: any) => x.id)).not.toContain(mine.id)
    expect((await a.get(`/webhooks/${mine.id}/`)).status).toBe(200)
  })

  it("needs an API key and a UUID id", async () => {
    expectProblem(await api.client(undefined).get("/webhooks/"), 401)
    expectProblem(await a.get("/webhooks/not-a-uuid/"), 400)
  })

  it("serves the event registry at /webhooks/events/ (not taken for an id)", async () => {
    const r = await a.get("/webhooks/events/")
    expect(r.status).toBe(200)
    expect(r.body.map((e: any) => e.name)).toEqual([
      "agent.completion.succeeded",
      "agent.completion.failed",
      "webhook.ping",
    ])
    for (const e of r.body) {
      expect(e).toEqual({
        name: expect.any(String),
        description: expect.any(String),
        payload_schema: expect.any(Object),
      })
      expect(e.payload_schema.properties.event).toEqual({ const: e.name })
    }
    const failed = r.body.find((e: any) => e.name === "agent.completion.failed")
    expect(failed.payload_schema.properties.data.required).toEqual([
      "project_id",
      "run_number",
      "failure_reason",
    ])
  })

  it("queues a webhook.ping delivery and its task on test", async () => {
    const s = await create()
    const r = await a.post(`/webhooks/${s.id}/test/`)
    expect(r.status).toBe(202)
    expect(r.body).toEqual({ delivery_id: uuid })
    const delivery = await db
      .selectFrom("webhook_deliveries")
      .selectAll()
      .where("id", "=", r.body.delivery_id)
      .executeTakeFirstOrThrow()
    expect(delivery).toMatchObject({
      subscription_id: s.id,
      event_id: null,
      event_type: "webhook.ping",
      data: { message: "This is a test event from dxs." },
      status: "pending",
    })
    const task = await db
      .selectFrom("tasks")
      .selectAll()
      .where("kind", "=", "webhook-deliver")
      .where("idempotency_key", "=", `webhook-deliver:${r.body.delivery_id}`)
      .executeTakeFirstOrThrow()
    expect(task.payload).toEqual({ deliveryId: r.body.delivery_id })
    // Each test is its own delivery.
    const again = await a.post(`/webhooks/${s.id}/test/`)
    expect(again.body.delivery_id).not.toBe(r.body.delivery_id)
  })

  it("shows the delivery log, newest first, with attempts, paginated", async () => {
    const s = await create()
    const ids: Array<string> = []
    for (let i = 0; i < 3; i++) ids.push((await a.post(`/webhooks/${s.id}/test/`)).body.delivery_id)
    // The first delivery: one failed attempt, then a success.
    const [oldest, middle, newest] = ids as [string, string, string]
    const attempt1 = randomUUID()
    const attempt2 = randomUUID()
    await db
      .insertInto("webhook_attempts")
      .values([
        {
          id: attempt1,
          delivery_id: oldest,
          number: 1,
          url: PUBLIC_URL,
          status_code: 503,
          error: "HTTP 503",
          duration_ms: 12,
        },
        {
          id: attempt2,
          delivery_id: oldest,
          number: 2,
          url: PUBLIC_URL,
          status_code: 200,
          error: null,
          duration_ms: 7,
        },
      ])
      .execute()
    await db
      .updateTable("webhook_deliveries")
      .set({ status: "succeeded", attempt_count: 2, last_status_code: 200, delivered_at: new Date() })
      .where("id", "=", oldest)
      .execute()

    const log = await a.get(`/webhooks/${s.id}/deliveries/`)
    expect(log.status).toBe(200)
    expect(log.body.count).toBe(3)
    expect(log.body.results.map((d: any) => d.id)).toEqual([newest, middle, oldest])
    expect(log.body.results[0]).toEqual({
      id: newest,
      event_type: "webhook.ping",
      status: "pending",
      attempt_count: 0,
      last_status_code: null,
      last_error: null,
      created_at: timestamp,
      delivered_at: null,
      next_attempt_at: timestamp,
      attempts: [],
    })
    expect(log.body.results[2]).toMatchObject({
      id: oldest,
      status: "succeeded",
      attempt_count: 2,
      last_status_code: 200,
      delivered_at: timestamp,
      next_attempt_at: null,
      attempts: [
        {
          id: attempt1,
          number: 1,
          status_code: 503,
          error: "HTTP 503",
          duration_ms: 12,
          attempted_at: timestamp,
        },
        { id: attempt2, number: 2, status_code: 200, error: null, duration_ms: 7, attempted_at: timestamp },
      ],
    })

    const page = await a.get(`/webhooks/${s.id}/deliveries/?limit=1&offset=1`)
    expect(page.body.count).toBe(3)
    expect(page.body.results.map((d: any) => d.id)).toEqual([middle])
    expectProblem(await a.get(`/webhooks/${s.id}/deliveries/?limit=101`), 400)
    expectProblem(await a.get(`/webhooks/${s.id}/deliveries/?limit=0`), 400)
    expectProblem(await a.get(`/webhooks/${s.id}/deliveries/?offset=-1`), 400)
    expect((await a.get(`/webhooks/${s.id}/deliveries/?limit=100`)).status).toBe(200)
  })

  it("rotates the secret: a new one is shown once and stored encrypted", async () => {
    const s = await create()
    const before = (await row(s.id)).secret
    const r = await a.post(`/webhooks/${s.id}/rotate-secret/`)
    expect(r.status).toBe(200)
    expect(r.body).toEqual({ secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{32}$/) })
    expect(r.body.secret).not.toBe(s.secret)
    const after = (await row(s.id)).secret
    expect(after).not.toBe(before)
    expect(decryptSecret(key, after)).toBe(r.body.secret)
    expect((await a.get(`/webhooks/${s.id}/`)).text).not.toContain(r.body.secret)
  })
})
