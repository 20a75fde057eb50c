/**
 * Documents of a project: the service assembles its use-cases (`documents/`: listing, uploads, new
 * versions, removal, copies, downloads) over the storage and the settings it takes when it is built.
 */
import { BlobStore, Db } from "@dxs/db"
import { Context, Effect } from "effect"
import { copying } from "./documents/Copies.ts"
import { downloads } from "./documents/Downloads.ts"
import { listing } from "./documents/Listing.ts"
import { documentRecords } from "./documents/Records.ts"
import { removal } from "./documents/Removal.ts"
import { uploading } from "./documents/Uploads.ts"
import { versions } from "./documents/Versions.ts"
import { WebhookConfig } from "./Webhooks.ts"

export type { DocumentCopy } from "./documents/Copies.ts"
export { DownloadForbidden, downloadForbiddenResponse } from "./documents/Downloads.ts"
export {
  type CheckedUpload,
  checkUpload,
  type DocumentFile,
  documentFileName,
  insertUpload,
  MAX_FILE_NAME_LENGTH,
  placeUpload,
  type StoredUpload,
  storeUpload,
  type UploadedFile,
} from "./documents/Files.ts"
export {
  DOCUMENT_SEARCH_MAX_LENGTH,
  DOCUMENTS_PAGE_DEFAULT_LIMIT,
  DOCUMENTS_PAGE_MAX_LIMIT,
  type DocumentFilter,
  type DocumentPageQuery,
} from "./documents/Listing.ts"
export { findDocument } from "./documents/Records.ts"
export { MAX_TAG_KEY_LENGTH, normalizeTags, type TagsInput } from "./documents/Tags.ts"

/** Origin (and optional path prefix) under which clients reach the API; `file_url` links start with it. */
export class PublicUrl extends Context.Reference<PublicUrl>()("@dxs/services/PublicUrl", {
  defaultValue: () => "http://localhost:8080",
}) {}

/** Largest accepted upload, per file (DESIGN §4: 100 MB by default). */
export class UploadLimits extends Context.Reference<UploadLimits>()("@dxs/services/UploadLimits", {
  defaultValue: (): { readonly maxFileBytes: number } => ({ maxFileBytes: 100 * 1024 * 1024 }),
}) {}

/** How long a signed `file_url` stays valid. */
export class FileLinks extends Context.Reference<FileLinks>()("@dxs/services/FileLinks", {
  defaultValue: (): { readonly ttlSeconds: number } => ({ ttlSeconds: 3600 }),
}) {}

export class Documents extends Effect.Service<Documents>()("@dxs/services/Documents", {
  effect: Effect.gen(function* () {
    const { maxFileBytes } = yield* UploadLimits
    const records = documentRecords({
      publicUrl: (yield* PublicUrl).replace(/\/+$/, ""),
      ttlSeconds: (yield* FileLinks).ttlSeconds,
      // One secret for every process sharing the database (and its encryption key): read once.
      encryptionKey: (yield* WebhookConfig).encryptionKey,
    })
    const storage = Context.make(Db, yield* Db).pipe(Context.add(BlobStore, yield* BlobStore))
    const env = { records, maxFileBytes, provide: Effect.provide(storage) }
    return {
      /** The largest file an upload may carry, in bytes. */
      maxUploadBytes: maxFileBytes,
      ...listing(env),
      ...uploading(env),
      ...versions(env),
      ...removal(env),
      ...copying(env),
      ...downloads(env),
    }
  }),
}) {}
