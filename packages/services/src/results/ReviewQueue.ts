/**
 * The review queue (beyond the contract): the project's documents with current values, those with a value
 * requiring attention first, then the least confident first, a page at a time (a keyset cursor), with the
 * project's totals (documents, and those whose every value has a review or a value set by hand).
 */
import { withDb } from "@dxs/db"
import * as ProjectsRepo from "@dxs/db/repositories/Projects"
import * as ResultsRepo from "@dxs/db/repositories/Results"
import type { ReviewQueue } from "@dxs/domain/contract/Result"
import { Effect, Schema } from "effect"
import { CurrentOrganization } from "../CurrentOrganization.ts"
import { NotFound } from "../Errors.ts"
import { decodeCursor, encodeCursor } from "../Paging.ts"
import { checkPage, invalid } from "./Lists.ts"

export const REVIEW_QUEUE_DEFAULT_LIMIT = 50
export const REVIEW_QUEUE_MAX_LIMIT = 200

export interface ReviewQueueQuery {
  readonly limit?: number | undefined
  /** Where the page starts, from a `next` link. */
  readonly cursor?: string | undefined
}

/** The key of a document in the queue, as a cursor carries it. */
const QueueCursorKey = Schema.Tuple(Schema.Literal(0, 1), Schema.Number, Schema.UUID)

export const reviewQueue = (projectId: string, query: ReviewQueueQuery) =>
  Effect.gen(function* () {
    const org = yield* CurrentOrganization
    const { limit } = yield* checkPage(query.limit, undefined, {
      limit: REVIEW_QUEUE_DEFAULT_LIMIT,
      max: REVIEW_QUEUE_MAX_LIMIT,
    })
    const start = query.cursor === undefined ? undefined : yield* decodeCursor(QueueCursorKey, query.cursor)
    if (start !== undefined && start.after === undefined)
      return yield* invalid("cursor", "must be a cursor from this list's next link")
    return yield* withDb((db) =>
      Effect.gen(function* () {
        const project = yield* ProjectsRepo.findProjectPresence(db, org.id, projectId)
        if (project === undefined) return yield* NotFound.of("Project", projectId)
        const totals = yield* ResultsRepo.reviewTotals(db, projectId)
        const page = yield* ResultsRepo.reviewQueuePage(db, projectId, { limit, after: start?.after })
        const position = (start?.position ?? 0) + page.rows.length
        return {
          total_documents: totals.documents,
          reviewed_documents: totals.reviewed,
          next:
            page.next === undefined
              ? null
              : `?limit=${limit}&cursor=${encodeCursor({ after: page.next, position })}`,
          documents: page.rows.map((r) => ({
            document_id: r.documentId,
            file_name: r.fileName,
            values: r.values,
            reviewed_values: r.reviewed,
            requires_attention: r.requiresAttention,
            least_confidence: r.leastConfidence,
            reviewed: r.reviewed === r.values,
          })),
        } satisfies ReviewQueue
      }),
    )
  })
