import { Deferred, Effect, Exit, Fiber } from "effect"
import { describe, expect, it } from "vitest"
import { groupBatch } from "../../src/llm/GroupBatch.ts"

/** A batch function that records its batches and answers each when the test lets it. */
const gated = () => {
  const batches: Array<ReadonlyArray<number>> = []
  const gates: Array<Deferred.Deferred<void>> = []
  const run = (keys: ReadonlyArray<number>) =>
    Effect.gen(function* () {
      const gate = yield* Deferred.make<void>()
      batches.push(keys)
      gates.push(gate)
      yield* Deferred.await(gate)
      if (keys.includes(-1)) return yield* Effect.die(new Error("the statement failed"))
      return keys.map((k) => k * 10)
    })
  /** Lets batch `i` answer, once it has started. */
  const open = (i: number) =>
    Effect.gen(function* () {
      while (gates.length <= i) yield* Effect.yieldNow()
      yield* Deferred.succeed(gates[i]!, undefined)
    })
  return { batches, run, open }
}

describe("group batching", () => {
  it("sends a lone call at once and the calls made meanwhile together in the next batch", async () => {
    const { batches, run, open } = gated()
    const call = groupBatch(run)
    const result = await Effect.runPromise(
      Effect.gen(function* () {
        const first = yield* Effect.fork(call(1))
        yield* Effect.yieldNow()
        expect(batches).toEqual([[1]])
        const others = yield* Effect.fork(
          Effect.all([call(2), call(3), call(4)], { concurrency: "unbounded" }),
        )
        yield* Effect.yieldNow()
        // Under way: the others wait for the first batch to end.
        expect(batches).toEqual([[1]])
        yield* open(0)
        yield* open(1)
        return [yield* Fiber.join(first), yield* Fiber.join(others)] as const
      }),
    )
    expect(result).toEqual([10, [20, 30, 40]])
    expect(batches).toEqual([[1], [2, 3, 4]])
  })

  it("fails every call of a failed batch, and the next batch still goes", async () => {
    const { batches, run, open } = gated()
    const call = groupBatch(run)
    const [failed, next] = await Effect.runPromise(
      Effect.gen(function* () {
        const first = yield* Effect.fork(call(7))
        yield* Effect.yieldNow()
        const doomed = yield* Effect.fork(
          Effect.all([call(-1), call(5)].map(Effect.exit), { concurrency: 2 }),
        )
        yield* open(0)
        yield* Fiber.join(first)
        yield* open(1)
        const exits = yield* Fiber.join(doomed)
        const after = yield* Effect.fork(call(6))
        yield* open(2)
        return [exits, yield* Fiber.join(after)] as const
      }),
    )
    expect(failed.map(Exit.isFailure)).toEqual([true, true])
    expect(next).toBe(60)
    expect(batches).toEqual([[7], [-1, 5], [6]])
  })

  it("puts at most maxBatch calls in one batch", async () => {
    const { batches, run, open } = gated()
    const call = groupBatch(run, 2)
    await Effect.runPromise(
      Effect.gen(function* () {
        const all = yield* Effect.fork(Effect.all([1, 2, 3, 4, 5].map(call), { concurrency: "unbounded" }))
        for (let i = 0; i < 3; i++) yield* open(i)
        expect(yield* Fiber.join(all)).toEqual([10, 20, 30, 40, 50])
      }),
    )
    expect(batches.flat()).toEqual([1, 2, 3, 4, 5])
    expect(batches.map((b) => b.length)).toEqual([2, 2, 1])
  })
})
