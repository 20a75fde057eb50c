/**
 * Prompts and structured-output schemas of the `openai` language-model provider, one per operation. Each
 * prompt carries its JSON schema (strict mode: every property required, no extra properties) and a decoder
 * that checks the answer's shape minimally and coerces harmless deviations (a number where a string is
 * expected, a missing optional text). A decoder answers `undefined` when the answer is malformed.
 */

import { pageMarkdownText } from "@dxs/domain/Content"
import type { TokenLogprob } from "./ChatCompletions.ts"
import type {
  AgentSpec,
  CandidateExtraction,
  DeriveRequest,
  DescribeFieldsRequest,
  DimensionQuery,
  DiscoverRequest,
  ExtractRequest,
  FieldToDescribe,
  PageText,
  ResolutionStatus,
} from "./LanguageModel.ts"

export type JsonSchema = Readonly<Record<string, unknown>>

export interface Prompt<T> {
  /** The `response_format.json_schema.name` (letters, digits, `_`). */
  readonly schemaName: string
  readonly schema: JsonSchema
  readonly system: string
  /**
   * A user message sent before `user`: the material shared by several requests (a document's pages), so
   * that every request about it starts with the same bytes and a server's prefix cache serves them.
   */
  readonly context?: string
  readonly user: string
  /** Asks the server for the answer's token log-probabilities (`annotate` turns them into confidences). */
  readonly logprobs?: boolean
  /**
   * The answer's content with what its log-probabilities say added to it, before it is cached and decoded
   * (so a cached answer keeps it). `text` is the raw content the tokens spell.
   */
  readonly annotate?: (content: unknown, text: string, logprobs: ReadonlyArray<TokenLogprob>) => unknown
  readonly decode: (content: unknown) => T | undefined
}

// ---------------------------------------------------------------------------------------------------------
// Shared pieces

export const GROUNDING =
  "Use only the material given. Quote passages verbatim: copy the exact characters of the page text, do not " +
  "paraphrase, fix typos or join separate lines. When the answer is not stated and cannot be derived, answer " +
  "null rather than guess."

const valueTypeGuidance = (agent: AgentSpec): string => {
  switch (agent.valueType) {
    case "number":
      return `number: the number alone, written with digits, without unit or currency symbol${
        agent.unit.trim() === ""
          ? ""
          : ` (expressed in ${agent.unit.trim()}; convert if the document uses another unit)`
      }`
    case "bool":
      return "yes/no: answer `yes` or `no`"
    case "date":
      return "date: answer as YYYY-MM-DD"
    case "datetime":
      return "date and time: answer in ISO 8601 (YYYY-MM-DDTHH:MM:SS, with the offset when stated)"
    default:
      return "text: a short answer, as stated in the document where possible"
  }
}

export const given = (label: string, text: string): string =>
  text.trim() === "" ? "" : `${label}: ${text.trim()}\n`

export const agentBlock = (agent: AgentSpec): string =>
  `Agent: ${agent.name}\n` +
  given("Instructions", agent.extractionInstructions) +
  `Value type: ${valueTypeGuidance(agent)}\n` +
  given("Unit", agent.unit) +
  given("Examples", agent.examples)

/**
 * The pages as the model reads them: each page's text, or for a page with tables its Markdown (its tables
 * as Markdown tables, in place; pages without tables read exactly as their text, so their prompts stay the
 * same).
 */
export const pagesBlock = (pages: ReadonlyArray<PageText>): string =>
  pages.map((p) => `--- Page ${p.pageNumber} ---\n${promptText(p)}`).join("\n\n")

/** A page's text for the prompt: Markdown when it has tables, else its text. */
export const promptText = (p: PageText): string =>
  p.tables !== undefined && p.tables.length > 0
    ? pageMarkdownText({ text: p.text, blocks: p.blocks ?? [], tables: p.tables })
    : p.text

export const nullableString = { type: ["string", "null"] } as const

