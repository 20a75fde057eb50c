/**
 * Requests per minute per API key or member (DESIGN §4: 600 by default, `RATE_LIMIT_PER_MINUTE`), counted
 * in PostgreSQL so that every API process shares one count: a fixed one-minute window per subject.
 */
import { createHash } from "node:crypto"
import type { Database } from "@dxs/db"
import { query } from "@dxs/db"
import { Context, Effect } from "effect"
import { type Kysely, sql } from "kysely"
import { TooManyRequests } from "./Errors.ts"

export class RateLimitSettings extends Context.Reference<RateLimitSettings>()(
  "@dxs/services/RateLimitSettings",
  {
    /** 0 turns the limit off. */
    defaultValue: (): { readonly perMinute: number } => ({ perMinute: 600 }),
  },
) {}

/** The subject of an API key: a prefix of its hash (the key itself is never stored). */
export const keySubject = (key: string) =>
  `key:${createHash("sha256").update(key).digest("hex").slice(0, 32)}`
export const memberSubject = (memberId: string) => `member:${memberId}`

/** Counts a request of `subject`; 429 with the seconds until the next minute when over the limit. */
export const consumeRequest = (subject: string) =>
  Effect.gen(function* () {
    const { perMinute } = yield* RateLimitSettings
    if (perMinute <= 0) return
    const row = yield* query((db) =>
      sql<{ count: number; retry_after: number }>`
        insert into rate_counters as c (subject, window_start, count)
        values (${subject}, date_trunc('minute', now()), 1)
        on conflict (subject, window_start) do update set count = c.count + 1
        returning c.count,
          ceil(extract(epoch from (c.window_start + interval '1 minute' - now())))::int as retry_after`
        .execute(db)
        .then((r) => r.rows[0]!),
    )
    if (row.count > perMinute)
      return yield* TooManyRequests.of(
        `More than ${perMinute} requests in this minute; retry in ${Math.max(1, row.retry_after)} s`,
        Math.max(1, row.retry_after),
      )
  })

/** Housekeeping: counters of minutes that have passed. */
export const sweepRateCounters = async (db: Kysely<Database>): Promise<number> => {
  const r = await db
    .deleteFrom("rate_counters")
    .where("window_start", "<", sql<Date>`now() - interval '2 minutes'`)
    .executeTakeFirst()
  return Number(r.numDeletedRows)
}
