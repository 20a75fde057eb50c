import { createHash, createHmac, randomUUID, timingSafeEqual } from "node:crypto"
import { createReadStream } from "node:fs"
import type { Readable } from "node:stream"
import {
  BlobStore,
  type BlobStoreShape,
  type Conn,
  Db,
  type DocumentRow,
  documentBlobKey,
  isBlobNotFound,
  transaction,
  undoUnlessCommitted,
  withDb,
} from "@dxs/db"
import * as Repo from "@dxs/db/repositories/Documents"
import { enqueueParse } from "@dxs/db/repositories/ParseTasks"
import { lockProject } from "@dxs/db/repositories/Projects"
import {
  DOCUMENT_BULK_MAX,
  type DocumentBulkFailure,
  type DocumentBulkRequest,
  type DocumentBulkResponse,
  type DocumentCopyRequest,
  type DocumentsPage,
  type TagsValue,
} from "@dxs/domain/contract/Document"
import { DocumentEvent, transitionDocument } from "@dxs/domain/DocumentState"
import { documentTypeFromFileName, mimeTypeOfFileName, supportedExtensions } from "@dxs/domain/DocumentType"
import type { DocumentStatus, DocumentType } from "@dxs/domain/Enums"
import type { Document, DocumentCopyResponse, DocumentTag } from "@dxs/domain/Records"
import { documentsLeftProject } from "@dxs/pipeline/run/Runs"
import { HttpApiSchema } from "@effect/platform"
import { Clock, Context, Effect, Either, Schema } from "effect"
import { enqueueArchive } from "./Archive.ts"
import { CurrentOrganization } from "./CurrentOrganization.ts"
import {
  BadRequest,
  Conflict,
  type FieldError,
  NotFound,
  PayloadTooLarge,
  problemType,
  UnsupportedMediaType,
} from "./Errors.ts"
import { loadFileUrlSigningKey } from "./FileUrlKey.ts"
import { type Answer, claimKey, earlierAnswer, idempotentRequest, rememberKey } from "./Idempotency.ts"
import { documentVersionFiles } from "./PageImageFiles.ts"
import { pageLinks, pageStart } from "./Paging.ts"
import {
  byProject,
  checkLiveProject,
  checkProject,
  lockLiveProject,
  oneProject,
  projectsOfOrganization,
} from "./Projects.ts"
import { syncTagDimensions } from "./TagDimensions.ts"
import { iso, isoOrNull } from "./Time.ts"
import { WebhookConfig } from "./Webhooks.ts"

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

/** A signed download link that is expired or does not match (403, problem+json). */
export class DownloadForbidden extends Schema.TaggedError<DownloadForbidden>()(
  "DownloadForbidden",
  {
    type: Schema.String,
    title: Schema.String,
    status: Schema.Int,
    detail: Schema.String,
  },
  HttpApiSchema.annotations({
    status: 403,
    description: "The download link is expired or its signature is wrong",
  }),
) {
  static of(detail: string) {
    return new DownloadForbidden({ type: problemType("forbidden"), title: "Forbidden", status: 403, detail })
  }
}
export const downloadForbiddenResponse = DownloadForbidden.pipe(
  HttpApiSchema.withEncoding({ kind: "Json", contentType: "application/problem+json" }),
)

/** The documents `list` keeps: with tag `tagKey` of value `tagValue` (both or neither). */
export interface DocumentFilter {
  readonly tagKey?: string | undefined
  readonly tagValue?: string | undefined
}

/** The documents panel's page: paging and filters (`page`). */
export interface DocumentPageQuery {
  readonly limit?: number | undefined
  readonly offset?: number | undefined
  /** A case-insensitive substring of the name, 1 to 200 characters. */
  readonly search?: string | undefined
  readonly status?: DocumentStatus | undefined
  readonly tag_key?: string | undefined
  readonly tag_value?: string | undefined
  /** That message's attachments; without it, documents without a parent. */
  readonly parent_document_id?: string | undefined
  /** Where the page starts, from a `next` or `previous` link. */
  readonly cursor?: string | undefined
}