export const object = (properties: Record<string, unknown>): JsonSchema => ({
  type: "object",
  properties,
  required: Object.keys(properties),
  additionalProperties: false,
})

export const isRecord = (u: unknown): u is Record<string, unknown> =>
  typeof u === "object" && u !== null && !Array.isArray(u)

/** A text field: strings as they are, numbers and booleans as text, anything else as `fallback`. */
export const text = (u: unknown, fallback = ""): string =>
  typeof u === "string" ? u : typeof u === "number" || typeof u === "boolean" ? String(u) : fallback

/** A nullable text field: null, missing or blank → null. */
export const optionalText = (u: unknown): string | null => {
  const t = text(u).trim()
  return t === "" || t.toLowerCase() === "null" ? null : t
}

export const integer = (u: unknown): number | undefined => {
  const n =
    typeof u === "number"
      ? u
      : typeof u === "string"
        ? Number.parseInt(u.replace(/\D+/g, ""), 10)
        : Number.NaN
  return Number.isFinite(n) ? Math.round(n) : undefined
}

/** Candidate extractions are shown to the model as `E1`, `E2`, … (short labels it echoes reliably). */
export const extractionLabel = (index: number): string => `E${index + 1}`

const extractionLines = (
  extractions: ReadonlyArray<CandidateExtraction & { readonly consistent?: boolean | null }>,
): string =>
  extractions
    .map((e, i) => {
      const source =
        e.sourceType === "document"
          ? `document "${e.documentName ?? "?"}"${e.pageNumber === null ? "" : `, page ${e.pageNumber}`}`
          : e.sourceType === "web"
            ? "web search"
            : "derived value"
      const consistency =
        e.consistent === undefined || e.consistent === null
          ? ""
          : `\n   consistency check: ${e.consistent ? "consistent" : "inconsistent"}`
      const passage = e.relevantPassage.trim() === "" ? "" : `\n   passage: "${e.relevantPassage.trim()}"`
      return `${extractionLabel(i)}: value "${e.value}" (source: ${source})${passage}${consistency}`
    })
    .join("\n")

// ---------------------------------------------------------------------------------------------------------
// Extraction

export interface RawExtractedValue {
  /** Dimension name → value as the model wrote it (only the varying dimensions). */
  readonly dimensionValues: Readonly<Record<string, string>>
  readonly value: string | null
  readonly relevantPassage: string
  readonly reasoning: string
  readonly pageNumber: number | undefined
  /** From the answer's token log-probabilities, when the server returned them (see `annotate`). */
  readonly modelConfidence?: number
}

/** Above this many values a dimension is not constrained by an `enum` (servers limit enum sizes). */
const MAX_ENUM_VALUES = 100
/** Above this many combinations the prompt lists each dimension's values instead of every combination. */
const MAX_LISTED_COMBINATIONS = 60

const fixedValueOf = (d: DimensionQuery, document: { readonly name: string }): string =>
  d.kind === "document" ? document.name : (d.values[0] ?? "")

/** Every combination of the dimensions' values, in order; undefined when there are more than `limit`. */
export const combinationsOf = (
  dimensions: ReadonlyArray<DimensionQuery>,
  limit: number,
): ReadonlyArray<ReadonlyArray<string>> | undefined => {
  const count = dimensions.reduce((n, d) => n * d.values.length, 1)
  if (count > limit) return undefined
  let combos: Array<Array<string>> = [[]]
  for (const d of dimensions) combos = combos.flatMap((c) => d.values.map((v) => [...c, v]))
  return combos
}

/**
 * What an agent wants from a document: its fixed dimensions' values and the combinations of its varying
 * (`static` and `dynamic`, each with at least one value) dimensions' values.
 */
