import { AgentType, AgentValueType, DimensionValueType } from "@dxs/domain/Enums"
import { Agent } from "@dxs/domain/Records"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Authentication } from "../Auth.ts"
import { flexibleBody } from "../Body.ts"
import { BadRequest, Conflict, NotFound, Uuid } from "../Common.ts"

const Name = Schema.String.pipe(Schema.filter((s) => s.trim() !== "" || "must not be empty"))

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

export const AgentReferenceRequest = Schema.Struct({
  agent_id: Schema.optional(Schema.NullOr(Uuid)),
  agent_name: Schema.optional(Schema.NullOr(Schema.String)),
}).annotations({
  identifier: "V1DerivedAgentReferenceRequest",
  description: "agent_id is tried first, then the exact agent_name",
})

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

export const AgentCreate = Schema.Struct({ name: Name, ...optionalFields }).annotations({
  identifier: "V1AgentCreate",
})
export const AgentPatch = Schema.Struct({ name: Schema.optional(Name), ...optionalFields }).annotations({
  identifier: "V1AgentPatch",
})
export const AgentPut = Schema.Struct({ name: Name, ...optionalFields }).annotations({
  identifier: "V1AgentReplace",
})

const ProjectPath = Schema.Struct({ project_id: Uuid })

const StageProgress = Schema.Struct({
  total: Schema.Int,
  completed: Schema.Int,
  percentage: Schema.Int.annotations({ description: "0 to 100" }),
}).annotations({ identifier: "V1StageProgress" })

export const AgentStatus = Schema.Struct({
  progress: Schema.Record({
    key: Schema.String,
    value: Schema.Struct({
      parsing: StageProgress,
      extraction: StageProgress,
      web_search: StageProgress,
      resolution: StageProgress,
      is_running: Schema.Boolean,
      is_pending: Schema.Boolean,
    }),
  }).annotations({ description: "keyed by agent id" }),
  consistency: Schema.Record({
    key: Schema.String,
    value: Schema.Struct({
      consistent_count: Schema.Int,
      missing_count: Schema.Int,
      inconsistent_count: Schema.Int,
      ignored_count: Schema.Int,
      total_count: Schema.Int,
    }),
  }).annotations({
    description: "keyed by agent id; counts of the agent's current results by resolution status",
  }),
  pipeline_running: Schema.Boolean,
}).annotations({ identifier: "V1AgentStatusResponse" })
const AgentPath = Schema.Struct({ project_id: Uuid, agent_id: Uuid })

export class AgentsApi extends HttpApiGroup.make("agents")
  .add(
    HttpApiEndpoint.get("status", "/projects/:project_id/agents/status/")
      .setPath(ProjectPath)
      .addSuccess(AgentStatus)
      .annotate(
        OpenApi.Summary,
        "Progress of every agent per stage, consistency counts and whether a run is active; poll only while pipeline_running is true",
      ),
  )
  .add(
    HttpApiEndpoint.post("launch", "/projects/:project_id/agents/launch/")
      .setPath(ProjectPath)
      .addSuccess(HttpApiSchema.Accepted)
      .addError(Conflict)
      .annotate(
        OpenApi.Summary,
        "Launch the pipeline: only outstanding work is done; during a run the launch is queued (joining an already queued launch); 409 listing the documents that failed processing",
      ),
  )
  .add(
    HttpApiEndpoint.get("list", "/projects/:project_id/agents/")
      .setPath(ProjectPath)
      .setUrlParams(
        Schema.Struct({
          is_evaluation: Schema.optional(
            Schema.BooleanFromString.annotations({
              description: "true: only evaluation agents (the evaluation page); false: only the others",
            }),
          ),
        }),
      )
      .addSuccess(Schema.Array(Agent))
      .annotate(OpenApi.Summary, "List the project's agents, most recently created first"),
  )
  .add(
    HttpApiEndpoint.post("create", "/projects/:project_id/agents/")
      .setPath(ProjectPath)
      .setPayload(flexibleBody(AgentCreate))
      .addSuccess(Agent, { status: 201 })
      .annotate(OpenApi.Summary, "Create an agent"),
  )
  .add(
    HttpApiEndpoint.get("get", "/projects/:project_id/agents/:agent_id/")
      .setPath(AgentPath)
      .addSuccess(Agent)
      .annotate(OpenApi.Summary, "Retrieve an agent"),
  )
  .add(
    HttpApiEndpoint.patch("patch", "/projects/:project_id/agents/:agent_id/")
      .setPath(AgentPath)
      .setPayload(flexibleBody(AgentPatch))
      .addSuccess(Agent)
      .annotate(OpenApi.Summary, "Update some fields of an agent; only supplied fields change"),
  )
  .add(
    HttpApiEndpoint.put("put", "/projects/:project_id/agents/:agent_id/")
      .setPath(AgentPath)
      .setPayload(flexibleBody(AgentPut))
      .addSuccess(Agent)
      .annotate(
        OpenApi.Summary,
        "Replace an agent's fields (omitted ones reset to defaults; an omitted agent_type is kept)",
      ),
  )
  .add(
    HttpApiEndpoint.del("delete", "/projects/:project_id/agents/:agent_id/")
      .setPath(AgentPath)
      .addSuccess(HttpApiSchema.NoContent)
      .annotate(OpenApi.Summary, "Delete an agent"),
  )
  .addError(BadRequest)
  .addError(NotFound)
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Agents")
  .annotate(
    OpenApi.Description,
    "An agent describes one value to extract (extraction) or computes one from other agents' resolved values (derived). Changing extraction_instructions, value_type, examples, unit, resolution_instructions, inconsistency_instructions, enable_complex_calculations_in_resolution or enable_web_search clears the agent's extractions: the next launch re-extracts it.",
  ) {}
