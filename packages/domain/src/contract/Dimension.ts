/** Dimensions (api-v1.md "Dimensions"): the record and the bodies that create and change one. */
import { Schema } from "effect"
import { DimensionSource, DimensionValueType } from "../Enums.ts"
import { DateTime, NameInput, RecordId } from "./Fields.ts"

export const Dimension = Schema.Struct({
  id: RecordId,
  project_id: RecordId,
  name: Schema.String,
  description: Schema.String,
  example_values: Schema.String,
  value_type: DimensionValueType,
  source: DimensionSource,
  auto_attach_to_new_agents: Schema.Boolean,
  created_at: DateTime,
}).annotations({ identifier: "V1Dimension" })
export type Dimension = typeof Dimension.Type

const Name = NameInput(
  "unique within the project (case-insensitive); cannot be `Document` or one of the project's tag keys",
)

export const DimensionCreate = Schema.Struct({
  name: Name,
  description: Schema.optional(Schema.String),
  example_values: Schema.optional(
    Schema.String.annotations({ description: "comma-separated list to guide extraction" }),
  ),
  value_type: Schema.optional(DimensionValueType),
  auto_attach_to_new_agents: Schema.optional(
    Schema.Boolean.annotations({ description: "attach the dimension to every agent created from now on" }),
  ),
}).annotations({ identifier: "V1DimensionCreate" })
export type DimensionCreate = typeof DimensionCreate.Type

export const DimensionPatch = Schema.Struct({
  name: Schema.optional(Name),
  description: Schema.optional(Schema.String),
  example_values: Schema.optional(Schema.String),
  value_type: Schema.optional(DimensionValueType),
  auto_attach_to_new_agents: Schema.optional(Schema.Boolean),
}).annotations({ identifier: "V1DimensionPatch" })
export type DimensionPatch = typeof DimensionPatch.Type
