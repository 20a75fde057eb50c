/**
 * One document request of the `openai` provider: every agent of the request answers from the same window of
 * pages in one structured answer. Each answer is checked against its page (`groundCitation`); when some are
 * not grounded, the agents concerned are asked once more with the correction (the same document prefix, so
 * a prefix cache serves it); what is still ungrounded then is returned as the model gave it, for the stage
 * to keep as ungrounded.
 */
import { collapseWhitespace, normalizeValue, valuesEqual } from "@dxs/domain/Values"
import { Effect } from "effect"
import { type Citation, groundCitation } from "./Citations.ts"
import { agentKey, documentExtractPrompt, varyingDimensions } from "./DocumentPrompt.ts"
import {
  addUsage,
  type DimensionQuery,
  type DocumentAgent,
  type DocumentExtractRequest,
  type DocumentExtractResponse,
  type ExtractedValue,
  type ModelError,
  noUsage,
  type Usage,
} from "./LanguageModel.ts"
import type { Prompt, RawExtractedValue } from "./Prompts.ts"

export const lookupByName = (values: Readonly<Record<string, string>>, name: string): string | undefined => {
  if (values[name] !== undefined) return values[name]
  const wanted = collapseWhitespace(name).toLowerCase()
  for (const [k, v] of Object.entries(values)) if (collapseWhitespace(k).toLowerCase() === wanted) return v
  return undefined
}

/** The request's spelling of a value the model wrote (exactly, else ignoring case, spacing and punctuation). */
export const matchValue = (values: ReadonlyArray<string>, given: string): string | undefined =>
  values.find((v) => v === given) ?? values.find((v) => valuesEqual("string", v, given))

/** An answer whose value is normalised and whose dimension values are the request's own. */
export interface MatchedAnswer {
  readonly dimensionValues: Readonly<Record<string, string>>
  readonly value: string
  readonly relevantPassage: string
  readonly reasoning: string
  readonly pageNumber: number | undefined
  /** The varying dimensions' values, as one key. */
  readonly combination: string
  readonly modelConfidence?: number | undefined
}

/**
 * The answers that name a value and, for every dimension, one of the request's values (fixed dimensions
 * take the document's); the others are dropped.
 */
export const matchedAnswers = (
  raw: ReadonlyArray<RawExtractedValue>,
  request: {
    readonly agent: { readonly valueType: DocumentAgent["agent"]["valueType"] }
    readonly dimensions: ReadonlyArray<DimensionQuery>
    readonly document: { readonly name: string }
  },
): Array<MatchedAnswer> => {
  const varying = varyingDimensions(request.dimensions)
  const answers: Array<MatchedAnswer> = []
  for (const entry of raw) {
    if (entry.value === null) continue
    const value = normalizeValue(request.agent.valueType, entry.value)
    if (value === "") continue
    const dimensionValues: Record<string, string> = {}
    let matched = true
    for (const d of request.dimensions) {
      if (d.kind === "document") dimensionValues[d.dimensionId] = request.document.name
      else if (d.kind === "tag") dimensionValues[d.dimensionId] = d.values[0] ?? ""
      else {
        const given = lookupByName(entry.dimensionValues, d.name)
        const match = given === undefined ? undefined : matchValue(d.values, given)
        if (match === undefined) {
          matched = false
          break
        }
        dimensionValues[d.dimensionId] = match
      }
    }
    if (!matched) continue
    answers.push({
      dimensionValues,
      value,
      relevantPassage: entry.relevantPassage,
      reasoning: entry.reasoning.trim(),
      pageNumber: entry.pageNumber,
      combination: JSON.stringify(varying.map((d) => dimensionValues[d.dimensionId])),
      modelConfidence: entry.modelConfidence,
    })
  }
  return answers
}

/** The first answer of each combination of dimension values. */
export const firstPerCombination = <A extends { readonly combination: string }>(
  answers: ReadonlyArray<A>,
): Array<A> => {
  const seen = new Set<string>()
  return answers.filter((a) => !seen.has(a.combination) && seen.add(a.combination) !== undefined)
}

