/**
 * The `openai` language-model provider (DESIGN §3): any OpenAI-compatible Chat Completions server (OpenAI,
 * Azure, vLLM, Ollama, llama.cpp server) with JSON-schema structured output.
 *
 * - The official `openai` SDK sends the requests (`ChatCompletions.ts`); the retries and the back-off are ours.
 * - At most `concurrency` requests are in flight per model instance (a semaphore shared by every call;
 *   back-off waits do not hold a slot).
 * - 429, 5xx, network errors and timeouts are retried with exponential back-off and jitter, honouring
 *   `Retry-After`, up to `maxRetries` times; then the call fails with a retryable `ModelError`. Other 4xx
 *   answers fail at once, not retryable.
 * - A malformed answer (not JSON, or not the schema's shape) is asked again once; a second one fails, not
 *   retryable.
 * - Answers are cached by request hash when a `ResponseCache` is given; a cache hit costs no request.
 * - Every response reports its cost in `usage`: requests that returned a completion, cache hits and the
 *   server's token counts (cache hits cost no tokens).
 *
 * Deterministic answers need no model: consistency of identical values, resolution without extractions or
 * of identical consistent values, field descriptions of no fields.
 */

import { modelRequests, modelTokens } from "@dxs/db/Metrics"
import {
  canonicalDecimal,
  collapseWhitespace,
  normalizeValue,
  parseNumber,
  valuesEqual,
} from "@dxs/domain/Values"
import { Effect, Layer } from "effect"
import { type Attempt, type ChatCompletionsBody, makeChatCompletions } from "./ChatCompletions.ts"
import { locatePassage } from "./Citations.ts"
import {
  extractDocument,
  firstPerCombination,
  type MatchedAnswer,
  matchedAnswers,
  matchValue,
} from "./DocumentExtraction.ts"
import { varyingDimensions } from "./DocumentPrompt.ts"
import {
  addUsage,
  type ConsistencyRequest,
  type ConsistencyResponse,
  type DeriveRequest,
  type DeriveResponse,
  type DescribeFieldsRequest,
  type DescribeFieldsResponse,
  type DiscoverRequest,
  type DiscoverResponse,
  type ExtractedValue,
  type ExtractRequest,
  type ExtractResponse,
  type FieldDescription,
  type FieldToDescribe,
  LanguageModel,
  type LanguageModelShape,
  ModelError,
  noUsage,
  type ResolveRequest,
  type ResolveResponse,
  type Usage,
} from "./LanguageModel.ts"
import {
  consistencyPrompt,
  derivePrompt,
  describeFieldsPrompt,
  discoverPrompt,
  extractionLabel,
  extractPrompt,
  type Prompt,
  type RawFieldDescription,
  resolvePrompt,
} from "./Prompts.ts"
import { cacheKey, type ResponseCache } from "./ResponseCache.ts"

export { parseRetryAfter } from "./ChatCompletions.ts"
export { locatePassage }

export interface OpenAiModelOptions {
  /** The API root, for example `https://api.openai.com/v1` or `http://127.0.0.1:1234/v1`. */
  readonly baseUrl: string
  /** Sent as `Authorization: Bearer …` when given. */
  readonly apiKey?: string
  readonly model: string
  /** Requests in flight at most, per model instance (default 4). */
  readonly concurrency?: number
  /** Per request, including reading the answer (default 60 000). */
  readonly timeoutMs?: number
  /** Retries after the first attempt on 429, 5xx, network errors and timeouts (default 5). */
  readonly maxRetries?: number
  /** The first back-off delay; it doubles per retry, with jitter (default 500). */
  readonly retryBaseMs?: number
  /** The longest wait between attempts, `Retry-After` included (default 60 000). */
  readonly maxRetryDelayMs?: number
  readonly cache?: ResponseCache
  readonly fetch?: typeof fetch
  /** In [0, 1): the jitter source (default `Math.random`). */
  readonly random?: () => number
}

const TEMPERATURE = 0

interface Completion<T> {
  readonly value: T
  readonly usage: Usage
}

/**
 * The JSON an answer's content holds. Tolerates a Markdown code fence and a leading `<think>` block (some
 * self-hosted reasoning models emit one even in structured-output mode).
 */
