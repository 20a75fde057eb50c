/**
 * The parse of a document version: its task (one key format, `parseTaskKey`) and its outcome on the
 * document row. Driver errors are defects.
 */
import { DocumentEvent, transitionDocument, uploadedDocument } from "@dxs/domain/DocumentState"
import { Effect, Either } from "effect"
import { sql } from "kysely"
import type { Conn } from "../Db.ts"
import { enqueue, hasUnfinishedTask } from "../TaskQueue.ts"
import { PARSE_TASK, parseTaskKey } from "./TaskKinds.ts"

/**
 * The status the document state machine gives a Pending version whose parse cannot complete. The queries
 * below write it without reading the row first and check themselves that it is Pending at the version the
 * parse was for; the status does not depend on which version that is.
 */
const parseFailedStatus = Either.getOrThrow(
  transitionDocument(uploadedDocument(), DocumentEvent.ParseFailed({ version: uploadedDocument().version })),
).status

// The kind and its key come from the catalogue: one task per document version; a run that finds a document
// Pending with no parse in flight (its task failed for good) enqueues another, keyed by the run as well
// (`failAbandonedParses` matches only the version's own key).
export { PARSE_TASK, parseTaskKey } from "./TaskKinds.ts"

/** Enqueues the parse task of a document version (once per version, or once per run with `runId`). */
export const enqueueParse = (
  conn: Conn,
  documentId: string,
  version: number,
  projectId: string,
  runId?: string,
): Effect.Effect<void> =>
  Effect.promise(() =>
    enqueue(conn, {
      kind: PARSE_TASK,
      idempotencyKey: parseTaskKey(documentId, version, runId),
      payload: { document_id: documentId, version },
      projectId,
    }),
  )

/** True when a parse task of the project other than `taskId` is pending or running. */
export const parseInFlight = (trx: Conn, projectId: string, taskId: string): Effect.Effect<boolean> =>
  Effect.promise(() => hasUnfinishedTask(trx, projectId, PARSE_TASK, taskId))

/** Moves the unfinished parse task of a document to the project the document is now in. */
export const moveParseTasks = (trx: Conn, documentId: string, projectId: string): Effect.Effect<void> =>
  Effect.promise(() =>
    trx
      .updateTable("tasks")
      .set({ project_id: projectId })
      .where("kind", "=", PARSE_TASK)
      .where("status", "in", ["pending", "running"])
      .where(sql<boolean>`payload->>'document_id' = ${documentId}`)
      .execute(),
  )

/**
 * Sets a still Pending document version Failed with `reason`, only while worker `workerId` holds the task
 * (a worker that lost its lease must not write). True when it did.
 */
export const markParseFailed = (
  db: Conn,
  taskId: string,
  workerId: string,
  documentId: string,
  version: number,
  reason: string,
): Effect.Effect<boolean> =>
  Effect.promise(async () => {
    const r = await db
      .updateTable("documents")
      .set({ status: parseFailedStatus, failure_reason: reason, page_count: 0, summary: "", metadata: "" })
      .where("id", "=", documentId)
      .where("version", "=", version)
      .where("status", "=", "Pending")
      .where((eb) =>
        eb.exists(
          eb
            .selectFrom("tasks")
            .select("tasks.id")
            .where("tasks.id", "=", taskId)
            .where("tasks.status", "=", "running")
            .where("tasks.locked_by", "=", workerId),
        ),
      )
      .executeTakeFirst()
    return r.numUpdatedRows > 0n
  })

/**
 * Sets Failed every Pending document whose current version's parse task (`parseTaskKey`) has failed for
 * good; returns how many documents changed.
 */
export const failAbandonedParses = (db: Conn): Effect.Effect<number> =>
  Effect.promise(async () => {
    const r = await sql`
      update documents d set
        status = ${parseFailedStatus},
        failure_reason = 'parsing could not complete: ' || coalesce(t.last_error, 'the task failed'),
        page_count = 0
      from tasks t
      where t.kind = ${PARSE_TASK}
        and t.status = 'failed'
        and t.idempotency_key = 'parse:' || d.id::text || ':' || d.version::text
        and d.status = 'Pending'
    `.execute(db)
    return Number(r.numAffectedRows ?? 0n)
  })

/** A parse's outcome on its document (the pages are written apart). */
export type ParseOutcomeRow =
  | { readonly _tag: "Failed"; readonly status: string; readonly failure_reason: string }
  | {
      readonly _tag: "Parsed"
      readonly status: string
      readonly page_count: number
      readonly summary: string
      readonly metadata: string
    }

export const recordParseOutcome = (
  trx: Conn,
  documentId: string,
  outcome: ParseOutcomeRow,
): Effect.Effect<void> =>
  Effect.promise(() =>
    trx
      .updateTable("documents")
      .set(
        outcome._tag === "Failed"
          ? {
              status: outcome.status,
              failure_reason: outcome.failure_reason,
              page_count: 0,
              summary: "",
              metadata: "",
            }
          : {
              status: outcome.status,
              failure_reason: null,
              page_count: outcome.page_count,
              last_parsed_at: sql<Date>`now()`,
              summary: outcome.summary,
              metadata: outcome.metadata,
            },
      )
      .where("id", "=", documentId)
      .execute(),
  )
