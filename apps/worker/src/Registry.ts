/**
 * The worker's registry: which handler runs each task kind. The pipeline's stages (`extract`, `resolve`,
 * `derive`) are Effect services, built once per registry over the language model and web search given;
 * the other kinds are the handlers of parsing, archiving, output mapping and webhooks.
 */
import type { BlobStoreShape, TaskRow } from "@dxs/db"
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
import { type StageError, type StageRun, stageHandler } from "@dxs/pipeline/run/stages/Stage"
import { WebSearch } from "@dxs/pipeline/run/stages/WebFindings"
import { webhookDeliverHandler } from "@dxs/pipeline/webhooks/Delivery"
import { webhookFanoutHandler } from "@dxs/pipeline/webhooks/Fanout"
import type { WebhookSettings } from "@dxs/pipeline/webhooks/Settings"
import type { WebSearchShape } from "@dxs/pipeline/websearch/WebSearch"
import { archiveSweepTaskHandler, archiveTaskHandler, outputMappingTaskHandler } from "@dxs/services"
import { Effect, Layer } from "effect"
import type { TaskHandler } from "./Worker.ts"

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
 * request budget (none: its default). Built for each task that runs one (they hold no state of their own).
 */
const pipelineStages = (
  model: LanguageModelShape,
  webSearch: WebSearchShape | undefined,
  budget: typeof RequestBudget.Service | undefined,
) =>
  Layer.mergeAll(Extraction.Default, Resolution.Default, Derivation.Default).pipe(
    Layer.provide(Layer.succeed(LanguageModel, model)),
    Layer.provide(webSearch === undefined ? Layer.empty : Layer.succeed(WebSearch, webSearch)),
    Layer.provide(Layer.succeed(RequestBudget, budget ?? RequestBudget.defaultValue())),
  )

type StageServices = Extraction | Resolution | Derivation

/**
 * Handlers for `parse`, `archive`, `archive-sweep`, the pipeline's run tasks (`run-start` and its phases),
 * automatic output mapping, file-edit jobs and webhook delivery (when `webhooks` is given).
 */
export const backgroundTaskHandlers = (options: BackgroundOptions): Readonly<Record<string, TaskHandler>> => {
  const model = options.model ?? localModel
  const stages = pipelineStages(model, options.webSearch, options.requestBudget)
  // On a phase task's last attempt, an error ends the run as failed.
  const phase = (run: (task: TaskRow, ctx: StageRun) => Effect.Effect<void, StageError, StageServices>) =>
    stageHandler({ run: phaseTask((task, ctx: StageRun) => Effect.provide(run(task, ctx), stages)) })
  return {
    [PARSE_TASK]: parseTaskHandler({ blobs: options.blobs, run: options.parsing }),
    [ARCHIVE_TASK]: archiveTaskHandler,
    [ARCHIVE_SWEEP_TASK]: archiveSweepTaskHandler,
    [RUN_START_TASK]: stageHandler({ run: runStart }),
    [EXTRACT_TASK]: phase((task, ctx) => Effect.flatMap(Extraction, (s) => s.run(task, ctx))),
    [RESOLVE_TASK]: phase((task, ctx) => Effect.flatMap(Resolution, (s) => s.run(task, ctx))),
    [DERIVE_TASK]: phase((task, ctx) => Effect.flatMap(Derivation, (s) => s.run(task, ctx))),
    [WEBHOOK_FANOUT_TASK]: webhookFanoutHandler,
    [OUTPUT_MAPPING_TASK]: outputMappingTaskHandler(model),
    [FILE_EDIT_TASK]: fileEditTaskHandler(options.blobs),
    ...(options.webhooks ? { [WEBHOOK_DELIVER_TASK]: webhookDeliverHandler(options.webhooks) } : {}),
  }
}
