/**
 * What the database's sessions are doing during a run, sampled from `pg_stat_activity`: per sample, each
 * active session of the benchmark's database counts once under its wait (a lock, I/O, none = on CPU or
 * runnable) and the statement it runs. Shows where queries queue behind one another.
 */
import { sql } from "kysely"
import type { Db } from "./figures.ts"

export interface WaitSample {
  readonly wait: string
  readonly query: string
  readonly count: number
}

export interface WaitSampler {
  /** Stops sampling; the samples by wait and statement, most frequent first, and how many rounds ran. */
  readonly stop: () => Promise<{ readonly rounds: number; readonly samples: ReadonlyArray<WaitSample> }>
}

export const sampleWaits = (db: Db, everyMs = 25): WaitSampler => {
  const counts = new Map<string, WaitSample>()
  let rounds = 0
  let running = true
  const loop = (async () => {
    while (running) {
      const rows = await sql<{ wait: string; query: string }>`
        select coalesce(wait_event_type || ':' || wait_event, 'running') as wait,
               left(regexp_replace(query, '\\s+', ' ', 'g'), 90) as query
        from pg_stat_activity
        where datname = current_database() and state = 'active' and pid <> pg_backend_pid()
          and query not like 'LISTEN%'`
        .execute(db)
        .catch(() => ({ rows: [] }))
      rounds += 1
      for (const r of rows.rows) {
        const key = `${r.wait}\u0000${r.query}`
        const e = counts.get(key)
        counts.set(key, { wait: r.wait, query: r.query, count: (e?.count ?? 0) + 1 })
      }
      await new Promise((resolve) => setTimeout(resolve, everyMs))
    }
  })()
  return {
    stop: async () => {
      running = false
      await loop
      return { rounds, samples: [...counts.values()].sort((a, b) => b.count - a.count) }
    },
  }
}
