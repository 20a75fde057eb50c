/**
 * The pages of one document request, cut into windows that fit the request's budget. A document that fits
 * goes whole, in one window; a larger one goes as the pages retrieval chooses for the request's agents
 * (each agent's best pages, see `pagesForExtraction`), in page order, cut into consecutive windows.
 */
import type { Conn } from "@dxs/db"
import { type PagesWithin, pagesWithin, pageTexts } from "@dxs/db/repositories/Pages"
import { charsWithin, estimateTokens, pageTokens, pageWindows } from "@dxs/domain/ModelRequests"
import { Effect } from "effect"
import type { PageText } from "../llm/LanguageModel.ts"
import { pageNumbersForExtraction, pageTextOf, type RetrievalAgent } from "./Retrieval.ts"

export const documentWindows = (
  db: Conn,
  input: {
    readonly agents: ReadonlyArray<RetrievalAgent>
    readonly documentId: string
    readonly documentName: string
    /** Tokens the pages of one request may take. */
    readonly tokenBudget: number
    /** The document's size and pages as already read (`pagesWithin`), if they were. */
    readonly read?: PagesWithin | undefined
  },
): Effect.Effect<ReadonlyArray<ReadonlyArray<PageText>>> =>
  Effect.gen(function* () {
    // The size, and every page when the document could fit: one read for a document that goes whole.
    const read = input.read ?? (yield* pagesWithin(db, input.documentId, charsWithin(input.tokenBudget)))
    const { size } = read
    if (size.pages === 0) return []
    // A document that fits goes whole; else the pages retrieval picks for any of the request's agents,
    // read once (the size is known here, so no agent's pick reads it again).
    const fits = estimateTokens(Number(size.chars)) + pageTokens(0) * size.pages <= input.tokenBudget
    let numbers: Array<number> | undefined
    if (!fits) {
      const chosen = new Set<number>()
      for (const agent of input.agents)
        for (const n of yield* pageNumbersForExtraction(db, { agent, documentId: input.documentId, size }))
          chosen.add(n)
      numbers = [...chosen]
    }
    const stored =
      fits && read.pages !== undefined ? read.pages : yield* pageTexts(db, input.documentId, numbers)
    const pages: Array<PageText> = stored.map((p) => pageTextOf(input, p))
    return pageWindows(
      pages.map((page) => ({ page, tokens: pageTokens(page.text.length) })),
      input.tokenBudget,
    ).map((window) => window.map((w) => w.page))
  })