export const wantedBlock = (
  dimensions: ReadonlyArray<DimensionQuery>,
  varying: ReadonlyArray<DimensionQuery>,
  document: { readonly name: string },
): string => {
  const count = varying.reduce((n, d) => n * d.values.length, 1)
  const combinations = combinationsOf(varying, MAX_LISTED_COMBINATIONS)
  const fixed = dimensions.filter((d) => d.kind === "document" || d.kind === "tag")
  let wanted: string
  if (varying.length === 0) wanted = "One value is wanted for the whole document.\n"
  else {
    const dims = varying
      .map(
        (d) =>
          `- ${d.name}${d.description.trim() === "" ? "" : ` (${d.description.trim()})`}: ${d.values
            .map((v) => JSON.stringify(v))
            .join(", ")}`,
      )
      .join("\n")
    const list =
      combinations !== undefined
        ? `Combinations wanted (at most one value each):\n${combinations
            .map(
              (c, i) =>
                `${i + 1}. ${c.map((v, j) => `${varying[j]!.name} = ${JSON.stringify(v)}`).join(", ")}`,
            )
            .join("\n")}\n`
        : `One value is wanted per combination of these values (${count} combinations).\n`
    wanted = `The value is split by these dimensions; use their values exactly as written:\n${dims}\n${list}`
  }
  const fixedLines = fixed
    .map((d) => `${d.name}: ${JSON.stringify(fixedValueOf(d, document))} (fixed for this document)\n`)
    .join("")
  return fixedLines + wanted
}

/** The schema of the list of values one agent answers with. */
export const valuesSchema = (varying: ReadonlyArray<DimensionQuery>): JsonSchema => {
  const item: Record<string, unknown> = {}
  if (varying.length > 0)
    item.dimension_values = object(
      Object.fromEntries(
        varying.map((d) => [
          d.name,
          d.values.length <= MAX_ENUM_VALUES ? { type: "string", enum: [...d.values] } : { type: "string" },
        ]),
      ),
    )
  item.relevant_passage = { type: "string", description: "Verbatim text of the page that states the value." }
  item.page_number = { type: "integer", description: "The N of the `--- Page N ---` block quoted." }
  item.reasoning = { type: "string", description: "Briefly, how the value was found." }
  item.value = nullableString
  return { type: "array", items: object(item) }
}

/** Decodes one agent's list of values; undefined when it is not a list. */
export const decodeValues = (u: unknown): Array<RawExtractedValue> | undefined => {
  if (!Array.isArray(u)) return undefined
  const values: Array<RawExtractedValue> = []
  for (const entry of u) {
    if (!isRecord(entry)) continue
    const dims = isRecord(entry.dimension_values) ? entry.dimension_values : {}
    values.push({
      dimensionValues: Object.fromEntries(
        Object.entries(dims).flatMap(([k, v]) => (text(v, "") === "" ? [] : [[k, text(v)]])),
      ),
      value: optionalText(entry.value),
      relevantPassage: text(entry.relevant_passage),
      reasoning: text(entry.reasoning),
      pageNumber: integer(entry.page_number),
      ...(typeof entry.confidence === "number" && Number.isFinite(entry.confidence)
        ? { modelConfidence: Math.min(1, Math.max(0, entry.confidence)) }
        : {}),
    })
  }
  return values
}

export const EXTRACTION_SYSTEM =
  "You extract values from documents. For each value give the verbatim passage that states it (a " +
  "sentence, line or table row), the page it is on and a short honest reasoning. Resolve relative dates " +
  `against the reference date. ${GROUNDING}`

/** `varying`: the request's `static` and `dynamic` dimensions (each with at least one value). */
export const extractPrompt = (
  request: ExtractRequest,
  varying: ReadonlyArray<DimensionQuery>,
): Prompt<ReadonlyArray<RawExtractedValue>> => {
  const user =
    agentBlock(request.agent) +
    `Reference date (today): ${request.referenceDate}\n` +
    `Document: ${request.document.name}\n` +
    wantedBlock(request.dimensions, varying, request.document) +
    "\nReturn one entry per value found; leave out what the pages do not state.\n\n" +
    pagesBlock(request.pages)
  return {
    schemaName: "extract_values",
    schema: object({ values: valuesSchema(varying) }),
    system: EXTRACTION_SYSTEM,
    user,
    decode: (content) => (isRecord(content) ? decodeValues(content.values) : undefined),
  }
}

