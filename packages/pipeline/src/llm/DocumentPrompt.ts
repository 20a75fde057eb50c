/**
 * The prompt of one document request: every agent of the request answers from the same pages in one
 * structured answer with a member per agent (`A1`, `A2`, …). Laid out for prefix caching: the instructions
 * (system) and the document's pages (the first user message) depend only on the document version and the
 * window, byte for byte; the agents and what they want come after, in a second user message.
 */
import { confidenceFromLogprobs } from "@dxs/domain/Confidence"
import type { TokenLogprob } from "./ChatCompletions.ts"
import type { DimensionQuery, DocumentExtractRequest } from "./LanguageModel.ts"
import {
  agentBlock,
  decodeValues,
  EXTRACTION_SYSTEM,
  isRecord,
  type JsonSchema,
  object,
  type Prompt,
  pagesBlock,
  type RawExtractedValue,
  valuesSchema,
  wantedBlock,
} from "./Prompts.ts"

/** The key of the request's i-th agent in the prompt and the answer. */
export const agentKey = (index: number): string => `A${index + 1}`

/** The static and dynamic dimensions: those the answer names a value of. */
export const varyingDimensions = (dimensions: ReadonlyArray<DimensionQuery>): ReadonlyArray<DimensionQuery> =>
  dimensions.filter((d) => d.kind === "static" || d.kind === "dynamic")

export const DOCUMENT_SYSTEM =
  `${EXTRACTION_SYSTEM} Several agents are asked about the same document at once: answer each under its ` +
  "key, independently of the others."

/** The first user message: the document and its pages (identical for every request about this window). */
export const documentContext = (request: Pick<DocumentExtractRequest, "document" | "pages">): string =>
  `Document: ${request.document.name}\n\n${pagesBlock(request.pages)}`

/** Each agent's list of values, by its key, in the request's order. */
export type DocumentAnswer = ReadonlyArray<ReadonlyArray<RawExtractedValue>>

/**
 * `corrections`: for a retry, one line per answer that was not grounded (what was wrong with it); the
 * request then asks again for those agents only.
 */
export const documentExtractPrompt = (
  request: DocumentExtractRequest,
  corrections: ReadonlyArray<string> = [],
): Prompt<DocumentAnswer> => {
  const agents = request.agents.map(
    (a, i) =>
      `### ${agentKey(i)}\n` +
      agentBlock(a.agent) +
      wantedBlock(a.dimensions, varyingDimensions(a.dimensions), request.document),
  )
  const user =
    `Reference date (today): ${request.referenceDate}\n\n` +
    `Extract the following ${agents.length === 1 ? "agent's value" : `${agents.length} agents' values`} from the document above.\n\n` +
    `${agents.join("\n")}\n` +
    `Answer with one member per agent key (${request.agents.map((_, i) => agentKey(i)).join(", ")}): the list ` +
    "of values found for that agent, an empty list when the pages do not state it." +
    (corrections.length === 0
      ? ""
      : `\n\nYour previous answer cited text that is not on the pages:\n${corrections
          .map((c) => `- ${c}`)
          .join(
            "\n",
          )}\nAnswer again: quote the page text exactly as written, or leave the value out when the pages do not state it.`)
  const schema: JsonSchema = object(
    Object.fromEntries(
      request.agents.map((a, i) => [agentKey(i), valuesSchema(varyingDimensions(a.dimensions))]),
    ),
  )
  return {
    schemaName: "extract_document",
    schema,
    system: DOCUMENT_SYSTEM,
    context: documentContext(request),
    user,
    logprobs: true,
    annotate: annotateConfidence,
    decode: (content) => {
      if (!isRecord(content)) return undefined
      const answers: Array<ReadonlyArray<RawExtractedValue>> = []
      for (let i = 0; i < request.agents.length; i++) {
        const member = content[agentKey(i)]
        // A member left out is "nothing found"; one that is not a list makes the answer malformed.
        if (member === undefined || member === null) answers.push([])
        else {
          const values = decodeValues(member)
          if (values === undefined) return undefined
          answers.push(values)
        }
      }
      return answers
    },
  }
}

const VALUE_MEMBER = /"value"\s*:\s*("(?:[^"\\]|\\.)*"|null)/g

/**
 * Adds `confidence` to each value of the answer: the geometric mean of the probabilities of the tokens
 * that spell the value (exp of their mean log-probability). Left as it is when the tokens do not spell the
 * content or the values cannot be matched to their text one to one.
 */
export const annotateConfidence = (
  content: unknown,
  text: string,
  logprobs: ReadonlyArray<TokenLogprob>,
): unknown => {
  if (!isRecord(content)) return content
  const starts: Array<number> = []
  let spelled = ""
  for (const t of logprobs) {
    starts.push(spelled.length)
    spelled += t.token
  }
  if (spelled !== text) return content
  const spans = [...text.matchAll(VALUE_MEMBER)].map((m) => {
    const start = m.index + m[0].length - m[1]!.length
    return { start, end: start + m[1]!.length }
  })
  const lists = Object.values(content).filter(Array.isArray)
  if (lists.reduce((n, l) => n + l.length, 0) !== spans.length) return content
  let next = 0
  const out: Record<string, unknown> = {}
  for (const [key, member] of Object.entries(content)) {
    if (!Array.isArray(member)) {
      out[key] = member
      continue
    }
    out[key] = member.map((item) => {
      const span = spans[next++]!
      if (!isRecord(item) || item.value === null) return item
      const spelling = logprobs.flatMap((t, i) =>
        starts[i]! + t.token.length > span.start && starts[i]! < span.end ? [t.logprob] : [],
      )
      const confidence = confidenceFromLogprobs(spelling)
      return confidence === undefined ? item : { ...item, confidence }
    })
  }
  return out
}
