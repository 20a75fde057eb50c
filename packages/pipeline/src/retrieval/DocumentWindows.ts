/**
 * The pages of one document request, cut into windows that fit the request's budget. A document that fits
 * goes whole, in one window; a larger one goes as the pages retrieval chooses for the request's agents
 * (each agent's best pages, see `pagesForExtraction`), in page order, cut into consecutive windows.
 */
import type { Conn } from "@dxs/db"
import { pageTexts, pageTotals } from "@dxs/db/repositories/Pages"
import { estimateTokens, pageTokens, pageWindows } from "@dxs/domain/ModelRequests"
import { Effect } from "effect"
import type { PageText } from "../llm/LanguageModel.ts"
import { pagesForExtraction, type RetrievalAgent } from "./Retrieval.ts"

export const documentWindows = (
  db: Conn,
  input: {
    readonly agents: ReadonlyArray<RetrievalAgent>
    readonly documentId: string
    readonly documentName: string
    /** Tokens the pages of one request may take. */
    readonly tokenBudget: number
  },
): Effect.Effect<ReadonlyArray<ReadonlyArray<PageText>>> =>
  Effect.gen(function* () {
    const size = yield* pageTotals(db, input.documentId)
    if (size.pages === 0) return []
    let pages: Array<PageText>
    if (estimateTokens(Number(size.chars)) + pageTokens(0) * size.pages <= input.tokenBudget) {
      const all = yield* pageTexts(db, input.documentId)
      pages = all.map((p) => ({
        documentId: input.documentId,
        documentName: input.documentName,
        pageNumber: p.number,
        text: p.text,
      }))
    } else {
      const chosen = new Map<number, PageText>()
      for (const agent of input.agents)
        for (const page of yield* pagesForExtraction(db, {
          agent,
          documentId: input.documentId,
          documentName: input.documentName,
        }))
          chosen.set(page.pageNumber, page)
      pages = [...chosen.values()].sort((a, b) => a.pageNumber - b.pageNumber)
    }
    return pageWindows(
      pages.map((page) => ({ page, tokens: pageTokens(page.text.length) })),
      input.tokenBudget,
    ).map((window) => window.map((w) => w.page))
  })
