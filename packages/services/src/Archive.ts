/**
 * Archiving documents. A requested archival (POST …/archive/, or the daily sweep for projects with
 * `auto_archive_after_days`) sets `archive_requested_at` and enqueues an `archive` task; the task moves the
 * document into the project's archive project: a project of the same organisation, created on first use,
 * named "<project name> (archive)", with `archived_at` set and `archive_of_project_id` pointing back. It
 * stays retrievable (GET /projects/{id}/) but is not listed among live projects and takes no uploads.
 */

import { type Conn, type Database, type TaskRow, transactionOn } from "@dxs/db"
import * as Documents from "@dxs/db/repositories/Documents"
import { moveParseTasks } from "@dxs/db/repositories/ParseTasks"
import * as Projects from "@dxs/db/repositories/Projects"
import {
  ARCHIVE_SWEEP_TASK,
  ARCHIVE_TASK,
  archiveSweepTaskKey,
  archiveTaskKey,
} from "@dxs/db/repositories/TaskKinds"
import { enqueue } from "@dxs/db/TaskQueue"
import { documentsLeftProject } from "@dxs/pipeline/run/Runs"
import { Effect } from "effect"
import type { Kysely, Transaction } from "kysely"
import { syncTagDimensions } from "./TagDimensions.ts"

export { ARCHIVE_SWEEP_TASK, ARCHIVE_TASK, archiveTaskKey } from "@dxs/db/repositories/TaskKinds"

/** What a background handler gets besides its task (a structural subset of the worker's TaskContext). */
export interface BackgroundTaskContext {
  readonly workerId: string
  readonly db: Kysely<Database>
  readonly complete: (trx: Transaction<Database>) => Promise<void>
}

/**
 * A background task handler of the services, an Effect the worker runs for its kind: its failure, or a
 * defect such as a lost lease, is the attempt's.
 */
export type BackgroundTaskHandler = (
  task: TaskRow,
  ctx: BackgroundTaskContext,
) => Effect.Effect<void, unknown>

/** Enqueues the archive task of a document (idempotent: one per document). */
export const enqueueArchive = (conn: Conn, documentId: string, projectId: string) =>
  enqueue(conn, {
    kind: ARCHIVE_TASK,
    idempotencyKey: archiveTaskKey(documentId),
    payload: { document_id: documentId },
    projectId,
  })

/**
 * Enqueues the next daily sweep, due at the next midnight UTC by the database clock, with the key
 * `archive-sweep:{YYYY-MM-DD}` of that day: every process may call it, one task per day results.
 */
export const scheduleArchiveSweep = (conn: Conn) =>
  Effect.flatMap(Documents.nextUtcMidnight(conn), ({ at, day }) =>
    Effect.promise(() =>
      enqueue(conn, {
        kind: ARCHIVE_SWEEP_TASK,
        idempotencyKey: archiveSweepTaskKey(day),
        payload: { day },
        runAfter: at,
      }),
    ),
  )

/**
 * Requests archival of every document of a live project with `auto_archive_after_days` that was uploaded
 * more than that many days ago and is not already requested; enqueues their archive tasks. Returns their ids.
 */
export const requestDueArchivals = (trx: Conn): Effect.Effect<ReadonlyArray<string>> =>
  Effect.gen(function* () {
    const due = yield* Documents.requestDueArchivals(trx)
    for (const d of due) yield* Effect.promise(() => enqueueArchive(trx, d.id, d.project_id))
    return due.map((d) => d.id)
  })

/** The archive project of a live project, created (with its system Document dimension) on first use. */
const archiveProjectOf = (trx: Transaction<Database>, sourceId: string) =>
  Effect.flatMap(Projects.findArchiveProject(trx, sourceId), (found) =>
    found === undefined ? Projects.insertArchiveProject(trx, sourceId) : Effect.succeed(found),
  )

/**
 * Moves one document (requested for archival) into its project's archive project, with its tags; both
 * projects' TAG dimensions follow. Returns the archive project's id, or undefined when there was nothing to
 * do (the document is gone, not requested, or already in an archived project).
 */
export const archiveDocument = (trx: Transaction<Database>, documentId: string) =>
  Effect.gen(function* () {
    const doc = yield* Documents.findDocument(trx, documentId)
    if (!doc) return undefined
    // The project first (as every document change does), then the document.
    const project = yield* Projects.lockProjectState(trx, doc.project_id)
    const locked = yield* Documents.lockArchivalState(trx, documentId)
    if (!project || project.archived_at !== null || !locked) return undefined
    if (locked.project_id !== project.id || locked.archive_requested_at === null) return undefined
    const archiveId = yield* archiveProjectOf(trx, project.id)
    yield* Documents.moveDocument(trx, documentId, archiveId)
    yield* documentsLeftProject(trx, project.id)
    // Its unfinished parse task now counts for the project the document is in.
    yield* moveParseTasks(trx, documentId, archiveId)
    yield* syncTagDimensions(trx, project.id)
    yield* syncTagDimensions(trx, archiveId)
    return archiveId
  })

const documentIdOf = (task: TaskRow) => {
  const id = (task.payload as { readonly document_id?: unknown }).document_id
  return typeof id === "string" ? id : undefined
}

/** The `archive` task: moves the document, completing the task in the same transaction. */
export const archiveTaskHandler: BackgroundTaskHandler = (task, ctx) => {
  const documentId = documentIdOf(task)
  return transactionOn(ctx.db, (trx) =>
    Effect.gen(function* () {
      if (documentId !== undefined) yield* archiveDocument(trx, documentId)
      yield* Effect.promise(() => ctx.complete(trx))
    }),
  )
}

/**
 * The daily `archive-sweep` task: first makes sure the next day's sweep is queued (so the chain survives a
 * failing run), then requests archival of the documents that are due.
 */
export const archiveSweepTaskHandler: BackgroundTaskHandler = (_task, ctx) =>
  Effect.zipRight(
    scheduleArchiveSweep(ctx.db),
    transactionOn(ctx.db, (trx) =>
      Effect.zipRight(
        requestDueArchivals(trx),
        Effect.promise(() => ctx.complete(trx)),
      ),
    ),
  )