export const parseContent = (content: unknown): unknown => {
  let text: string
  if (typeof content === "string") text = content
  else if (Array.isArray(content))
    text = content.map((part) => (typeof part?.text === "string" ? part.text : "")).join("")
  else return undefined
  text = text.replace(/^\s*<think>[\s\S]*?<\/think>/, "").trim()
  const fenced = /^```(?:json)?\s*([\s\S]*?)\s*```$/.exec(text)
  if (fenced) text = fenced[1]!
  try {
    return JSON.parse(text)
  } catch {
    const start = text.indexOf("{")
    const end = text.lastIndexOf("}")
    if (start < 0 || end <= start) return undefined
    try {
      return JSON.parse(text.slice(start, end + 1))
    } catch {
      return undefined
    }
  }
}

/** Asks the model (or the cache) for the prompt's answer, decoded. */
type Complete = <T>(prompt: Prompt<T>) => Effect.Effect<Completion<T>, ModelError>

/** When and how long failed requests are retried (the options' values, defaults filled in). */
interface RetryPolicy {
  readonly maxRetries: number
  readonly retryBaseMs: number
  readonly maxRetryDelayMs: number
  readonly random: () => number
}

/** A request the server answered with a completion. */
type Completed = Extract<Attempt, { readonly kind: "completion" }>

/** A request that failed in a way worth retrying (429, 5xx, network error, timeout). */
type Retryable = Extract<Attempt, { readonly kind: "retry" }>

/** The messages a prompt sends: its instructions, its shared context when it has one, then its question. */
const chatMessages = (prompt: Prompt<unknown>) => [
  { role: "system" as const, content: prompt.system },
  ...(prompt.context === undefined ? [] : [{ role: "user" as const, content: prompt.context }]),
  { role: "user" as const, content: prompt.user },
]

/** The request body: JSON-schema structured output; log-probabilities when the prompt and server allow. */
const chatBody = (
  model: string,
  messages: ChatCompletionsBody["messages"],
  prompt: Prompt<unknown>,
  logprobs: boolean,
): ChatCompletionsBody => ({
  model,
  messages,
  temperature: TEMPERATURE,
  response_format: {
    type: "json_schema",
    json_schema: { name: prompt.schemaName, strict: true, schema: prompt.schema },
  },
  ...(prompt.logprobs === true && logprobs ? { logprobs: true } : {}),
})

/** The cached answer to the prompt, as a completion that cost no request; undefined when there is none. */
const cachedCompletion = <T>(
  cache: ResponseCache,
  key: string,
  prompt: Prompt<T>,
): Effect.Effect<Completion<T> | undefined> =>
  Effect.gen(function* () {
    const hit = yield* cache.get(key).pipe(Effect.catchAllDefect(() => Effect.succeed(undefined)))
    const value = hit === undefined ? undefined : prompt.decode(hit.content)
    if (value === undefined) return undefined
    modelRequests.inc({ outcome: "cached" })
    return { value, usage: { ...noUsage, cacheHits: 1 } }
  })

/** Counts a completion's request and tokens in the metrics. */
const countCompletion = (result: Completed) => {
  modelRequests.inc({ outcome: "ok" })
  modelTokens.inc({ kind: "prompt" }, result.promptTokens)
  modelTokens.inc({ kind: "completion" }, result.completionTokens)
}

/**
 * The completion's content, parsed and (when the prompt asks and the server sent log-probabilities)
 * annotated, with the prompt's decoding of it; `value` is undefined when the answer is malformed.
 */
const decodeCompletion = <T>(
  prompt: Prompt<T>,
  result: Completed,
): { readonly content: unknown; readonly value: T | undefined } => {
  const parsed = parseContent(result.content)
  const content =
    parsed !== undefined &&
    prompt.annotate !== undefined &&
    result.logprobs !== undefined &&
    typeof result.content === "string"
      ? prompt.annotate(parsed, result.content, result.logprobs)
      : parsed
  return { content, value: content === undefined ? undefined : prompt.decode(content) }
}

/** Exponential back-off with jitter: between half and all of the doubled delay, at most `maxRetryDelayMs`. */
const backoff = (policy: RetryPolicy, retry: number): number => {
  const ceiling = Math.min(policy.maxRetryDelayMs, policy.retryBaseMs * 2 ** retry)
  return Math.round(ceiling / 2 + (policy.random() * ceiling) / 2)
}

/**
 * Waits before the next attempt (`Retry-After` when the server gave one, else the back-off); fails with a
 * retryable `ModelError` instead once the retries are spent or the wait would be too long.
 */
const waitToRetry = (
  policy: RetryPolicy,
  result: Retryable,
  retries: number,
): Effect.Effect<void, ModelError> =>
  Effect.suspend(() => {
    const delay = result.retryAfterMs ?? backoff(policy, retries)
    if (retries >= policy.maxRetries || delay > policy.maxRetryDelayMs)
      return new ModelError({
        message: `${result.message} (${retries + 1} attempt${retries === 0 ? "" : "s"})`,
        retryable: true,
      })
    return Effect.sleep(delay)
  })

