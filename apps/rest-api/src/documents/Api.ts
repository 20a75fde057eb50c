import {
  Document,
  DocumentCopyRequest,
  DocumentCopyResponse,
  DocumentPage,
  DocumentTagsRequest,
} from "@dxs/domain/contract/Document"
import { downloadForbiddenResponse } from "@dxs/services"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Authentication } from "../Auth.ts"
import { flexibleBody } from "../Body.ts"
import {
  BadRequest,
  Conflict,
  IdempotencyHeaders,
  integerFromString,
  NotFound,
  PayloadTooLarge,
  Unprocessable,
  UnsupportedMediaType,
  Uuid,
  uploadFile,
  wholeNumber,
} from "../Common.ts"

/** The tags of an upload form, read by the upload handler. */
export { TagsValue } from "@dxs/domain/contract/Document"

export const DocumentUpload = Schema.Struct({
  file: uploadFile("the document; its extension decides its type"),
  tags: Schema.optional(
    Schema.String.annotations({ description: 'optional tags as a JSON object string, e.g. {"region":"EU"}' }),
  ),
}).annotations({ identifier: "V1DocumentUpload" })

export const DocumentReplace = Schema.Struct({
  file: uploadFile("the new file; its extension decides the document's type"),
}).annotations({ identifier: "V1DocumentReplace" })

const ProjectPath = Schema.Struct({ project_id: Uuid })
const DocumentPath = Schema.Struct({ project_id: Uuid, document_id: Uuid })

const PagePath = Schema.Struct({
  project_id: Uuid,
  document_id: Uuid,
  page_number: wholeNumber(1).annotations({ description: "1-based page number" }),
})

const PngBytes = HttpApiSchema.Uint8Array({ contentType: "image/png" }).annotations({
  description: "the page as a PNG image",
})

/** Described as any media type: a download is served with the file's own Content-Type. */
const FileBytes = HttpApiSchema.Uint8Array({ contentType: "*/*" }).annotations({
  description: "the original file, with its own Content-Type and a Content-Disposition attachment header",
})

