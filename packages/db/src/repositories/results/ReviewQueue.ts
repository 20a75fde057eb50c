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

interface QueueRow {
  document_id: string
  file_name: string
  values: number
  reviewed: number
  requires_attention: number
  min_confidence: number | null
  queue_rank: number
  queue_confidence: number
}

const toRow = (r: QueueRow): ReviewQueueRow => ({
  documentId: r.document_id,
  fileName: r.file_name,
  values: r.values,
  reviewed: r.reviewed,
  requiresAttention: r.requires_attention,
  leastConfidence: r.min_confidence,
  key: [r.queue_rank, r.queue_confidence, r.document_id],
})

/**
 * Up to `limit` documents of the queue in its order (or backwards), after (before) a key or from the start
 * (end), with their file names: one walk of `review_documents_queue`.
 */
const queueRows = async (
  conn: Conn,
  projectId: string,
  from: ReviewQueueKey | undefined,
  backwards: boolean,
  limit: number,
): Promise<ReadonlyArray<ReviewQueueRow>> => {
  const order = backwards
    ? sql.raw("queue_rank desc, queue_confidence desc, document_id desc")
    : sql.raw("queue_rank, queue_confidence, document_id")
  const { rows } = await sql<QueueRow>`
    select q.document_id, d.file_name, q."values", q.reviewed, q.requires_attention, q.min_confidence,
           q.queue_rank, q.queue_confidence
    from (select * from review_documents r
          where r.project_id = ${projectId}::uuid
            ${from === undefined ? sql`` : sql`and (r.queue_rank, r.queue_confidence, r.document_id) ${sql.raw(backwards ? "<" : ">")} (${from[0]}::smallint, ${from[1]}::real, ${from[2]}::uuid)`}
          order by ${order}
          limit ${sql.lit(Math.floor(limit))}) q
    join documents d on d.id = q.document_id
    order by ${order}`.execute(conn)
  return rows.map(toRow)
}

/** A page of `limit` documents of the queue, from its start or after `after`. */
export const reviewQueuePage = (
  conn: Conn,
  projectId: string,
  window: { readonly limit: number; readonly after?: ReviewQueueKey | undefined },
): Effect.Effect<ReviewQueuePage> =>
  run(async () => {
    const rows = await queueRows(conn, projectId, window.after, false, window.limit + 1)
    const page = rows.slice(0, window.limit)
    return { rows: page, next: rows.length > window.limit ? page[page.length - 1]?.key : undefined }
  })

/**
 * Up to `limit` documents of the queue next to a document: those after it (`after`), or those before it
 * (`before`, nearest first), read through the queue's index from the document's own key. A document not in
 * the queue (no current values) comes before every document of it.
 */
export const reviewQueueNeighbours = (
  conn: Conn,
  projectId: string,
  documentId: string,
  direction: "after" | "before",
  limit: number,
): Effect.Effect<ReadonlyArray<ReviewQueueRow>> =>
  run(async () => {
    const own = await conn
      .selectFrom("review_documents")
      .select(["queue_rank", "queue_confidence", "document_id"])
      .where("document_id", "=", documentId)
      .where("project_id", "=", projectId)
      .executeTakeFirst()
    if (own === undefined)
      return direction === "after" ? await queueRows(conn, projectId, undefined, false, limit) : []
    const key: ReviewQueueKey = [own.queue_rank, own.queue_confidence, own.document_id]
    return await queueRows(conn, projectId, key, direction === "before", limit)
  })

/** The queue's documents and those whose every value is reviewed (a value has a review or a value set by hand). */
export const reviewTotals = (conn: Conn, projectId: string): Effect.Effect<ReviewTotals> =>
  run(async () => {
    const { rows } = await sql<ReviewTotals>`
      select coalesce(sum(documents), 0)::int as documents, coalesce(sum(reviewed), 0)::int as reviewed
      from review_tallies where project_id = ${projectId}::uuid`.execute(conn)
    return rows[0] ?? { documents: 0, reviewed: 0 }
  })
