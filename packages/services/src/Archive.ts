/**
 * Archiving documents. A requested archival (POST …/archive/, or the daily sweep for projects with
 * `auto_archive_after_days`) sets `archive_requested_at` and enqueues an `archive` task; the task moves the
 * document into the project's archive project: a project of the same organisation, created on first use,
 * named "<project name> (archive)", with `archived_at` set and `archive_of_project_id` pointing back. It
 * stays retrievable (GET /projects/{id}/) but is not listed among live projects and takes no uploads.
 */

import type { Conn, Database, TaskRow } from "@dxs/db"
import { enqueue } from "@dxs/db/TaskQueue"
import { documentsLeftProject } from "@dxs/pipeline/run/Runs"
import { Effect } from "effect"
import { type Kysely, sql, type Transaction } from "kysely"
import { DOCUMENT_DIMENSION } from "./Projects.ts"
import { syncTagDimensions } from "./TagDimensions.ts"

export const ARCHIVE_TASK = "archive"
export const ARCHIVE_SWEEP_TASK = "archive-sweep"

export const archiveTaskKey = (documentId: string) => `archive:${documentId}`

/** What a background handler gets besides its task (a structural subset of the worker's TaskContext). */
export interface BackgroundTaskContext {
  readonly workerId: string
  readonly db: Kysely<Database>
  readonly signal: AbortSignal
  readonly complete: (trx: Transaction<Database>) => Promise<void>
}

export type BackgroundTaskHandler = (task: TaskRow, ctx: BackgroundTaskContext) => Promise<void>

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
export const scheduleArchiveSweep = async (conn: Conn) => {
  const next = await sql<{ at: Date; day: string }>`
    select (date_trunc('day', now() at time zone 'utc') + interval '1 day') at time zone 'utc' as at,
           to_char(date_trunc('day', now() at time zone 'utc') + interval '1 day', 'YYYY-MM-DD') as day
  `.execute(conn)
  const { at, day } = next.rows[0]!
  return enqueue(conn, {
    kind: ARCHIVE_SWEEP_TASK,
    idempotencyKey: `${ARCHIVE_SWEEP_TASK}:${day}`,
    payload: { day },
    runAfter: at,
  })
}

/**
 * Requests archival of every document of a live project with `auto_archive_after_days` that was uploaded
 * more than that many days ago and is not already requested; enqueues their archive tasks. Returns their ids.
 */
export const requestDueArchivals = async (trx: Conn): Promise<ReadonlyArray<string>> => {
  const due = await sql<{ id: string; project_id: string }>`
    update documents d set archive_requested_at = now()
    from projects p
    where d.project_id = p.id
      and p.archived_at is null
      and p.auto_archive_after_days is not null
      and d.archive_requested_at is null
      and d.uploaded_at < now() - make_interval(days => p.auto_archive_after_days)
    returning d.id, d.project_id
  `.execute(trx)
  for (const d of due.rows) await enqueueArchive(trx, d.id, d.project_id)
  return due.rows.map((d) => d.id)
}

/** The archive project of a live project, created (with its system Document dimension) on first use. */
const archiveProjectOf = async (trx: Transaction<Database>, sourceId: string) => {
  const existing = await trx
    .selectFrom("projects")
    .select("id")
    .where("archive_of_project_id", "=", sourceId)
    .orderBy("created_at")
    .executeTakeFirst()
  if (existing) return existing.id
  const source = await trx
    .selectFrom("projects")
    .selectAll()
    .where("id", "=", sourceId)
    .executeTakeFirstOrThrow()
  const created = await trx
    .insertInto("projects")
    .values({
      organization_id: source.organization_id,
      name: `${source.name} (archive)`,
      description: `Archived documents of the project "${source.name}"`,
      reference_date: source.reference_date,
      auto_archive_after_days: null,
      project_modules: JSON.stringify(source.project_modules ?? {}),
      target_output_schema: null,
      archived_at: sql<Date>`now()`,
      archive_of_project_id: sourceId,
    })
    .returning("id")
    .executeTakeFirstOrThrow()
  await trx
    .insertInto("dimensions")
    .values({
      project_id: created.id,
      name: DOCUMENT_DIMENSION,
      description: "One value per document",
      source: "DOCUMENT",
    })
    .execute()
  return created.id
}

/**
 * Moves one document (requested for archival) into its project's archive project, with its tags; both
 * projects' TAG dimensions follow. Returns the archive project's id, or undefined when there was nothing to
 * do (the document is gone, not requested, or already in an archived project).
 */
export const archiveDocument = async (trx: Transaction<Database>, documentId: string) => {
  const doc = await trx
    .selectFrom("documents")
    .select("project_id")
    .where("id", "=", documentId)
    .executeTakeFirst()
  if (!doc) return undefined
  // The project first (as every document change does), then the document.
  const project = await trx
    .selectFrom("projects")
    .select(["id", "archived_at"])
    .where("id", "=", doc.project_id)
    .forUpdate()
    .executeTakeFirst()
  const locked = await trx
    .selectFrom("documents")
    .select(["project_id", "archive_requested_at"])
    .where("id", "=", documentId)
    .forUpdate()
    .executeTakeFirst()
  if (!project || project.archived_at !== null || !locked) return undefined
  if (locked.project_id !== project.id || locked.archive_requested_at === null) return undefined
  const archiveId = await archiveProjectOf(trx, project.id)
  await trx.updateTable("documents").set({ project_id: archiveId }).where("id", "=", documentId).execute()
  await documentsLeftProject(trx, project.id)
  // Its unfinished parse task now counts for the project the document is in.
  await trx
    .updateTable("tasks")
    .set({ project_id: archiveId })
    .where("kind", "=", "parse")
    .where("status", "in", ["pending", "running"])
    .where(sql<boolean>`payload->>'document_id' = ${documentId}`)
    .execute()
  await Effect.runPromise(syncTagDimensions(trx, project.id))
  await Effect.runPromise(syncTagDimensions(trx, archiveId))
  return archiveId
}

const documentIdOf = (task: TaskRow) => {
  const id = (task.payload as { readonly document_id?: unknown }).document_id
  return typeof id === "string" ? id : undefined
}

/** The `archive` task: moves the document, completing the task in the same transaction. */
export const archiveTaskHandler: BackgroundTaskHandler = async (task, ctx) => {
  const documentId = documentIdOf(task)
  await ctx.db.transaction().execute(async (trx) => {
    if (documentId !== undefined) await archiveDocument(trx, documentId)
    await ctx.complete(trx)
  })
}

/**
 * The daily `archive-sweep` task: first makes sure the next day's sweep is queued (so the chain survives a
 * failing run), then requests archival of the documents that are due.
 */
export const archiveSweepTaskHandler: BackgroundTaskHandler = async (_task, ctx) => {
  await scheduleArchiveSweep(ctx.db)
  await ctx.db.transaction().execute(async (trx) => {
    await requestDueArchivals(trx)
    await ctx.complete(trx)
  })
}
