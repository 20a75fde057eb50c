/**
 * Uploading documents and tagging them.
 */
import { BlobStore, transaction, undoUnlessCommitted, withDb } from "@dxs/db"
import * as Repo from "@dxs/db/repositories/Documents"
import { lockProject } from "@dxs/db/repositories/Projects"
import type { Document } from "@dxs/domain/Records"
import { Effect } from "effect"
import { CurrentOrganization } from "../CurrentOrganization.ts"
import { type Answer, claimKey, earlierAnswer, idempotentRequest, rememberKey } from "../Idempotency.ts"
import { checkLiveProject, lockLiveProject } from "../Projects.ts"
import { syncTagDimensions } from "../TagDimensions.ts"
import { checkUpload, insertUpload, placeUpload, storeUpload, type UploadedFile } from "./Files.ts"
import { type DocumentsEnv, findDocument } from "./Records.ts"
import { normalizeTags, sameKeysAsProject, type TagsInput } from "./Tags.ts"

export const uploading = ({ records, maxFileBytes, provide }: DocumentsEnv) => {
  const { toDocument } = records
  return {
    /** 404 unless the project is a live project of the current organisation (checked before reading a body). */
    checkUploadTarget: (projectId: string) =>
      Effect.gen(function* () {
        const org = yield* CurrentOrganization
        yield* withDb((db) => checkLiveProject(db, org.id, projectId))
      }).pipe(provide),

    /**
     * Stores the file, then in one transaction records the document (Pending, version 1), its tags and
     * their TAG dimensions, and enqueues its parse task. The file is stored first, so an answered upload
     * is never lost; it is removed again when the transaction does not commit (a client that disconnects
     * meanwhile changes nothing), unless storage itself was out of reach (`undoUnlessCommitted`). With an
     * Idempotency-Key, a repeated request gets the first answer again (`replayed`), and a different
     * request with the same key is refused (422).
     */
    upload: (
      projectId: string,
      file: UploadedFile,
      tagsInput?: TagsInput | undefined,
      options: { readonly idempotencyKey?: string | undefined } = {},
    ) =>
      Effect.gen(function* () {
        const org = yield* CurrentOrganization
        const blobs = yield* BlobStore
        const tags = tagsInput === undefined ? [] : yield* normalizeTags(tagsInput)
        yield* withDb((db) => checkLiveProject(db, org.id, projectId))
        const checked = yield* checkUpload(file, maxFileBytes)
        const request = idempotentRequest(org.id, "document-upload", options.idempotencyKey, [
          projectId,
          checked.fileName,
          checked.sha256,
          tags,
        ])
        const earlier = yield* withDb((db) => earlierAnswer(db, request))
        if (earlier !== undefined) return { ...earlier, body: earlier.body as Document }
        const stored = placeUpload(projectId, checked)
        return yield* undoUnlessCommitted(
          Effect.zipRight(
            storeUpload(blobs, stored),
            transaction((trx) =>
              Effect.gen(function* () {
                yield* claimKey(trx, request)
                // Tags change the project's TAG dimensions: those uploads take turns.
                yield* lockLiveProject(trx, org.id, projectId, tags.length > 0 ? "update" : "share")
                yield* sameKeysAsProject(trx, projectId, tags, [])
                const row = yield* insertUpload(trx, projectId, stored)
                if (tags.length > 0) {
                  yield* Repo.replaceTags(trx, row.id, tags)
                  yield* syncTagDimensions(trx, projectId)
                }
                const document = yield* toDocument(trx, row)
                yield* rememberKey(trx, request, 201, document)
                return document
              }),
            ),
          ),
          blobs.remove(stored.key),
        ).pipe(
          Effect.map((body): Answer<Document> => ({ status: 201, body, replayed: false })),
          // A request with the same key committed first: this one's file is gone again; its answer is given.
          Effect.catchTag("AnsweredBefore", (e) =>
            Effect.succeed({ status: e.status, body: e.body as Document, replayed: true }),
          ),
          Effect.tap((answer) =>
            Effect.logInfo(answer.replayed ? "upload repeated (Idempotency-Key)" : "document uploaded").pipe(
              Effect.annotateLogs({
                organization_id: org.id,
                project_id: projectId,
                document_id: answer.body.id,
                type: checked.type,
                size_bytes: checked.size,
              }),
            ),
          ),
        )
      }).pipe(provide),

    /** Replaces every tag of the document; TAG dimensions follow in the same transaction. */
    setTags: (projectId: string, documentId: string, input: TagsInput) =>
      Effect.gen(function* () {
        const org = yield* CurrentOrganization
        const tags = yield* normalizeTags(input)
        const row = yield* transaction((trx) =>
          Effect.gen(function* () {
            yield* lockProject(trx, projectId)
            const row = yield* findDocument(trx, org.id, projectId, documentId)
            yield* sameKeysAsProject(trx, projectId, tags, [documentId])
            yield* Repo.replaceTags(trx, documentId, tags)
            yield* syncTagDimensions(trx, projectId)
            return row
          }),
        )
        return yield* withDb((db) => toDocument(db, row))
      }).pipe(provide),
  }
}
