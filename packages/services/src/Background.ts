/**
 * The background task handlers every worker runs, by task kind, and what a worker does at start. The
 * apps (the `dxs` worker, tests) pass these to the worker loop.
 */
import type { BlobStoreShape, Database } from "@dxs/db"
import type { LanguageModelShape } from "@dxs/pipeline/llm/LanguageModel"
import { localModel } from "@dxs/pipeline/llm/Local"
import { failAbandonedParses, PARSE_TASK, parseTaskHandler } from "@dxs/pipeline/parsing/ParseDocument"
import type { RunOptions } from "@dxs/pipeline/parsing/Runner"
import { pipelineTaskHandlers } from "@dxs/pipeline/run/Handlers"
import { failAbandonedRuns } from "@dxs/pipeline/run/Runs"
import type { WebSearchShape } from "@dxs/pipeline/websearch/WebSearch"
import type { Kysely } from "kysely"
import {
  ARCHIVE_SWEEP_TASK,
  ARCHIVE_TASK,
  archiveSweepTaskHandler,
  archiveTaskHandler,
  type BackgroundTaskHandler,
  scheduleArchiveSweep,
} from "./Archive.ts"

export interface BackgroundOptions {
  readonly blobs: BlobStoreShape
  /** Parse limits and tools (defaults: 120 s, 1024 MB, 2,000 pages, 500 MB decompressed, LibreOffice detected). */
  readonly parsing?: Omit<RunOptions, "signal"> | undefined
  /** The language model of the pipeline's stages (default: the `local` provider). */
  readonly model?: LanguageModelShape | undefined
  /** The web search of agents with `enable_web_search` (default: none; those agents use documents only). */
  readonly webSearch?: WebSearchShape | undefined
}

/** Handlers for `parse`, `archive`, `archive-sweep` and the pipeline's run tasks. */
export const backgroundTaskHandlers = (
  options: BackgroundOptions,
): Readonly<Record<string, BackgroundTaskHandler>> => ({
  [PARSE_TASK]: parseTaskHandler({ blobs: options.blobs, run: options.parsing }),
  [ARCHIVE_TASK]: archiveTaskHandler,
  [ARCHIVE_SWEEP_TASK]: archiveSweepTaskHandler,
  ...pipelineTaskHandlers({ model: options.model ?? localModel, webSearch: options.webSearch }),
})

/**
 * Housekeeping a worker runs at start and then periodically: documents whose parse task died with its
 * worker on the last attempt become Failed (never left Pending), and runs whose task did so end as
 * failed. Returns how many changed.
 */
export const backgroundHousekeeping = async (db: Kysely<Database>): Promise<number> =>
  (await failAbandonedParses(db)) + (await failAbandonedRuns(db))

/** At worker start: the daily archive sweep is queued (once per day for all workers), then housekeeping. */
export const startBackground = async (db: Kysely<Database>): Promise<void> => {
  await scheduleArchiveSweep(db)
  await backgroundHousekeeping(db)
}

export { detectLibreOffice } from "@dxs/pipeline/parsing/Runner"
