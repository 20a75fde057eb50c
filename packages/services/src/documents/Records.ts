/**
 * A document as the API shows it, and what every use-case of the documents service shares.
 */
import { createHmac } from "node:crypto"
import { BlobStore, type Conn, type Db, type DocumentRow } from "@dxs/db"
import * as Repo from "@dxs/db/repositories/Documents"
import type { DocumentStatus, DocumentType } from "@dxs/domain/Enums"
import type { Document, DocumentTag } from "@dxs/domain/Records"
import { Clock, Effect } from "effect"
import { NotFound } from "../Errors.ts"
import { loadFileUrlSigningKey } from "../FileUrlKey.ts"
import { checkProject } from "../Projects.ts"
import { iso, isoOrNull } from "../Time.ts"
import type { WebhookConfig } from "../Webhooks.ts"
import type { DocumentFile } from "./Files.ts"
import { tagsOf } from "./Tags.ts"

/** A document of a project of the current organisation, or NotFound (project first, then document). */
export const findDocument = (db: Conn, orgId: string, projectId: string, documentId: string) =>
  Effect.gen(function* () {
    yield* checkProject(db, orgId, projectId)
    const row = yield* Repo.findDocumentInProject(db, projectId, documentId)
    return row ?? (yield* NotFound.of("Document", documentId))
  })

/** What the documents service takes when it is built, and hands to each of its use-cases. */
export interface DocumentsEnv {
  readonly records: DocumentRecords
  readonly maxFileBytes: number
  /** Gives an effect the storage the service was built over: what remains is the request scope. */
  readonly provide: <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E, Exclude<R, Db | BlobStore>>
}

/**
 * How a document row becomes the API's record: with its tags and a signed `file_url` (signed with one secret
 * for every process sharing the database, read once), and how its stored file is opened.
 */
export const documentRecords = (settings: {
  readonly publicUrl: string
  readonly ttlSeconds: number
  readonly encryptionKey: WebhookConfig["Type"]["encryptionKey"]
}) => {
  const { publicUrl, ttlSeconds, encryptionKey } = settings
  let secret: Buffer | undefined
  const signingSecret = Effect.gen(function* () {
    if (secret) return secret
    secret = yield* loadFileUrlSigningKey(encryptionKey)
    return secret
  })

  const sign = (key: Buffer, documentId: string, version: number, expires: number) =>
    createHmac("sha256", key).update(`${documentId}\n${version}\n${expires}`).digest("base64url")

  const fileUrl = (row: Pick<DocumentRow, "id" | "version">) =>
    Effect.gen(function* () {
      const key = yield* signingSecret
      const expires = Math.floor((yield* Clock.currentTimeMillis) / 1000) + ttlSeconds
      const signature = sign(key, row.id, row.version, expires)
      return `${publicUrl}/api/v1/files/${row.id}?expires=${expires}&signature=${signature}`
    })

  /** The documents' records, their tags given (by document id). */
  const documentsWithTags = (
    rows: ReadonlyArray<DocumentRow>,
    tags: ReadonlyMap<string, ReadonlyArray<DocumentTag>>,
  ) =>
    Effect.forEach(rows, (row) =>
      Effect.map(
        fileUrl(row),
        (file_url): Document => ({
          id: row.id,
          project_id: row.project_id,
          file_url,
          uploaded_at: iso(row.uploaded_at),
          type: row.type as DocumentType,
          page_count: row.page_count,
          version: row.version,
          summary: row.summary,
          metadata: row.metadata,
          status: row.status as DocumentStatus,
          uses_agentic_extraction: row.uses_agentic_extraction,
          last_parsed_at: isoOrNull(row.last_parsed_at),
          archive_requested_at: isoOrNull(row.archive_requested_at),
          tags: tags.get(row.id) ?? [],
          file_name: row.file_name,
          failure_reason: row.failure_reason,
          parent_document_id: row.parent_document_id,
        }),
      ),
    )

  const toDocuments = (db: Conn, rows: ReadonlyArray<DocumentRow>) =>
    Effect.flatMap(
      tagsOf(
        db,
        rows.map((r) => r.id),
      ),
      (tags) => documentsWithTags(rows, tags),
    )

  const toDocument = (db: Conn, row: DocumentRow) => Effect.map(toDocuments(db, [row]), (docs) => docs[0]!)

  const openBlob = (row: DocumentRow) =>
    Effect.gen(function* () {
      const blobs = yield* BlobStore
      const size = yield* blobs.size(row.blob_key)
      if (size === undefined) {
        yield* Effect.logError(`stored file ${row.blob_key} of document ${row.id} is missing`)
        return yield* NotFound.of("Stored file of document", row.id)
      }
      // Opened before the answer starts: a file removed since `size` is a 404, not a broken download.
      const stream = yield* blobs
        .stream(row.blob_key)
        .pipe(Effect.catchTag("BlobNotFound", () => Effect.succeed(undefined)))
      if (stream === undefined) return yield* NotFound.of("Stored file of document", row.id)
      return {
        stream,
        fileName: row.file_name,
        contentType: row.content_type,
        size,
      } satisfies DocumentFile
    })

  return { signingSecret, sign, fileUrl, documentsWithTags, toDocuments, toDocument, openBlob }
}

export type DocumentRecords = ReturnType<typeof documentRecords>
