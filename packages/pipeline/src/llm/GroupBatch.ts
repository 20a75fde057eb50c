/**
 * Group batching: calls made while a batch is under way wait and go together in the next batch, so a burst
 * of calls costs a few statements, not one each, and a lone call goes at once (no timer, no added wait).
 * Each call completes when its own batch has (a put is stored once it returns). Kept here rather than taken
 * from a library: DataLoader gathers the calls of one tick only, and Effect's request batching the requests
 * of one fiber; these calls come from the tasks' separate fibers, spread over many ticks.
 */
import { Deferred, Effect, Exit, FiberId } from "effect"

interface Waiting<K, A> {
  readonly key: K
  readonly done: Deferred.Deferred<A>
}

/**
 * `run` answers a batch of keys with one value per key, in order; at most `maxBatch` keys go in one. Its
 * failures are defects, shared by every call of the batch.
 */
export const groupBatch = <K, A>(
  run: (keys: ReadonlyArray<K>) => Effect.Effect<ReadonlyArray<A>>,
  maxBatch = 100,
): ((key: K) => Effect.Effect<A>) => {
  const waiting: Array<Waiting<K, A>> = []
  let underWay = false
  const drain: Effect.Effect<void> = Effect.suspend(() => {
    const batch = waiting.splice(0, maxBatch)
    if (batch.length === 0) {
      underWay = false
      return Effect.void
    }
    return run(batch.map((w) => w.key)).pipe(
      Effect.exit,
      Effect.flatMap((exit) =>
        Effect.forEach(
          batch,
          (w, i) =>
            Deferred.done(
              w.done,
              Exit.flatMap(exit, (values) =>
                i < values.length
                  ? Exit.succeed(values[i]!)
                  : Exit.die(new Error("a batch answered too few keys")),
              ),
            ),
          { discard: true },
        ),
      ),
      Effect.zipRight(drain),
    )
  })
  return (key) =>
    Effect.suspend(() => {
      const done = Deferred.unsafeMake<A>(FiberId.none)
      waiting.push({ key, done })
      const start = !underWay
      underWay = true
      return (start ? Effect.forkDaemon(drain) : Effect.void).pipe(Effect.zipRight(Deferred.await(done)))
    })
}
