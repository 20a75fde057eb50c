/** Agents (api-v1.md "Agents"): the record, the bodies that create and change one, and the run status. */
import { Schema } from "effect"
import { AgentType, AgentValueType, DimensionSource, DimensionValueType, ExtractionStatus } from "../Enums.ts"
import { DateTime, NameInput, RecordId, Uuid } from "./Fields.ts"

export const AgentDimension = Schema.Struct({
  dimension_id: RecordId,
  dimension_mapping_id: RecordId,
  name: Schema.String,
  description: Schema.String,
  values: Schema.Array(Schema.String),
  value_count: Schema.Int,
  order: Schema.Int,
  are_values_dynamic: Schema.Boolean,
  source: DimensionSource,
}).annotations({ identifier: "V1AgentDimension" })
export type AgentDimension = typeof AgentDimension.Type

export const DerivedAgentReference = Schema.Struct({
  agent_id: RecordId,
  agent_name: Schema.String,
}).annotations({ identifier: "V1DerivedAgentReference" })
export type DerivedAgentReference = typeof DerivedAgentReference.Type

export const Agent = Schema.Struct({
  id: RecordId,
  project_id: RecordId,
  template_id: Schema.NullOr(RecordId),
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

export const AgentDimensionRequest = Schema.Struct({
  dimension_id: Uuid,
  are_values_dynamic: Schema.optional(
    Schema.Boolean.annotations({
      description:
        "true discovers the values from the documents at extraction time; when omitted, false if values are given, else the attachment's current setting (false for a new one)",
    }),
  ),
  values: Schema.optional(
    Schema.Array(Schema.String).annotations({
      description:
        "required and non-empty when are_values_dynamic is false (omitted keeps the values already attached); ignored when dynamic and for system-managed DOCUMENT/TAG dimensions",
    }),
  ),
  description: Schema.optional(
    Schema.String.annotations({ description: "updates the dimension for every agent in the project" }),
  ),
  value_type: Schema.optional(
    Schema.NullOr(DimensionValueType).annotations({
      description: "updates the dimension for every agent; null leaves it unchanged",
    }),
  ),
  add_to_all_agents: Schema.optional(
    Schema.Boolean.annotations({
      description: "also attach the dimension to every other agent of the project and to future agents",
    }),
  ),
}).annotations({ identifier: "V1AgentDimensionRequest" })
export type AgentDimensionRequest = typeof AgentDimensionRequest.Type

export const AgentReferenceRequest = Schema.Struct({
  agent_id: Schema.optional(Schema.NullOr(Uuid)),
  agent_name: Schema.optional(Schema.NullOr(Schema.String)),
}).annotations({
  identifier: "V1DerivedAgentReferenceRequest",
  description: "agent_id is tried first, then the exact agent_name",
})
export type AgentReferenceRequest = typeof AgentReferenceRequest.Type

const optionalFields = {
  extraction_instructions: Schema.optional(Schema.String),
  value_type: Schema.optional(
    AgentValueType.annotations({
      description: "`string` or `number`; `bool`, `date`, `datetime` are accepted as legacy values",
    }),
  ),
  unit: Schema.optional(Schema.String),
  examples: Schema.optional(Schema.String),
  inconsistency_instructions: Schema.optional(Schema.String),
  resolution_instructions: Schema.optional(Schema.String),
  enable_complex_calculations_in_resolution: Schema.optional(Schema.Boolean),
  enable_web_search: Schema.optional(Schema.Boolean),
  value_if_not_found: Schema.optional(Schema.String),
  dimensions: Schema.optional(
    Schema.Array(AgentDimensionRequest).annotations({
      description:
        "authoritative on update: attached dimensions left out are detached, [] removes all, omitted leaves them",
    }),
  ),
  agent_type: Schema.optional(
    AgentType.annotations({ description: "`extraction` on create; omitted on update keeps the type" }),
  ),
  derived_prompt: Schema.optional(
    Schema.String.annotations({ description: 'may mention agents (and documents) as @Name, @"Long Name"' }),
  ),
  is_evaluation: Schema.optional(
    Schema.Boolean.annotations({ description: "an evaluation agent's value_type is always `number`" }),
  ),
  derived_agent_references: Schema.optional(Schema.Array(AgentReferenceRequest)),
}

const AgentName = NameInput("the agent's name")

export const AgentCreateRequest = Schema.Struct({ name: AgentName, ...optionalFields }).annotations({
  identifier: "V1AgentCreate",
})
export type AgentCreateRequest = typeof AgentCreateRequest.Type
export const AgentPatchRequest = Schema.Struct({
  name: Schema.optional(AgentName),
  ...optionalFields,
}).annotations({
  identifier: "V1AgentPatch",
})
export type AgentPatchRequest = typeof AgentPatchRequest.Type
export const AgentPutRequest = Schema.Struct({ name: AgentName, ...optionalFields }).annotations({
  identifier: "V1AgentReplace",
})
export type AgentPutRequest = typeof AgentPutRequest.Type

export const StageProgress = Schema.Struct({
  total: Schema.Int,
  completed: Schema.Int,
  percentage: Schema.Int.annotations({ description: "0 to 100" }),
}).annotations({ identifier: "V1StageProgress" })
export type StageProgress = typeof StageProgress.Type

export const AgentProgress = Schema.Struct({
  parsing: StageProgress,
  extraction: StageProgress,
  web_search: StageProgress,
  resolution: StageProgress,
  is_running: Schema.Boolean,
  is_pending: Schema.Boolean,
})
export type AgentProgress = typeof AgentProgress.Type

export const AgentConsistency = Schema.Struct({
  consistent_count: Schema.Int,
  missing_count: Schema.Int,
  inconsistent_count: Schema.Int,
  ignored_count: Schema.Int,
  total_count: Schema.Int,
})
export type AgentConsistency = typeof AgentConsistency.Type

export const AgentStatus = Schema.Struct({
  progress: Schema.Record({ key: Schema.String, value: AgentProgress }).annotations({
    description: "keyed by agent id",
  }),
  consistency: Schema.Record({ key: Schema.String, value: AgentConsistency }).annotations({
    description: "keyed by agent id; counts of the agent's current results by resolution status",
  }),
  pipeline_running: Schema.Boolean,
}).annotations({ identifier: "V1AgentStatusResponse" })
export type AgentStatus = typeof AgentStatus.Type