// ---------------------------------------------------------------------------------------------------------
// Dynamic dimension values

export const discoverPrompt = (request: DiscoverRequest): Prompt<ReadonlyArray<string>> => {
  const d = request.dimension
  const user =
    agentBlock(request.agent) +
    `Document: ${request.document.name}\n` +
    `Dimension: ${d.name}\n` +
    given("Description", d.description) +
    given("Example values", d.exampleValues) +
    (d.values.length === 0
      ? ""
      : `Values already known from other documents (reuse their spelling when this document means the same): ${d.values
          .map((v) => JSON.stringify(v))
          .join(", ")}\n`) +
    "\nList the distinct values of this dimension for which the document states the agent's value.\n\n" +
    pagesBlock(request.pages)
  return {
    schemaName: "discover_dimension_values",
    schema: object({ values: { type: "array", items: { type: "string" } } }),
    system:
      "You find the distinct values of a dimension (for example the years, regions or products) that a " +
      "document reports data for. List each value once, in the document's wording, without duplicates or " +
      `variants of the same value. ${GROUNDING} An empty list is a valid answer.`,
    user,
    decode: (content) => {
      if (!isRecord(content) || !Array.isArray(content.values)) return undefined
      return content.values.map((v) => text(v)).filter((v) => v.trim() !== "")
    },
  }
}

// ---------------------------------------------------------------------------------------------------------
// Consistency

export interface RawVerdict {
  readonly label: string
  readonly consistent: boolean
  readonly justification: string
}

const DEFAULT_INCONSISTENCY =
  "Extractions are consistent when they state the same value: numbers equal once units and scale are taken " +
  "into account, text with the same meaning. An extraction whose value contradicts the others, or whose " +
  "passage does not support its value, is inconsistent."

export const consistencyPrompt = (
  agent: AgentSpec,
  resultName: string,
  extractions: ReadonlyArray<CandidateExtraction>,
): Prompt<{ readonly verdicts: ReadonlyArray<RawVerdict>; readonly summary: string | null }> => {
  const labels = extractions.map((_, i) => extractionLabel(i))
  const user =
    agentBlock(agent) +
    `Value: ${resultName}\n` +
    `Rules: ${agent.inconsistencyInstructions.trim() === "" ? DEFAULT_INCONSISTENCY : agent.inconsistencyInstructions.trim()}\n\n` +
    `Extractions:\n${extractionLines(extractions)}\n\n` +
    "Give one verdict per extraction, and a summary of why they disagree (null when they agree)."
  return {
    schemaName: "check_consistency",
    schema: object({
      verdicts: {
        type: "array",
        items: object({
          id: { type: "string", enum: labels },
          justification: { type: "string" },
          consistent: { type: "boolean" },
        }),
      },
      summary: nullableString,
    }),
    system:
      "You check whether several extractions of the same value, from different sources, agree. Judge each " +
      "extraction against the rules and the others, and justify each verdict in one sentence. Do not invent " +
      "facts beyond the extractions given.",
    user,
    decode: (content) => {
      if (!isRecord(content) || !Array.isArray(content.verdicts)) return undefined
      const verdicts: Array<RawVerdict> = []
      for (const v of content.verdicts) {
        if (!isRecord(v)) continue
        const consistent =
          typeof v.consistent === "boolean"
            ? v.consistent
            : v.consistent === "true"
              ? true
              : v.consistent === "false"
                ? false
                : undefined
        if (consistent === undefined) continue
        verdicts.push({ label: text(v.id).trim(), consistent, justification: text(v.justification) })
      }
      return { verdicts, summary: optionalText(content.summary) }
    },
  }
}

// ---------------------------------------------------------------------------------------------------------
// Resolution

/** The statuses a model may choose (`Ignored` is set by people only). */
export const MODEL_RESOLUTION_STATUSES: ReadonlyArray<ResolutionStatus> = [
  "Resolved",
  "Requires attention",
  "Not resolved",
  "No result",
]

