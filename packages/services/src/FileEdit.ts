/**
 * File-edit operations: a template (`.xlsx` or `.docx`) filled from a project's resolved results by a
 * background task (`packages/pipeline/src/fileedit`); one job per project, its state, the filled file, and
 * cancelling or clearing it. The placeholder rules live in `@dxs/domain/FileEdit`.
 */
import { randomUUID } from "node:crypto"
import * as fs from "node:fs/promises"
import type { Readable } from "node:stream"
import { BlobStore, type BlobStoreShape, Db, transaction, undoUnlessCommitted, withDb } from "@dxs/db"
import * as FileEdits from "@dxs/db/repositories/FileEdits"
import { type FileEditStatus, idleFileEditStatus } from "@dxs/domain/contract/FileEdit"
import { fileEditBlobKey } from "@dxs/pipeline/fileedit/FillTask"
import {
  checkTemplateContent,
  TEMPLATE_CONTENT_TYPES,
  templateFormatOf,
} from "@dxs/pipeline/fileedit/Template"
import { Context, Effect } from "effect"
import { CurrentOrganization } from "./CurrentOrganization.ts"
import { documentFileName, type UploadedFile } from "./Documents.ts"
import { BadRequest, Conflict, NotFound, PayloadTooLarge, UnsupportedMediaType } from "./Errors.ts"
import { checkLiveProject, checkProject } from "./Projects.ts"

/** The largest template accepted (config `FILE_EDIT_MAX_BYTES`). */
export class FileEditLimits extends Context.Reference<FileEditLimits>()("@dxs/services/FileEditLimits", {
  defaultValue: (): { readonly maxTemplateBytes: number } => ({ maxTemplateBytes: 20 * 1024 * 1024 }),
}) {}

/** The filled file, ready to stream. */
export interface FilledFile {
  readonly stream: Readable
  readonly fileName: string
  readonly contentType: string
  readonly size: number
}

const downloadPath = (projectId: string) => `/api/v1/projects/${projectId}/file-edit/download/`

const iso = (d: Date | null) => (d === null ? null : d.toISOString())

const toStatus = (row: FileEdits.FileEditJobRow): FileEditStatus => ({
  state: row.state,
  template_name: row.template_name,
  progress: { completed: row.progress_completed, total: row.progress_total },
  error: row.error,
  problems: row.problems ?? [],
  started_at: iso(row.started_at),
  finished_at: iso(row.finished_at),
  download_url: row.state === "succeeded" ? downloadPath(row.project_id) : null,
})

/** `report.xlsx` → `report-filled.xlsx`. */
export const filledFileName = (templateName: string, format: string) =>
  `${templateName.replace(/\.[^.]*$/, "") || "template"}-filled.${format}`

/** Removes a job's stored files (either may be missing). */
const removeFiles = (blobs: BlobStoreShape, row: FileEdits.FileEditJobRow | undefined) =>
  row === undefined
    ? Effect.void
    : Effect.zipRight(
        blobs.remove(row.template_key),
        row.output_key === null ? Effect.void : blobs.remove(row.output_key),
      )

const running = () =>
  Conflict.of(
    "A template is being filled for this project: wait until it finishes, or cancel it with DELETE …/file-edit/status/, then start again",
  )

