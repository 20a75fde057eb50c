/**
 * Copying processed documents into another project.
 */
import { randomUUID } from "node:crypto"
import { BlobStore, type Conn, documentBlobKey, transaction, undoUnlessCommitted, withDb } from "@dxs/db"
import * as Repo from "@dxs/db/repositories/Documents"
import { lockProject } from "@dxs/db/repositories/Projects"
import type { DocumentCopyRequest } from "@dxs/domain/contract/Document"
import type { DocumentCopyResponse } from "@dxs/domain/Records"
import { Effect } from "effect"
import { CurrentOrganization } from "../CurrentOrganization.ts"
import { BadRequest, Conflict, type FieldError } from "../Errors.ts"
import { checkLiveProject, checkProject } from "../Projects.ts"
import { syncTagDimensions } from "../TagDimensions.ts"
import type { DocumentsEnv } from "./Records.ts"
import { sameKeysAsProject, tagsOf } from "./Tags.ts"

export type DocumentCopy = DocumentCopyRequest

export const copying = ({ provide }: DocumentsEnv) => {
  return {
    /**
     * Copies processed documents into another live project of the organisation: new ids, the stored
     * bytes under new keys, tags, status, pages (and their count), summary and metadata. Files are copied before the
     * rows commit, and removed again when the transaction does not commit (unless storage itself was out of
     * reach: `undoUnlessCommitted`).
     */
    copy: (sourceProjectId: string, input: DocumentCopy) =>
      Effect.gen(function* () {
        const org = yield* CurrentOrganization
        const blobs = yield* BlobStore
        const ids = input.document_ids
        if (ids.length === 0)
          return yield* BadRequest.of("document_ids must not be empty", [
            { path: "document_ids", message: "must not be empty" },
          ])
        const duplicates = ids.filter((id, i) => ids.indexOf(id) !== i)
        if (duplicates.length > 0)
          return yield* BadRequest.of(
            `document_ids lists ${[...new Set(duplicates)].join(", ")} more than once`,
            [{ path: "document_ids", message: "must not repeat an id" }],
          )
        if (input.target_project_id === sourceProjectId)
          return yield* BadRequest.of("target_project_id must differ from the source project", [
            { path: "target_project_id", message: "is the source project" },
          ])
        const check = (db: Conn) =>
          Effect.gen(function* () {
            yield* checkProject(db, org.id, sourceProjectId)
            yield* checkLiveProject(db, org.id, input.target_project_id)
            const rows = yield* Repo.documentsOfProject(db, sourceProjectId, ids)
            const byId = new Map(rows.map((r) => [r.id, r]))
            const errors: Array<FieldError> = []
            ids.forEach((id, i) => {
              const row = byId.get(id)
              if (!row)
                errors.push({
                  path: `document_ids/${i}`,
                  message: `${id} is not a document of this project`,
                })
              else if (row.status !== "Processed")
                errors.push({ path: `document_ids/${i}`, message: `${id} is ${row.status}, not Processed` })
            })
            if (errors.length > 0)
              return yield* BadRequest.of(
                `Only processed documents of this project can be copied; not: ${errors
                  .map((e) => e.message.split(" ")[0])
                  .join(", ")}`,
                errors,
              )
            return ids.map((id) => byId.get(id)!)
          })
        const sources = yield* withDb(check)
        const copies = sources.map((source) => {
          const id = randomUUID()
          return {
            source,
            id,
            key: documentBlobKey(input.target_project_id, id, source.version, source.file_name),
          }
        })
        const newIdOf = new Map(copies.map((c) => [c.source.id, c.id]))
        const removeCopies = Effect.forEach(copies, (c) => blobs.remove(c.key), {
          concurrency: 4,
          discard: true,
        })
        yield* undoUnlessCommitted(
          Effect.gen(function* () {
            // Copied inside the store (a server-side copy in a bucket): no file is held in memory.
            // A source whose file is gone from storage cannot be copied: the client is told which, and
            // nothing is copied (the copies already made are removed).
            yield* Effect.forEach(
              copies,
              (c) =>
                blobs
                  .copy(c.source.blob_key, c.key)
                  .pipe(
                    Effect.catchTag("BlobNotFound", () =>
                      Conflict.of(
                        `The stored file of document ${c.source.id} is gone, so it cannot be copied; upload it again (PUT …/documents/${c.source.id}/file/)`,
                      ),
                    ),
                  ),
              { concurrency: 4, discard: true },
            )
            yield* transaction((trx) =>
              Effect.gen(function* () {
                yield* lockProject(trx, input.target_project_id)
                yield* check(trx)
                const tags = yield* tagsOf(trx, ids)
                yield* sameKeysAsProject(trx, input.target_project_id, [...tags.values()].flat(), [])
                for (const { source, id, key } of copies) {
                  yield* Repo.insertDocumentCopy(trx, source, {
                    id,
                    project_id: input.target_project_id,
                    blob_key: key,
                    parent_document_id:
                      source.parent_document_id === null
                        ? null
                        : (newIdOf.get(source.parent_document_id) ?? null),
                  })
                  yield* Repo.replaceTags(trx, id, tags.get(source.id) ?? [])
                }
                yield* syncTagDimensions(trx, input.target_project_id)
              }),
            )
          }),
          removeCopies,
        )
        return {
          copied_count: copies.length,
          document_id_mappings: copies.map((c) => ({
            source_document_id: c.source.id,
            copied_document_id: c.id,
          })),
        } satisfies DocumentCopyResponse
      }).pipe(provide),
  }
}
