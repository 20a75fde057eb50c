import { Schema } from "effect"
import {
  AgentType,
  AgentValueType,
  DimensionSource,
  DimensionValueType,
  DocumentStatus,
  DocumentType,
  ExtractionStatus,
  ParsingState,
} from "./Enums.ts"

/** The spec's response records (api-v1.md, "Resources and their fields"), exactly as they go on the wire. */

const Uuid = Schema.UUID
const DateTime = Schema.String.annotations({ format: "date-time", description: "ISO 8601 date-time" })
const DateOnly = Schema.String.pipe(Schema.pattern(/^\d{4}-\d{2}-\d{2}$/)).annotations({
  format: "date",
  description: "YYYY-MM-DD",
})
export const IsoDate = DateOnly

/**
 * A JSON object of any shape (a JSON Schema, a mapping, a schema-shaped result), unchecked on decoding.
 * Described as an object: plain `Schema.Unknown` would give every such field the same JSON Schema `$id`
 * (`/schemas/unknown`), and a description with one `$id` on several different schemas cannot be compiled.
 */
export const JsonObject = (description?: string) =>
  Schema.Unknown.annotations({
    jsonSchema: { type: "object", ...(description === undefined ? {} : { description }) },
  })

/** As `JsonObject`, or null. */
export const JsonObjectOrNull = (description?: string) =>
  Schema.Unknown.annotations({
    jsonSchema: {
      anyOf: [{ type: "object" }, { type: "null" }],
      ...(description === undefined ? {} : { description }),
    },
  })

export const Project = Schema.Struct({
  id: Uuid,
  name: Schema.String,
  description: Schema.String,
  created_at: DateTime,
  last_visited_at: Schema.NullOr(DateTime),
  reference_date: Schema.NullOr(DateOnly),
  auto_archive_after_days: Schema.NullOr(Schema.Int),
  document_count: Schema.Int,
  agent_count: Schema.Int,
  is_pinned: Schema.Boolean,
  folder_id: Schema.NullOr(Uuid),
  project_modules: Schema.Record({ key: Schema.String, value: Schema.Boolean }),
  target_output_schema: JsonObjectOrNull("the project's target JSON Schema (Draft 2020-12), or null"),
  output_mapping_status: Schema.String,
}).annotations({ identifier: "V1Project" })
export type Project = typeof Project.Type

export const Folder = Schema.Struct({
  id: Uuid,
  name: Schema.String,
  parent_id: Schema.NullOr(Uuid),
  created_at: DateTime,
  updated_at: DateTime,
}).annotations({ identifier: "V1Folder" })
export type Folder = typeof Folder.Type

export const DocumentTag = Schema.Struct({ key: Schema.String, value: Schema.String }).annotations({
  identifier: "V1DocumentTag",
})
export type DocumentTag = typeof DocumentTag.Type

export const Document = Schema.Struct({
  id: Uuid,
  project_id: Uuid,
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
  parent_document_id: Schema.NullOr(Uuid).annotations({
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

/** One parsed page of a processed document (the spec lists the endpoint without its shape). */
export const DocumentPage = Schema.Struct({
  document_id: Uuid,
  page_number: Schema.Int.annotations({ description: "1-based" }),
  text: Schema.String,
  width: Schema.NullOr(Schema.Number),
  height: Schema.NullOr(Schema.Number),
  unit: Schema.NullOr(Schema.String).annotations({
    description: "`pt` (PDF points) or `px` (image pixels); null for formats without a page size",
  }),
  layout: Schema.Array(LayoutItem).annotations({ description: "empty for formats without coordinates" }),
}).annotations({ identifier: "V1DocumentPage" })
export type DocumentPage = typeof DocumentPage.Type

export const DocumentCopyResponse = Schema.Struct({
  copied_count: Schema.Int,
  document_id_mappings: Schema.Array(Schema.Struct({ source_document_id: Uuid, copied_document_id: Uuid })),
}).annotations({ identifier: "V1DocumentCopyResponse" })
export type DocumentCopyResponse = typeof DocumentCopyResponse.Type

export const Dimension = Schema.Struct({
  id: Uuid,
  project_id: Uuid,
  name: Schema.String,
  description: Schema.String,
  example_values: Schema.String,
  value_type: DimensionValueType,
  source: DimensionSource,
  auto_attach_to_new_agents: Schema.Boolean,
  created_at: DateTime,
}).annotations({ identifier: "V1Dimension" })
export type Dimension = typeof Dimension.Type

export const AgentDimension = Schema.Struct({
  dimension_id: Uuid,
  dimension_mapping_id: Uuid,
  name: Schema.String,
  description: Schema.String,
  values: Schema.Array(Schema.String),
  value_count: Schema.Int,
  order: Schema.Int,
  are_values_dynamic: Schema.Boolean,
  source: DimensionSource,
}).annotations({ identifier: "V1AgentDimension" })
export type AgentDimension = typeof AgentDimension.Type

export const DerivedAgentReference = Schema.Struct({ agent_id: Uuid, agent_name: Schema.String }).annotations(
  {
    identifier: "V1DerivedAgentReference",
  },
)

export const Agent = Schema.Struct({
  id: Uuid,
  project_id: Uuid,
  template_id: Schema.NullOr(Uuid),
  dimensions: Schema.Array(AgentDimension),
  created_at: DateTime,
  extraction_status: ExtractionStatus,
  requires_attention: Schema.Boolean,
  improvement_tip_summary: Schema.NullOr(Schema.String),
  name: Schema.String,
  extraction_instructions: Schema.String,
  value_type: AgentValueType,
  unit: Schema.String,
  examples: Schema.String,
  inconsistency_instructions: Schema.String,
  resolution_instructions: Schema.String,
  enable_complex_calculations_in_resolution: Schema.Boolean,
  enable_web_search: Schema.Boolean,
  value_if_not_found: Schema.String,
  inconsistency_summary: Schema.NullOr(Schema.String),
  agent_type: AgentType,
  derived_prompt: Schema.String,
  is_evaluation: Schema.Boolean,
  derived_agent_references: Schema.Array(DerivedAgentReference),
}).annotations({ identifier: "V1Agent" })
export type Agent = typeof Agent.Type

export const ProjectStatus = Schema.Struct({
  pipeline_running: Schema.Boolean,
  schema_status: Schema.String,
  parsing_state: ParsingState,
  document_count: Schema.Int,
  documents_by_status: Schema.Struct({ Pending: Schema.Int, Processed: Schema.Int, Failed: Schema.Int }),
}).annotations({ identifier: "V1ProjectStatus" })
export type ProjectStatus = typeof ProjectStatus.Type