export interface RawResolution {
  readonly value: string | null
  readonly status: ResolutionStatus
  readonly justification: string
  readonly usedLabels: ReadonlyArray<string>
}

const DEFAULT_RESOLUTION =
  "Choose the value the extractions support best: prefer values that agree across sources and whose passage " +
  "states them clearly. When consistent extractions disagree in a way you cannot settle, answer status " +
  '"Requires attention" with the most likely value.'

export const resolvePrompt = (
  agent: AgentSpec,
  resultName: string,
  extractions: ReadonlyArray<CandidateExtraction & { readonly consistent: boolean | null }>,
): Prompt<RawResolution> => {
  const labels = extractions.map((_, i) => extractionLabel(i))
  const user =
    agentBlock(agent) +
    `Value: ${resultName}\n` +
    `Rules: ${agent.resolutionInstructions.trim() === "" ? DEFAULT_RESOLUTION : agent.resolutionInstructions.trim()}\n` +
    (agent.enableComplexCalculations
      ? "You may combine the extracted values arithmetically (for example sum or average them) when the rules " +
        "or the value's meaning call for it; cite every extraction the result uses.\n"
      : "Answer with one of the extracted values; do not compute new values.\n") +
    `\nExtractions:\n${extractionLines(extractions)}\n\n` +
    'Statuses: "Resolved" (a value is settled), "Requires attention" (conflicting values need a person), ' +
    '"Not resolved" (the extractions do not allow a decision), "No result" (none of them holds a value).'
  return {
    schemaName: "resolve_value",
    schema: object({
      justification: { type: "string" },
      used_extraction_ids: { type: "array", items: { type: "string", enum: labels } },
      status: { type: "string", enum: [...MODEL_RESOLUTION_STATUSES] },
      value: nullableString,
    }),
    system:
      "You resolve one final value from candidate extractions of it. Cite the extractions the value rests " +
      `on by id and justify the choice briefly. ${GROUNDING}`,
    user,
    decode: (content) => {
      if (!isRecord(content)) return undefined
      const status = MODEL_RESOLUTION_STATUSES.find(
        (s) => s.toLowerCase() === text(content.status).trim().toLowerCase(),
      )
      if (status === undefined) return undefined
      return {
        value: optionalText(content.value),
        status,
        justification: text(content.justification),
        usedLabels: Array.isArray(content.used_extraction_ids)
          ? content.used_extraction_ids.map((l) => text(l).trim())
          : [],
      }
    },
  }
}

// ---------------------------------------------------------------------------------------------------------
// Derivation

export interface RawDerivation {
  readonly value: string | null
  readonly reasoning: string
}

export const derivePrompt = (request: DeriveRequest): Prompt<RawDerivation> => {
  const agent = request.agent
  const inputs =
    request.inputs.length === 0
      ? "(none)"
      : request.inputs
          .map((input) => {
            const dims = Object.entries(input.dimensionValues)
            const where = dims.length === 0 ? "" : ` [${dims.map(([k, v]) => `${k} = ${v}`).join(", ")}]`
            return `- @${input.agentName}${where}: ${input.value === null ? "no result" : JSON.stringify(input.value)}`
          })
          .join("\n")
  const user =
    `Agent: ${agent.name}\n` +
    (agent.isEvaluation
      ? `Evaluation criterion: ${agent.derivedPrompt.trim()}\n` +
        "Value type: a numeric score (digits only), judged by the criterion over the inputs\n"
      : `Prompt: ${agent.derivedPrompt.trim()}\nValue type: ${valueTypeGuidance(agent)}\n${given("Unit", agent.unit)}`) +
    given("Examples", agent.examples) +
    `Value: ${request.resultName}\n\n` +
    `Inputs (resolved values of the referenced agents):\n${inputs}`
  return {
    schemaName: "derive_value",
    schema: object({ reasoning: { type: "string" }, value: nullableString }),
    system:
      "You derive a value from the resolved values of other agents, following the prompt. Show the " +
      "calculation or argument in the reasoning. When the inputs do not allow an answer, answer null and say " +
      "why. Use only the inputs given; do not guess.",
    user,
    decode: (content) => {
      if (!isRecord(content)) return undefined
      return { value: optionalText(content.value), reasoning: text(content.reasoning) }
    },
  }
}

