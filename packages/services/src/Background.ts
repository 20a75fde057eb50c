/**
 * What a worker does beside running tasks: at start, and periodically while it runs (housekeeping, the
 * sweep of leftovers, the run watch). Which handler runs each task kind is the worker's own registry.
 */
import { type Database, deleteExpiredIdempotencyKeys } from "@dxs/db"
import { failAbandonedParses } from "@dxs/pipeline/parsing/ParseDocument"
import { failAbandonedRuns } from "@dxs/pipeline/run/Runs"
import { Cause, Duration, Effect, Schedule } from "effect"
import type { Kysely } from "kysely"
import { scheduleArchiveSweep } from "./Archive.ts"
import { failAbandonedFileEdits } from "./FileEdit.ts"
import { type LeftoverStores, sweepLeftovers } from "./Leftovers.ts"
import { deleteExpiredSessions } from "./Members.ts"
import { failAbandonedMappings } from "./OutputSchemas.ts"
import { sweepRateCounters } from "./RateLimits.ts"

/**
 * Housekeeping a worker runs at start and then periodically: documents whose parse task died with its
 * worker on the last attempt become Failed (never left Pending), and runs whose task did so end as
 * failed, and so do file-edit jobs; expired sessions, rate counters and Idempotency-Key answers (after 24 hours) are deleted.
 * With `leftovers`, files of the blob store no document refers to and spool folders of dead processes
 * are removed too (`sweepLeftovers`). Returns how many changed.
 */
export const backgroundHousekeeping = (db: Kysely<Database>, leftovers?: LeftoverStores | undefined) =>
  Effect.reduce(
    [
      failAbandonedParses(db),
      failAbandonedRuns(db),
      failAbandonedMappings(db),
      failAbandonedFileEdits(db),
      deleteExpiredSessions(db),
      sweepRateCounters(db),
      Effect.promise(() => deleteExpiredIdempotencyKeys(db)),
      leftovers === undefined ? Effect.succeed(0) : sweepLeftovers(db, leftovers),
    ],
    0,
    (total, step) => Effect.map(step, (n) => total + n),
  )

/** How often a worker looks for runs whose task failed for good outside a handler (see `failAbandonedRuns`). */
export const RUN_WATCH_EVERY = Duration.seconds(2)
const HOUSEKEEPING_EVERY = Duration.minutes(1)
/** The leftovers sweep lists the whole blob store: hourly is enough, as files younger than an hour stay. */
const LEFTOVERS_EVERY = Duration.hours(1)

/**
 * What a worker process runs beside its worker loop, forever: housekeeping every minute, the sweep of
 * leftovers (with `leftovers`) every hour and the run watch every two seconds. Failures are logged and
 * retried at the next tick.
 */
export const backgroundLoops = (
  db: Kysely<Database>,
  leftovers?: LeftoverStores | undefined,
): Effect.Effect<never> => {
  const every = (what: string, period: Duration.Duration, work: Effect.Effect<unknown>) =>
    work.pipe(
      Effect.catchAllCause((cause) =>
        Cause.isInterruptedOnly(cause)
          ? Effect.failCause(cause)
          : Effect.logWarning(`${what} failed: ${String(Cause.squash(cause))}`),
      ),
      Effect.repeat(Schedule.spaced(period)),
      Effect.delay(period),
    )
  return Effect.all(
    [
      every("worker housekeeping", HOUSEKEEPING_EVERY, backgroundHousekeeping(db)),
      every("run watch", RUN_WATCH_EVERY, failAbandonedRuns(db)),
      ...(leftovers === undefined
        ? []
        : [every("sweep of leftovers", LEFTOVERS_EVERY, sweepLeftovers(db, leftovers))]),
    ],
    { concurrency: "unbounded", discard: true },
  ).pipe(Effect.zipRight(Effect.never))
}

/**
 * At worker start: the daily archive sweep is queued (once per day for all workers), then housekeeping
 * (with the sweep of leftovers when `leftovers` is given).
 */
export const startBackground = (db: Kysely<Database>, leftovers?: LeftoverStores | undefined) =>
  Effect.asVoid(Effect.zipRight(scheduleArchiveSweep(db), backgroundHousekeeping(db, leftovers)))

export { detectLibreOffice } from "@dxs/pipeline/parsing/Runner"
