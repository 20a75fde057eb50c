import {
  Agent,
  AgentCreateRequest,
  AgentPatchRequest,
  AgentPutRequest,
  AgentStatus,
} from "@dxs/domain/contract/Agent"
import { LaunchPreview } from "@dxs/domain/contract/Run"
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import { Schema } from "effect"
import { Authentication } from "../Auth.ts"
import { flexibleBody } from "../Body.ts"
import { BadRequest, Conflict, NotFound, Uuid } from "../Common.ts"

const ProjectPath = Schema.Struct({ project_id: Uuid })

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
    HttpApiEndpoint.get("launchPreview", "/projects/:project_id/agents/launch/preview/")
      .setPath(ProjectPath)
      .addSuccess(LaunchPreview)
      .annotate(
        OpenApi.Summary,
        "Beyond the contract: what the next launch would do (outstanding agent/document pairs) and the model requests and estimated tokens an OpenAI-compatible provider would be sent for it (zero when nothing changed); documents that failed processing are reported in rejected, not as an error",
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
          dimension_values: Schema.optional(
            Schema.Literal("all", "custom").annotations({
              description:
                "beyond the contract: `all` (default) lists every dimension's values; `custom` lists those of custom dimensions only, and system-managed ones (the Document dimension, tags) come with `values: []` and `value_count: 0`, so a project of many documents is read at the cost of its agents",
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
      .setPayload(flexibleBody(AgentCreateRequest))
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
      .setPayload(flexibleBody(AgentPatchRequest))
      .addSuccess(Agent)
      .annotate(OpenApi.Summary, "Update some fields of an agent; only supplied fields change"),
  )
  .add(
    HttpApiEndpoint.put("put", "/projects/:project_id/agents/:agent_id/")
      .setPath(AgentPath)
      .setPayload(flexibleBody(AgentPutRequest))
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
