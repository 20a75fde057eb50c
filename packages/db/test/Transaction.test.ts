import { useTestDatabase } from "@dxs/testing/TestDatabase"
import { Deferred, Effect, Exit, Fiber, Layer } from "effect"
import { sql } from "kysely"
import { afterAll, describe, expect, it } from "vitest"
import { Db, makeKysely, transaction, undoUnlessCommitted } from "../src/Db.ts"
import { DatabaseUnavailable, outageInCause, StorageUnavailable } from "../src/Outage.ts"

const url = await useTestDatabase()
const db = makeKysely(url, 2)
const layer = Db.layer(url, 4)
afterAll(() => db.destroy())

await sql`create table if not exists tx_probe (name text primary key)`.execute(db)

const has = async (name: string) =>
  (await sql<{ n: number }>`select count(*)::int as n from tx_probe where name = ${name}`.execute(db)).rows[0]
    ?.n === 1

/**
 * Interrupts a caller while its transaction is inside `body`, then lets the body finish with `result`.
 * Returns what the caller's undo saw and the caller's exit.
 */
const interruptDuring = (name: string, result: "commit" | "fail") =>
  Effect.gen(function* () {
    const inside = yield* Deferred.make<void>()
    const proceed = yield* Deferred.make<void>()
    let undone = false
    const work = transaction((trx) =>
      Effect.gen(function* () {
        yield* Effect.promise(() => sql`insert into tx_probe (name) values (${name})`.execute(trx))
        yield* Deferred.succeed(inside, undefined)
        yield* Deferred.await(proceed)
        if (result === "fail") return yield* Effect.fail("refused" as const)
      }),
    )
    const fiber = yield* Effect.fork(
      undoUnlessCommitted(
        work,
        Effect.sync(() => (undone = true)),
      ),
    )
    yield* Deferred.await(inside)
    // The interruption is requested while the body still runs; it cannot complete before the outcome.
    const interrupting = yield* Effect.fork(Fiber.interrupt(fiber))
    yield* Effect.sleep("20 millis")
    yield* Deferred.succeed(proceed, undefined)
    const exit = yield* Fiber.join(interrupting)
    return { undone, exit }
  }).pipe(Effect.provide(layer), Effect.runPromise)

describe("transaction", () => {
  it("an interrupted caller does not undo what its transaction committed", async () => {
    const { undone, exit } = await interruptDuring("committed", "commit")
    expect(await has("committed")).toBe(true)
    expect(undone).toBe(false)
    expect(Exit.isInterrupted(exit)).toBe(true)
  })

  it("an interrupted caller undoes when its transaction rolled back", async () => {
    const { undone } = await interruptDuring("rolled-back", "fail")
    expect(await has("rolled-back")).toBe(false)
    expect(undone).toBe(true)
  })

  it("a failure rolls back and undoes; a success keeps", async () => {
    let undone = 0
    const run = (name: string, fail: boolean) =>
      undoUnlessCommitted(
        transaction((trx) =>
          Effect.zipRight(
            Effect.promise(() => sql`insert into tx_probe (name) values (${name})`.execute(trx)),
            fail ? Effect.fail("no" as const) : Effect.void,
          ),
        ),
        Effect.sync(() => undone++),
      ).pipe(Effect.provide(Layer.fresh(layer)), Effect.runPromiseExit)
    expect(Exit.isSuccess(await run("kept", false))).toBe(true)
    expect(Exit.isFailure(await run("refused", true))).toBe(true)
    expect(await has("kept")).toBe(true)
    expect(await has("refused")).toBe(false)
    expect(undone).toBe(1)
  })

  it("after a storage outage the failure comes at once, without an undo that would wait for storage again", async () => {
    let undone = 0
    const failing = (defect: unknown) =>
      undoUnlessCommitted(
        Effect.die(defect),
        Effect.sync(() => undone++),
      ).pipe(Effect.runPromiseExit)
    const storage = await failing(
      new StorageUnavailable({
        operation: "S3 PutObject",
        key: "p/d/v1/a.pdf",
        reason: "no answer within 20 s",
      }),
    )
    expect(Exit.isFailure(storage) && outageInCause(storage.cause)?.part).toBe("storage")
    expect(undone).toBe(0)
    // Storage answered, the database did not (or the work failed for a reason of its own): undone.
    await failing(new DatabaseUnavailable({ reason: "connection refused" }))
    await failing(new Error("refused"))
    expect(undone).toBe(2)
  })
})
