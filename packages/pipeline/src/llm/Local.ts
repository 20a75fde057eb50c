/**
 * The `local` provider (the default): deterministic, offline, no model weights (DESIGN §8). Extraction
 * and discovery are the local extractor's; consistency, resolution and derivation are the domain's rules;
 * automatic output mapping keeps the planner's draft texts.
 */
import { evaluateDerived } from "@dxs/domain/DerivedExpression"
import { localConsistency, localResolve } from "@dxs/domain/Resolution"
import { Effect, Layer } from "effect"
import { localDiscover, localExtract } from "../extraction/local/Extractor.ts"
import { type CandidateExtraction, LanguageModel, type LanguageModelShape, noUsage } from "./LanguageModel.ts"

const label = (e: CandidateExtraction) =>
  e.documentName === null
    ? "web"
    : e.pageNumber === null
      ? e.documentName
      : `${e.documentName} p.${e.pageNumber}`

export const localModel: LanguageModelShape = {
  name: "local",
  extract: (request) => Effect.sync(() => localExtract(request)),
  // The local extractor reads each agent on its own; one "request" per document costs nothing either way.
  extractDocument: (request) =>
    Effect.sync(() => ({
      agents: request.agents.map(({ agent, dimensions }) => ({
        agentId: agent.id,
        values:
          request.pages.length === 0
            ? []
            : localExtract({
                agent,
                dimensions,
                document: request.document,
                pages: request.pages,
                referenceDate: request.referenceDate,
              }).values,
      })),
      usage: noUsage,
    })),
  discoverDimensionValues: (request) => Effect.sync(() => localDiscover(request)),
  checkConsistency: (request) =>
    Effect.sync(() => {
      const r = localConsistency({
        valueType: request.agent.valueType,
        instructions: request.agent.inconsistencyInstructions,
        extractions: request.extractions.map((e) => ({ id: e.id, value: e.value, label: label(e) })),
      })
      return { verdicts: r.verdicts, summary: r.summary, usage: noUsage }
    }),
  resolve: (request) =>
    Effect.sync(() => {
      const r = localResolve({
        valueType: request.agent.valueType,
        unit: request.agent.unit,
        instructions: request.agent.resolutionInstructions,
        enableComplexCalculations: request.agent.enableComplexCalculations,
        valueIfNotFound: request.agent.valueIfNotFound,
        extractions: request.extractions.map((e) => ({
          id: e.id,
          value: e.value,
          label: label(e),
          consistent: e.consistent,
        })),
      })
      return { ...r, usage: noUsage }
    }),
  derive: (request) =>
    Effect.sync(() => {
      const r = evaluateDerived({
        prompt: request.agent.derivedPrompt,
        isEvaluation: request.agent.isEvaluation,
        valueType: request.agent.valueType,
        inputs: request.inputs.map((i) => ({
          agentName: i.agentName,
          value: i.value,
          dimensionValues: i.dimensionValues,
        })),
      })
      return { ...r, usage: noUsage }
    }),
  describeFields: (request) =>
    Effect.sync(() => ({
      fields: request.fields.map((f) => ({
        path: f.path,
        extractionInstructions: f.draft.extractionInstructions,
        valueType: f.draft.valueType,
        unit: f.draft.unit,
        examples: f.draft.examples,
      })),
      usage: noUsage,
    })),
}

export const localModelLayer = Layer.succeed(LanguageModel, localModel)