/** The key of a document of the page, as a cursor carries it (`Repo.DocumentKey`). */
const DocumentCursorKey = Schema.Tuple(Schema.String.pipe(Schema.pattern(/^-?\d{1,20}$/)), Schema.UUID)

export const DOCUMENTS_PAGE_DEFAULT_LIMIT = 50
export const DOCUMENTS_PAGE_MAX_LIMIT = 500
export const DOCUMENT_SEARCH_MAX_LENGTH = 200

/** What a refused action on one document says (every problem error has these). */
interface ProblemError {
  readonly status: number
  readonly detail: string
}

/** Tags as the API accepts them: a list of `{key, value}` or an object of key to value. */
export type TagsInput = TagsValue

export interface UploadedFile {
  /** A local file holding the bytes (moved into the blob store). */
  readonly path: string
  /** The client's file name. */
  readonly name: string
  readonly contentType: string
}

export type DocumentCopy = DocumentCopyRequest

/** The original bytes of a document, ready to stream. */
export interface DocumentFile {
  readonly stream: Readable
  readonly fileName: string
  readonly contentType: string
  readonly size: number
}

/** The file of a new version of a document, and how to store its bytes under the version's key. */
interface VersionSource {
  readonly file_name: string
  readonly type: DocumentType
  readonly content_type: string
  readonly size_bytes: number
  readonly sha256: string
  /** Stores the new version's bytes under `key`; Conflict when they cannot be had any more. */
  readonly store: (blobs: BlobStoreShape, key: string) => Effect.Effect<void, Conflict>
}

export const MAX_TAG_KEY_LENGTH = 100

/** The extension decides the content type (the client's claim only when we know none). */
const contentTypeOf = (fileName: string, claimed: string) => {
  const known = mimeTypeOfFileName(fileName)
  if (known) return known
  return claimed.trim() === "" ? "application/octet-stream" : claimed
}

/** The longest file name a document may have, in characters. */
export const MAX_FILE_NAME_LENGTH = 255

// C0 controls (NUL included), DEL and the C1 controls.
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/u

/**
 * The name a document keeps: the client's file name as given (any script, combining marks, emoji;
 * never normalised), without directory parts (browsers on Windows may send `C:\…\a.pdf`, others
 * `../a.pdf`) and surrounding spaces. 400 for control characters, for a name that is empty, `.` or `..`
 * once directories are dropped, and for one longer than 255 characters.
 */
export const documentFileName = (raw: string, path = "file"): Effect.Effect<string, BadRequest> => {
  const control = CONTROL.exec(raw)
  if (control)
    return BadRequest.of(
      `The file name contains a control character (U+${control[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}); send the name without it`,
      [{ path, message: "file name must not contain control characters" }],
    )
  const name = (raw.split(/[\\/]/).pop() ?? "").trim()
  if (name === "" || name === "." || name === "..")
    return BadRequest.of(
      `The file name ${JSON.stringify(raw)} has no name once its directory parts are dropped; name the file with its extension, like report.pdf`,
      [{ path, message: "file name is missing" }],
    )
  const length = [...name].length
  if (length > MAX_FILE_NAME_LENGTH)
    return BadRequest.of(
      `The file name is ${length} characters long; at most ${MAX_FILE_NAME_LENGTH} are allowed`,
      [{ path, message: `file name must be at most ${MAX_FILE_NAME_LENGTH} characters` }],
    )
  return Effect.succeed(name)
}

const digestFile = (file: string) =>
  Effect.promise(
    () =>
      new Promise<{ sha256: string; size: number }>((resolve, reject) => {
        const hash = createHash("sha256")
        let size = 0
        createReadStream(file)
          .on("data", (chunk) => {
            size += chunk.length
            hash.update(chunk)
          })
          .on("error", reject)
          .on("end", () => resolve({ sha256: hash.digest("hex"), size }))
      }),
  )

const byKey = (a: DocumentTag, b: DocumentTag) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)

