/**
 * A worker that stops (SIGTERM in `dxs start`: its loop interrupted) claims nothing more, lets in-flight
 * tasks finish for its grace period, and gives back those still running at once: pending again, the
 * attempt not counted, no lease left to expire first. A real worker loop over a real database, in this
 * process.
 */
import { makeKysely } from "@dxs/db/Db"
import { enqueue } from "@dxs/db/TaskQueue"
import { useTestDatabase } from "@dxs/testing/TestDatabase"
// Brings in the `inject("dxsTemplateUrl")` typing that TestDatabase relies on.
import type {} from "@dxs/testing/TestGlobalSetup"
import { Effect, Fiber } from "effect"
import { afterAll, expect, it } from "vitest"
import { runWorker } from "../src/Worker.ts"

const url = await useTestDatabase()
const db = makeKysely(url, 4)
afterAll(() => db.destroy())

const taskRow = (id: string) =>
  db
    .selectFrom("tasks")
    .select(["status", "attempts", "locked_by", "locked_until", "run_after"])
    .where("id", "=", id)
    .executeTakeFirstOrThrow()

/** Resolves when `started` has been called `n` times. */
const counter = (n: number) => {
  let count = 0
  let reached!: () => void
  const all = new Promise<void>((r) => {
    reached = r
  })
  return {
    all,
    started: () => {
      count += 1
      if (count === n) reached()
    },
  }
}

it("releases a task still running when it stops, and finishes one that ends within the grace period", async () => {
  const stuck = await enqueue(db, { kind: "stuck", idempotencyKey: "stuck-1", payload: {} })
  const quick = await enqueue(db, { kind: "quick", idempotencyKey: "quick-1", payload: {} })
  const running = counter(2)
  let finishQuick!: () => void
  const quickMayFinish = new Promise<void>((r) => {
    finishQuick = r
  })
  const fiber = Effect.runFork(
    runWorker({
      url,
      kysely: db,
      workerId: "stopping",
      handlers: {
        // Never ends on its own (it ends when the worker interrupts it).
        stuck: () => Effect.zipRight(Effect.sync(running.started), Effect.never),
        // Ends once the worker is stopping, within the grace period.
        quick: () =>
          Effect.promise(async () => {
            running.started()
            await quickMayFinish
          }),
      },
      concurrency: 2,
      graceMs: 2_000,
      pollMs: 100,
    }),
  )
  await running.all
  expect((await taskRow(stuck.id)).status).toBe("running")
  const stopped = Effect.runPromise(Fiber.interrupt(fiber))
  finishQuick()
  await stopped

  expect(await taskRow(quick.id)).toMatchObject({ status: "succeeded" })
  const released = await taskRow(stuck.id)
  expect(released).toMatchObject({ status: "pending", attempts: 0, locked_by: null, locked_until: null })
  // Due now, not after a lease's expiry or a retry's backoff.
  expect(released.run_after.getTime()).toBeLessThanOrEqual(Date.now() + 1_000)
})
