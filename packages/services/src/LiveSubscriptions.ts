/**
 * How many live subscriptions (streams of changes, like GraphQL's `runProgress`) each API key or member
 * holds at once, so that no client can make a process serve an unbounded number of them. Counted in this
 * process (a subscription lives on one connection to one process): each place is held for the life of
 * the subscription and given back when it ends, however it ends.
 */
import { Context, Effect } from "effect"
import { TooManySubscriptions } from "./Errors.ts"

export class LiveSubscriptionSettings extends Context.Reference<LiveSubscriptionSettings>()(
  "@dxs/services/LiveSubscriptionSettings",
  {
    /** Live subscriptions per API key or member (`MAX_SUBSCRIPTIONS_PER_KEY`). */
    defaultValue: (): { readonly maxPerSubject: number } => ({ maxPerSubject: 10 }),
  },
) {}

export class LiveSubscriptions extends Effect.Service<LiveSubscriptions>()(
  "@dxs/services/LiveSubscriptions",
  {
    effect: Effect.gen(function* () {
      const { maxPerSubject } = yield* LiveSubscriptionSettings
      const held = new Map<string, number>()
      const release = (subject: string) => {
        const n = (held.get(subject) ?? 0) - 1
        if (n > 0) held.set(subject, n)
        else held.delete(subject)
      }
      return {
        /**
         * Holds one of `subject`'s places (see RateLimits' `keySubject`, `memberSubject`) until the scope
         * closes; TooManySubscriptions (429) when they are all taken.
         */
        hold: (subject: string) =>
          Effect.acquireRelease(
            Effect.suspend(() => {
              const n = held.get(subject) ?? 0
              if (n >= maxPerSubject) return Effect.fail(TooManySubscriptions.of(maxPerSubject))
              held.set(subject, n + 1)
              return Effect.void
            }),
            () => Effect.sync(() => release(subject)),
          ),
        /** The places `subject` holds now. */
        held: (subject: string) => Effect.sync(() => held.get(subject) ?? 0),
      }
    }),
  },
) {}