/** Validates tags (keys trimmed, non-empty, at most 100 characters, unique ignoring case) and sorts them. */
export const normalizeTags = (input: TagsInput, path = "tags") =>
  Effect.gen(function* () {
    const entries: ReadonlyArray<DocumentTag> = Array.isArray(input)
      ? (input as ReadonlyArray<DocumentTag>)
      : Object.entries(input).map(([key, value]) => ({ key, value }))
    const errors: Array<FieldError> = []
    const seen = new Map<string, string>()
    const tags: Array<DocumentTag> = []
    entries.forEach((tag, i) => {
      const at = Array.isArray(input) ? `${path}/${i}/key` : `${path}/${tag.key}`
      const key = tag.key.trim()
      if (key === "") errors.push({ path: at, message: "must not be empty" })
      else if (key.length > MAX_TAG_KEY_LENGTH)
        errors.push({ path: at, message: `must be at most ${MAX_TAG_KEY_LENGTH} characters` })
      else if (seen.has(key.toLowerCase()))
        errors.push({ path: at, message: `duplicate key "${key}" (keys are compared ignoring case)` })
      else {
        seen.set(key.toLowerCase(), key)
        tags.push({ key, value: tag.value })
      }
    })
    if (errors.length > 0)
      return yield* BadRequest.of(
        `Invalid tags: ${errors.map((e) => `${e.path}: ${e.message}`).join("; ")}`,
        errors,
      )
    return tags.sort(byKey)
  })

/**
 * TAG dimension names are unique ignoring case, so a key may not differ only in case from a key other
 * documents of the project already use.
 */
const sameKeysAsProject = (
  trx: Conn,
  projectId: string,
  tags: ReadonlyArray<DocumentTag>,
  except: ReadonlyArray<string>,
) =>
  Effect.gen(function* () {
    if (tags.length === 0) return
    const existing = yield* Repo.tagKeysOfProject(trx, projectId, except)
    const byLower = new Map(existing.map((key) => [key.toLowerCase(), key]))
    const clashes = tags.flatMap((t) => {
      const other = byLower.get(t.key.toLowerCase())
      return other !== undefined && other !== t.key ? [{ key: t.key, other }] : []
    })
    if (clashes.length > 0)
      return yield* BadRequest.of(
        `Tag keys must match the spelling already used in the project: ${clashes
          .map((c) => `"${c.key}" (use "${c.other}")`)
          .join(", ")}`,
        clashes.map((c) => ({ path: "tags", message: `key "${c.key}" is already used as "${c.other}"` })),
      )
  })

const tagsOf = (db: Conn, documentIds: ReadonlyArray<string>) =>
  Effect.map(
    Repo.tagsOfDocuments(db, documentIds),
    (byDocument): ReadonlyMap<string, ReadonlyArray<DocumentTag>> => {
      for (const list of byDocument.values()) list.sort(byKey)
      return byDocument
    },
  )

/** A document of a project of the current organisation, or NotFound (project first, then document). */
export const findDocument = (db: Conn, orgId: string, projectId: string, documentId: string) =>
  Effect.gen(function* () {
    yield* checkProject(db, orgId, projectId)
    const row = yield* Repo.findDocumentInProject(db, projectId, documentId)
    return row ?? (yield* NotFound.of("Document", documentId))
  })

const unsupportedType = (fileName: string) =>
  UnsupportedMediaType.of(
    `Cannot process "${fileName}": unsupported file type. Supported extensions: ${supportedExtensions
      .map((e) => `.${e}`)
      .join(", ")}`,
  )

const isBase64Url = (s: string) => /^[A-Za-z0-9_-]+$/.test(s)

/** An upload whose name, type and size passed the checks (not stored yet). */
export interface CheckedUpload {
  readonly file: UploadedFile
  readonly fileName: string
  readonly type: DocumentType
  readonly sha256: string
  readonly size: number
}

