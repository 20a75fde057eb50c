/**
 * The `rate_counters` table: one count per subject and window, shared by every API process. A module of
 * its own: a counter belongs to no aggregate (its subject may be a key, a member, an e-mail's hash or a
 * client address), and only the rate limits read and write it. The windows' times come from the caller
 * (the rate limits read them from their clock), never from the database's.
 */
import { Effect } from "effect"
import { sql } from "kysely"
import type { Conn } from "../Db.ts"

/** Counts one more event of `subject` in the window that starts at `windowStart`: the count so far. */
export const countInWindow = (db: Conn, subject: string, windowStart: Date): Effect.Effect<number> =>
  Effect.promise(() =>
    sql<{ count: number }>`
        insert into rate_counters as c (subject, window_start, count)
        values (${subject}, ${windowStart}, 1)
        on conflict (subject, window_start) do update set count = c.count + 1
        returning c.count`
      .execute(db)
      .then((r) => r.rows[0]!.count),
  )

/** Deletes the counters of windows that started before `before`; how many. */
export const deletePastCounters = (db: Conn, before: Date): Effect.Effect<number> =>
  Effect.promise(() =>
    db.deleteFrom("rate_counters").where("window_start", "<", before).executeTakeFirst(),
  ).pipe(Effect.map((r) => Number(r.numDeletedRows)))