export class FileEdit extends Effect.Service<FileEdit>()("@dxs/services/FileEdit", {
  accessors: true,
  effect: Effect.gen(function* () {
    const storage = Context.make(Db, yield* Db).pipe(Context.add(BlobStore, yield* BlobStore))
    const provide = Effect.provide(storage)
    const { maxTemplateBytes } = yield* FileEditLimits
    return {
      maxTemplateBytes,

      /** 404 unless the project is the organisation's; before the upload is read. */
      checkTarget: (projectId: string) =>
        Effect.gen(function* () {
          const org = yield* CurrentOrganization
          yield* withDb((db) => checkLiveProject(db, org.id, projectId))
        }).pipe(provide),

      /**
       * Starts filling `file` (a template) from the project's results: 415 unless it is an .xlsx or .docx
       * package, 413 over the limit, 409 while a job of the project runs. A finished job is replaced.
       */
      start: (projectId: string, file: UploadedFile) =>
        Effect.gen(function* () {
          const org = yield* CurrentOrganization
          const blobs = yield* BlobStore
          yield* withDb((db) => checkLiveProject(db, org.id, projectId))
          const fileName = yield* documentFileName(file.name)
          const format = templateFormatOf(fileName)
          if (format === undefined)
            return yield* UnsupportedMediaType.of(
              `"${fileName}" is not a template: send an .xlsx workbook or a .docx document`,
            )
          const size = yield* Effect.promise(() => fs.stat(file.path).then((s) => s.size))
          if (size > maxTemplateBytes)
            return yield* PayloadTooLarge.of(
              `"${fileName}" is larger than the template limit of ${maxTemplateBytes} bytes`,
            )
          if (size === 0)
            return yield* BadRequest.of(`"${fileName}" is empty`, [{ path: "file", message: "is empty" }])
          const bytes = yield* Effect.promise(() => fs.readFile(file.path))
          const check = checkTemplateContent(bytes, format)
          if (!check.ok)
            return yield* check.reason === "too-large"
              ? PayloadTooLarge.of(`"${fileName}": ${check.detail}`)
              : UnsupportedMediaType.of(
                  `"${fileName}": ${check.detail}; send an .xlsx workbook or a .docx document`,
                )
          const existing = yield* withDb((db) => FileEdits.findJob(db, projectId))
          if (existing?.state === "running") return yield* running()

          const id = randomUUID()
          const templateKey = fileEditBlobKey(projectId, id, "template", format)
          const { row, replaced } = yield* undoUnlessCommitted(
            Effect.zipRight(
              blobs.put(templateKey, bytes),
              transaction((trx) =>
                Effect.gen(function* () {
                  yield* FileEdits.lockProjectJobs(trx, projectId)
                  const current = yield* FileEdits.findJob(trx, projectId, true)
                  if (current?.state === "running") return yield* running()
                  const replaced = yield* FileEdits.deleteJob(trx, projectId)
                  const row = yield* FileEdits.insertJob(trx, {
                    id,
                    projectId,
                    format,
                    templateName: fileName,
                    templateKey,
                  })
                  return { row, replaced }
                }),
              ),
            ),
            blobs.remove(templateKey),
          )
          yield* removeFiles(blobs, replaced)
          yield* Effect.logInfo("template filling started").pipe(
            Effect.annotateLogs({
              organization_id: org.id,
              project_id: projectId,
              job_id: id,
              format,
              size_bytes: size,
            }),
          )
          return toStatus(row)
        }).pipe(provide),

      /** The job's state (`idle` when there is none). */
      status: (projectId: string) =>
        Effect.gen(function* () {
          const org = yield* CurrentOrganization
          return yield* withDb((db) =>
            Effect.gen(function* () {
              yield* checkProject(db, org.id, projectId)
              const row = yield* FileEdits.findJob(db, projectId)
              return row === undefined ? idleFileEditStatus : toStatus(row)
            }),
          )
        }).pipe(provide),

      /** The filled file of a succeeded job; 404 otherwise. */
      download: (projectId: string) =>
        Effect.gen(function* () {
          const org = yield* CurrentOrganization
          const blobs = yield* BlobStore
          const row = yield* withDb((db) =>
            Effect.zipRight(checkProject(db, org.id, projectId), FileEdits.findJob(db, projectId)),
          )
          const notReady = NotFound.of(
            row === undefined || row.state !== "running"
              ? "Filled file of the project (start filling a template with POST …/file-edit/; it is here once the job succeeded)"
              : "Filled file of the project (the template is still being filled: see GET …/file-edit/status/)",
          )
          if (row?.state !== "succeeded" || row.output_key === null) return yield* notReady
          const key = row.output_key
          const size = yield* blobs.size(key)
          if (size === undefined) return yield* notReady
          const stream = yield* blobs
            .stream(key)
            .pipe(Effect.catchTag("BlobNotFound", () => Effect.succeed(undefined)))
          if (stream === undefined) return yield* notReady
          return {
            stream,
            fileName: filledFileName(row.template_name, row.format),
            contentType: TEMPLATE_CONTENT_TYPES[row.format],
            size,
          } satisfies FilledFile
        }).pipe(provide),

      /** Cancels a running job (its task is removed, its work stops) or clears a finished one; its files go. */
      clear: (projectId: string) =>
        Effect.gen(function* () {
          const org = yield* CurrentOrganization
          const blobs = yield* BlobStore
          yield* withDb((db) => checkProject(db, org.id, projectId))
          const removed = yield* transaction((trx) =>
            Effect.zipRight(FileEdits.lockProjectJobs(trx, projectId), FileEdits.deleteJob(trx, projectId)),
          )
          yield* removeFiles(blobs, removed)
          if (removed !== undefined)
            yield* Effect.logInfo(
              removed.state === "running" ? "template filling cancelled" : "filled template cleared",
            ).pipe(
              Effect.annotateLogs({ organization_id: org.id, project_id: projectId, job_id: removed.id }),
            )
        }).pipe(provide),
    }
  }),
}) {}

/** Housekeeping: jobs whose task died on its last attempt fail (never left running). */
export const failAbandonedFileEdits = (
  db: Parameters<typeof FileEdits.failAbandonedJobs>[0],
): Effect.Effect<number> => FileEdits.failAbandonedJobs(db)
