/** Documents and their pages (api-v1.md "Documents"): the records and the JSON bodies of their writes. */
import { Schema } from "effect"
import { DocumentStatus, DocumentType } from "../Enums.ts"
import { DateTime, RecordId, Uuid } from "./Fields.ts"

export const DocumentTag = Schema.Struct({ key: Schema.String, value: Schema.String }).annotations({
  identifier: "V1DocumentTag",
})
export type DocumentTag = typeof DocumentTag.Type

export const Document = Schema.Struct({
  id: RecordId,
  project_id: RecordId,
  file_url: Schema.String.annotations({ format: "uri" }),
  uploaded_at: DateTime,
  type: DocumentType,
  page_count: Schema.Int,
  version: Schema.Int,
  summary: Schema.String,
  metadata: Schema.String,
  status: DocumentStatus,
  uses_agentic_extraction: Schema.Boolean,
  last_parsed_at: Schema.NullOr(DateTime),
  archive_requested_at: Schema.NullOr(DateTime),
  tags: Schema.Array(DocumentTag),
  file_name: Schema.String,
  failure_reason: Schema.NullOr(Schema.String).annotations({
    description: "why parsing failed, when status is Failed",
  }),
  parent_document_id: Schema.NullOr(RecordId).annotations({
    description: "the e-mail a document was attached to, when it came from one",
  }),
}).annotations({ identifier: "V1Document" })
export type Document = typeof Document.Type

export const LayoutItem = Schema.Struct({
  text: Schema.String,
  x: Schema.Number,
  y: Schema.Number,
  width: Schema.Number,
  height: Schema.Number,
  confidence: Schema.optional(Schema.Number).annotations({ description: "OCR confidence 0-100" }),
}).annotations({
  identifier: "V1LayoutItem",
  description: "a positioned piece of text; top-left origin, in the page's unit",
})
export type LayoutItem = typeof LayoutItem.Type

const Box = Schema.Tuple(Schema.Number, Schema.Number, Schema.Number, Schema.Number).annotations({
  description: "[x0, y0, x1, y1]: top-left origin, in the page's unit",
})

export const TableCell = Schema.Struct({
  row: Schema.Int.annotations({ description: "0-based row of the cell's top-left position" }),
  column: Schema.Int.annotations({ description: "0-based column of the cell's top-left position" }),
  row_span: Schema.Int.annotations({ description: "rows the cell covers (1 or more)" }),
  column_span: Schema.Int.annotations({ description: "columns the cell covers (1 or more)" }),
  text: Schema.String,
  header: Schema.Boolean.annotations({ description: "a header cell (a header row, <th>)" }),
  bbox: Schema.NullOr(Box).annotations({ description: "null for formats without coordinates" }),
}).annotations({ identifier: "V1TableCell" })
export type TableCell = typeof TableCell.Type

export const PageTable = Schema.Struct({
  bbox: Schema.NullOr(Box).annotations({ description: "null for formats without coordinates" }),
  rows: Schema.Array(Schema.Array(Schema.String)).annotations({
    description:
      'the full grid, top row first: a spanning cell\'s text at its top-left position and "" in the positions it covers',
  }),
  cells: Schema.Array(TableCell).annotations({ description: "every cell once, by row then column" }),
  continued: Schema.Boolean.annotations({ description: "the table goes on from the previous page" }),
}).annotations({ identifier: "V1PageTable", description: "a table of the page, as cells" })
export type PageTable = typeof PageTable.Type

/** One parsed page of a processed document (the spec lists the endpoint without its shape). */
export const DocumentPage = Schema.Struct({
  document_id: RecordId,
  page_number: Schema.Int.annotations({ description: "1-based" }),
  text: Schema.String,
  width: Schema.NullOr(Schema.Number),
  height: Schema.NullOr(Schema.Number),
  unit: Schema.NullOr(Schema.String).annotations({
    description: "`pt` (PDF points) or `px` (image pixels); null for formats without a page size",
  }),
  layout: Schema.Array(LayoutItem).annotations({ description: "empty for formats without coordinates" }),
  tables: Schema.Array(PageTable).annotations({
    description:
      "beyond the contract: the page's tables, top to bottom (PDF, Word, PowerPoint, Excel, HTML, e-mail)",
  }),
}).annotations({ identifier: "V1DocumentPage" })
export type DocumentPage = typeof DocumentPage.Type

export const DocumentCopyResponse = Schema.Struct({
  copied_count: Schema.Int,
  document_id_mappings: Schema.Array(
    Schema.Struct({ source_document_id: RecordId, copied_document_id: RecordId }),
  ),
}).annotations({ identifier: "V1DocumentCopyResponse" })
export type DocumentCopyResponse = typeof DocumentCopyResponse.Type