/**
 * The provider's `complete`: the cache first, then requests under the concurrency limit, retried by the
 * policy, a malformed answer asked again once.
 */
const makeComplete = (options: OpenAiModelOptions): Complete => {
  const concurrency = Math.max(1, Math.floor(options.concurrency ?? 4))
  const timeoutMs = options.timeoutMs ?? 60_000
  const policy: RetryPolicy = {
    maxRetries: Math.max(0, Math.floor(options.maxRetries ?? 5)),
    retryBaseMs: options.retryBaseMs ?? 500,
    maxRetryDelayMs: options.maxRetryDelayMs ?? 60_000,
    random: options.random ?? Math.random,
  }
  const semaphore = Effect.unsafeMakeSemaphore(concurrency)
  /** Whether requests that want log-probabilities ask for them (until the server refuses them once). */
  let logprobs = true
  const attempt = makeChatCompletions({
    baseUrl: options.baseUrl,
    timeoutMs,
    ...(options.apiKey === undefined ? {} : { apiKey: options.apiKey }),
    ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
  })

  return <T>(prompt: Prompt<T>): Effect.Effect<Completion<T>, ModelError> =>
    Effect.gen(function* () {
      const messages = chatMessages(prompt)
      const cache = options.cache
      const key = cacheKey({
        model: options.model,
        messages,
        schemaName: prompt.schemaName,
        schema: prompt.schema,
        temperature: TEMPERATURE,
      })
      if (cache !== undefined) {
        const hit = yield* cachedCompletion(cache, key, prompt)
        if (hit !== undefined) return hit
      }
      let calls = 0
      let promptTokens = 0
      let cachedTokens = 0
      let completionTokens = 0
      let retries = 0
      let malformed = 0
      for (;;) {
        const asked = chatBody(options.model, messages, prompt, logprobs)
        const result = yield* semaphore.withPermits(1)(Effect.promise((signal) => attempt(asked, signal)))
        if (result.kind === "completion") {
          calls += 1
          promptTokens += result.promptTokens
          cachedTokens += result.cachedTokens
          completionTokens += result.completionTokens
          countCompletion(result)
          const { content, value } = decodeCompletion(prompt, result)
          if (value !== undefined) {
            if (cache !== undefined) {
              const entry = {
                content,
                promptTokens: result.promptTokens,
                completionTokens: result.completionTokens,
                model: options.model,
              }
              yield* cache.put(key, entry).pipe(Effect.catchAllDefect(() => Effect.void))
            }
            return { value, usage: { calls, cacheHits: 0, promptTokens, cachedTokens, completionTokens } }
          }
          malformed += 1
          if (malformed > 1)
            return yield* new ModelError({
              message: `model ${options.model} answered ${prompt.schemaName} with malformed output twice`,
              retryable: false,
            })
          continue
        }
        modelRequests.inc({ outcome: result.kind === "fatal" ? "failed" : "retried" })
        // A server that does not offer log-probabilities refuses the request: ask again without them, and
        // never ask this server for them again (confidence then rests on grounding alone).
        if (result.kind === "fatal" && asked.logprobs === true && /logprob/i.test(result.message)) {
          logprobs = false
          continue
        }
        if (result.kind === "fatal")
          return yield* new ModelError({ message: result.message, retryable: false })
        yield* waitToRetry(policy, result, retries)
        retries += 1
      }
    })
}

export const makeOpenAiModel = (options: OpenAiModelOptions): LanguageModelShape => {
  const complete = makeComplete(options)
  return {
    name: `openai:${options.model}`,
    extract: (request) => extractValues(complete, request),
    extractDocument: (request) => extractDocument(complete, request),
    discoverDimensionValues: (request) => discoverValues(complete, request),
    checkConsistency: (request) => checkConsistency(complete, request),
    resolve: (request) => resolveValue(complete, request),
    derive: (request) => deriveValue(complete, request),
    describeFields: (request) => describeFields(complete, request),
  }
}

export const openAiModelLayer = (options: OpenAiModelOptions): Layer.Layer<LanguageModel> =>
  Layer.succeed(LanguageModel, makeOpenAiModel(options))

// ---------------------------------------------------------------------------------------------------------
// The operations, each through `complete`

