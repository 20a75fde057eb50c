/** A project's output schema (api-v1.md "Output schema"): the record, the body that sets it and `POST /extract/`'s answer. */
import { Schema } from "effect"
import { DiagnosticSeverity, MappingSource, MappingStatus } from "../Enums.ts"
import { JsonObject, JsonObjectOrNull, Timestamp, Uuid } from "./Fields.ts"

/** A finding about a mapping against its schema. */
export const Diagnostic = Schema.Struct({
  path: Schema.String,
  severity: DiagnosticSeverity,
  code: Schema.String,
  message: Schema.String,
}).annotations({ identifier: "V1MappingDiagnostic" })
export type Diagnostic = typeof Diagnostic.Type

export const OutputSchemaRecord = Schema.Struct({
  schema: JsonObject("the target JSON Schema (Draft 2020-12)"),
  auto_map: Schema.Boolean,
  mapping: JsonObjectOrNull(
    "the mapping node tree (kinds object, scalar_from_agent, array_from_dimension, object_from_dimension), or null",
  ),
  status: MappingStatus,
  source: MappingSource.annotations({
    description:
      "`llm`: generated automatically (by whichever provider `generated_by` names); `manual`: sent",
  }),
  generated_by: Schema.NullOr(Schema.String).annotations({
    description:
      "the language model that generated the mapping: `local` (the offline planner) or `openai:<model>`; null for a mapping sent by hand",
  }),
  error: Schema.NullOr(Schema.String),
  generated_at: Schema.NullOr(Timestamp),
  schema_in_sync: Schema.Boolean,
  diagnostics: Schema.Array(Diagnostic),
}).annotations({ identifier: "V1SchemaResponse" })
export type OutputSchemaRecord = typeof OutputSchemaRecord.Type

export const OutputSchemaRequest = Schema.Struct({
  schema: JsonObject("the target JSON Schema (Draft 2020-12), an object; in a form body, its JSON text"),
  auto_map: Schema.Boolean.annotations({
    description:
      "true: agents and mapping are generated in the background; false: the mapping is in this request",
  }),
  mapping: Schema.optional(
    JsonObjectOrNull(
      "auto_map false: an object saves it, null clears it, omitted keeps it (only when the schema is new or changed)",
    ),
  ),
}).annotations({ identifier: "V1SchemaRequest" })
export type OutputSchemaRequest = typeof OutputSchemaRequest.Type

export const ExtractResponse = Schema.Struct({
  project_id: Uuid,
  status_url: Schema.String.annotations({ description: "path of the project status" }),
  results_url: Schema.String.annotations({ description: "path of the schema-format results" }),
}).annotations({ identifier: "V1ExtractResponse" })
export type ExtractResponse = typeof ExtractResponse.Type
