/**
 * The `extract` stage: one agent/document pair — retrieval, discovery of dynamic dimension values, then
 * extraction (value, verbatim passage, reasoning, page) per combination of dimension values. A pair whose
 * agent or document changed since the task was planned commits nothing but its completion.
 */
import type { TaskRow } from "@dxs/db"
import {
  agentStillAt,
  type DocumentExtraction,
  ensureAtomicValue,
  replaceDocumentExtractions,
} from "@dxs/db/repositories/Results"
import { findRunningRun } from "@dxs/db/repositories/Runs"
import { Effect } from "effect"
import { addUsage, type ExtractedValue, LanguageModel, noUsage } from "../../llm/LanguageModel.ts"
import { pagesForExtraction } from "../../retrieval/Retrieval.ts"
import { agentDimensionsKey, agentSpec, dimensionQuery, loadAgents, loadDocuments } from "../ProjectState.ts"
import {
  commitTask,
  type InstanceRef,
  instanceFor,
  instanceInputs,
  type StageRun,
  type StageShape,
} from "./Stage.ts"

interface ExtractPayload {
  readonly runId: string
  readonly agentId: string
  readonly agentConfigVersion: number
  readonly documentId: string
  readonly documentVersion: number
  readonly dimensionsKey: string
}

export class Extraction extends Effect.Service<Extraction>()("@dxs/pipeline/Extraction", {
  effect: Effect.gen(function* () {
    const model = yield* LanguageModel
    const run = (task: TaskRow, ctx: StageRun) =>
      Effect.gen(function* () {
        const p = task.payload as unknown as ExtractPayload
        const runInfo = yield* findRunningRun(ctx.db, p.runId)
        if (!runInfo) return
        const [[agent], [document]] = yield* Effect.all(
          [
            loadAgents(ctx.db, runInfo.projectId, p.agentId),
            loadDocuments(ctx.db, runInfo.projectId, p.documentId),
          ],
          { concurrency: 2 },
        )
        const current =
          agent !== undefined &&
          !agent.row.is_draft &&
          agent.row.config_version === p.agentConfigVersion &&
          document !== undefined &&
          document.status === "Processed" &&
          document.version === p.documentVersion
        if (!current) return yield* commitTask(ctx, task, p.runId, noUsage)

        const spec = agentSpec(agent.row)
        const pages = yield* pagesForExtraction(ctx.db, {
          agent: {
            name: spec.name,
            extractionInstructions: spec.extractionInstructions,
            examples: spec.examples,
          },
          documentId: document.id,
          documentName: document.name,
        })
        let usage = noUsage
        const discovered = new Map<string, ReadonlyArray<string>>()
        for (const dimension of agent.dimensions) {
          if (dimension.source !== "CUSTOM" || !dimension.areValuesDynamic) continue
          const r = yield* model.discoverDimensionValues({
            agent: spec,
            dimension: dimensionQuery(dimension, document),
            document: { id: document.id, name: document.name },
            pages,
          })
          usage = addUsage(usage, r.usage)
          discovered.set(dimension.dimensionId, r.values)
        }
        const dimensions = agent.dimensions.map((d) =>
          dimensionQuery(d, document, discovered.get(d.dimensionId)),
        )
        let values: ReadonlyArray<ExtractedValue> = []
        // A dimension with no value for this document (a tag it lacks, nothing discovered): nothing to ask.
        if (pages.length > 0 && dimensions.every((d) => d.values.length > 0)) {
          const r = yield* model.extract({
            agent: spec,
            document: { id: document.id, name: document.name },
            pages,
            dimensions,
            referenceDate: runInfo.referenceDate,
          })
          values = r.values
          usage = addUsage(usage, r.usage)
        }

        // Atomic values outside the final transaction (see `ensureAtomicValue`); a value missing one of
        // the agent's dimensions has none and is not kept.
        const extractions: Array<DocumentExtraction> = []
        for (const value of values) {
          const instances = agent.dimensions.map((d) => {
            const v = value.dimensionValues[d.dimensionId]
            return v === undefined ? undefined : instanceFor(d, v, document)
          })
          if (instances.some((i) => i === undefined)) continue
          const atomic = yield* ensureAtomicValue(ctx.db, {
            projectId: runInfo.projectId,
            agentId: agent.row.id,
            instances: instanceInputs(instances as Array<InstanceRef>),
          })
          extractions.push({
            atomicValueId: atomic.id,
            value: value.value,
            relevantPassage: value.relevantPassage,
            reasoning: value.reasoning,
            pageNumber: value.pageNumber,
          })
        }
        yield* commitTask(ctx, task, p.runId, usage, (trx) =>
          Effect.gen(function* () {
            if (!(yield* agentStillAt(trx, agent.row.id, p.agentConfigVersion))) return
            yield* replaceDocumentExtractions(trx, {
              projectId: runInfo.projectId,
              agentId: agent.row.id,
              agentConfigVersion: p.agentConfigVersion,
              documentId: document.id,
              documentVersion: p.documentVersion,
              dimensionsKey: agentDimensionsKey(agent),
              extractions,
            })
          }),
        )
      })
    return { run } satisfies StageShape
  }),
}) {}