/** Values of one agent, each located on its page (answers whose passage is not found are dropped). */
const extractValues = (
  complete: Complete,
  request: ExtractRequest,
): Effect.Effect<ExtractResponse, ModelError> =>
  Effect.gen(function* () {
    const varying = varyingDimensions(request.dimensions)
    if (request.pages.length === 0 || varying.some((d) => d.values.length === 0))
      return { values: [], usage: noUsage } satisfies ExtractResponse
    const { value: raw, usage } = yield* complete(extractPrompt(request, varying))
    const located: Array<MatchedAnswer & { readonly pageNumber: number }> = []
    for (const answer of matchedAnswers(raw, request)) {
      const found = locatePassage(
        request.pages,
        answer.pageNumber,
        answer.relevantPassage,
        answer.value,
        request.agent.valueType,
      )
      if (found !== undefined)
        located.push({ ...answer, relevantPassage: found.passage, pageNumber: found.pageNumber })
    }
    const values = firstPerCombination(located).map(
      (a): ExtractedValue => ({
        dimensionValues: a.dimensionValues,
        value: a.value,
        relevantPassage: a.relevantPassage,
        reasoning: a.reasoning,
        pageNumber: a.pageNumber,
      }),
    )
    return { values, usage } satisfies ExtractResponse
  })

/** A dynamic dimension's values found in the pages: distinct, a known value's spelling preferred. */
const discoverValues = (
  complete: Complete,
  request: DiscoverRequest,
): Effect.Effect<DiscoverResponse, ModelError> =>
  Effect.gen(function* () {
    if (request.pages.length === 0) return { values: [], usage: noUsage } satisfies DiscoverResponse
    const { value: raw, usage } = yield* complete(discoverPrompt(request))
    const values: Array<string> = []
    for (const candidate of raw) {
      const text = collapseWhitespace(candidate)
      if (text === "") continue
      const known = matchValue(request.dimension.values, text) ?? text
      if (!values.some((v) => valuesEqual("string", v, known))) values.push(known)
    }
    return { values, usage } satisfies DiscoverResponse
  })

/** One verdict per extraction; identical values without instructions are consistent without asking. */
const checkConsistency = (
  complete: Complete,
  request: ConsistencyRequest,
): Effect.Effect<ConsistencyResponse, ModelError> =>
  Effect.gen(function* () {
    const { agent, extractions } = request
    const first = extractions[0]
    if (first === undefined)
      return { verdicts: [], summary: null, usage: noUsage } satisfies ConsistencyResponse
    const allEqual = extractions.every((e) => valuesEqual(agent.valueType, e.value, first.value))
    if (allEqual && agent.inconsistencyInstructions.trim() === "")
      return {
        verdicts: extractions.map((e) => ({
          id: e.id,
          consistent: true,
          justification:
            extractions.length === 1
              ? "The only extraction of this value."
              : "All extractions state the same value.",
        })),
        summary: null,
        usage: noUsage,
      } satisfies ConsistencyResponse
    const { value: raw, usage } = yield* complete(consistencyPrompt(agent, request.resultName, extractions))
    const verdicts = extractions.map((e, i) => {
      const label = extractionLabel(i)
      const verdict = raw.verdicts.find((v) => v.label === label || v.label === e.id)
      return verdict === undefined
        ? { id: e.id, consistent: false, justification: "not assessed by the model" }
        : { id: e.id, consistent: verdict.consistent, justification: verdict.justification.trim() }
    })
    const agree = verdicts.every((v) => v.consistent)
    const summary = agree
      ? null
      : (raw.summary ?? "The extractions disagree; see the justification of each extraction.")
    return { verdicts, summary, usage } satisfies ConsistencyResponse
  })

/** The resolved value; settled without asking when every extraction states the same consistent value. */
const resolveValue = (
  complete: Complete,
  request: ResolveRequest,
): Effect.Effect<ResolveResponse, ModelError> =>
  Effect.gen(function* () {
    const { agent, extractions } = request
    const first = extractions[0]
    if (first === undefined)
      return {
        value: null,
        status: "No result",
        justification: "No extraction holds a value.",
        usedExtractionIds: [],
        usage: noUsage,
      } satisfies ResolveResponse
    const settled =
      extractions.every(
        (e) => e.consistent !== false && valuesEqual(agent.valueType, e.value, first.value),
      ) &&
      agent.resolutionInstructions.trim() === "" &&
      !agent.enableComplexCalculations
    if (settled)
      return {
        value: normalizeValue(agent.valueType, first.value),
        status: "Resolved",
        justification:
          extractions.length === 1
            ? "The only extraction of this value."
            : `All ${extractions.length} extractions state the same value.`,
        usedExtractionIds: extractions.map((e) => e.id),
        usage: noUsage,
      } satisfies ResolveResponse
    const { value: raw, usage } = yield* complete(resolvePrompt(agent, request.resultName, extractions))
    let value = raw.value === null ? null : normalizeValue(agent.valueType, raw.value)
    if (value === "") value = null
    let status = raw.status
    if (status === "No result") value = null
    else if (value === null && status === "Resolved") status = "No result"
    const used = new Set<string>()
    for (const label of raw.usedLabels) {
      const index = extractions.findIndex((e, i) => extractionLabel(i) === label || e.id === label)
      if (index >= 0) used.add(extractions[index]!.id)
    }
    return {
      value,
      status,
      justification: raw.justification.trim(),
      usedExtractionIds: value === null ? [] : [...used],
      usage,
    } satisfies ResolveResponse
  })

