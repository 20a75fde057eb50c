import { contentFormats } from "@dxs/domain/Content"
import {
  Document,
  DocumentBulkRequest,
  DocumentBulkResponse,
  DocumentCopyRequest,
  DocumentCopyResponse,
  DocumentPage,
  DocumentsPage,
  DocumentTagsRequest,
} from "@dxs/domain/contract/Document"
import { DocumentStatuses } from "@dxs/domain/Enums"
import {
  DOCUMENT_SEARCH_MAX_LENGTH,
  DOCUMENTS_PAGE_DEFAULT_LIMIT,
  DOCUMENTS_PAGE_MAX_LIMIT,
  downloadForbiddenResponse,
} from "@dxs/services"
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import { Schema } from "effect"
import { Authentication } from "../Auth.ts"
import { flexibleBody } from "../Body.ts"
import {
  BadRequest,
  Conflict,
  cursorParam,
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

/** Markdown, JSON or text by `format` (each with its own Content-Type). */
// Described as any media type: text/markdown, application/json or text/plain, by `format`.
const ContentText = HttpApiSchema.Text({ contentType: "*/*" }).annotations({
  description:
    "the document in reading order: Markdown (text/markdown), a JSON document (application/json: pages → blocks) or plain text (text/plain)",
})

export const ContentParams = Schema.Struct({
  format: Schema.optional(
    Schema.Literal(...contentFormats).annotations({
      description: `${contentFormats.join(", ")}; default markdown`,
    }),
  ),
})

/** Described as any media type: a download is served with the file's own Content-Type. */
const FileBytes = HttpApiSchema.Uint8Array({ contentType: "*/*" }).annotations({
  description: "the original file, with its own Content-Type and a Content-Disposition attachment header",
})

const searchText = Schema.String.pipe(
  Schema.minLength(1, { message: () => `must be 1 to ${DOCUMENT_SEARCH_MAX_LENGTH} characters` }),
  Schema.maxLength(DOCUMENT_SEARCH_MAX_LENGTH, {
    message: () => `must be 1 to ${DOCUMENT_SEARCH_MAX_LENGTH} characters`,
  }),
).annotations({
  jsonSchema: {
    type: "string",
    minLength: 1,
    maxLength: DOCUMENT_SEARCH_MAX_LENGTH,
    description: "only documents whose file name contains this, ignoring case",
  },
})

/** The tag filter of the documents list and page: `tag_key` and `tag_value` together. */
const tagFilter = {
  tag_key: Schema.optional(
    Schema.String.annotations({
      description:
        "with tag_value: only documents with this tag. Both or neither: one without the other is 400",
    }),
  ),
  tag_value: Schema.optional(
    Schema.String.annotations({
      description: "the value of tag tag_key. Both or neither: one without the other is 400",
    }),
  ),
}

export const DocumentsPageParams = Schema.Struct({
  limit: Schema.optional(
    wholeNumber(1, DOCUMENTS_PAGE_MAX_LIMIT).annotations({
      description: `page size, default ${DOCUMENTS_PAGE_DEFAULT_LIMIT}, at most ${DOCUMENTS_PAGE_MAX_LIMIT}`,
    }),
  ),
  offset: Schema.optional(wholeNumber(0).annotations({ description: "documents to skip, default 0" })),
  cursor: Schema.optional(cursorParam),
  search: Schema.optional(searchText),
  status: Schema.optional(
    Schema.Literal(...DocumentStatuses).annotations({
      description: `only documents with this status: ${DocumentStatuses.join(", ")}`,
    }),
  ),
  ...tagFilter,
  parent_document_id: Schema.optional(
    Uuid.annotations({
      description: "only this message's attachments; without it, only documents that are no attachment",
    }),
  ),
})

export class DocumentsApi extends HttpApiGroup.make("documents")
  .add(
    HttpApiEndpoint.get("list", "/projects/:project_id/documents/")
      .setPath(ProjectPath)
      .setUrlParams(
        Schema.Struct({
          ...tagFilter,
        }).annotations({ description: "tag_key and tag_value filter together: supply both or neither" }),
      )
      .addSuccess(Schema.Array(Document))
      .annotate(OpenApi.Summary, "List a project's documents, most recently uploaded first"),
  )
  .add(
    HttpApiEndpoint.get("listPage", "/projects/:project_id/documents/page/")
      .setPath(ProjectPath)
      .setUrlParams(DocumentsPageParams)
      .addSuccess(DocumentsPage)
      .annotate(
        OpenApi.Summary,
        "A page of a project's documents, most recently uploaded first, with filters (beyond the contract)",
      )
      .annotate(
        OpenApi.Description,
        "Beyond the contract (the documents panel's list; the contract's list endpoint is unchanged). Only documents without a parent unless `parent_document_id` names a message, whose attachments are then listed; each document comes with its `attachment_count`. `next` and `previous` are relative links that keep the filters.",
      ),
  )
  .add(
    HttpApiEndpoint.post("bulk", "/projects/:project_id/documents/bulk/")
      .setPath(ProjectPath)
      .setPayload(flexibleBody(DocumentBulkRequest))
      .addSuccess(DocumentBulkResponse)
      .annotate(OpenApi.Summary, "Delete or archive many documents at once (beyond the contract)")
      .annotate(
        OpenApi.Description,
        "Beyond the contract. Each document is deleted or archived as its own DELETE or POST …/archive/ would; one that is refused (unknown, say) is listed in `failed` with the status and detail its own request would get, and the others go on. 404 for an unknown project; 400 for an empty list, more than 500 ids or an id given twice.",
      ),
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
    HttpApiEndpoint.post("reparse", "/projects/:project_id/documents/:document_id/reparse/")
      .setPath(DocumentPath)
      .addSuccess(Document, { status: 202 })
      .annotate(
        OpenApi.Summary,
        "Parse the stored file again as a new version: version + 1, Pending (beyond the contract)",
      )
      .annotate(
        OpenApi.Description,
        "Beyond the contract. As a replacement of the file by its own bytes: the previous pages, summary, metadata and attachments are removed and the previous version's extractions are no longer current. For a parse that failed for a passing reason, or after a parser upgrade. 409 while the document is still Pending.",
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
      .annotate(OpenApi.Summary, "A parsed page of a processed document: text, size, layout and tables"),
  )
  .add(
    HttpApiEndpoint.get("content", "/projects/:project_id/documents/:document_id/content/")
      .setPath(DocumentPath)
      .setUrlParams(ContentParams)
      .addSuccess(ContentText)
      .annotate(
        OpenApi.Summary,
        "Beyond the contract: the whole processed document in reading order, as Markdown, JSON or text",
      )
      .annotate(
        OpenApi.Description,
        "Markdown: headings, paragraphs, list items and tables (GitHub tables; an HTML table where spans need one), running headers and footers left out. JSON: `{file_name, type, page_count, pages: [{page_number, width, height, unit, blocks: [{kind, page, text, bbox, level?, table?}]}], attachments}`, block kinds heading, paragraph, list_item, table, figure, caption, page_header, page_footer. Text: the pages' text. An e-mail's processed attachments follow it, each under its file name. 404 while the document is Pending or when it Failed.",
      ),
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