/** An upload whose bytes are in the blob store under `key`, to be recorded as document `id`. */
export interface StoredUpload extends CheckedUpload {
  readonly id: string
  readonly key: string
}

/** 400 for a bad file name (`documentFileName`), 415 for an unknown extension, 413 over the limit, 400 for an empty file. */
export const checkUpload = (file: UploadedFile, maxFileBytes: number, path = "file") =>
  Effect.gen(function* () {
    const fileName = yield* documentFileName(file.name, path)
    const type = documentTypeFromFileName(fileName)
    if (type === undefined) return yield* unsupportedType(fileName)
    const { sha256, size } = yield* digestFile(file.path)
    if (size > maxFileBytes)
      return yield* PayloadTooLarge.of(`"${fileName}" is larger than the limit of ${maxFileBytes} bytes`)
    if (size === 0)
      return yield* BadRequest.of(`"${fileName}" is empty`, [{ path: "file", message: "is empty" }])
    return { file, fileName, type, sha256, size } satisfies CheckedUpload
  })

/** The new document's id and the key its bytes will be stored under. */
export const placeUpload = (projectId: string, upload: CheckedUpload): StoredUpload => {
  const id = randomUUID()
  return { ...upload, id, key: documentBlobKey(projectId, id, 1, upload.fileName) }
}

/** Stores the bytes (fsynced) before any row refers to them. */
export const storeUpload = (blobs: BlobStoreShape, upload: StoredUpload) =>
  blobs.putFile(upload.key, upload.file.path)

/** Records a stored upload as a Pending document (version 1) and enqueues its parse task, in `trx`. */
export const insertUpload = (trx: Conn, projectId: string, upload: StoredUpload) =>
  Repo.insertDocumentAndEnqueueParse(trx, {
    id: upload.id,
    project_id: projectId,
    file_name: upload.fileName,
    type: upload.type,
    blob_key: upload.key,
    content_type: contentTypeOf(upload.fileName, upload.file.contentType),
    size_bytes: upload.size,
    sha256: upload.sha256,
    parent_document_id: null,
  })