/** The derived value, normalised (an evaluation's as a decimal number); an unusable answer is null. */
const deriveValue = (complete: Complete, request: DeriveRequest): Effect.Effect<DeriveResponse, ModelError> =>
  Effect.gen(function* () {
    const { value: raw, usage } = yield* complete(derivePrompt(request))
    let value: string | null = null
    if (raw.value !== null) {
      if (request.agent.isEvaluation) {
        const n = parseNumber(collapseWhitespace(raw.value))
        value = n === undefined ? null : canonicalDecimal(n)
      } else {
        const normalised = normalizeValue(request.agent.valueType, raw.value)
        value = normalised === "" ? null : normalised
      }
    }
    const reasoning =
      raw.value !== null && value === null
        ? `${raw.reasoning.trim()} (The model's answer "${raw.value}" is not a number.)`.trim()
        : raw.reasoning.trim()
    return { value, reasoning, usage } satisfies DeriveResponse
  })

/** Descriptions of the fields, asked `MAX_FIELDS_PER_CALL` at a time, all at once. */
const describeFields = (
  complete: Complete,
  request: DescribeFieldsRequest,
): Effect.Effect<DescribeFieldsResponse, ModelError> =>
  Effect.gen(function* () {
    const chunks: Array<ReadonlyArray<FieldToDescribe>> = []
    for (let i = 0; i < request.fields.length; i += MAX_FIELDS_PER_CALL)
      chunks.push(request.fields.slice(i, i + MAX_FIELDS_PER_CALL))
    const answers = yield* Effect.forEach(
      chunks,
      (fields) => complete(describeFieldsPrompt({ schemaTitle: request.schemaTitle, fields })),
      { concurrency: "unbounded" },
    )
    const fields = chunks.flatMap((chunk, i) => describeChunk(chunk, answers[i]!.value))
    const usage = answers.reduce((total, a) => addUsage(total, a.usage), noUsage)
    return { fields, usage } satisfies DescribeFieldsResponse
  })

// ---------------------------------------------------------------------------------------------------------
// Mapping answers back onto the request

/** Requests describing more fields are split into several calls (their usage summed). */
export const MAX_FIELDS_PER_CALL = 40

/**
 * The value type of a field's agent, decided by the field's JSON types alone (as the planner decides it):
 * `number` when they are all `number`/`integer`, `string` when none is, the draft's for a mix. The mapping
 * depends on it, so the model's `value_type` is advisory only and never changes it.
 */
const fieldValueType = (field: FieldToDescribe): "string" | "number" => {
  const numeric = field.types.filter((t) => t === "number" || t === "integer").length
  if (numeric === 0) return "string"
  return numeric === field.types.length ? "number" : field.draft.valueType
}

/**
 * One description per field of the chunk, in its order: the model's first answer for the field's path
 * (trimmed; blank instructions fall back to the draft's), else the draft. Answers for other paths are
 * dropped.
 */
const describeChunk = (
  fields: ReadonlyArray<FieldToDescribe>,
  raw: ReadonlyArray<RawFieldDescription>,
): Array<FieldDescription> => {
  const byPath = new Map<string, RawFieldDescription>()
  for (const answer of raw) if (!byPath.has(answer.path)) byPath.set(answer.path, answer)
  return fields.map((field) => {
    const answer = byPath.get(field.path)
    const valueType = fieldValueType(field)
    if (answer === undefined)
      return {
        path: field.path,
        extractionInstructions: field.draft.extractionInstructions,
        valueType,
        unit: field.draft.unit,
        examples: field.draft.examples,
      }
    const instructions = answer.extractionInstructions.trim()
    return {
      path: field.path,
      extractionInstructions: instructions === "" ? field.draft.extractionInstructions : instructions,
      valueType,
      unit: answer.unit.trim(),
      examples: answer.examples.trim(),
    }
  })
}
