/**
 * The review queue (part of the results aggregate, see `../Results.ts`): a project's documents with current
 * results, those with a value requiring attention first, then by their least confident value (documents
 * whose values have no confidence last), then by id; kept by the database as results are written (see
 * migration `2026_11_29_0005_review_queue`). A page is read in the order of `review_documents_queue`, from
 * the start or after the key of a document (keyset), so a page deep in a project costs what the first does;
 * the totals come from the project's tally.
 */
import { Effect } from "effect"
import { sql } from "kysely"
import type { Conn } from "../../Db.ts"

const run = <A>(f: () => Promise<A>): Effect.Effect<A> => Effect.promise(f)

/** Where a document is in the queue: its rank (0: a value requires attention), least confidence (2: none) and id. */
export type ReviewQueueKey = readonly [rank: number, confidence: number, documentId: string]

export interface ReviewQueueRow {
  readonly documentId: string
  readonly fileName: string
  readonly values: number
  readonly reviewed: number
  readonly requiresAttention: number
  /** The least confidence of its values, null when none has one. */
  readonly leastConfidence: number | null
  readonly key: ReviewQueueKey
}

export interface ReviewQueuePage {
  readonly rows: ReadonlyArray<ReviewQueueRow>
  /** The key of the page's last row when more follow. */
  readonly next: ReviewQueueKey | undefined
}

export interface ReviewTotals {
  readonly documents: number
  readonly reviewed: number
}

/** A page of `limit` documents of the queue, from its start or after `after`. */
export const reviewQueuePage = (
  conn: Conn,
  projectId: string,
  window: { readonly limit: number; readonly after?: ReviewQueueKey | undefined },
): Effect.Effect<ReviewQueuePage> =>
  run(async () => {
    const after = window.after
    const { rows } = await sql<{
      document_id: string
      file_name: string
      values: number
      reviewed: number
      requires_attention: number
      min_confidence: number | null
      queue_rank: number
      queue_confidence: number
    }>`
      select q.document_id, d.file_name, q."values", q.reviewed, q.requires_attention, q.min_confidence,
             q.queue_rank, q.queue_confidence
      from (select * from review_documents r
            where r.project_id = ${projectId}::uuid
              ${after === undefined ? sql`` : sql`and (r.queue_rank, r.queue_confidence, r.document_id) > (${after[0]}::smallint, ${after[1]}::real, ${after[2]}::uuid)`}
            order by r.queue_rank, r.queue_confidence, r.document_id
            limit ${sql.lit(Math.floor(window.limit) + 1)}) q
      join documents d on d.id = q.document_id
      order by q.queue_rank, q.queue_confidence, q.document_id`.execute(conn)
    const page = rows.slice(0, window.limit).map(
      (r): ReviewQueueRow => ({
        documentId: r.document_id,
        fileName: r.file_name,
        values: r.values,
        reviewed: r.reviewed,
        requiresAttention: r.requires_attention,
        leastConfidence: r.min_confidence,
        key: [r.queue_rank, r.queue_confidence, r.document_id],
      }),
    )
    return { rows: page, next: rows.length > window.limit ? page[page.length - 1]?.key : undefined }
  })

/** The queue's documents and those whose every value is reviewed (a value has a review or a value set by hand). */
export const reviewTotals = (conn: Conn, projectId: string): Effect.Effect<ReviewTotals> =>
  run(async () => {
    const row = await conn
      .selectFrom("review_tallies")
      .select(["documents", "reviewed"])
      .where("project_id", "=", projectId)
      .executeTakeFirst()
    return { documents: row?.documents ?? 0, reviewed: row?.reviewed ?? 0 }
  })
