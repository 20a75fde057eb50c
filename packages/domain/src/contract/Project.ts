/** Projects (api-v1.md "Projects"): the record, its status and the bodies that create and change one. */
import { Schema } from "effect"
import { ParsingState } from "../Enums.ts"
import {
  DateTime,
  IsoDate,
  IsoDateInput,
  JsonObjectOrNull,
  nameJsonSchema,
  RecordId,
  Uuid,
  wholeNumberValue,
} from "./Fields.ts"

export const Project = Schema.Struct({
  id: RecordId,
  name: Schema.String,
  description: Schema.String,
  created_at: DateTime,
  last_visited_at: Schema.NullOr(DateTime),
  reference_date: Schema.NullOr(IsoDate),
  auto_archive_after_days: Schema.NullOr(Schema.Int),
  document_count: Schema.Int,
  agent_count: Schema.Int,
  is_pinned: Schema.Boolean,
  folder_id: Schema.NullOr(RecordId),
  project_modules: Schema.Record({ key: Schema.String, value: Schema.Boolean }),
  target_output_schema: JsonObjectOrNull("the project's target JSON Schema (Draft 2020-12), or null"),
  output_mapping_status: Schema.String,
}).annotations({ identifier: "V1Project" })
export type Project = typeof Project.Type

export const ProjectStatus = Schema.Struct({
  pipeline_running: Schema.Boolean,
  schema_status: Schema.String,
  parsing_state: ParsingState,
  document_count: Schema.Int,
  documents_by_status: Schema.Struct({ Pending: Schema.Int, Processed: Schema.Int, Failed: Schema.Int }),
}).annotations({ identifier: "V1ProjectStatus" })
export type ProjectStatus = typeof ProjectStatus.Type

/** Described by hand: the filter's generated description would carry its name as a title (`minLength(1)`). */
const Name = Schema.String.pipe(Schema.minLength(1, { message: () => "must not be empty" })).annotations({
  jsonSchema: nameJsonSchema("the project's name"),
})
const ArchiveDays = Schema.NullOr(wholeNumberValue(1))

export const ProjectCreate = Schema.Struct({
  name: Name,
  description: Schema.optional(Schema.String),
  reference_date: Schema.optional(Schema.NullOr(IsoDateInput)),
  auto_attach_document_dimension: Schema.optional(Schema.Boolean),
  folder_id: Schema.optional(Schema.NullOr(Uuid)),
  auto_archive_after_days: Schema.optional(ArchiveDays),
  is_pinned: Schema.optional(Schema.Boolean),
}).annotations({ identifier: "V1ProjectCreate" })
export type ProjectCreate = typeof ProjectCreate.Type

export const ProjectPatch = Schema.Struct({
  name: Schema.optional(Name),
  description: Schema.optional(Schema.String),
  reference_date: Schema.optional(Schema.NullOr(IsoDateInput)),
  auto_archive_after_days: Schema.optional(ArchiveDays),
  is_pinned: Schema.optional(Schema.Boolean),
  folder_id: Schema.optional(Schema.NullOr(Uuid)),
}).annotations({ identifier: "V1ProjectPatch" })
export type ProjectPatch = typeof ProjectPatch.Type

export const ProjectPut = Schema.Struct({ ...ProjectPatch.fields, name: Name }).annotations({
  identifier: "V1ProjectReplace",
})
export type ProjectPut = typeof ProjectPut.Type
