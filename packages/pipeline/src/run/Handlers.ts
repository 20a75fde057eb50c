/** The pipeline's task handlers by kind, for the worker loop. */
import type { TaskRow } from "@dxs/db"
import type { LanguageModelShape } from "../llm/LanguageModel.ts"
import type { WebSearchShape } from "../websearch/WebSearch.ts"
import {
  DERIVE_TASK,
  EXTRACT_TASK,
  phaseTaskHandler,
  RESOLVE_TASK,
  RUN_START_TASK,
  runStartHandler,
} from "./Runs.ts"
import { deriveHandler, extractHandler, resolveHandler, type StageContext } from "./Stages.ts"

export interface PipelineOptions {
  readonly model: LanguageModelShape
  /** The search provider of agents with `enable_web_search`; undefined: web search is not configured. */
  readonly webSearch?: WebSearchShape | undefined
}

export const pipelineTaskHandlers = (
  options: PipelineOptions,
): Readonly<Record<string, (task: TaskRow, ctx: StageContext) => Promise<void>>> => ({
  [RUN_START_TASK]: runStartHandler,
  [EXTRACT_TASK]: phaseTaskHandler(extractHandler(options)),
  [RESOLVE_TASK]: phaseTaskHandler(resolveHandler(options)),
  [DERIVE_TASK]: phaseTaskHandler(deriveHandler(options)),
})
