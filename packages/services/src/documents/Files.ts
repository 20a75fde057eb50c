/**
 * The file of a document: its name, type and bytes as an upload or a new version brings them, checked
 * and stored before any row refers to them.
 */
import { createHash, randomUUID } from "node:crypto"
import { createReadStream } from "node:fs"
import type { Readable } from "node:stream"
import { type BlobStoreShape, type Conn, documentBlobKey } from "@dxs/db"
import * as Repo from "@dxs/db/repositories/Documents"
import { documentTypeFromFileName, mimeTypeOfFileName, supportedExtensions } from "@dxs/domain/DocumentType"
import type { DocumentType } from "@dxs/domain/Enums"
import { Effect } from "effect"
import { BadRequest, type Conflict, PayloadTooLarge, UnsupportedMediaType } from "../Errors.ts"

export interface UploadedFile {
  /** A local file holding the bytes (moved into the blob store). */
  readonly path: string
  /** The client's file name. */
  readonly name: string
  readonly contentType: string
}

/** The original bytes of a document, ready to stream. */
export interface DocumentFile {
  readonly stream: Readable
  readonly fileName: string
  readonly contentType: string
  readonly size: number
}

/** The file of a new version of a document, and how to store its bytes under the version's key. */
export interface VersionSource {
  readonly file_name: string
  readonly type: DocumentType
  readonly content_type: string
  readonly size_bytes: number
  readonly sha256: string
  /** Stores the new version's bytes under `key`; Conflict when they cannot be had any more. */
  readonly store: (blobs: BlobStoreShape, key: string) => Effect.Effect<void, Conflict>
}

/** The extension decides the content type (the client's claim only when we know none). */
export const contentTypeOf = (fileName: string, claimed: string) => {
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

export const digestFile = (file: string) =>
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

export const unsupportedType = (fileName: string) =>
  UnsupportedMediaType.of(
    `Cannot process "${fileName}": unsupported file type. Supported extensions: ${supportedExtensions
      .map((e) => `.${e}`)
      .join(", ")}`,
  )

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
