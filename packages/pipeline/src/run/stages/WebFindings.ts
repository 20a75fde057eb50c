/**
 * Web search inside the `resolve` stage (an agent with `enable_web_search`, when a search provider is
 * configured): per atomic value, the search's hits are read like pages of a document, and what the model
 * finds there joins the document extractions as `web` candidates of consistency and resolution.
 */
import { randomUUID } from "node:crypto"
import type { WebSupplement } from "@dxs/db/repositories/Results"
import { Context, Effect } from "effect"
import {
  type AgentSpec,
  type CandidateExtraction,
  type LanguageModelShape,
  noUsage,
  type PageText,
  type Usage,
} from "../../llm/LanguageModel.ts"
import type { WebSearchResult, WebSearchShape } from "../../websearch/WebSearch.ts"
import type { ProjectAgent } from "../ProjectState.ts"
import { type InstanceRef, resultName, type StageError, WebSearchError } from "./Stage.ts"

/** The search provider of agents with `enable_web_search`; absent: web search is not configured. */
export class WebSearch extends Context.Tag("@dxs/pipeline/WebSearch")<WebSearch, WebSearchShape>() {}

/** Search engines answer short queries best. */
const MAX_QUERY_CHARS = 300

/** The search of one atomic value: the agent's name and instructions, and the result's name when dimensioned. */
export const webQuery = (agent: ProjectAgent, instances: ReadonlyArray<InstanceRef>): string =>
  [
    agent.row.name,
    agent.row.extraction_instructions,
    instances.length === 0 ? "" : resultName(agent.row.name, instances),
  ]
    .map((part) => part.replace(/\s+/g, " ").trim())
    .filter((part) => part !== "")
    .join(" ")
    .slice(0, MAX_QUERY_CHARS)
    .trim()

/** A value found on the web, stored as a `web` extraction with this id. */
export interface WebFinding {
  readonly id: string
  readonly value: string
  readonly relevantPassage: string
  readonly reasoning: string
  readonly query: string
  readonly searchedAt: Date
  readonly source: { readonly url: string; readonly title: string }
}

/** A hit's name where a document name would be: its title, else its address. */
const hitName = (hit: WebSearchResult) => hit.title || hit.url

/**
 * One atomic value's web search: the hits (those with text) are read by the model as the pages of one
 * document, with the agent's own instructions; every value it finds is tied back to the hit it is on.
 */
export const searchWeb = (
  model: LanguageModelShape,
  webSearch: WebSearchShape,
  request: { readonly atomicValueId: string; readonly query: string; readonly referenceDate: string },
  spec: AgentSpec,
): Effect.Effect<
  { readonly hits: number; readonly findings: ReadonlyArray<WebFinding>; readonly usage: Usage },
  StageError
> =>
  Effect.gen(function* () {
    const searchedAt = new Date()
    const hits = yield* Effect.tryPromise({
      try: (signal) => webSearch.search(request.query, { signal }),
      catch: (cause) =>
        new WebSearchError({ message: cause instanceof Error ? cause.message : String(cause), cause }),
    })
    const readable = hits.filter((hit) => hit.content !== "")
    if (readable.length === 0) return { hits: hits.length, findings: [], usage: noUsage }
    const document = { id: `web:${request.atomicValueId}`, name: `Web search results for "${request.query}"` }
    const pages: Array<PageText> = readable.map((hit, i) => ({
      documentId: document.id,
      documentName: hitName(hit),
      pageNumber: i + 1,
      text: hit.content,
    }))
    const r = yield* model.extract({
      agent: spec,
      document,
      pages,
      dimensions: [],
      referenceDate: request.referenceDate,
    })
    const findings = r.values.flatMap((v): Array<WebFinding> => {
      const hit = readable[v.pageNumber - 1]
      if (hit === undefined) return []
      return [
        {
          id: randomUUID(),
          value: v.value,
          relevantPassage: v.relevantPassage,
          reasoning: v.reasoning,
          query: request.query,
          searchedAt,
          source: { url: hit.url, title: hitName(hit) },
        },
      ]
    })
    return { hits: hits.length, findings, usage: r.usage }
  })

/** A candidate of consistency and resolution: a stored document extraction or a fresh web finding. */
export interface Candidate {
  readonly candidate: CandidateExtraction
  readonly documentId: string | null
  readonly web: WebFinding | undefined
}

/** The result's provenance: which kinds of source its cited extractions are. */
export const provenance = (
  cited: ReadonlyArray<Candidate>,
): { readonly sourceType: string; readonly webSupplement: WebSupplement | null } => {
  const web = cited.flatMap((c) => (c.web === undefined ? [] : [c.web]))
  const fromDocuments = cited.some((c) => c.web === undefined)
  if (web.length === 0) return { sourceType: "document", webSupplement: null }
  const sources = new Map<string, { url: string; title: string }>()
  for (const w of web) if (!sources.has(w.source.url)) sources.set(w.source.url, { ...w.source })
  const text = [...new Set(web.map((w) => w.relevantPassage.trim()).filter((t) => t !== ""))].join("\n")
  return {
    sourceType: fromDocuments ? "document_and_web" : "web",
    webSupplement: { text, sources: [...sources.values()] },
  }
}