export class DocumentsApi extends HttpApiGroup.make("documents")
  .add(
    HttpApiEndpoint.get("list", "/projects/:project_id/documents/")
      .setPath(ProjectPath)
      .setUrlParams(
        Schema.Struct({
          tag_key: Schema.optional(Schema.String),
          tag_value: Schema.optional(Schema.String),
        }).annotations({ description: "tag_key and tag_value filter together: supply both or neither" }),
      )
      .addSuccess(Schema.Array(Document))
      .annotate(OpenApi.Summary, "List a project's documents, most recently uploaded first"),
  )
  .add(
    HttpApiEndpoint.post("upload", "/projects/:project_id/documents/")
      .setPath(ProjectPath)
      .setHeaders(IdempotencyHeaders)
      .setPayload(HttpApiSchema.Multipart(DocumentUpload))
      .addSuccess(Document, { status: 201 })
      .addError(PayloadTooLarge)
      .addError(UnsupportedMediaType)
      .addError(Unprocessable)
      .annotate(
        OpenApi.Summary,
        "Upload a document (multipart field `file`); it is stored, then parsed asynchronously",
      )
      .annotate(
        OpenApi.Description,
        "The file name is kept as sent (UTF-8 `filename`, or RFC 5987 `filename*`, preferred), without directory parts; an empty name, `.`, `..`, control characters or more than 255 characters are refused with 400. With an `Idempotency-Key` header, a retry gets the first answer again (`Idempotent-Replayed: true`); the same key with a different request is 422.",
      ),
  )
  .add(
    HttpApiEndpoint.post("copy", "/projects/:project_id/documents/copy/")
      .setPath(ProjectPath)
      .setPayload(flexibleBody(DocumentCopyRequest))
      .addSuccess(DocumentCopyResponse, { status: 201 })
      .annotate(OpenApi.Summary, "Copy processed documents into another live project"),
  )
  .add(
    HttpApiEndpoint.get("get", "/projects/:project_id/documents/:document_id/")
      .setPath(DocumentPath)
      .addSuccess(Document)
      .annotate(OpenApi.Summary, "Retrieve a document of this project"),
  )
  .add(
    HttpApiEndpoint.del("delete", "/projects/:project_id/documents/:document_id/")
      .setPath(DocumentPath)
      .addSuccess(HttpApiSchema.NoContent)
      .annotate(OpenApi.Summary, "Delete a document, its tags and its stored file"),
  )
  .add(
    HttpApiEndpoint.put("setTags", "/projects/:project_id/documents/:document_id/tags/")
      .setPath(DocumentPath)
      .setPayload(flexibleBody(DocumentTagsRequest))
      .addSuccess(Document)
      .annotate(OpenApi.Summary, "Replace a document's tags (TAG dimensions follow)"),
  )
  .add(
    HttpApiEndpoint.put("replaceFile", "/projects/:project_id/documents/:document_id/file/")
      .setPath(DocumentPath)
      .setPayload(HttpApiSchema.Multipart(DocumentReplace))
      .addSuccess(Document)
      .addError(PayloadTooLarge)
      .addError(UnsupportedMediaType)
      .annotate(
        OpenApi.Summary,
        "Replace a document's file (multipart field `file`): version + 1, Pending, parsed again asynchronously",
      )
      .annotate(
        OpenApi.Description,
        "The previous pages, summary and metadata, and documents extracted from the previous file (e-mail attachments), are removed. 409 while the document is still Pending.",
      ),
  )
  .add(
    HttpApiEndpoint.post("archive", "/projects/:project_id/documents/:document_id/archive/")
      .setPath(DocumentPath)
      .addSuccess(Document, { status: 202 })
      .annotate(
        OpenApi.Summary,
        "Request archival: the document moves into the project's archive project in the background",
      ),
  )
  .add(
    HttpApiEndpoint.get("page", "/projects/:project_id/documents/:document_id/pages/:page_number/")
      .setPath(PagePath)
      .addSuccess(DocumentPage)
      .annotate(OpenApi.Summary, "A parsed page of a processed document: text, size and layout"),
  )
  .add(
    HttpApiEndpoint.get("pageImage", "/projects/:project_id/documents/:document_id/pages/:page_number/image/")
      .setPath(PagePath)
      .setUrlParams(
        Schema.Struct({
          version: Schema.optional(
            wholeNumber(1).annotations({
              description:
                "the document's current version: the answer is then cacheable for good (immutable); another version is a 404",
            }),
          ),
        }),
      )
      .addSuccess(PngBytes)
      .annotate(
        OpenApi.Summary,
        "A page as a PNG image (PDF and image documents; Word, PowerPoint and Excel when LibreOffice is installed)",
      )
      .annotate(
        OpenApi.Description,
        "Drawn once per document version and page, then stored. A strong ETag comes with it (If-None-Match → 304); Cache-Control is private, no-cache, or private, max-age=31536000, immutable under ?version= of the current version.",
      ),
  )
  .add(
    HttpApiEndpoint.get("file", "/projects/:project_id/documents/:document_id/file/")
      .setPath(DocumentPath)
      .addSuccess(FileBytes)
      .annotate(OpenApi.Summary, "Download the original file"),
  )
  .addError(BadRequest)
  .addError(NotFound)
  .addError(Conflict)
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Documents") {}

/** Signed download links (`file_url`): no API key, the signature authorises. */
export class FilesApi extends HttpApiGroup.make("files")
  .add(
    HttpApiEndpoint.get("download", "/files/:document_id")
      .setPath(Schema.Struct({ document_id: Uuid }))
      .setUrlParams(
        Schema.Struct({
          expires: integerFromString.annotations({
            description: "expiry, in seconds since the Unix epoch",
          }),
          signature: Schema.String,
        }),
      )
      .addSuccess(FileBytes)
      .addError(downloadForbiddenResponse)
      .annotate(
        OpenApi.Summary,
        "Download the original file through a document's signed, expiring file_url (no API key)",
      ),
  )
  .addError(BadRequest)
  .addError(NotFound)
  .annotate(OpenApi.Title, "Files") {}
