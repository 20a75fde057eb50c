/**
 * The language-model contract of the pipeline (DESIGN §3). Every stage that needs judgement asks a
 * `LanguageModel`: the `local` provider (deterministic, offline, no weights) or `openai` (any
 * OpenAI-compatible Chat Completions server). Requests carry everything the model needs; responses are
 * already normalised (numbers as canonical decimals) and report the calls they cost in `usage`.
 */
import type { PageBlock } from "@dxs/domain/Content"
import type { Table } from "@dxs/domain/Tables"
import { Context, Data, type Effect } from "effect"
import type { Citation } from "./Citations.ts"

export type ValueType = "string" | "number" | "bool" | "date" | "datetime"
export type ResolutionStatus = "Not resolved" | "Requires attention" | "Resolved" | "Ignored" | "No result"

/** The agent fields a model sees. Empty strings mean "not given". */
export interface AgentSpec {
  readonly id: string
  readonly name: string
  readonly extractionInstructions: string
  readonly valueType: ValueType
  readonly unit: string
  readonly examples: string
  readonly inconsistencyInstructions: string
  readonly resolutionInstructions: string
  readonly enableComplexCalculations: boolean
  readonly valueIfNotFound: string
  /** Derived agents only. */
  readonly derivedPrompt: string
  readonly isEvaluation: boolean
}

/** A page handed to the model: `text` is the page's full parsed text. */
export interface PageText {
  readonly documentId: string
  readonly documentName: string
  /** 1-based. */
  readonly pageNumber: number
  readonly text: string
  /** The page's tables as cells (the prompt shows them as Markdown tables, the local extractor reads them). */
  readonly tables?: ReadonlyArray<Table> | undefined
  /** The page's blocks, which place its tables among its text (given with the tables). */
  readonly blocks?: ReadonlyArray<PageBlock> | undefined
}

/**
 * A dimension the agent is split by. `static`: the user's values; `dynamic`: values discovered from the
 * documents (already discovered when extracting); `document`: the one value is the document's name;
 * `tag`: the one value is the document's value of the tag.
 */
export interface DimensionQuery {
  readonly dimensionId: string
  readonly name: string
  readonly description: string
  readonly exampleValues: string
  readonly kind: "static" | "dynamic" | "document" | "tag"
  readonly values: ReadonlyArray<string>
}

export interface Usage {
  /** Requests sent to a model server (0 for `local` and for cache hits). */
  readonly calls: number
  readonly cacheHits: number
  readonly promptTokens: number
  /** Prompt tokens the server answered from its prefix cache (`prompt_tokens_details.cached_tokens`). */
  readonly cachedTokens: number
  readonly completionTokens: number
}

export const noUsage: Usage = {
  calls: 0,
  cacheHits: 0,
  promptTokens: 0,
  cachedTokens: 0,
  completionTokens: 0,
}

export const addUsage = (a: Usage, b: Usage): Usage => ({
  calls: a.calls + b.calls,
  cacheHits: a.cacheHits + b.cacheHits,
  promptTokens: a.promptTokens + b.promptTokens,
  cachedTokens: (a.cachedTokens ?? 0) + (b.cachedTokens ?? 0),
  completionTokens: a.completionTokens + b.completionTokens,
})

// ---------------------------------------------------------------------------------------------------------
// Extraction

export interface ExtractRequest {
  readonly agent: AgentSpec
  readonly document: { readonly id: string; readonly name: string }
  /** The retrieved pages of this document, in page order (all pages of a small document). */
  readonly pages: ReadonlyArray<PageText>
  /**
   * The agent's dimensions in display order. One value is wanted per combination of the `static` and
   * `dynamic` dimensions' values (`document` and `tag` dimensions have one fixed value per document).
   */
  readonly dimensions: ReadonlyArray<DimensionQuery>
  /** `YYYY-MM-DD`: "today" for relative dates. */
  readonly referenceDate: string
}