type Complete = <T>(
  prompt: Prompt<T>,
) => Effect.Effect<{ readonly value: T; readonly usage: Usage }, ModelError>

interface Checked {
  readonly answer: MatchedAnswer
  readonly citation: Citation
}

/** The agent's answers, one per combination (a grounded one preferred), each with its checked citation. */
const checkAnswers = (
  raw: ReadonlyArray<RawExtractedValue>,
  agent: DocumentAgent,
  request: DocumentExtractRequest,
): Array<Checked> => {
  const checked = matchedAnswers(raw, { ...agent, document: request.document }).map((answer) => ({
    answer,
    combination: answer.combination,
    citation: groundCitation(
      request.pages,
      answer.pageNumber,
      answer.relevantPassage,
      answer.value,
      agent.agent.valueType,
      agent.agent,
    ),
  }))
  return firstPerCombination([
    ...checked.filter((c) => c.citation.grounded),
    ...checked.filter((c) => !c.citation.grounded),
  ])
}

const toValue = ({ answer, citation }: Checked): ExtractedValue => ({
  dimensionValues: answer.dimensionValues,
  value: answer.value,
  relevantPassage: citation.passage,
  reasoning: answer.reasoning,
  pageNumber: citation.pageNumber,
  ...(answer.modelConfidence === undefined ? {} : { modelConfidence: answer.modelConfidence }),
  citation,
})

/** An agent can be asked when each of its varying dimensions has a value to ask for. */
const askable = (agent: DocumentAgent): boolean =>
  varyingDimensions(agent.dimensions).every((d) => d.values.length > 0)

export const extractDocument = (
  complete: Complete,
  request: DocumentExtractRequest,
): Effect.Effect<DocumentExtractResponse, ModelError> =>
  Effect.gen(function* () {
    const asked = request.pages.length === 0 ? [] : request.agents.filter(askable)
    const answers = new Map<string, Array<Checked>>()
    let usage = noUsage
    if (asked.length > 0) {
      const first = { ...request, agents: asked }
      const { value: raw, usage: firstUsage } = yield* complete(documentExtractPrompt(first))
      usage = addUsage(usage, firstUsage)
      for (const [i, agent] of asked.entries())
        answers.set(agent.agent.id, checkAnswers(raw[i] ?? [], agent, first))

      // One retry, for the agents with an ungrounded answer, saying what was wrong with each.
      const retry = asked.filter((a) => answers.get(a.agent.id)!.some((c) => !c.citation.grounded))
      if (retry.length > 0) {
        const corrections = retry.flatMap((agent, i) =>
          answers
            .get(agent.agent.id)!
            .flatMap((c) => (c.citation.grounded ? [] : [`${agentKey(i)}: ${c.citation.detail}`])),
        )
        const again = { ...request, agents: retry }
        const { value: raw2, usage: retryUsage } = yield* complete(documentExtractPrompt(again, corrections))
        usage = addUsage(usage, retryUsage)
        retry.forEach((agent, i) => {
          const before = answers.get(agent.agent.id)!
          const after = new Map(
            checkAnswers(raw2[i] ?? [], agent, again).map((c) => [c.answer.combination, c]),
          )
          answers.set(
            agent.agent.id,
            before.flatMap((c) => {
              if (c.citation.grounded) return [c]
              const second = after.get(c.answer.combination)
              // Withdrawn on being told: the pages do not state it. Still ungrounded: kept as first given.
              if (second === undefined) return []
              return [second.citation.grounded ? second : c]
            }),
          )
        })
      }
    }
    return {
      agents: request.agents.map((a) => ({
        agentId: a.agent.id,
        values: (answers.get(a.agent.id) ?? []).map(toValue),
      })),
      usage,
    } satisfies DocumentExtractResponse
  })