// ---------------------------------------------------------------------------------------------------------
// Automatic output mapping

export interface RawFieldDescription {
  readonly path: string
  readonly extractionInstructions: string
  /** The model's choice, advisory only (undefined when it is neither `string` nor `number`). */
  readonly valueType: "string" | "number" | undefined
  readonly unit: string
  readonly examples: string
}

/** The fields as the model sees them (snake_case, like the answer). */
const fieldsJson = (fields: ReadonlyArray<FieldToDescribe>): string =>
  JSON.stringify(
    fields.map((f) => ({
      path: f.path,
      agent_name: f.agentName,
      types: f.types,
      description: f.description,
      format: f.format,
      enum: f.enumValues,
      dimensions: f.dimensions,
      draft: {
        extraction_instructions: f.draft.extractionInstructions,
        value_type: f.draft.valueType,
        unit: f.draft.unit,
        examples: f.draft.examples,
      },
    })),
    null,
    2,
  )

/** Above this many fields the answer's `path` is not constrained by an `enum`. */
const MAX_PATH_ENUM = 100

export const describeFieldsPrompt = (
  request: DescribeFieldsRequest,
): Prompt<ReadonlyArray<RawFieldDescription>> => {
  const paths = [...new Set(request.fields.map((f) => f.path))]
  const user =
    given("Output schema", request.schemaTitle) +
    `Fields (${request.fields.length}):\n${fieldsJson(request.fields)}\n\n` +
    "Answer one entry per field, with its path exactly as given."
  return {
    schemaName: "describe_fields",
    schema: object({
      fields: {
        type: "array",
        items: object({
          path: paths.length <= MAX_PATH_ENUM ? { type: "string", enum: paths } : { type: "string" },
          extraction_instructions: { type: "string" },
          value_type: { type: "string", enum: ["string", "number"] },
          unit: { type: "string" },
          examples: { type: "string" },
        }),
      },
    }),
    system:
      "You write the texts of extraction agents. Each field of a JSON output schema is filled by one agent; " +
      "an extraction model will follow the agent's extraction instructions to find this field's value in " +
      "business documents (invoices, contracts, reports, statements). For each field write " +
      "extraction_instructions: one to three plain sentences saying what value to look for, where it usually " +
      "appears and how it is labelled, and the expected form of the answer (for example a date as " +
      "YYYY-MM-DD, a number without currency symbol, one of the allowed values). Keep the meaning of the " +
      "schema's description, enum and format: never contradict or narrow them, and list the allowed values " +
      "of an enum. When the field has dimensions, the agent answers one value per dimension value (for " +
      'example per line item): describe the value for one of them. value_type: "number" only for numeric ' +
      'fields (types number or integer), otherwise "string". unit: the unit numbers are expressed in, like ' +
      '"USD" or "%", or "" when there is none or it is not known. examples: a few typical values, ' +
      'comma-separated, or "" when you cannot give realistic ones. Improve on the draft texts; do not invent ' +
      "facts about the documents.",
    user,
    decode: (content) => {
      if (!isRecord(content) || !Array.isArray(content.fields)) return undefined
      const fields: Array<RawFieldDescription> = []
      for (const entry of content.fields) {
        if (!isRecord(entry)) continue
        const path = text(entry.path).trim()
        if (path === "") continue
        const valueType = text(entry.value_type).trim().toLowerCase()
        fields.push({
          path,
          extractionInstructions: text(entry.extraction_instructions),
          valueType: valueType === "number" || valueType === "string" ? valueType : undefined,
          unit: text(entry.unit),
          examples: text(entry.examples),
        })
      }
      return fields
    },
  }
}
