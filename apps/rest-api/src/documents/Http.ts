import { contentMediaTypes } from "@dxs/domain/Content"
import { BadRequest, Documents, Pages } from "@dxs/services"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Effect, Schema } from "effect"
import { Api } from "../Api.ts"
import { fileDownload } from "../Download.ts"
import {
  answerResponse,
  readUploadForm,
  UPLOAD_FIELD_MAX_BYTES,
  type UploadForm,
  type UploadFormLimits,
} from "../UploadForm.ts"
import { TagsValue } from "./Api.ts"
import { matchesIfNoneMatch, pageImageResponse } from "./PageImage.ts"

const decodeTags = Schema.decodeUnknown(Schema.parseJson(TagsValue))

const documentForm = (maxBytes: number): UploadFormLimits => ({
  files: { file: 1 },
  maxFileBytes: maxBytes,
  maxParts: 16,
  maxFields: 8,
  maxFieldBytes: UPLOAD_FIELD_MAX_BYTES,
  notMultipart: "Upload a document as multipart/form-data with the file in field `file`",
})

/** The one file of field `file`, or 400. */
const theFile = (form: UploadForm) => {
  const file = form.files.find((f) => f.field === "file")
  if (file === undefined)
    return BadRequest.of("The multipart field `file` with the document is missing", [
      { path: "file", message: "is missing" },
    ])
  return Effect.succeed({ path: file.path, name: file.name, contentType: file.contentType })
}

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
        // Raw: the body is read by our own multipart reader (UploadForm.ts), under the configured limits.
        .handleRaw("upload", ({ path, headers, request }) =>
          Effect.gen(function* () {
            yield* documents.checkUploadTarget(path.project_id)
            const form = yield* readUploadForm(request, documentForm(maxBytes))
            const file = yield* theFile(form)
            const tagValues = form.fields.get("tags") ?? []
            if (tagValues.length > 1)
              return yield* BadRequest.of("Give `tags` once, as a JSON object string", [
                { path: "tags", message: "must be a single JSON object string" },
              ])
            const rawTags = tagValues[0]
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
            const answer = yield* documents.upload(path.project_id, file, tags, {
              idempotencyKey: headers["idempotency-key"],
            })
            return answerResponse(answer)
          }).pipe(Effect.scoped),
        )
        .handleRaw("replaceFile", ({ path, request }) =>
          Effect.gen(function* () {
            yield* documents.get(path.project_id, path.document_id)
            const file = yield* theFile(yield* readUploadForm(request, documentForm(maxBytes)))
            const document = yield* documents.replaceFile(path.project_id, path.document_id, file)
            return HttpServerResponse.unsafeJson(document)
          }).pipe(Effect.scoped),
        )
        .handle("listPage", ({ path, urlParams }) => documents.page(path.project_id, urlParams))
        .handle("reparse", ({ path }) => documents.reparse(path.project_id, path.document_id))
        .handle("bulk", ({ path, payload }) => documents.bulk(path.project_id, payload))
        .handle("archive", ({ path }) => documents.requestArchive(path.project_id, path.document_id))
        .handle("page", ({ path }) => pages.get(path.project_id, path.document_id, path.page_number))
        .handle("content", ({ path, urlParams }) => {
          const format = urlParams.format ?? "markdown"
          return Effect.map(pages.content(path.project_id, path.document_id, format), (body) =>
            HttpServerResponse.text(body, { contentType: contentMediaTypes[format] }),
          )
        })
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
          Effect.map(documents.open(path.project_id, path.document_id), fileDownload),
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
        fileDownload,
      ),
    )
  }),
)
