/**
 * Requests per minute per API key or member (DESIGN §4: 600 by default, `RATE_LIMIT_PER_MINUTE`), and the
 * throttles against guessing credentials, counted in PostgreSQL so that every API process shares one count:
 * a fixed one-minute window per subject. The windows follow Effect's `Clock` (a test moves it instead of
 * waiting for a new minute).
 */
import { createHash } from "node:crypto"
import { type Conn, withDb } from "@dxs/db"
import * as RateCounters from "@dxs/db/repositories/RateCounters"
import { Clock, Context, Effect } from "effect"
import { TooManyRequests } from "./Errors.ts"

export class RateLimitSettings extends Context.Reference<RateLimitSettings>()(
  "@dxs/services/RateLimitSettings",
  {
    /** 0 turns the limit off. */
    defaultValue: (): { readonly perMinute: number } => ({ perMinute: 600 }),
  },
) {}

/**
 * Throttles against guessing, per minute (config `SIGN_IN_ATTEMPTS_PER_MINUTE`, `AUTH_FAILURES_PER_MINUTE`):
 * sign-in attempts per e-mail and per client address, and refused credentials per client address.
 */
export class AuthThrottleSettings extends Context.Reference<AuthThrottleSettings>()(
  "@dxs/services/AuthThrottleSettings",
  {
    defaultValue: (): {
      readonly signInAttemptsPerMinute: number
      readonly authFailuresPerMinute: number
    } => ({
      signInAttemptsPerMinute: 10,
      authFailuresPerMinute: 30,
    }),
  },
) {}

/** The subject of an API key: a prefix of its hash (the key itself is never stored). */
export const keySubject = (key: string) =>
  `key:${createHash("sha256").update(key).digest("hex").slice(0, 32)}`
export const memberSubject = (memberId: string) => `member:${memberId}`

const MINUTE_MS = 60_000

/** The minute `nowMs` falls in: its start, and the whole seconds left in it (at least 1). */
const minuteOf = (nowMs: number) => {
  const start = Math.floor(nowMs / MINUTE_MS) * MINUTE_MS
  return { start: new Date(start), secondsLeft: Math.max(1, Math.ceil((start + MINUTE_MS - nowMs) / 1000)) }
}

/** Counts one more event of `subject` in the current minute: the count so far and the seconds left. */
const countInMinute = (subject: string) =>
  Effect.gen(function* () {
    const minute = minuteOf(yield* Clock.currentTimeMillis)
    const count = yield* withDb((db) => RateCounters.countInWindow(db, subject, minute.start))
    return { count, retryAfter: minute.secondsLeft }
  })

/** Counts a request of `subject`; 429 with the seconds until the next minute when over the limit. */
export const consumeRequest = (subject: string) =>
  Effect.gen(function* () {
    const { perMinute } = yield* RateLimitSettings
    if (perMinute <= 0) return
    const { count, retryAfter } = yield* countInMinute(subject)
    if (count > perMinute)
      return yield* TooManyRequests.of(
        `More than ${perMinute} requests in this minute; retry in ${retryAfter} s`,
        retryAfter,
      )
  })

/**
 * The client address a throttle counts by: the TCP peer as the server sees it. Headers such as
 * X-Forwarded-For are not trusted (a client could name any address); behind a proxy every client shares
 * the proxy's address and count.
 */
const addressSubject = (kind: string, clientAddress: string | undefined) =>
  `${kind}:${clientAddress === undefined || clientAddress === "" ? "unknown" : clientAddress}`

/** E-mail addresses are counted by a hash of their lower-cased form (the table holds no addresses). */
const emailSubject = (email: string) =>
  `sign-in-email:${createHash("sha256").update(email.trim().toLowerCase()).digest("hex").slice(0, 32)}`

/**
 * Counts a sign-in attempt of `email` from `clientAddress`, before its password is checked; 429 when either
 * has made more than `signInAttemptsPerMinute` attempts this minute, whether or not the password is right.
 * Nothing resets a count: a success counts like a failure.
 */
export const consumeSignInAttempt = (email: string, clientAddress: string | undefined) =>
  Effect.gen(function* () {
    const { signInAttemptsPerMinute: limit } = yield* AuthThrottleSettings
    const byEmail = yield* countInMinute(emailSubject(email))
    const byAddress = yield* countInMinute(addressSubject("sign-in-address", clientAddress))
    const over = [byEmail, byAddress].filter((c) => c.count > limit)
    if (over.length > 0) {
      const retryAfter = Math.max(...over.map((c) => c.retryAfter))
      return yield* TooManyRequests.of(
        `More than ${limit} sign-in attempts in this minute for this e-mail address or from this client; retry in ${retryAfter} s`,
        retryAfter,
      )
    }
  })

/**
 * Counts refused credentials (a bad API key, an unknown session, none at all) from `clientAddress`: the
 * refusal itself while under `authFailuresPerMinute`, else 429 until the minute is over.
 */
export const refuseCredentials = <E>(refusal: E, clientAddress: string | undefined) =>
  Effect.gen(function* () {
    const { authFailuresPerMinute: limit } = yield* AuthThrottleSettings
    const { count, retryAfter } = yield* countInMinute(addressSubject("auth-failures", clientAddress))
    if (count > limit)
      return yield* TooManyRequests.of(
        `More than ${limit} requests with refused credentials from this client in this minute; retry in ${retryAfter} s`,
        retryAfter,
      )
    return yield* Effect.fail(refusal)
  })

/** Housekeeping: deletes the counters of minutes that have passed (the last two are kept); how many. */
export const sweepRateCounters = (db: Conn): Effect.Effect<number> =>
  Effect.flatMap(Clock.currentTimeMillis, (nowMs) =>
    RateCounters.deletePastCounters(db, new Date(nowMs - 2 * MINUTE_MS)),
  )
