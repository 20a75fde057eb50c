/**
 * The `rate_counters` table: one count per subject and minute, shared by every API process. A module of
 * its own: a counter belongs to no aggregate (its subject may be a key, a member, an e-mail's hash or a
 * client address), and only the rate limits read and write it.
 */
import { Effect } from "effect"
import { sql } from "kysely"
import type { Conn } from "../Db.ts"

/**
 * Counts one more event of `subject` in the current minute (the database's clock): the count so far and
 * the whole seconds until the minute ends (0 or less at its very end).
 */
export const countInMinute = (
  db: Conn,
  subject: string,
): Effect.Effect<{ readonly count: number; readonly retry_after: number }> =>
  Effect.promise(() =>
    sql<{ count: number; retry_after: number }>`
        insert into rate_counters as c (subject, window_start, count)
        values (${subject}, date_trunc('minute', now()), 1)
        on conflict (subject, window_start) do update set count = c.count + 1
        returning c.count,
          ceil(extract(epoch from (c.window_start + interval '1 minute' - now())))::int as retry_after`
      .execute(db)
      .then((r) => r.rows[0]!),
  )

/** Deletes the counters of minutes that have passed; how many. */
export const deletePastCounters = (db: Conn): Effect.Effect<number> =>
  Effect.promise(() =>
    db
      .deleteFrom("rate_counters")
      .where("window_start", "<", sql<Date>`now() - interval '2 minutes'`)
      .executeTakeFirst(),
  ).pipe(Effect.map((r) => Number(r.numDeletedRows)))
