/**
 * The review queue (beyond the contract): the project's documents with current values, those with a value
 * requiring attention first, then the least confident first, a page at a time (a keyset cursor), with the
 * project's totals (documents, and those whose every value has a review or a value set by hand); or the
 * documents next to one of them (after it, or before it nearest first), which the review screen follows.
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
  /** Only the documents after this one in the queue (a document without values: from the start). */
  readonly after_document?: string | undefined
  /** Only the documents before this one in the queue, nearest first. */
  readonly before_document?: string | undefined
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
    const given = [query.cursor, query.after_document, query.before_document].filter((p) => p !== undefined)
    if (given.length > 1)
      return yield* invalid(
        query.cursor === undefined ? "before_document" : "cursor",
        "cannot be given with cursor, after_document or before_document",
      )
    const neighbour =
      query.after_document !== undefined
        ? { documentId: query.after_document, direction: "after" as const }
        : query.before_document !== undefined
          ? { documentId: query.before_document, direction: "before" as const }
          : undefined
    return yield* withDb((db) =>
      Effect.gen(function* () {
        const project = yield* ProjectsRepo.findProjectPresence(db, org.id, projectId)
        if (project === undefined) return yield* NotFound.of("Project", projectId)
        const totals = yield* ResultsRepo.reviewTotals(db, projectId)
        const page =
          neighbour === undefined
            ? yield* ResultsRepo.reviewQueuePage(db, projectId, { limit, after: start?.after })
            : {
                rows: yield* ResultsRepo.reviewQueueNeighbours(
                  db,
                  projectId,
                  neighbour.documentId,
                  neighbour.direction,
                  limit,
                ),
                next: undefined,
              }
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
