import { BadRequest, type DocumentFile, Documents, Pages, PayloadTooLarge } from "@dxs/services"
import { HttpApiBuilder, type HttpServerRequest, HttpServerResponse, Multipart } from "@effect/platform"
import { NodeHttpServerRequest } from "@effect/platform-node"
import { Effect, Option, Schema } from "effect"
import { Api } from "../Api.ts"
import { TagsValue } from "./Api.ts"
import { matchesIfNoneMatch, pageImageResponse } from "./PageImage.ts"

/** `attachment` with the name in RFC 5987 form (any characters) and an ASCII fallback for old clients. */
export const contentDisposition = (fileName: string) => {
  const fallback = fileName.replace(/[^\x20-\x7e]|["\\]/g, "_")
  const encoded = encodeURIComponent(fileName).replace(
    /['()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  )
  return `attachment; filename="${fallback}"; filename*=UTF-8''${encoded}`
}

const fileResponse = (file: DocumentFile) =>
  HttpServerResponse.raw(file.stream, {
    contentType: file.contentType,
    contentLength: file.size,
    headers: {
      "content-disposition": contentDisposition(file.fileName),
      "x-content-type-options": "nosniff",
      "cache-control": "private, no-store",
    },
  })

export const PART_HEADER_ALLOWANCE = 64 * 1024

const decodeTags = Schema.decodeUnknown(Schema.parseJson(TagsValue))

/**
 * A file over the limit stops the parser; writing the spooled file then usually fails first, so the limit
 * arrives as an `InternalError` whose cause is multipasta's `ReachedLimit`.
 */
const tooLarge = (e: Multipart.MultipartError) => {
  if (e.reason === "FileTooLarge" || e.reason === "BodyTooLarge") return true
  const cause = e.cause as { readonly _tag?: unknown; readonly limit?: unknown } | null | undefined
  return cause?._tag === "ReachedLimit" && (cause.limit === "MaxPartSize" || cause.limit === "MaxTotalSize")
}

/**
 * After refusing a body half way, read and discard the rest, so the client gets to read the answer and its
 * connection stays usable; a client that keeps sending far beyond the limit is cut off.
 */
export const discardRest = (request: HttpServerRequest.HttpServerRequest, maxBytes: number) =>
  Effect.sync(() => {
    const incoming = NodeHttpServerRequest.toIncomingMessage(request)
    if (incoming.readableEnded || incoming.destroyed) return
    const cap = Math.max(maxBytes, 64 * 1024 * 1024)
    let discarded = 0
    incoming.on("data", (chunk: Buffer) => {
      discarded += chunk.length
      if (discarded > cap) incoming.destroy()
    })
    incoming.resume()
  })

export const uploadProblem = (
  e: Multipart.MultipartError,
  maxBytes: number,
): Effect.Effect<never, BadRequest | PayloadTooLarge> =>
  tooLarge(e)
    ? PayloadTooLarge.of(`The file is larger than the limit of ${maxBytes} bytes`)
    : e.reason === "InternalError"
      ? Effect.die(e)
      : BadRequest.of(`Invalid multipart body (${e.reason})`)

/**
 * Reads a multipart body with one file in field `file` (spooled to disk) under the upload limit; the other
 * fields come back as they are.
 */
const readFileForm = (request: HttpServerRequest.HttpServerRequest, maxBytes: number) =>
  Effect.gen(function* () {
    if (!(request.headers["content-type"] ?? "").toLowerCase().includes("multipart/form-data"))
      return yield* BadRequest.of("Upload a document as multipart/form-data with the file in field `file`")
    // The parser counts a part's headers too: give it room for them; the service checks the exact size.
    const form = yield* Multipart.withLimits(request.multipart, {
      maxFileSize: Option.some(maxBytes + PART_HEADER_ALLOWANCE),
      maxParts: Option.some(16),
    }).pipe(
      Effect.catchTag("MultipartError", (e) =>
        Effect.zipRight(discardRest(request, maxBytes), uploadProblem(e, maxBytes)),
      ),
    )
    const files = form.file
    const file = Array.isArray(files) && files.length > 0 ? files[0] : undefined
    if (file === undefined || !Multipart.isPersistedFile(file))
      return yield* BadRequest.of("The multipart field `file` with the document is missing", [
        { path: "file", message: "is missing" },
      ])
    if (files!.length > 1)
      return yield* BadRequest.of("Upload one file per request in field `file`", [
        { path: "file", message: "must be a single file" },
      ])
    return { form, file: { path: file.path, name: file.name, contentType: file.contentType } }
  })

export const DocumentsHttp = HttpApiBuilder.group(Api, "documents", (handlers) =>
  Effect.gen(function* () {
    const documents = yield* Documents
    const pages = yield* Pages
    const maxBytes = documents.maxUploadBytes
    return (
      handlers
        .handle("list", ({ path, urlParams }) =>
          documents.list(path.project_id, { tagKey: urlParams.tag_key, tagValue: urlParams.tag_value }),
        )
        // Raw: the multipart limit comes from configuration, and a too large file must be a 413, not a defect.
        .handleRaw("upload", ({ path, request }) =>
          Effect.gen(function* () {
            yield* documents.checkUploadTarget(path.project_id)
            const { form, file } = yield* readFileForm(request, maxBytes)
            const rawTags = form.tags
            if (rawTags !== undefined && typeof rawTags !== "string")
              return yield* BadRequest.of("Give `tags` once, as a JSON object string", [
                { path: "tags", message: "must be a single JSON object string" },
              ])
            const tags =
              rawTags === undefined || rawTags.trim() === ""
                ? undefined
                : yield* decodeTags(rawTags).pipe(
                    Effect.mapError(() =>
                      BadRequest.of('`tags` must be a JSON object of strings, like {"region": "EU"}', [
                        { path: "tags", message: "must be a JSON object of strings" },
                      ]),
                    ),
                  )
            const document = yield* documents.upload(path.project_id, file, tags)
            return HttpServerResponse.unsafeJson(document, { status: 201 })
          }),
        )
        .handleRaw("replaceFile", ({ path, request }) =>
          Effect.gen(function* () {
            yield* documents.get(path.project_id, path.document_id)
            const { file } = yield* readFileForm(request, maxBytes)
            const document = yield* documents.replaceFile(path.project_id, path.document_id, file)
            return HttpServerResponse.unsafeJson(document)
          }),
        )
        .handle("archive", ({ path }) => documents.requestArchive(path.project_id, path.document_id))
        .handle("page", ({ path }) => pages.get(path.project_id, path.document_id, path.page_number))
        .handle("pageImage", ({ path, urlParams, request }) =>
          Effect.map(
            pages.image(path.project_id, path.document_id, path.page_number, {
              version: urlParams.version,
              notModified: (etag) => matchesIfNoneMatch(request.headers["if-none-match"], etag),
            }),
            pageImageResponse,
          ),
        )
        .handle("copy", ({ path, payload }) => documents.copy(path.project_id, payload))
        .handle("get", ({ path }) => documents.get(path.project_id, path.document_id))
        .handle("delete", ({ path }) => documents.remove(path.project_id, path.document_id))
        .handle("setTags", ({ path, payload }) =>
          documents.setTags(path.project_id, path.document_id, payload.tags),
        )
        .handle("file", ({ path }) =>
          Effect.map(documents.open(path.project_id, path.document_id), fileResponse),
        )
    )
  }),
)

export const FilesHttp = HttpApiBuilder.group(Api, "files", (handlers) =>
  Effect.gen(function* () {
    const documents = yield* Documents
    return handlers.handle("download", ({ path, urlParams }) =>
      Effect.map(
        documents.openSigned(path.document_id, urlParams.expires, urlParams.signature),
        fileResponse,
      ),
    )
  }),
)