export interface ExtractedValue {
  /** Dimension id → value, for every dimension of the request (fixed ones included). */
  readonly dimensionValues: Readonly<Record<string, string>>
  /** Normalised by the agent's value type: a canonical decimal (`1234.5`, no unit) for `number`. */
  readonly value: string
  /** Verbatim text of the cited page (a sentence, line or table row) that holds the value. */
  readonly relevantPassage: string
  /** How the value was found, honestly (which label, pattern and terms decided it). */
  readonly reasoning: string
  /** The page the passage is on (1-based). */
  readonly pageNumber: number
  /**
   * The model's own confidence in the value (0 to 1): from the token log-probabilities of the value when the
   * server returns them, or the local extractor's score. Undefined when unknown.
   */
  readonly modelConfidence?: number | undefined
  /**
   * The citation as the provider already checked it against the request's pages (`groundCitation`), so the
   * stage does not check it again; undefined when the provider did not (the stage then checks it).
   */
  readonly citation?: Citation | undefined
}

export interface ExtractResponse {
  /** Nothing found for a combination → no entry for it (never a guess). */
  readonly values: ReadonlyArray<ExtractedValue>
  readonly usage: Usage
}

/** One agent of a document request, with its dimensions (dynamic ones already discovered). */
export interface DocumentAgent {
  readonly agent: AgentSpec
  readonly dimensions: ReadonlyArray<DimensionQuery>
}

/**
 * One request for one document (or one window of its pages) and a group of agents: the whole document is
 * sent once for all of them. The instructions and the pages come first, identical for every request about
 * the same document version, so a server's prefix cache serves the later requests.
 */
export interface DocumentExtractRequest {
  readonly document: { readonly id: string; readonly name: string }
  /** The window's pages, in page order. */
  readonly pages: ReadonlyArray<PageText>
  readonly agents: ReadonlyArray<DocumentAgent>
  /** `YYYY-MM-DD`: "today" for relative dates. */
  readonly referenceDate: string
}

export interface DocumentExtractResponse {
  /** One entry per agent of the request, in its order. */
  readonly agents: ReadonlyArray<{ readonly agentId: string; readonly values: ReadonlyArray<ExtractedValue> }>
  readonly usage: Usage
}

export interface DiscoverRequest {
  readonly agent: AgentSpec
  readonly dimension: DimensionQuery
  readonly document: { readonly id: string; readonly name: string }
  readonly pages: ReadonlyArray<PageText>
}

export interface DiscoverResponse {
  /** Distinct values of the dimension that this document mentions. */
  readonly values: ReadonlyArray<string>
  readonly usage: Usage
}

// ---------------------------------------------------------------------------------------------------------
// Consistency and resolution (per atomic value: one agent, one combination of dimension values)

export interface CandidateExtraction {
  readonly id: string
  readonly value: string
  readonly sourceType: "document" | "web" | "derived"
  readonly documentName: string | null
  readonly pageNumber: number | null
  readonly relevantPassage: string
}

export interface ConsistencyRequest {
  readonly agent: AgentSpec
  /** The atomic value's name (its dimension values, or the agent name). */
  readonly resultName: string
  readonly extractions: ReadonlyArray<CandidateExtraction>
}

export interface ConsistencyResponse {
  /** One verdict per extraction of the request, by id. */
  readonly verdicts: ReadonlyArray<{
    readonly id: string
    readonly consistent: boolean
    readonly justification: string
  }>
  /** Why the extractions disagree; null when they agree. */
  readonly summary: string | null
  readonly usage: Usage
}

export interface ResolveRequest {
  readonly agent: AgentSpec
  readonly resultName: string
  readonly extractions: ReadonlyArray<CandidateExtraction & { readonly consistent: boolean | null }>
}

export interface ResolveResponse {
  /** Normalised like extraction values; null when nothing was found. */
  readonly value: string | null
  readonly status: ResolutionStatus
  readonly justification: string
  /** The extractions the value rests on (its citations). */
  readonly usedExtractionIds: ReadonlyArray<string>
  readonly usage: Usage
}

// ---------------------------------------------------------------------------------------------------------
// Derivation (derived and evaluation agents)

export interface DerivedInput {
  readonly agentId: string
  readonly agentName: string
  readonly resultId: string
  /** Dimension name → value of the input's atomic value. */
  readonly dimensionValues: Readonly<Record<string, string>>
  /** The resolved value (null: no result). */
  readonly value: string | null
}

