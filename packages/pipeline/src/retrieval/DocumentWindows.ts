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
import { pageNumbersForExtraction, pageTextOf, type RetrievalAgent } from "./Retrieval.ts"

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
    const pages: Array<PageText> = (yield* pageTexts(db, input.documentId, numbers)).map((p) =>
      pageTextOf(input, p),
    )
    return pageWindows(
      pages.map((page) => ({ page, tokens: pageTokens(page.text.length) })),
      input.tokenBudget,
    ).map((window) => window.map((w) => w.page))
  })