export class Documents extends Effect.Service<Documents>()("@dxs/services/Documents", {
  effect: Effect.gen(function* () {
    const publicUrl = (yield* PublicUrl).replace(/\/+$/, "")
    const { ttlSeconds } = yield* FileLinks
    const { maxFileBytes } = yield* UploadLimits

    // One secret for every process sharing the database (and its encryption key): read once.
    const { encryptionKey } = yield* WebhookConfig
    const storage = Context.make(Db, yield* Db).pipe(Context.add(BlobStore, yield* BlobStore))
    const provide = Effect.provide(storage)
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
          .pipe(Effect.catchAllDefect((e) => (isBlobNotFound(e) ? Effect.succeed(undefined) : Effect.die(e))))
        if (stream === undefined) return yield* NotFound.of("Stored file of document", row.id)
        return {
          stream,
          fileName: row.file_name,
          contentType: row.content_type,
          size,
        } satisfies DocumentFile
      })

    /** Each project's documents as `list` gives them; projects not of the current organisation are absent. */
    const listForProjects = (projectIds: ReadonlyArray<string>, filter: DocumentFilter = {}) =>
      Effect.gen(function* () {
        const org = yield* CurrentOrganization
        if ((filter.tagKey === undefined) !== (filter.tagValue === undefined))
          return yield* BadRequest.of("tag_key and tag_value filter together: supply both or neither", [
            {
              path: filter.tagKey === undefined ? "tag_key" : "tag_value",
              message: "required with the other",
            },
          ])
        return yield* withDb((db) =>
          Effect.gen(function* () {
            const ids = yield* projectsOfOrganization(db, org.id, projectIds)
            if (ids.length === 0) return new Map<string, ReadonlyArray<Document>>()
            const rows = yield* Repo.listDocuments(
              db,
              ids,
              filter.tagKey !== undefined && filter.tagValue !== undefined
                ? { key: filter.tagKey, value: filter.tagValue }
                : undefined,
            )
            return byProject(ids, yield* toDocuments(db, rows), (d) => d.project_id)
          }),
        )
      })

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
      /** The largest file an upload may carry, in bytes. */
      maxUploadBytes: maxFileBytes,

      /** Most recently uploaded first; optionally only documents whose tag `tagKey` has value `tagValue`. */
      list: (projectId: string, filter: DocumentFilter) =>
        Effect.flatMap(listForProjects([projectId], filter), (lists) => oneProject(projectId, lists)).pipe(
          provide,
        ),

      /**
       * A page of the project's documents for the documents panel (beyond the contract): most recently
       * uploaded first, filtered by name, status, tag and parent (default: top-level documents only), with
       * each one's number of attachments; `next`/`previous` are relative links that keep the filters.
       */
      page: (projectId: string, query: DocumentPageQuery) =>
        Effect.gen(function* () {
          const org = yield* CurrentOrganization
          const limit = query.limit ?? DOCUMENTS_PAGE_DEFAULT_LIMIT
          const offset = query.offset ?? 0
          if (!Number.isInteger(limit) || limit < 1 || limit > DOCUMENTS_PAGE_MAX_LIMIT)
            return yield* BadRequest.of(
              `limit must be a whole number from 1 to ${DOCUMENTS_PAGE_MAX_LIMIT}`,
              [{ path: "limit", message: `must be a whole number from 1 to ${DOCUMENTS_PAGE_MAX_LIMIT}` }],
            )
          if (!Number.isInteger(offset) || offset < 0)
            return yield* BadRequest.of("offset must be a whole number of at least 0", [
              { path: "offset", message: "must be a whole number of at least 0" },
            ])
          const search = query.search
          if (search !== undefined && (search.length < 1 || search.length > DOCUMENT_SEARCH_MAX_LENGTH))
            return yield* BadRequest.of(`search must be 1 to ${DOCUMENT_SEARCH_MAX_LENGTH} characters`, [
              { path: "search", message: `must be 1 to ${DOCUMENT_SEARCH_MAX_LENGTH} characters` },
            ])
          if ((query.tag_key === undefined) !== (query.tag_value === undefined))
            return yield* BadRequest.of("tag_key and tag_value filter together: supply both or neither", [
              {
                path: query.tag_key === undefined ? "tag_key" : "tag_value",
                message: "required with the other",
              },
            ])
          const start = yield* pageStart(DocumentCursorKey, query)
          return yield* withDb((db) =>
            Effect.gen(function* () {
              // One statement: the project's ownership, the count and the page with its tags.
              const page = yield* Repo.pageOfDocuments(
                db,
                org.id,
                projectId,
                {
                  search,
                  status: query.status,
                  tag:
                    query.tag_key !== undefined && query.tag_value !== undefined
                      ? { key: query.tag_key, value: query.tag_value }
                      : undefined,
                  parentDocumentId: query.parent_document_id,
                },
                start === undefined ? { limit, offset } : { limit, ...start },
              )
              if (!page.found) return yield* NotFound.of("Project", projectId)
              const { count, rows } = page
              const documents = yield* documentsWithTags(
                rows,
                new Map(rows.map((r) => [r.id, [...r.tags].sort(byKey)])),
              )
              return {
                count,
                ...pageLinks(
                  [
                    ["search", query.search],
                    ["status", query.status],
                    ["tag_key", query.tag_key],
                    ["tag_value", query.tag_value],
                    ["parent_document_id", query.parent_document_id],
                  ],
                  {
                    count,
                    limit,
                    offset: page.offset,
                    rows: rows.length,
                    first: rows[0]?.key,
                    last: rows[rows.length - 1]?.key,
                  },
                ),
                results: documents.map((d, i) => ({ ...d, attachment_count: rows[i]!.attachment_count })),
              } satisfies DocumentsPage
            }),
          )
        }).pipe(provide),

      /** For each of the projects that is the organisation's (the others are absent), its `list`. */
      listForProjects: (projectIds: ReadonlyArray<string>, filter?: DocumentFilter) =>
        listForProjects(projectIds, filter).pipe(provide),

      get: (projectId: string, documentId: string) =>
        Effect.gen(function* () {
          const org = yield* CurrentOrganization
          return yield* withDb((db) =>
            Effect.flatMap(findDocument(db, org.id, projectId, documentId), (row) => toDocument(db, row)),
          )
        }).pipe(provide),

      /** 404 unless the project is a live project of the current organisation (checked before reading a body). */
      checkUploadTarget: (projectId: string) =>
        Effect.gen(function* () {
          const org = yield* CurrentOrganization
          yield* withDb((db) => checkLiveProject(db, org.id, projectId))
        }).pipe(provide),

      /**
       * Stores the file, then in one transaction records the document (Pending, version 1), its tags and
       * their TAG dimensions, and enqueues its parse task. The file is stored first, so an answered upload
       * is never lost; it is removed again exactly when the transaction does not commit (a client that
       * disconnects meanwhile changes nothing). With an Idempotency-Key, a repeated request gets the first
       * answer again (`replayed`), and a different request with the same key is refused (422).
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
              Effect.logInfo(
                answer.replayed ? "upload repeated (Idempotency-Key)" : "document uploaded",
              ).pipe(
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
                  Effect.catchAllDefect((e) =>
                    isBlobNotFound(e)
                      ? Effect.fail(
                          Conflict.of(
                            `The stored file of document ${documentId} is gone, so it cannot be parsed again; upload it again (PUT …/documents/${documentId}/file/)`,
                          ),
                        )
                      : Effect.die(e),
                  ),
                ),
          } satisfies VersionSource),
        ).pipe(provide),

      /**
       * Deletes or archives many documents (beyond the contract), each through the same use-case as its
       * single endpoint (`remove`, `requestArchive`), one after the other: one refused (unknown, or in a
       * project that is no longer live) is listed with the status and detail its own request would get,
       * and the others go on. 404 for an unknown project; 400 for an empty, too long or repeating list.
       */
      requestArchive: (projectId: string, documentId: string) =>
        requestArchive(projectId, documentId).pipe(provide),

      remove: (projectId: string, documentId: string) => remove(projectId, documentId).pipe(provide),

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
          const one = (
            id: string,
          ): Effect.Effect<void, ProblemError, Db | BlobStore | CurrentOrganization> =>
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

      /**
       * Copies processed documents into another live project of the organisation: new ids, the stored
       * bytes under new keys, tags, status, pages (and their count), summary and metadata. Files are copied before the
       * rows commit, and removed again exactly when the transaction does not commit.
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
              yield* Effect.forEach(copies, (c) => blobs.copy(c.source.blob_key, c.key), {
                concurrency: 4,
                discard: true,
              })
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

      /** The original file of a document of the current organisation. */
      open: (projectId: string, documentId: string) =>
        Effect.gen(function* () {
          const org = yield* CurrentOrganization
          const row = yield* withDb((db) => findDocument(db, org.id, projectId, documentId))
          return yield* openBlob(row)
        }).pipe(provide),

      /** The original file behind a signed `file_url`; no API key, the signature is the authorisation. */
      openSigned: (documentId: string, expires: number, signature: string) =>
        Effect.gen(function* () {
          const row = yield* withDb((db) => Repo.findDocument(db, documentId))
          if (!row) return yield* NotFound.of("Document", documentId)
          const key = yield* signingSecret
          const expected = Buffer.from(sign(key, row.id, row.version, expires))
          const given = Buffer.from(signature)
          if (
            !isBase64Url(signature) ||
            given.length !== expected.length ||
            !timingSafeEqual(given, expected)
          )
            return yield* DownloadForbidden.of("The download link's signature is not valid")
          if (expires * 1000 < (yield* Clock.currentTimeMillis))
            return yield* DownloadForbidden.of(
              "The download link has expired; fetch the document again for a fresh file_url",
            )
          return yield* openBlob(row)
        }).pipe(provide),
    }
  }),
}) {}