export interface DeriveRequest {
  readonly agent: AgentSpec
  readonly resultName: string
  /** The resolved values of the referenced agents that apply to this result. */
  readonly inputs: ReadonlyArray<DerivedInput>
}

export interface DeriveResponse {
  /** Null when the prompt cannot be answered from the inputs (the reasoning says why). */
  readonly value: string | null
  readonly reasoning: string
  readonly usage: Usage
}

// ---------------------------------------------------------------------------------------------------------
// Automatic output mapping

/**
 * One field of a project's output JSON Schema that the automatic-mapping planner turned into an agent. The
 * planner has already decided the agent's name, dimensions and mapping; the model only writes better texts.
 */
export interface FieldToDescribe {
  /** The schema path the agent fills, e.g. "seller/name", "line_items/[*]/amount" — the key of the answer. */
  readonly path: string
  readonly agentName: string
  /** JSON types the field accepts besides null, e.g. ["number"]. */
  readonly types: ReadonlyArray<string>
  /** The schema's description ("" if none). */
  readonly description: string
  /** The schema's `format` ("" if none). */
  readonly format: string
  /** The schema's `enum` values, as text (empty if none). */
  readonly enumValues: ReadonlyArray<string>
  /** Dimensions the agent is split by (e.g. "Line item"): one value per dimension value. */
  readonly dimensions: ReadonlyArray<string>
  /** The planner's draft texts, used as they are by `local` and as the fallback for fields a model leaves out. */
  readonly draft: {
    readonly extractionInstructions: string
    readonly valueType: "string" | "number"
    readonly unit: string
    readonly examples: string
  }
}

export interface DescribeFieldsRequest {
  /** The output schema's title ("" if none). */
  readonly schemaTitle: string
  readonly fields: ReadonlyArray<FieldToDescribe>
}

/** The texts of one field's agent. */
export interface FieldDescription {
  /** The request field's `path`. */
  readonly path: string
  readonly extractionInstructions: string
  /**
   * Always `"number"` exactly when the field's `types` include `number` or `integer` (the mapping depends
   * on it); a model's own choice is advisory and never overrides this.
   */
  readonly valueType: "string" | "number"
  /** E.g. "USD", "%"; "" when the value has no unit. */
  readonly unit: string
  /** Comma-separated examples; "" when none. */
  readonly examples: string
}

export interface DescribeFieldsResponse {
  /** Exactly one description per request field, in the request's order. */
  readonly fields: ReadonlyArray<FieldDescription>
  readonly usage: Usage
}

// ---------------------------------------------------------------------------------------------------------
// The service

export class ModelError extends Data.TaggedError("ModelError")<{
  readonly message: string
  /** Worth retrying the task later (rate limit, server error, timeout). */
  readonly retryable: boolean
}> {}

export interface LanguageModelShape {
  /** `local`, or `openai:<model>`. */
  readonly name: string
  readonly extract: (request: ExtractRequest) => Effect.Effect<ExtractResponse, ModelError>
  /** Every agent of the request from one document window, in one model request (plus one grounding retry). */
  readonly extractDocument: (
    request: DocumentExtractRequest,
  ) => Effect.Effect<DocumentExtractResponse, ModelError>
  readonly discoverDimensionValues: (request: DiscoverRequest) => Effect.Effect<DiscoverResponse, ModelError>
  readonly checkConsistency: (request: ConsistencyRequest) => Effect.Effect<ConsistencyResponse, ModelError>
  readonly resolve: (request: ResolveRequest) => Effect.Effect<ResolveResponse, ModelError>
  readonly derive: (request: DeriveRequest) => Effect.Effect<DeriveResponse, ModelError>
  /**
   * Writes the extraction texts of the agents an automatic output mapping plans. `local` returns the
   * drafts unchanged; a model's answer falls back to the draft for any field it leaves out.
   */
  readonly describeFields: (
    request: DescribeFieldsRequest,
  ) => Effect.Effect<DescribeFieldsResponse, ModelError>
}

export class LanguageModel extends Context.Tag("@dxs/pipeline/LanguageModel")<
  LanguageModel,
  LanguageModelShape
>() {}
