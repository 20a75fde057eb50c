import { useTestDatabase } from "@dxs/testing/TestDatabase"
import fc from "fast-check"
import { sql } from "kysely"
import { afterAll, describe, expect, it } from "vitest"
import { makeKysely } from "../src/Db.ts"
import {
  claim,
  complete,
  enqueue,
  enqueueMany,
  fail,
  heartbeat,
  listenForTasks,
  retryDelayMs,
  taskStats,
} from "../src/TaskQueue.ts"

const url = await useTestDatabase()
const db = makeKysely(url, 6)
afterAll(() => db.destroy())

const LONG_LEASE = 60_000

const task = (id: string) => db.selectFrom("tasks").selectAll().where("id", "=", id).executeTakeFirstOrThrow()

/** Polls `f` until it returns a value that is not undefined; bounded. */
const eventually = async <A>(
  f: () => Promise<A | undefined>,
  timeoutMs = 20_000,
  everyMs = 50,
): Promise<A> => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const a = await f()
    if (a !== undefined) return a
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`)
    await new Promise((r) => setTimeout(r, everyMs))
  }
}

/** Ends a running task's lease now (simulates the passing of its time, as a worker that stopped heartbeating). */
const expireLease = (id: string) =>
  db
    .updateTable("tasks")
    .set({ locked_until: sql`now() - interval '1 millisecond'` })
    .where("id", "=", id)
    .execute()

/** Makes a pending task due now (simulates the passing of its backoff). */
const makeDue = (id: string) =>
  db.updateTable("tasks").set({ run_after: sql`now()` }).where("id", "=", id).execute()

describe("TaskQueue", () => {
  it("enqueue is idempotent: the same key twice gives one row and the existing id", async () => {
    const a = await enqueue(db, { kind: "idem", idempotencyKey: "idem:1", payload: { n: 1 } })
    const b = await enqueue(db, { kind: "idem", idempotencyKey: "idem:1", payload: { n: 2 } })
    expect(a.created).toBe(true)
    expect(b).toEqual({ id: a.id, created: false })
    const rows = await db.selectFrom("tasks").selectAll().where("idempotency_key", "=", "idem:1").execute()
    expect(rows).toHaveLength(1)
    expect(rows[0]?.payload).toEqual({ n: 1 })
    expect(rows[0]?.status).toBe("pending")
    expect(rows[0]?.max_attempts).toBe(5)
  })

  it("enqueueMany inserts every task in batches, skips keys that exist, and keeps defaults", async () => {
    const before = await enqueue(db, { kind: "many", idempotencyKey: "many:7", payload: { n: -1 } })
    const inputs = Array.from({ length: 12_345 }, (_, n) => ({
      kind: n % 2 === 0 ? "many" : "many-odd",
      idempotencyKey: `many:${n}`,
      payload: { n, text: "ünïcode \u0001 'quoted'" },
      ...(n === 3 ? { maxAttempts: 2 } : {}),
    }))
    expect(await enqueueMany(db, inputs)).toBe(12_344)
    expect(await enqueueMany(db, inputs.slice(0, 10))).toBe(0)
    const rows = await db
      .selectFrom("tasks")
      .select(["kind", "idempotency_key", "payload", "max_attempts", "status"])
      .where("idempotency_key", "like", "many:%")
      .execute()
    expect(rows).toHaveLength(12_345)
    const byKey = new Map(rows.map((r) => [r.idempotency_key, r]))
    expect(byKey.get("many:7")?.payload).toEqual({ n: -1 })
    expect(byKey.get("many:12344")).toMatchObject({
      kind: "many",
      payload: { n: 12_344, text: "ünïcode \u0001 'quoted'" },
      max_attempts: 5,
      status: "pending",
    })
    expect(byKey.get("many:3")).toMatchObject({ kind: "many-odd", max_attempts: 2 })
    expect(before.created).toBe(true)
    const claimed = await claim(db, { workerId: "w1", kinds: ["many-odd"], leaseMs: LONG_LEASE, limit: 3 })
    expect(claimed).toHaveLength(3)
  })

  it("claims a due task once, then completes it only for the holder", async () => {
    const { id } = await enqueue(db, { kind: "cc", idempotencyKey: "cc:1", payload: {} })
    const claimed = await claim(db, { workerId: "w1", kinds: ["cc"], leaseMs: LONG_LEASE, limit: 5 })
    expect(claimed.map((t) => t.id)).toEqual([id])
    expect(claimed[0]).toMatchObject({
      status: "running",
      locked_by: "w1",
      attempts: 1,
      lease_expirations: 0,
    })
    expect(claimed[0]?.locked_until?.getTime()).toBeGreaterThan(Date.now())
    expect(await claim(db, { workerId: "w2", kinds: ["cc"], leaseMs: LONG_LEASE })).toEqual([])

    expect(await complete(db, id, "w2")).toBe(false)
    expect(await complete(db, id, "w1")).toBe(true)
    const done = await task(id)
    expect(done.status).toBe("succeeded")
    expect(done.completed_at).toBeInstanceOf(Date)
    expect(done.locked_until).toBeNull()
    expect(await complete(db, id, "w1")).toBe(false)
    expect(await claim(db, { workerId: "w2", kinds: ["cc"], leaseMs: LONG_LEASE })).toEqual([])
  })

  it("claims only the given kinds, only due tasks, and at most `limit`", async () => {
    await enqueue(db, { kind: "later", idempotencyKey: "later:1", payload: {}, delayMs: 60_000 })
    await enqueue(db, {
      kind: "later",
      idempotencyKey: "later:2",
      payload: {},
      runAfter: new Date(Date.now() + 3_600_000),
    })
    expect(await claim(db, { workerId: "w1", kinds: ["later"], leaseMs: LONG_LEASE, limit: 10 })).toEqual([])
    for (const i of [1, 2, 3]) await enqueue(db, { kind: "lim", idempotencyKey: `lim:${i}`, payload: {} })
    expect(await claim(db, { workerId: "w1", kinds: ["other"], leaseMs: LONG_LEASE, limit: 10 })).toEqual([])
    expect(await claim(db, { workerId: "w1", kinds: ["lim"], leaseMs: LONG_LEASE, limit: 2 })).toHaveLength(2)
    expect(await claim(db, { workerId: "w2", kinds: ["lim"], leaseMs: LONG_LEASE, limit: 2 })).toHaveLength(1)
  })

  it("completes in the work's transaction: a rollback undoes both the write and the completion", async () => {
    const { id } = await enqueue(db, { kind: "trx", idempotencyKey: "trx:1", payload: {} })
    await claim(db, { workerId: "w1", kinds: ["trx"], leaseMs: LONG_LEASE })
    const boom = new Error("rollback")
    await expect(
      db.transaction().execute(async (trx) => {
        await trx.insertInto("organizations").values({ name: "rolled back" }).execute()
        expect(await complete(trx, id, "w1")).toBe(true)
        throw boom
      }),
    ).rejects.toBe(boom)
    expect(await task(id)).toMatchObject({ status: "running", locked_by: "w1", completed_at: null })
    const gone = await db.selectFrom("organizations").select("id").where("name", "=", "rolled back").execute()
    expect(gone).toEqual([])

    await db.transaction().execute(async (trx) => {
      await trx.insertInto("organizations").values({ name: "committed" }).execute()
      expect(await complete(trx, id, "w1")).toBe(true)
    })
    expect((await task(id)).status).toBe("succeeded")
    const kept = await db.selectFrom("organizations").select("id").where("name", "=", "committed").execute()
    expect(kept).toHaveLength(1)
  })

  it("heartbeat extends the holder's lease and is refused for another worker", async () => {
    const { id } = await enqueue(db, { kind: "hb", idempotencyKey: "hb:1", payload: {} })
    await claim(db, { workerId: "w1", kinds: ["hb"], leaseMs: 5_000 })
    const before = (await task(id)).locked_until!
    expect(await heartbeat(db, id, "w1", LONG_LEASE)).toBe(true)
    const after = (await task(id)).locked_until!
    expect(after.getTime()).toBeGreaterThan(before.getTime() + 50_000)
    expect(await heartbeat(db, id, "w2", LONG_LEASE * 2)).toBe(false)
    expect((await task(id)).locked_until).toEqual(after)
    expect(await complete(db, id, "w1")).toBe(true)
    expect(await heartbeat(db, id, "w1", LONG_LEASE)).toBe(false)
  })

  it("re-claims an expired lease for another worker; the first worker has lost it", async () => {
    const { id } = await enqueue(db, { kind: "exp", idempotencyKey: "exp:1", payload: {} })
    const first = await claim(db, { workerId: "w1", kinds: ["exp"], leaseMs: LONG_LEASE })
    expect(first).toHaveLength(1)
    expect(await claim(db, { workerId: "w2", kinds: ["exp"], leaseMs: LONG_LEASE })).toEqual([])
    await expireLease(id)
    const second = await claim(db, { workerId: "w2", kinds: ["exp"], leaseMs: LONG_LEASE })
    expect(second.map((t) => t.id)).toEqual([id])
    // Taken over from w1, whose attempt is not counted (a worker gone is an outage, within the window).
    expect(second[0]).toMatchObject({
      locked_by: "w2",
      attempts: 1,
      lease_expirations: 1,
      status: "running",
      previous_owner: "w1",
    })
    expect(second[0]?.outage_since).toBeInstanceOf(Date)
    expect(await heartbeat(db, id, "w1", LONG_LEASE)).toBe(false)
    expect(await complete(db, id, "w1")).toBe(false)
    expect(await fail(db, id, "w1", "late")).toBeNull()
    expect(await complete(db, id, "w2")).toBe(true)
    expect(await task(id)).toMatchObject({ status: "succeeded", attempts: 1, lease_expirations: 1 })
  })

  it("re-claims a task whose lease expired during its last attempt while within the retry window", async () => {
    const { id } = await enqueue(db, { kind: "exw", idempotencyKey: "exw:1", payload: {}, maxAttempts: 1 })
    const [first] = await claim(db, { workerId: "w1", kinds: ["exw"], leaseMs: LONG_LEASE })
    expect(first?.previous_owner).toBeNull()
    await expireLease(id)
    const again = await claim(db, { workerId: "w2", kinds: ["exw"], leaseMs: LONG_LEASE })
    expect(again[0]).toMatchObject({ id, status: "running", attempts: 1, previous_owner: "w1" })
  })

  it("fails instead of re-claiming a task whose lease expired during its last attempt past the retry window", async () => {
    const { id } = await enqueue(db, { kind: "exh", idempotencyKey: "exh:1", payload: {}, maxAttempts: 1 })
    expect(await claim(db, { workerId: "w1", kinds: ["exh"], leaseMs: LONG_LEASE })).toHaveLength(1)
    await expireLease(id)
    expect(
      await claim(db, { workerId: "w2", kinds: ["exh"], leaseMs: LONG_LEASE, retryWindowMs: 0 }),
    ).toEqual([])
    const failed = await task(id)
    expect(failed.status).toBe("failed")
    expect(failed).toMatchObject({ attempts: 1, lease_expirations: 1, locked_by: "w1" })
    expect(failed.last_error).toMatch(/lease expired during the last attempt/)
    expect(failed.completed_at).toBeInstanceOf(Date)
  })

  it("retries with exponential backoff, then fails for good after max_attempts with the reason", async () => {
    const { id } = await enqueue(db, {
      kind: "retry",
      idempotencyKey: "retry:1",
      payload: {},
      maxAttempts: 3,
    })
    const delayOf = async () => {
      const r = await sql<{ ms: number }>`
        select (extract(epoch from run_after - updated_at) * 1000)::int as ms from tasks where id = ${id}
      `.execute(db)
      return r.rows[0]?.ms
    }
    const claimOne = () => claim(db, { workerId: "w1", kinds: ["retry"], leaseMs: LONG_LEASE })

    expect(await claimOne()).toHaveLength(1)
    expect(await fail(db, id, "w2", "not mine")).toBeNull()
    expect(await fail(db, id, "w1", "boom 1", { random: () => 0.5 })).toBe("pending")
    expect(await task(id)).toMatchObject({
      status: "pending",
      attempts: 1,
      last_error: "boom 1",
      locked_until: null,
    })
    expect(await delayOf()).toBe(1_000)

    await makeDue(id)
    expect((await claimOne())[0]?.attempts).toBe(2)
    expect(await fail(db, id, "w1", "boom 2", { random: () => 0 })).toBe("pending")
    expect(await delayOf()).toBe(1_600)

    await makeDue(id)
    expect((await claimOne())[0]?.attempts).toBe(3)
    expect(await fail(db, id, "w1", "boom 3")).toBe("failed")
    const failed = await task(id)
    expect(failed).toMatchObject({ status: "failed", attempts: 3, last_error: "boom 3" })
    expect(failed.completed_at).toBeInstanceOf(Date)
    await makeDue(id)
    expect(await claimOne()).toEqual([])
  })

  it("an outage does not count an attempt within the retry window, backs off at most 30 s, and counts after it", async () => {
    const { id } = await enqueue(db, { kind: "out", idempotencyKey: "out:1", payload: {}, maxAttempts: 1 })
    const claimOne = () => claim(db, { workerId: "w1", kinds: ["out"], leaseMs: LONG_LEASE })
    const delayOf = async () =>
      (
        await sql<{ ms: number }>`
          select (extract(epoch from run_after - updated_at) * 1000)::int as ms from tasks where id = ${id}`.execute(
          db,
        )
      ).rows[0]?.ms
    // Far more failures than attempts: none of them counts while the outage lasts.
    for (let n = 0; n < 4; n++) {
      expect((await claimOne())[0]?.attempts).toBe(1)
      expect(await fail(db, id, "w1", "storage unreachable", { outage: true, random: () => 0.5 })).toBe(
        "pending",
      )
      expect(await task(id)).toMatchObject({
        status: "pending",
        attempts: 0,
        last_error: "storage unreachable",
      })
      expect(await delayOf()).toBeGreaterThanOrEqual(1_000)
      await makeDue(id)
    }
    const since = (await task(id)).outage_since
    expect(since).toBeInstanceOf(Date)
    // An outage an hour long: half the time since it began, capped.
    await db
      .updateTable("tasks")
      .set({ outage_since: sql`now() - interval '1 hour'` })
      .where("id", "=", id)
      .execute()
    expect((await claimOne())[0]?.attempts).toBe(1)
    expect(
      await fail(db, id, "w1", "storage unreachable", {
        outage: true,
        random: () => 0.5,
        retryWindowMs: 7_200_000,
      }),
    ).toBe("pending")
    expect(await delayOf()).toBe(30_000)
    // Past the window the attempt counts: the last one fails the task for good.
    await makeDue(id)
    expect((await claimOne())[0]?.attempts).toBe(1)
    expect(await fail(db, id, "w1", "storage unreachable", { outage: true, retryWindowMs: 60_000 })).toBe(
      "failed",
    )
  })

  it("a failure of the task's own ends its outage: the next outage starts a window of its own", async () => {
    const { id } = await enqueue(db, { kind: "own", idempotencyKey: "own:1", payload: {}, maxAttempts: 3 })
    const claimOne = () => claim(db, { workerId: "w1", kinds: ["own"], leaseMs: LONG_LEASE })
    await claimOne()
    expect(await fail(db, id, "w1", "down", { outage: true })).toBe("pending")
    expect((await task(id)).outage_since).toBeInstanceOf(Date)
    await makeDue(id)
    await claimOne()
    expect(await fail(db, id, "w1", "unreadable")).toBe("pending")
    expect(await task(id)).toMatchObject({ attempts: 1, outage_since: null })
  })

  it("fail with `now` retries without a backoff", async () => {
    const { id } = await enqueue(db, { kind: "now", idempotencyKey: "now:1", payload: {} })
    await claim(db, { workerId: "w1", kinds: ["now"], leaseMs: LONG_LEASE })
    await db.transaction().execute(async (trx) => {
      expect(await fail(trx, id, "w1", "transient", { now: true })).toBe("pending")
    })
    const again = await claim(db, { workerId: "w2", kinds: ["now"], leaseMs: LONG_LEASE })
    expect(again[0]).toMatchObject({ id, attempts: 2, locked_by: "w2", last_error: "transient" })
  })

  it("retryDelayMs doubles from 1 s, caps at 5 min, and jitters within ±20 %", () => {
    const half = () => 0.5
    expect([1, 2, 3, 4, 9, 10, 50, 5000].map((a) => retryDelayMs(a, half))).toEqual([
      1_000, 2_000, 4_000, 8_000, 256_000, 300_000, 300_000, 300_000,
    ])
    expect(retryDelayMs(1, () => 0)).toBe(800)
    expect(retryDelayMs(1, () => 0.999_999)).toBe(1_200)
    expect(retryDelayMs(20, () => 0)).toBe(240_000)
    expect(retryDelayMs(20, () => 0.999_999)).toBe(360_000)
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 10_000 }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        (a, r) => {
          const base = Math.min(300_000, 1_000 * 2 ** (a - 1))
          const d = retryDelayMs(a, () => r)
          return Number.isInteger(d) && d >= base * 0.8 - 0.5 && d <= base * 1.2 + 0.5
        },
      ),
    )
  })

  it("wakes listeners with NOTIFY on enqueue, and only for committed tasks", async () => {
    const received: string[] = []
    const unlisten = await listenForTasks(url, (kind) => received.push(kind))
    try {
      await expect(
        db.transaction().execute(async (trx) => {
          await enqueue(trx, { kind: "rolled-back", idempotencyKey: "n:0", payload: {} })
          throw new Error("rollback")
        }),
      ).rejects.toThrow("rollback")
      await enqueue(db, { kind: "wake-me", idempotencyKey: "n:1", payload: {} })
      await eventually(async () => (received.includes("wake-me") ? true : undefined))
      expect(received).toEqual(["wake-me"])
    } finally {
      await unlisten()
    }
  })

  it("taskStats counts a project's tasks by status and kind", async () => {
    const org = await db
      .insertInto("organizations")
      .values({ name: "stats" })
      .returning("id")
      .executeTakeFirstOrThrow()
    const project = await db
      .insertInto("projects")
      .values({ organization_id: org.id, name: "stats", project_modules: "{}" })
      .returning("id")
      .executeTakeFirstOrThrow()
    const add = (kind: string, key: string) =>
      enqueue(db, { kind, idempotencyKey: key, payload: {}, projectId: project.id, maxAttempts: 1 })
    const p1 = await add("st-parse", "st:1")
    await add("st-parse", "st:2")
    const e1 = await add("st-extract", "st:3")
    await add("st-extract", "st:4")
    await enqueue(db, { kind: "st-parse", idempotencyKey: "st:other", payload: {} })
    const claimed = await claim(db, {
      workerId: "w1",
      kinds: ["st-parse", "st-extract"],
      leaseMs: LONG_LEASE,
      limit: 10,
    })
    const mine = claimed.filter((t) => t.project_id === project.id)
    expect(mine).toHaveLength(4)
    await complete(db, p1.id, "w1")
    await fail(db, e1.id, "w1", "bad")

    const stats = await taskStats(db, project.id)
    expect(stats).toEqual({
      pending: 0,
      running: 2,
      succeeded: 1,
      failed: 1,
      expiredLeases: 0,
      byKind: {
        "st-parse": { pending: 0, running: 1, succeeded: 1, failed: 0, expiredLeases: 0 },
        "st-extract": { pending: 0, running: 1, succeeded: 0, failed: 1, expiredLeases: 0 },
      },
    })
  })
})
