/**
 * The background task handlers every worker runs, by task kind, and what a worker does at start. The
 * apps (the `dxs` worker, tests) pass these to the worker loop.
 */
import { type BlobStoreShape, type Database, deleteExpiredIdempotencyKeys } from "@dxs/db"
import type { LanguageModelShape } from "@dxs/pipeline/llm/LanguageModel"
import { localModel } from "@dxs/pipeline/llm/Local"
import { failAbandonedParses, PARSE_TASK, parseTaskHandler } from "@dxs/pipeline/parsing/ParseDocument"
import type { RunOptions } from "@dxs/pipeline/parsing/Runner"
import { pipelineTaskHandlers } from "@dxs/pipeline/run/Handlers"
import { failAbandonedRuns } from "@dxs/pipeline/run/Runs"
import { webhookDeliverHandler } from "@dxs/pipeline/webhooks/Delivery"
import { webhookFanoutHandler } from "@dxs/pipeline/webhooks/Fanout"
import { WEBHOOK_DELIVER_TASK, WEBHOOK_FANOUT_TASK } from "@dxs/pipeline/webhooks/Queue"
import type { WebhookSettings } from "@dxs/pipeline/webhooks/Settings"
import type { WebSearchShape } from "@dxs/pipeline/websearch/WebSearch"
import { Duration, Effect, Schedule } from "effect"
import type { Kysely } from "kysely"
import {
  ARCHIVE_SWEEP_TASK,
  ARCHIVE_TASK,
  archiveSweepTaskHandler,
  archiveTaskHandler,
  type BackgroundTaskHandler,
  scheduleArchiveSweep,
} from "./Archive.ts"
import { type LeftoverStores, sweepLeftovers } from "./Leftovers.ts"
import { deleteExpiredSessions } from "./Members.ts"
import { failAbandonedMappings, OUTPUT_MAPPING_TASK, outputMappingTaskHandler } from "./OutputSchemas.ts"
import { sweepRateCounters } from "./RateLimits.ts"

export interface BackgroundOptions {
  readonly blobs: BlobStoreShape
  /** Parse limits and tools (defaults: 120 s, 1024 MB, 2,000 pages, 500 MB decompressed, LibreOffice detected). */
  readonly parsing?: Omit<RunOptions, "signal"> | undefined
  /** The language model of the pipeline's stages (default: the `local` provider). */
  readonly model?: LanguageModelShape | undefined
  /** The web search of agents with `enable_web_search` (default: none; those agents use documents only). */
  readonly webSearch?: WebSearchShape | undefined
  /** Webhook delivery (the encryption key of secrets at rest, loopback, trusted CAs). Unset: events are fanned out, but this worker sends nothing. */
  readonly webhooks?: WebhookSettings | undefined
}

/**
 * Handlers for `parse`, `archive`, `archive-sweep`, the pipeline's run tasks, automatic output mapping and
 * webhook delivery.
 */
export const backgroundTaskHandlers = (
  options: BackgroundOptions,
): Readonly<Record<string, BackgroundTaskHandler>> => ({
  [PARSE_TASK]: parseTaskHandler({ blobs: options.blobs, run: options.parsing }),
  [ARCHIVE_TASK]: archiveTaskHandler,
  [ARCHIVE_SWEEP_TASK]: archiveSweepTaskHandler,
  ...pipelineTaskHandlers({ model: options.model ?? localModel, webSearch: options.webSearch }),
  [WEBHOOK_FANOUT_TASK]: webhookFanoutHandler,
  [OUTPUT_MAPPING_TASK]: outputMappingTaskHandler(options.model ?? localModel),
  ...(options.webhooks ? { [WEBHOOK_DELIVER_TASK]: webhookDeliverHandler(options.webhooks) } : {}),
})

/**
 * Housekeeping a worker runs at start and then periodically: documents whose parse task died with its
 * worker on the last attempt become Failed (never left Pending), and runs whose task did so end as
 * failed; expired sessions, rate counters and Idempotency-Key answers (after 24 hours) are deleted.
 * With `leftovers`, files of the blob store no document refers to and spool folders of dead processes
 * are removed too (`sweepLeftovers`). Returns how many changed.
 */
export const backgroundHousekeeping = async (
  db: Kysely<Database>,
  leftovers?: LeftoverStores | undefined,
): Promise<number> =>
  (await failAbandonedParses(db)) +
  (await failAbandonedRuns(db)) +
  (await failAbandonedMappings(db)) +
  (await deleteExpiredSessions(db)) +
  (await sweepRateCounters(db)) +
  (await deleteExpiredIdempotencyKeys(db)) +
  (leftovers === undefined ? 0 : await sweepLeftovers(db, leftovers))

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
  const every = (what: string, period: Duration.Duration, f: () => Promise<unknown>) =>
    Effect.tryPromise(f).pipe(
      Effect.catchAll((e) => Effect.logWarning(`${what} failed: ${String(e.error)}`)),
      Effect.repeat(Schedule.spaced(period)),
      Effect.delay(period),
    )
  return Effect.all(
    [
      every("worker housekeeping", HOUSEKEEPING_EVERY, () => backgroundHousekeeping(db)),
      every("run watch", RUN_WATCH_EVERY, () => failAbandonedRuns(db)),
      ...(leftovers === undefined
        ? []
        : [every("sweep of leftovers", LEFTOVERS_EVERY, () => sweepLeftovers(db, leftovers))]),
    ],
    { concurrency: "unbounded", discard: true },
  ).pipe(Effect.zipRight(Effect.never))
}

/**
 * At worker start: the daily archive sweep is queued (once per day for all workers), then housekeeping
 * (with the sweep of leftovers when `leftovers` is given).
 */
export const startBackground = async (
  db: Kysely<Database>,
  leftovers?: LeftoverStores | undefined,
): Promise<void> => {
  await scheduleArchiveSweep(db)
  await backgroundHousekeeping(db, leftovers)
}

export { detectLibreOffice } from "@dxs/pipeline/parsing/Runner"
