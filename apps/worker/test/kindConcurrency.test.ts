/**
 * Slots of their own for a kind (`kindConcurrency`, as `parse` gets one per parsing thread): at most that
 * many of the kind run at once, however many are due, and they never take the slots of the other kinds.
 * A real worker loop over a real database, in this process.
 */
import { makeDialect, makeKysely } from "@dxs/db/Db"
import type { Database } from "@dxs/db/Schema"
import { enqueue } from "@dxs/db/TaskQueue"
import { useTestDatabase } from "@dxs/testing/TestDatabase"
// Brings in the `inject("dxsTemplateUrl")` typing that TestDatabase relies on.
import type {} from "@dxs/testing/TestGlobalSetup"
import { Effect, Fiber } from "effect"
import { Kysely } from "kysely"
import { afterAll, expect, it } from "vitest"
import { runWorker } from "../src/Worker.ts"

const url = await useTestDatabase()
const db = makeKysely(url, 4)
afterAll(() => db.destroy())

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

it("runs at most kindConcurrency tasks of a kind at once, beside the other kinds' slots", async () => {
  const running: Record<string, number> = { heavy: 0, light: 0 }
  const most: Record<string, number> = { heavy: 0, light: 0 }
  const done: Array<string> = []
  /** Released by the test: every heavy task waits for it. */
  let release!: () => void
  const released = new Promise<void>((r) => {
    release = r
  })
  const handler = (kind: "heavy" | "light") => () =>
    Effect.promise(async () => {
      running[kind]! += 1
      most[kind] = Math.max(most[kind]!, running[kind]!)
      try {
        if (kind === "heavy") await released
        else await sleep(20)
      } finally {
        running[kind]! -= 1
        done.push(kind)
      }
    })
  for (let i = 0; i < 6; i++) await enqueue(db, { kind: "heavy", idempotencyKey: `heavy-${i}`, payload: {} })
  for (let i = 0; i < 4; i++) await enqueue(db, { kind: "light", idempotencyKey: `light-${i}`, payload: {} })

  const fiber = Effect.runFork(
    runWorker({
      url,
      kysely: db,
      workerId: "slots",
      handlers: { heavy: handler("heavy"), light: handler("light") },
      concurrency: 1,
      kindConcurrency: { heavy: 3 },
      pollMs: 100,
    }),
  )
  try {
    // The light tasks all finish while three heavy ones hold their own slots.
    while (done.filter((k) => k === "light").length < 4) await sleep(20)
    expect(running.heavy).toBe(3)
    release()
    while (done.length < 10) await sleep(20)
    expect(most).toEqual({ heavy: 3, light: 1 })
  } finally {
    release()
    await Effect.runPromise(Fiber.interrupt(fiber))
  }
})

it("claims for a kind's own slots when its tasks may be due, not after every task of the other kinds", async () => {
  // The worker's claims, by the kinds they asked for (a claim is the statement that takes due tasks).
  const claims: Array<string> = []
  const counted = new Kysely<Database>({
    dialect: makeDialect(url, 4),
    log: (event) => {
      if (event.level === "query" && /with due as/.test(event.query.sql))
        claims.push(String((event.query.parameters as ReadonlyArray<unknown>).find(Array.isArray)))
    },
  })
  const done: Array<string> = []
  const handler = (kind: string) => () =>
    Effect.sync(() => {
      done.push(kind)
    })
  for (let i = 0; i < 30; i++) await enqueue(db, { kind: "quick", idempotencyKey: `quick-${i}`, payload: {} })

  const fiber = Effect.runFork(
    runWorker({
      url,
      kysely: counted,
      workerId: "idle-kind",
      handlers: { quick: handler("quick"), own: handler("own") },
      concurrency: 2,
      kindConcurrency: { own: 2 },
      // No poll during the test: only notifications and freed slots wake the worker.
      pollMs: 600_000,
    }),
  )
  try {
    while (done.length < 30) await sleep(20)
    // Thirty tasks of the other kinds, and the idle kind claimed for once, when the worker started (it was
    // claimed for after nearly every one of them before: 28 times).
    expect(claims.filter((kinds) => kinds === "own")).toHaveLength(1)
    // A task of the kind, once enqueued (and notified), is claimed and run at once.
    await enqueue(db, { kind: "own", idempotencyKey: "own-1", payload: {} })
    while (!done.includes("own")) await sleep(20)
    expect(claims.filter((kinds) => kinds === "own").length).toBeGreaterThan(1)
  } finally {
    await Effect.runPromise(Fiber.interrupt(fiber))
    await counted.destroy()
  }
})
