/**
 * What the pipeline's stages (`Extraction`, `Resolution`, `Derivation`) share: the task context they run
 * in, their errors, the one step that commits a task, and the combinations of dimension values an agent
 * has results for.
 *
 * Model calls happen outside transactions; each task writes its results, its usage, its completion and
 * (maybe) the next phase of the run in one transaction, replacing what an earlier attempt wrote, so a
 * re-executed task neither loses nor duplicates anything.
 */
import { AsyncLocalStorage } from "node:async_hooks"
import { type StoredDimensionValue, type TaskRow, transactionOn } from "@dxs/db"
import { inLogContext } from "@dxs/db/Log"
import type { InstanceInput } from "@dxs/db/repositories/Results"
import type { CompletionWrites, TaskTrx } from "@dxs/db/TaskQueue"
import { cartesian } from "@dxs/domain/Combinations"
import { parseNumber } from "@dxs/domain/Values"
import { Data, Effect } from "effect"
import type { ModelError, Usage } from "../../llm/LanguageModel.ts"
import type { AttachedDimension, ProjectAgent, ProjectDocument } from "../ProjectState.ts"
import { commitThenAdvance, type RunTaskContext } from "../Runs.ts"

/** What a stage gets besides its task (a structural subset of the worker's task context). */
export interface StageContext extends RunTaskContext {
  readonly signal: AbortSignal
}

/** A stage's context, with the async context its task started in (see `promiseCode`). */
export interface StageRun extends StageContext {
  readonly inTask: <A>(f: () => A) => A
}

/** A web search that failed (the provider's error, as its message). */
export class WebSearchError extends Data.TaggedError("WebSearchError")<{
  readonly message: string
  readonly cause: unknown
}> {}

export type StageError = ModelError | WebSearchError

/** A stage: runs one task of its kind to its commit, or fails (a failed attempt of the task). */
export interface StageShape {
  readonly run: (task: TaskRow, ctx: StageRun) => Effect.Effect<void, StageError>
}

/**
 * Promise code called from a stage (the worker's `complete`). It runs in the async context the task
 * started in, where the worker put the task's log sink: Effect's scheduler promises no async context to a
 * resumed fiber. Its failures are defects, like the repositories'.
 */
export const promiseCode = <A>(ctx: StageRun, f: () => Promise<A>): Effect.Effect<A> =>
  Effect.promise(() => ctx.inTask(f))

/**
 * A stage (or the run's start) as the worker's task handler: its log lines go to the task's sink
 * (`inLogContext`, and `inTask` for the promise code it calls, taken where the worker calls the handler);
 * its failure is the task's (a tagged error, or a defect such as the worker's lost lease), so the task's
 * record says what went wrong.
 */
export const stageHandler =
  (stage: StageShape) =>
  (task: TaskRow, ctx: StageContext): Effect.Effect<void, StageError> =>
    inLogContext(stage.run(task, { ...ctx, inTask: AsyncLocalStorage.snapshot() }))

/**
 * The one commit of every stage: writes a task's results, its completion and the model usage it cost
 * together; then, after the commit, moves the run on if this was the phase's last task (see
 * `commitThenAdvance`). `write` is either the stage's own writes, run in a transaction with the completion,
 * or writes a repository made to go in the completion's own statement (`CompletionWrites`: one statement,
 * no transaction around it); without writes the completion is a statement alone. No lock on the run is held
 * while the results are written, so the tasks of a run commit side by side. Uninterruptible: a commit is
 * always followed by its look at the phase.
 */
export const commitTask = (
  ctx: StageRun,
  runId: string,
  usage: Usage,
  write?: ((trx: TaskTrx) => Effect.Effect<void>) | CompletionWrites,
): Effect.Effect<void> => {
  const used = usage.calls + usage.cacheHits + usage.promptTokens + usage.completionTokens > 0
  const cost = used ? { ...usage } : undefined
  return commitThenAdvance(
    ctx.db,
    runId,
    typeof write === "function"
      ? transactionOn(ctx.db, (trx) =>
          Effect.zipRight(
            write(trx),
            promiseCode(ctx, () => ctx.complete(trx, cost)),
          ),
        )
      : promiseCode(ctx, () => ctx.complete(ctx.db, cost, write)),
  )
}

// ---------------------------------------------------------------------------------------------------------
// Dimension instances and the combinations an agent should have a result for

export interface InstanceRef {
  readonly dimension: AttachedDimension
  readonly value: string
  readonly documentId: string | null
}

export const instanceFor = (
  dimension: AttachedDimension,
  value: string,
  document: ProjectDocument | undefined,
): InstanceRef => ({
  dimension,
  value,
  documentId: dimension.source === "DOCUMENT" ? (document?.id ?? null) : null,
})

/** The instances as the results repository stores them. */
export const instanceInputs = (instances: ReadonlyArray<InstanceRef>): ReadonlyArray<InstanceInput> =>
  instances.map((i) => ({
    dimensionId: i.dimension.dimensionId,
    name: i.dimension.name,
    value: i.value,
    documentId: i.documentId,
  }))

/**
 * Per dimension, the instances a result is expected for: static values; the Document dimension's
 * processed documents; the tag values of processed documents; dynamic values found by extraction.
 */
export const expectedCombinations = (
  agent: ProjectAgent,
  documents: ReadonlyArray<ProjectDocument>,
  discovered: ReadonlyArray<StoredDimensionValue>,
): ReadonlyArray<ReadonlyArray<InstanceRef>> => {
  const processed = documents.filter((d) => d.status === "Processed")
  const lists = agent.dimensions.map((dimension): ReadonlyArray<InstanceRef> => {
    if (dimension.source === "DOCUMENT") return processed.map((d) => instanceFor(dimension, d.name, d))
    if (dimension.source === "TAG") {
      const key = dimension.tagKey ?? dimension.name
      const values = [
        ...new Set(processed.map((d) => d.tags[key]).filter((v): v is string => v !== undefined)),
      ]
      return values.map((v) => instanceFor(dimension, v, undefined))
    }
    if (dimension.areValuesDynamic) {
      const values = [
        ...new Set(
          discovered.filter((s) => s.dimension_id === dimension.dimensionId).map((s) => s.dimension_value),
        ),
      ]
      return values.map((v) => instanceFor(dimension, v, undefined))
    }
    return [...new Set(dimension.values)].map((v) => instanceFor(dimension, v, undefined))
  })
  return cartesian(lists)
}

export const resultName = (agentName: string, instances: ReadonlyArray<InstanceRef>) =>
  instances.length === 0 ? agentName : instances.map((i) => i.value).join(" / ")

/** A value as stored in `resolution_results.value`: a JSON number for number agents. */
export const storedValue = (valueType: string, value: string | null): unknown => {
  if (value === null) return null
  if (valueType === "number") {
    const n = parseNumber(value)
    return n === undefined ? value : n
  }
  return value
}

export const notFoundText = (agent: ProjectAgent) => agent.row.value_if_not_found.trim() || "n/a"

/** The payload of a task about one agent (`resolve`, `derive`). */
export interface AgentPayload {
  readonly runId: string
  readonly agentId: string
}