/** Tags on input: a list of `{key, value}` or an object of key to value. */
const TagKey = Schema.String.annotations({
  jsonSchema: { type: "string", minLength: 1, maxLength: 100, description: "1-100 characters" },
})

export const TagsValue = Schema.Union(
  Schema.Array(Schema.Struct({ key: TagKey, value: Schema.String })),
  Schema.Record({ key: Schema.String, value: Schema.String }),
).annotations({
  identifier: "V1DocumentTagsInput",
  description:
    'a list of {"key", "value"} objects, or an object of key to value; keys unique, 1-100 characters',
})
export type TagsValue = typeof TagsValue.Type

export const DocumentCopyRequest = Schema.Struct({
  target_project_id: Uuid,
  // Described by hand: the filter's generated description would carry its name as a title (`minItems(1)`).
  document_ids: Schema.Array(Uuid)
    .pipe(Schema.minItems(1, { message: () => "must not be empty" }))
    .annotations({
      jsonSchema: {
        type: "array",
        items: {
          type: "string",
          description: "UUID",
          format: "uuid",
          pattern: "^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$",
        },
        minItems: 1,
        description: "the documents to copy, at least one",
      },
    }),
}).annotations({ identifier: "V1DocumentCopyRequest" })
export type DocumentCopyRequest = typeof DocumentCopyRequest.Type

export const DocumentTagsRequest = Schema.Struct({ tags: TagsValue }).annotations({
  identifier: "V1DocumentTagsRequest",
})
export type DocumentTagsRequest = typeof DocumentTagsRequest.Type

// Beyond the contract: the documents panel's page, and actions on many documents at once.

/** A document as a page of the panel lists it: with the number of its e-mail attachments. */
export const DocumentListItem = Schema.Struct({
  ...Document.fields,
  attachment_count: Schema.Int.annotations({
    description: "documents whose parent_document_id is this one (an e-mail's attachments)",
  }),
}).annotations({ identifier: "V1DocumentListItem" })
export type DocumentListItem = typeof DocumentListItem.Type

export const DocumentsPage = Schema.Struct({
  count: Schema.Int.annotations({ description: "documents matching the filters, across all pages" }),
  next: Schema.NullOr(Schema.String).annotations({ description: "relative URL of the next page, or null" }),
  previous: Schema.NullOr(Schema.String).annotations({
    description: "relative URL of the previous page, or null",
  }),
  results: Schema.Array(DocumentListItem),
}).annotations({ identifier: "V1DocumentsPage" })
export type DocumentsPage = typeof DocumentsPage.Type

export const DOCUMENT_BULK_MAX = 500
export const DocumentBulkActions = ["delete", "archive"] as const

const uuidItem = {
  type: "string",
  description: "UUID",
  format: "uuid",
  pattern: "^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$",
} as const

export const DocumentBulkRequest = Schema.Struct({
  action: Schema.Literal(...DocumentBulkActions).annotations({
    description: "`delete` or `archive`, as the single-document endpoints do",
  }),
  // Described by hand: the filters' generated description would carry their names as titles.
  document_ids: Schema.Array(Uuid)
    .pipe(
      Schema.minItems(1, { message: () => "must not be empty" }),
      Schema.maxItems(DOCUMENT_BULK_MAX, { message: () => `must list at most ${DOCUMENT_BULK_MAX} ids` }),
    )
    .annotations({
      jsonSchema: {
        type: "array",
        items: uuidItem,
        minItems: 1,
        maxItems: DOCUMENT_BULK_MAX,
        uniqueItems: true,
        description: `the documents to act on: 1 to ${DOCUMENT_BULK_MAX} ids, each once`,
      },
    }),
}).annotations({ identifier: "V1DocumentBulkRequest" })
export type DocumentBulkRequest = typeof DocumentBulkRequest.Type

export const DocumentBulkFailure = Schema.Struct({
  document_id: RecordId,
  status: Schema.Int.annotations({ description: "the status the single-document endpoint answers" }),
  detail: Schema.String,
}).annotations({ identifier: "V1DocumentBulkFailure" })
export type DocumentBulkFailure = typeof DocumentBulkFailure.Type

export const DocumentBulkResponse = Schema.Struct({
  succeeded: Schema.Array(RecordId),
  failed: Schema.Array(DocumentBulkFailure),
}).annotations({ identifier: "V1DocumentBulkResponse" })
export type DocumentBulkResponse = typeof DocumentBulkResponse.Type
