/**
 * New versions of a document: its file replaced, or its stored file parsed again.
 */
import {
  BlobStore,
  type BlobStoreShape,
  type DocumentRow,
  documentBlobKey,
  transaction,
  undoUnlessCommitted,
  withDb,
} from "@dxs/db"
import * as Repo from "@dxs/db/repositories/Documents"
import { enqueueParse } from "@dxs/db/repositories/ParseTasks"
import { DocumentEvent, transitionDocument } from "@dxs/domain/DocumentState"
import { documentTypeFromFileName } from "@dxs/domain/DocumentType"
import type { DocumentStatus, DocumentType } from "@dxs/domain/Enums"
import { documentsLeftProject } from "@dxs/pipeline/run/Runs"
import { Effect, Either } from "effect"
import { CurrentOrganization } from "../CurrentOrganization.ts"
import { BadRequest, Conflict, NotFound, PayloadTooLarge } from "../Errors.ts"
import { documentVersionFiles } from "../PageImageFiles.ts"
import { checkLiveProject, lockLiveProject } from "../Projects.ts"
import { syncTagDimensions } from "../TagDimensions.ts"
import {
  contentTypeOf,
  digestFile,
  documentFileName,
  type UploadedFile,
  unsupportedType,
  type VersionSource,
} from "./Files.ts"
import { type DocumentsEnv, findDocument } from "./Records.ts"

export const versions = ({ records, maxFileBytes, provide }: DocumentsEnv) => {
  const { toDocument } = records
  /**
   * A new version of a document from `source` (checked once the document is known to accept one): the
   * bytes are stored under the new version's key first, then in one transaction the version is
   * incremented, the status goes back to Pending, pages, summary, metadata and the documents extracted
   * from the previous file (e-mail attachments) are removed, and the new version's parse task is
   * enqueued. The previous file is removed after the commit. A document still being parsed (Pending)
   * gets no new version yet (409).
   */
  const newVersion = <E>(
    projectId: string,
    documentId: string,
    what: string,
    source: (current: DocumentRow) => Effect.Effect<VersionSource, E>,
  ) =>
    Effect.gen(function* () {
      const org = yield* CurrentOrganization
      const blobs = yield* BlobStore
      const current = yield* withDb((db) =>
        Effect.zipRight(
          checkLiveProject(db, org.id, projectId),
          findDocument(db, org.id, projectId, documentId),
        ),
      )
      const stillParsing = Conflict.of(
        `Document ${documentId} is still being parsed (status Pending); ${what} once it is Processed or Failed`,
      )
      const next = transitionDocument(
        { status: current.status as DocumentStatus, version: current.version },
        DocumentEvent.Reprocess(),
      )
      if (Either.isLeft(next)) return yield* stillParsing
      const { store, ...file } = yield* source(current)
      const version = next.right.version
      const key = documentBlobKey(projectId, documentId, version, file.file_name)
      const { row, obsolete } = yield* undoUnlessCommitted(
        Effect.zipRight(
          store(blobs, key),
          transaction((trx) =>
            Effect.gen(function* () {
              yield* lockLiveProject(trx, org.id, projectId)
              const locked = yield* Repo.lockDocumentInProject(trx, projectId, documentId)
              if (!locked) return yield* NotFound.of("Document", documentId)
              if (locked.version !== current.version || locked.status === "Pending")
                return yield* stillParsing
              const extracted = yield* Repo.documentsExtractedFrom(trx, projectId, documentId)
              if (extracted.length > 0) {
                yield* Repo.deleteDocuments(
                  trx,
                  extracted.map((d) => d.id),
                )
                yield* documentsLeftProject(trx, projectId)
              }
              const row = yield* Repo.startNewVersion(trx, documentId, {
                ...file,
                version,
                status: next.right.status,
                blob_key: key,
              })
              if (extracted.length > 0) yield* syncTagDimensions(trx, projectId)
              yield* enqueueParse(trx, documentId, version, projectId)
              return { row, obsolete: [locked, ...extracted].flatMap(documentVersionFiles) }
            }),
          ),
        ),
        blobs.remove(key),
      )
      // After the commit: a crash here leaves orphan files, never a row pointing at a missing file.
      yield* Effect.forEach(obsolete, (k) => blobs.remove(k), { concurrency: 4, discard: true })
      return yield* withDb((db) => toDocument(db, row))
    })

  return {
    /**
     * Replaces the document's file: the new bytes are stored under a new key first, then in one
     * transaction the version is incremented, the status goes back to Pending, pages, summary, metadata and
     * the documents extracted from the previous file (e-mail attachments) are removed, and the new version's
     * parse task is enqueued. The previous file is removed after the commit. A document still being parsed
     * (Pending) cannot be replaced yet (409).
     */
    replaceFile: (projectId: string, documentId: string, file: UploadedFile) =>
      Effect.gen(function* () {
        const fileName = yield* documentFileName(file.name)
        const type = documentTypeFromFileName(fileName)
        if (type === undefined) return yield* unsupportedType(fileName)
        return yield* newVersion(projectId, documentId, "replace its file", () =>
          Effect.gen(function* () {
            const { sha256, size } = yield* digestFile(file.path)
            if (size > maxFileBytes)
              return yield* PayloadTooLarge.of(`The file is larger than the limit of ${maxFileBytes} bytes`)
            if (size === 0)
              return yield* BadRequest.of(`"${fileName}" is empty`, [{ path: "file", message: "is empty" }])
            return {
              file_name: fileName,
              type,
              content_type: contentTypeOf(fileName, file.contentType),
              size_bytes: size,
              sha256,
              store: (blobs: BlobStoreShape, key: string) => blobs.putFile(key, file.path),
            } satisfies VersionSource
          }),
        )
      }).pipe(provide),

    /**
     * Parses the stored file again as a new version, as if the file were replaced by its own bytes
     * (`replaceFile`'s rule: version + 1, Pending, pages and attachments of the previous version removed,
     * its extractions no longer current). The bytes are copied inside the store under the new version's
     * key. 409 while the document is Pending. Beyond the contract.
     */
    reparse: (projectId: string, documentId: string) =>
      newVersion(projectId, documentId, "parse it again", (current) =>
        Effect.succeed({
          file_name: current.file_name,
          type: current.type as DocumentType,
          content_type: current.content_type,
          size_bytes: Number(current.size_bytes),
          sha256: current.sha256,
          // A file gone from storage (removed by hand, a bucket emptied) cannot be parsed again: the
          // client is told to upload it again, rather than the copy failing as the server's error.
          store: (blobs: BlobStoreShape, key: string) =>
            blobs
              .copy(current.blob_key, key)
              .pipe(
                Effect.catchTag("BlobNotFound", () =>
                  Conflict.of(
                    `The stored file of document ${documentId} is gone, so it cannot be parsed again; upload it again (PUT …/documents/${documentId}/file/)`,
                  ),
                ),
              ),
        } satisfies VersionSource),
      ).pipe(provide),
  }
}
