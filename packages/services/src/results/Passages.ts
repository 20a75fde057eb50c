/**
 * The two look-ups behind results: an agent's relevant pages, and where an extraction's passage is on
 * its page.
 */
import type { Conn, PageLayoutItem } from "@dxs/db"
import { withDb } from "@dxs/db"
import * as AgentsRepo from "@dxs/db/repositories/Agents"
import * as DocumentsRepo from "@dxs/db/repositories/Documents"
import * as PagesRepo from "@dxs/db/repositories/Pages"
import * as ResultsRepo from "@dxs/db/repositories/Results"
import { citedCellBoxes } from "@dxs/domain/CellCitation"
import type { BoundingBox, BoundingBoxesResponse, RelevantPagesResponse } from "@dxs/domain/contract/Result"
import { relevantPages as rankPages } from "@dxs/pipeline/retrieval/Retrieval"
import { Effect } from "effect"
import { CurrentOrganization } from "../CurrentOrganization.ts"
import { NotFound } from "../Errors.ts"
import { checkProject } from "../Projects.ts"
import { invalid } from "./Lists.ts"

export const RELEVANT_PAGES_DEFAULT_LIMIT = 20
export const RELEVANT_PAGES_MAX_LIMIT = 100

const tokensOf = (text: string): Array<string> =>
  text
    .normalize("NFKC")
    .toLowerCase()
    .match(/[\p{L}\p{N}]+/gu) ?? []

/** Share of the passage's words a partial match must cover to count. */
const PARTIAL_MATCH_SHARE = 0.6

/**
 * The layout items that hold `passage`, as one box per line: the passage's words are matched against the
 * words of consecutive items (case, spacing and punctuation ignored). When the page's words differ a
 * little from the passage, the longest common run of words counts if it covers most of the passage.
 */
export const locatePassage = (passage: string, layout: ReadonlyArray<PageLayoutItem>): Array<BoundingBox> => {
  const want = tokensOf(passage)
  if (want.length === 0 || layout.length === 0) return []
  const flat: Array<{ readonly token: string; readonly item: number }> = []
  layout.forEach((item, i) => {
    for (const token of tokensOf(item.text ?? "")) flat.push({ token, item: i })
  })
  let start = -1
  let length = 0
  for (let i = 0; i + want.length <= flat.length && start < 0; i++) {
    let j = 0
    while (j < want.length && flat[i + j]!.token === want[j]) j++
    if (j === want.length) {
      start = i
      length = want.length
    }
  }
  if (start < 0 && want.length > 1) {
    // Longest common run of words (dynamic programming over two rolling rows).
    let previous = new Array<number>(want.length + 1).fill(0)
    for (let i = 1; i <= flat.length; i++) {
      const current = new Array<number>(want.length + 1).fill(0)
      for (let j = 1; j <= want.length; j++) {
        if (flat[i - 1]!.token !== want[j - 1]) continue
        current[j] = previous[j - 1]! + 1
        if (current[j]! > length) {
          length = current[j]!
          start = i - length
        }
      }
      previous = current
    }
    if (length < Math.max(2, Math.ceil(want.length * PARTIAL_MATCH_SHARE))) return []
  }
  if (start < 0) return []
  const items = [...new Set(flat.slice(start, start + length).map((t) => t.item))].map((i) => layout[i]!)
  const boxes: Array<BoundingBox> = []
  for (const item of items) {
    const last = boxes[boxes.length - 1]
    const sameLine =
      last !== undefined &&
      Math.abs(last.y + last.height / 2 - (item.y + item.height / 2)) <=
        Math.max(last.height, item.height) / 2
    if (last !== undefined && sameLine) {
      const x = Math.min(last.x, item.x)
      const y = Math.min(last.y, item.y)
      boxes[boxes.length - 1] = {
        x,
        y,
        width: Math.max(last.x + last.width, item.x + item.width) - x,
        height: Math.max(last.y + last.height, item.y + item.height) - y,
        text: `${last.text} ${item.text}`,
      }
    } else boxes.push({ x: item.x, y: item.y, width: item.width, height: item.height, text: item.text })
  }
  return boxes
}

