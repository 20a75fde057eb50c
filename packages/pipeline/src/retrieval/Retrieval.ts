/**
 * Retrieval (DESIGN §3, stage 2): which pages of a project's documents matter for an agent. Postgres
 * full-text search over `pages.tsv` ranks the pages by the agent's key terms; small documents go to the
 * extractor whole, large ones as their best pages plus the first and last page.
 */
import type { Conn } from "@dxs/db"
import {
  type DocumentSize,
  leadingPageNumbers,
  pagesWithin,
  pageTexts,
  rankedPageNumbers,
  rankPagesOfProject,
} from "@dxs/db/repositories/Pages"
import { Effect } from "effect"
import type { PageText } from "../llm/LanguageModel.ts"

/** The agent fields retrieval reads. */
export interface RetrievalAgent {
  readonly name: string
  readonly extractionInstructions: string
  readonly examples: string
}

export interface RelevantPage {
  readonly documentId: string
  readonly documentName: string
  /** 1-based. */
  readonly pageNumber: number
  /** Cover-density rank of the page for the agent's key terms, in [0, 1). */
  readonly score: number
  /** A short excerpt of the page around the matching terms, on one line. */
  readonly snippet: string
}

/** A document goes to the extractor whole when it has at most this many pages… */
export const WHOLE_DOCUMENT_MAX_PAGES = 12
/** …and at most this many characters in all. */
export const WHOLE_DOCUMENT_MAX_CHARS = 60_000
/** Pages of a larger document chosen by rank (page 1 and the last page come on top). */
export const RANKED_PAGES = 8

/** More terms than this add noise to the ranking and cost to the query. */
const MAX_TERMS = 40

/**
 * Words that say nothing about where a value is. Postgres drops its own English stop-words too; these are
 * the words instructions use to ask for something ("extract the … from the document").
 */
const STOP_WORDS = new Set(
  `a about above after again against all also am an and any are as at be because been before being below
  between both but by can could did do does doing down during each either else etc every few for from
  further get give given had has have having he her here hers him his how i if in into is it its itself
  just may me might more most must my no nor not now of off on once only or other our ours out over own
  per please provide return same shall she should so some such than that the their theirs them then there
  these they this those through to too under until up upon us use used using very via was we were what
  when where whether which while who whom whose why will with within without would yes you your
  extract extracted extraction find found identify document documents text page pages mentioned stated
  specified listed shown eg ie example examples answer output`
    .split(/\s+/)
    .filter((w) => w !== ""),
)

/** The distinct words of `text`: lower-cased, letters and digits only, stop-words out. */
const wordsOf = (text: string): Array<string> =>
  (text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).filter(
    (w) => !STOP_WORDS.has(w) && (w.length > 1 || /\d/.test(w)),
  )

/**
 * The agent's key terms as a `to_tsquery('english', …)` string: the words of its name, instructions and
 * examples (in that order of importance), each prefix-matched, OR-ed. Empty when the agent has no usable
 * words.
 */
export const keyTermsQuery = (agent: RetrievalAgent): string => {
  const terms: Array<string> = []
  const seen = new Set<string>()
  for (const text of [agent.name, agent.extractionInstructions, agent.examples])
    for (const word of wordsOf(text)) {
      if (seen.has(word) || terms.length >= MAX_TERMS) continue
      seen.add(word)
      terms.push(word)
    }
  return terms.map((t) => `${t}:*`).join(" | ")
}

const oneLine = (text: string) => text.replace(/\s+/g, " ").trim()

/** The first line of a page that holds one of the words, as a fallback excerpt. */
const firstMatchingLine = (text: string, query: string): string => {
  const stems = query
    .split(" | ")
    .map((t) => t.replace(/:\*$/, ""))
    .filter((t) => t !== "")
  const lines = text.split(/\r?\n/)
  const line = lines.find((l) => stems.some((s) => l.toLowerCase().includes(s))) ?? lines[0] ?? ""
  return oneLine(line).slice(0, 240)
}

/**
 * The pages of the project's live processed documents (optionally one document) that match the agent's
 * key terms, best first (ties: document name, page number). Empty when the agent has no key terms.
 */
export const relevantPages = (
  db: Conn,
  input: {
    readonly projectId: string
    readonly agent: RetrievalAgent
    readonly documentId?: string | undefined
    readonly limit?: number | undefined
  },
): Effect.Effect<Array<RelevantPage>> => {
  const query = keyTermsQuery(input.agent)
  if (query === "") return Effect.succeed([])
  const limit = Math.max(1, Math.floor(input.limit ?? 20))
  return Effect.map(
    rankPagesOfProject(db, { projectId: input.projectId, query, documentId: input.documentId, limit }),
    (rows) =>
      rows.map((r) => {
        const snippet = oneLine(r.snippet ?? "")
        return {
          documentId: r.document_id,
          documentName: r.document_name,
          pageNumber: r.page_number,
          score: Number(r.score),
          snippet: snippet === "" ? firstMatchingLine(r.text, query) : snippet.slice(0, 400),
        }
      }),
  )
}

/**
 * The numbers of the pages of a large document to give the extractor for an agent: the 8 best ranked pages
 * (topped up with the leading pages when fewer match) plus page 1 and the last page, where totals and
 * signatures often are.
 */
export const pageNumbersForExtraction = (
  db: Conn,
  input: { readonly agent: RetrievalAgent; readonly documentId: string; readonly size: DocumentSize },
): Effect.Effect<Set<number>> =>
  Effect.gen(function* () {
    const query = keyTermsQuery(input.agent)
    const ranked = query === "" ? [] : yield* rankedPageNumbers(db, input.documentId, query, RANKED_PAGES)
    const chosen = new Set<number>(ranked)
    if (chosen.size < RANKED_PAGES) {
      const leading = yield* leadingPageNumbers(db, input.documentId, ranked, RANKED_PAGES - chosen.size)
      for (const n of leading) chosen.add(n)
    }
    chosen.add(1)
    if (input.size.last !== null) chosen.add(input.size.last)
    return chosen
  })

/**
 * The pages of one document to give the extractor for an agent, in page order with their full text: all
 * of a small document (≤ 12 pages and ≤ 60,000 characters), else the pages `pageNumbersForExtraction` picks.
 */
export const pagesForExtraction = (
  db: Conn,
  input: { readonly agent: RetrievalAgent; readonly documentId: string; readonly documentName: string },
): Effect.Effect<Array<PageText>> =>
  Effect.gen(function* () {
    // The size, and every page when the document is small enough to go whole: one read for it.
    const read = yield* pagesWithin(db, input.documentId, WHOLE_DOCUMENT_MAX_CHARS)
    const { size } = read
    if (size.pages === 0) return []
    const pages =
      size.pages <= WHOLE_DOCUMENT_MAX_PAGES && read.pages !== undefined
        ? read.pages
        : yield* pageTexts(db, input.documentId, [
            ...(yield* pageNumbersForExtraction(db, { ...input, size })),
          ])
    return pages.map((p) => pageTextOf(input, p))
  })

/** A stored page as the extractor reads it: its text, and its tables (with the blocks placing them) when it has some. */
export const pageTextOf = (
  document: { readonly documentId: string; readonly documentName: string },
  p: Effect.Effect.Success<ReturnType<typeof pageTexts>>[number],
): PageText => ({
  documentId: document.documentId,
  documentName: document.documentName,
  pageNumber: p.number,
  text: p.text,
  ...(p.tables.length > 0 ? { tables: p.tables, blocks: p.blocks } : {}),
})
