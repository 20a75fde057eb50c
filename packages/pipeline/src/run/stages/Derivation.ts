/**
 * The `derive` stage: one derived or evaluation agent, over the resolved values of the agents it
 * references. An input applies to a result when it agrees on every dimension the two share.
 */
import { type TaskRow, transactionOn } from "@dxs/db"
import {
  agentStillAt,
  type DerivedExtraction,
  ensureAtomicValues,
  type ResolvedInput,
  type ResolvedRow,
  replaceDerivedExtractions,
  resolvedInputs,
  writeResults,
} from "@dxs/db/repositories/Results"
import { findRunningRun } from "@dxs/db/repositories/Runs"
import { Effect } from "effect"
import { addUsage, type DerivedInput, LanguageModel, noUsage } from "../../llm/LanguageModel.ts"
import { agentSpec, loadAgents, loadDocuments } from "../ProjectState.ts"
import {
  type AgentPayload,
  commitTask,
  expectedCombinations,
  type InstanceRef,
  instanceInputs,
  notFoundText,
  resultName,
  type StageRun,
  type StageShape,
  storedValue,
} from "./Stage.ts"

const applies = (input: ResolvedInput, instances: ReadonlyArray<InstanceRef>) =>
  input.dimension_values.every((dv) =>
    instances.every((i) => i.dimension.dimensionId !== dv.dimension_id || i.value === dv.dimension_value),
  )

const dimensionValuesOf = (input: ResolvedInput) =>
  Object.fromEntries(input.dimension_values.map((dv) => [dv.name, dv.dimension_value]))

export class Derivation extends Effect.Service<Derivation>()("@dxs/pipeline/Derivation", {
  effect: Effect.gen(function* () {
    const model = yield* LanguageModel
    const run = (task: TaskRow, ctx: StageRun) =>
      Effect.gen(function* () {
        const p = task.payload as unknown as AgentPayload
        const runInfo = yield* findRunningRun(ctx.db, p.runId)
        if (!runInfo) return
        const agents = yield* loadAgents(ctx.db, runInfo.projectId)
        const agent = agents.find((a) => a.row.id === p.agentId)
        if (!agent || agent.row.is_draft) return yield* commitTask(ctx, p.runId, noUsage)
        const documents = yield* loadDocuments(ctx.db, runInfo.projectId)
        const configVersion = agent.row.config_version
        const inputs = yield* resolvedInputs(ctx.db, agent.references)
        const combinations = expectedCombinations(
          agent,
          documents,
          inputs.flatMap((i) => i.dimension_values),
        )
        const spec = agentSpec(agent.row)
        const atomics = yield* transactionOn(ctx.db, (trx) =>
          Effect.map(
            ensureAtomicValues(
              trx,
              runInfo.projectId,
              combinations.map((instances) => ({
                agentId: agent.row.id,
                instances: instanceInputs(instances),
              })),
            ),
            (made) => combinations.map((instances, i) => ({ id: made[i]!.id, instances })),
          ),
        )

        let usage = noUsage
        const rows: Array<ResolvedRow> = []
        const extractions: Array<DerivedExtraction> = []
        for (const atomic of atomics) {
          const applicable = inputs.filter((input) => applies(input, atomic.instances))
          const request: Array<DerivedInput> = applicable.map((input) => ({
            agentId: input.agent_id,
            agentName: input.name,
            resultId: input.id,
            dimensionValues: dimensionValuesOf(input),
            value:
              input.resolution_status === "No result" || input.value === null ? null : String(input.value),
          }))
          const name = resultName(agent.row.name, atomic.instances)
          const r = yield* model.derive({ agent: spec, resultName: name, inputs: request })
          usage = addUsage(usage, r.usage)
          if (r.value !== null)
            extractions.push({
              atomicValueId: atomic.id,
              value: r.value,
              reasoning: r.reasoning,
              sources: applicable.map((input) => ({
                agentId: input.agent_id,
                agentName: input.name,
                resultId: input.id,
                dimensionValues: dimensionValuesOf(input),
                resolvedValue: input.value === null ? "" : String(input.value),
              })),
            })
          rows.push({
            atomicValueId: atomic.id,
            resultName: name,
            value: r.value === null ? notFoundText(agent) : storedValue(spec.valueType, r.value),
            status: r.value === null ? "No result" : "Resolved",
            justification: r.reasoning,
            references: {},
            sources: [],
            sourceType: "derived",
            webSupplement: null,
            verdicts: [],
            summary: null,
          })
        }

        yield* commitTask(ctx, p.runId, usage, (trx) =>
          Effect.gen(function* () {
            if (!(yield* agentStillAt(trx, agent.row.id, configVersion))) return
            yield* replaceDerivedExtractions(trx, {
              projectId: runInfo.projectId,
              agentId: agent.row.id,
              configVersion,
              extractions,
            })
            yield* writeResults(trx, {
              projectId: runInfo.projectId,
              agentId: agent.row.id,
              configVersion,
              rows,
              runId: p.runId,
            })
          }),
        )
      })
    return { run } satisfies StageShape
  }),
}) {}
