/**
 * Deleting and archiving documents, one or many.
 */
import { BlobStore, type Db, transaction, withDb } from "@dxs/db"
import * as Repo from "@dxs/db/repositories/Documents"
import { lockProject } from "@dxs/db/repositories/Projects"
import {
  DOCUMENT_BULK_MAX,
  type DocumentBulkFailure,
  type DocumentBulkRequest,
  type DocumentBulkResponse,
} from "@dxs/domain/contract/Document"
import { documentsLeftProject } from "@dxs/pipeline/run/Runs"
import { Effect } from "effect"
import { enqueueArchive } from "../Archive.ts"
import { CurrentOrganization } from "../CurrentOrganization.ts"
import { BadRequest } from "../Errors.ts"
import { documentVersionFiles } from "../PageImageFiles.ts"
import { checkProject, lockLiveProject } from "../Projects.ts"
import { syncTagDimensions } from "../TagDimensions.ts"
import { type DocumentsEnv, findDocument } from "./Records.ts"

/** What a refused action on one document says (every problem error has these). */
interface ProblemError {
  readonly status: number
  readonly detail: string
}

export const removal = ({ records, provide }: DocumentsEnv) => {
  const { toDocument } = records
  /**
   * Requests archival: sets `archive_requested_at` (once) and enqueues the archive task, which moves the
   * document into the project's archive project.
   */
  const requestArchive = (projectId: string, documentId: string) =>
    Effect.gen(function* () {
      const org = yield* CurrentOrganization
      const row = yield* transaction((trx) =>
        Effect.gen(function* () {
          yield* lockLiveProject(trx, org.id, projectId)
          const row = yield* findDocument(trx, org.id, projectId, documentId)
          if (row.archive_requested_at !== null) return row
          const updated = yield* Repo.requestDocumentArchive(trx, documentId)
          yield* Effect.promise(() => enqueueArchive(trx, documentId, projectId))
          return updated
        }),
      )
      return yield* withDb((db) => toDocument(db, row))
    })

  /**
   * Deletes the document with its tags and pages, re-syncs TAG dimensions, then removes the stored file
   * and page images.
   */
  const remove = (projectId: string, documentId: string) =>
    Effect.gen(function* () {
      const org = yield* CurrentOrganization
      const blobs = yield* BlobStore
      const files = yield* transaction((trx) =>
        Effect.gen(function* () {
          yield* lockProject(trx, projectId)
          const row = yield* findDocument(trx, org.id, projectId, documentId)
          yield* Repo.deleteDocuments(trx, [documentId])
          yield* documentsLeftProject(trx, projectId)
          yield* syncTagDimensions(trx, projectId)
          return documentVersionFiles(row)
        }),
      )
      // After the commit: a crash here leaves an orphan file, never a row pointing at a missing file.
      yield* Effect.forEach(files, (k) => blobs.remove(k), { concurrency: 4, discard: true })
    })

  return {
    requestArchive: (projectId: string, documentId: string) =>
      requestArchive(projectId, documentId).pipe(provide),

    remove: (projectId: string, documentId: string) => remove(projectId, documentId).pipe(provide),

    /**
     * Deletes or archives many documents (beyond the contract), each through the same use-case as its
     * single endpoint (`remove`, `requestArchive`), one after the other: one refused (unknown, or in a
     * project that is no longer live) is listed with the status and detail its own request would get,
     * and the others go on. 404 for an unknown project; 400 for an empty, too long or repeating list.
     */
    bulk: (projectId: string, input: DocumentBulkRequest) =>
      Effect.gen(function* () {
        const org = yield* CurrentOrganization
        const ids = input.document_ids
        if (ids.length === 0 || ids.length > DOCUMENT_BULK_MAX)
          return yield* BadRequest.of(`document_ids must list 1 to ${DOCUMENT_BULK_MAX} documents`, [
            { path: "document_ids", message: `must list 1 to ${DOCUMENT_BULK_MAX} ids` },
          ])
        const duplicates = ids.filter((id, i) => ids.indexOf(id) !== i)
        if (duplicates.length > 0)
          return yield* BadRequest.of(
            `document_ids lists ${[...new Set(duplicates)].join(", ")} more than once`,
            [{ path: "document_ids", message: "must not repeat an id" }],
          )
        yield* withDb((db) => checkProject(db, org.id, projectId))
        const one = (id: string): Effect.Effect<void, ProblemError, Db | BlobStore | CurrentOrganization> =>
          input.action === "delete" ? remove(projectId, id) : Effect.asVoid(requestArchive(projectId, id))
        const outcomes = yield* Effect.forEach(ids, (id) =>
          one(id).pipe(
            Effect.as({ id, failure: undefined as DocumentBulkFailure | undefined }),
            Effect.catchAll((e) =>
              Effect.succeed({ id, failure: { document_id: id, status: e.status, detail: e.detail } }),
            ),
          ),
        )
        return {
          succeeded: outcomes.flatMap((o) => (o.failure === undefined ? [o.id] : [])),
          failed: outcomes.flatMap((o) => (o.failure === undefined ? [] : [o.failure])),
        } satisfies DocumentBulkResponse
      }).pipe(provide),
  }
}