/** The bounding boxes of these extractions (their rows, then the pages they cite, at once); absent: not found. */
const boxesOf = (db: Conn, rows: ReadonlyArray<ResultsRepo.ExtractionPassage>) =>
  Effect.map(
    PagesRepo.pageLayouts(
      db,
      rows.flatMap((r) =>
        r.document_id !== null && r.page_number !== null
          ? [{ documentId: r.document_id, pageNumber: r.page_number }]
          : [],
      ),
    ),
    (pages) => {
      const pageOf = new Map(pages.map((p) => [`${p.document_id}/${p.number}`, p]))
      return new Map(
        rows.map((e): [string, BoundingBoxesResponse] => {
          const nowhere: BoundingBoxesResponse = {
            extraction_id: e.id,
            document_id: e.document_id,
            page_number: e.page_number,
            page_width: null,
            page_height: null,
            unit: null,
            boxes: [],
          }
          const page = pageOf.get(`${e.document_id}/${e.page_number}`)
          if (e.document_id === null || e.page_number === null || !page) return [e.id, nowhere]
          return [
            e.id,
            {
              ...nowhere,
              page_width: page.width,
              page_height: page.height,
              unit: page.unit,
              // A value from a table cell is shown by its cell.
              boxes:
                citedCellBoxes(e.relevant_passage, e.value, page.tables) ??
                locatePassage(e.relevant_passage, page.layout ?? []),
            },
          ]
        }),
      )
    },
  )

/** The pages of the project's live processed documents that match the agent's key terms, best first. */
export const relevantPages = (
  projectId: string,
  agentId: string,
  options: { readonly document_id?: string | undefined; readonly limit?: number | undefined },
) =>
  Effect.gen(function* () {
    const org = yield* CurrentOrganization
    const limit = options.limit ?? RELEVANT_PAGES_DEFAULT_LIMIT
    if (!Number.isInteger(limit) || limit < 1 || limit > RELEVANT_PAGES_MAX_LIMIT)
      return yield* invalid("limit", `must be a whole number from 1 to ${RELEVANT_PAGES_MAX_LIMIT}`)
    return yield* withDb((db) =>
      Effect.gen(function* () {
        yield* checkProject(db, org.id, projectId)
        const agent = yield* AgentsRepo.findAgent(db, projectId, agentId)
        if (!agent) return yield* NotFound.of("Agent", agentId)
        if (options.document_id !== undefined) {
          const documentId = options.document_id
          const document = yield* DocumentsRepo.findDocumentInProject(db, projectId, documentId)
          if (!document) return yield* NotFound.of("Document", documentId)
        }
        const pages = yield* rankPages(db, {
          projectId,
          agent: {
            name: agent.name,
            extractionInstructions: agent.extraction_instructions,
            examples: agent.examples,
          },
          documentId: options.document_id,
          limit,
        })
        return {
          agent_id: agentId,
          pages: pages.map((p) => ({
            document_id: p.documentId,
            document_name: p.documentName,
            page_number: p.pageNumber,
            score: p.score,
            snippet: p.snippet,
          })),
        } satisfies RelevantPagesResponse
      }),
    )
  })

/** Where an extraction's passage is on its page: boxes around the layout items that hold it. */
export const boundingBoxes = (projectId: string, extractionId: string) =>
  Effect.gen(function* () {
    const org = yield* CurrentOrganization
    return yield* withDb((db) =>
      Effect.gen(function* () {
        yield* checkProject(db, org.id, projectId)
        const boxes = yield* boxesOf(
          db,
          yield* ResultsRepo.extractionPassages(db, [extractionId], { projectId }),
        )
        const found = boxes.get(extractionId)
        if (!found) return yield* NotFound.of("Extraction", extractionId)
        return found
      }),
    )
  })

/** `boundingBoxes` of several extractions of the organisation at once (two statements); absent: not its. */
export const boundingBoxesFor = (extractionIds: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const org = yield* CurrentOrganization
    if (extractionIds.length === 0) return new Map<string, BoundingBoxesResponse>()
    return yield* withDb((db) =>
      Effect.flatMap(ResultsRepo.extractionPassages(db, extractionIds, { organizationId: org.id }), (rows) =>
        boxesOf(db, rows),
      ),
    )
  })
