/**
 * The worker's registry: which handler runs each task kind. The pipeline's stages (`extract`, `resolve`,
 * `derive`) are Effect services, built once per registry over the language model and web search given;
 * the other kinds are the handlers of parsing, archiving, output mapping and webhooks.
 */
import type { BlobStoreShape } from "@dxs/db"
import {
  ARCHIVE_SWEEP_TASK,
  ARCHIVE_TASK,
  DERIVE_TASK,
  EXTRACT_TASK,
  FILE_EDIT_TASK,
  OUTPUT_MAPPING_TASK,
  PARSE_TASK,
  RESOLVE_TASK,
  RUN_START_TASK,
  WEBHOOK_DELIVER_TASK,
  WEBHOOK_FANOUT_TASK,
} from "@dxs/db/repositories/TaskKinds"
import { fileEditTaskHandler } from "@dxs/pipeline/fileedit/FillTask"
import { LanguageModel, type LanguageModelShape } from "@dxs/pipeline/llm/LanguageModel"
import { localModel } from "@dxs/pipeline/llm/Local"
import { RequestBudget } from "@dxs/pipeline/llm/RequestBudget"
import { parseTaskHandler } from "@dxs/pipeline/parsing/ParseDocument"
import type { RunOptions } from "@dxs/pipeline/parsing/Runner"
import { phaseTask, runStart } from "@dxs/pipeline/run/Runs"
import { Derivation } from "@dxs/pipeline/run/stages/Derivation"
import { Extraction } from "@dxs/pipeline/run/stages/Extraction"
import { Resolution } from "@dxs/pipeline/run/stages/Resolution"
import { stageHandler } from "@dxs/pipeline/run/stages/Stage"
import { WebSearch } from "@dxs/pipeline/run/stages/WebFindings"
import { webhookDeliverHandler } from "@dxs/pipeline/webhooks/Delivery"
import { webhookFanoutHandler } from "@dxs/pipeline/webhooks/Fanout"
import type { WebhookSettings } from "@dxs/pipeline/webhooks/Settings"
import type { WebSearchShape } from "@dxs/pipeline/websearch/WebSearch"
import {
  archiveSweepTaskHandler,
  archiveTaskHandler,
  type BackgroundTaskHandler,
  outputMappingTaskHandler,
} from "@dxs/services"
import { Effect, Layer } from "effect"

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
  /** The budget of one extraction request (default: 20 agents, 128k tokens). */
  readonly requestBudget?: typeof RequestBudget.Service | undefined
}

/**
 * The pipeline's stages over this model, web search (none: agents with web search use documents only) and
 * request budget (none: its default).
 */
const pipelineStages = (
  model: LanguageModelShape,
  webSearch: WebSearchShape | undefined,
  budget: typeof RequestBudget.Service | undefined,
) =>
  Effect.runSync(
    Effect.all({ extraction: Extraction, resolution: Resolution, derivation: Derivation }).pipe(
      Effect.provide(
        Layer.mergeAll(Extraction.Default, Resolution.Default, Derivation.Default).pipe(
          Layer.provide(Layer.succeed(LanguageModel, model)),
          Layer.provide(webSearch === undefined ? Layer.empty : Layer.succeed(WebSearch, webSearch)),
        ),
      ),
      Effect.provideService(RequestBudget, budget ?? RequestBudget.defaultValue()),
    ),
  )

/**
 * Handlers for `parse`, `archive`, `archive-sweep`, the pipeline's run tasks (`run-start` and its phases),
 * automatic output mapping, file-edit jobs and webhook delivery (when `webhooks` is given).
 */
export const backgroundTaskHandlers = (
  options: BackgroundOptions,
): Readonly<Record<string, BackgroundTaskHandler>> => {
  const model = options.model ?? localModel
  const stages = pipelineStages(model, options.webSearch, options.requestBudget)
  return {
    [PARSE_TASK]: parseTaskHandler({ blobs: options.blobs, run: options.parsing }),
    [ARCHIVE_TASK]: archiveTaskHandler,
    [ARCHIVE_SWEEP_TASK]: archiveSweepTaskHandler,
    [RUN_START_TASK]: stageHandler({ run: runStart }),
    // On a phase task's last attempt, an error ends the run as failed.
    [EXTRACT_TASK]: stageHandler({ run: phaseTask(stages.extraction.run) }),
    [RESOLVE_TASK]: stageHandler({ run: phaseTask(stages.resolution.run) }),
    [DERIVE_TASK]: stageHandler({ run: phaseTask(stages.derivation.run) }),
    [WEBHOOK_FANOUT_TASK]: webhookFanoutHandler,
    [OUTPUT_MAPPING_TASK]: outputMappingTaskHandler(model),
    [FILE_EDIT_TASK]: fileEditTaskHandler(options.blobs),
    ...(options.webhooks ? { [WEBHOOK_DELIVER_TASK]: webhookDeliverHandler(options.webhooks) } : {}),
  }
}
