/**
 * Beyond the contract: what the next launch would cost (`GET …/agents/launch/preview/`) and the project's
 * runs with the model usage they recorded (`GET …/runs/`).
 */
import { Schema } from "effect"
import { Timestamp as DateTime, Uuid } from "./Fields.ts"
import { ResultReferences, ResultSource, ResultValue } from "./Result.ts"

export const LaunchProvider = Schema.Literal("local", "openai").annotations({
  description: "the configured language model provider (LLM_PROVIDER)",
})

export const BlockingDocument = Schema.Struct({
  id: Uuid,
  name: Schema.String,
}).annotations({ identifier: "V1BlockingDocument" })

export const LaunchRejection = Schema.Struct({
  status: Schema.Int.annotations({ description: "the status the launch would answer with (409, or 400)" }),
  detail: Schema.String,
  failed_documents: Schema.Array(BlockingDocument).annotations({
    description: "documents that failed processing: remove or replace them before launching",
  }),
}).annotations({ identifier: "V1LaunchRejection" })

export const LaunchPreview = Schema.Struct({
  extraction_pairs: Schema.Int.annotations({
    description: "agent/document pairs the next launch would extract (0 when nothing changed)",
  }),
  documents: Schema.Int.annotations({ description: "documents with at least one outstanding pair" }),
  agents: Schema.Int.annotations({ description: "extraction agents with at least one outstanding pair" }),
  documents_not_parsed: Schema.Int.annotations({
    description:
      "documents with outstanding pairs that are not parsed yet: their pairs are counted, their requests and tokens are not (their pages are unknown)",
  }),
  model_requests: Schema.Int.annotations({
    description:
      "the requests an OpenAI-compatible provider would be sent (agents grouped per document within LLM_MAX_AGENTS_PER_REQUEST, pages windowed within LLM_CONTEXT_TOKENS); the local provider sends none",
  }),
  estimated_input_tokens: Schema.Int.annotations({
    description: "estimated prompt tokens of those requests (about 4 characters per token)",
  }),
  estimated_output_tokens: Schema.Int.annotations({
    description: "estimated completion tokens of those requests",
  }),
  provider: LaunchProvider,
  rejected: Schema.NullOr(LaunchRejection).annotations({
    description:
      "null when the launch would be accepted; else why it would be refused (the figures then leave the failed documents out)",
  }),
}).annotations({ identifier: "V1LaunchPreview" })
export type LaunchPreview = typeof LaunchPreview.Type

export const RunUsage = Schema.Struct({
  requests: Schema.Int.annotations({ description: "requests sent to the model server" }),
  cache_hits: Schema.Int.annotations({ description: "requests answered from the response cache instead" }),
  input_tokens: Schema.Int.annotations({ description: "prompt tokens the server reported" }),
  cached_input_tokens: Schema.Int.annotations({
    description: "of those, the prompt tokens the server reported as cached",
  }),
  output_tokens: Schema.Int.annotations({ description: "completion tokens the server reported" }),
}).annotations({ identifier: "V1RunUsage" })
export type RunUsage = typeof RunUsage.Type

export const RunStatus = Schema.Literal("queued", "running", "succeeded", "failed")

export const RunRecord = Schema.Struct({
  id: Uuid,
  number: Schema.Int.annotations({ description: "the run's number in its project, from 1" }),
  status: RunStatus,
  failure_reason: Schema.NullOr(Schema.String),
  created_at: DateTime,
  started_at: Schema.NullOr(DateTime),
  finished_at: Schema.NullOr(DateTime),
  extraction_pairs: Schema.Int.annotations({
    description: "agent/document pairs it extracted (0 until it starts)",
  }),
  agents: Schema.Array(Uuid).annotations({
    description: "the agents it resolved or derived (empty until it starts)",
  }),
  usage: RunUsage,
}).annotations({ identifier: "V1Run" })
export type RunRecord = typeof RunRecord.Type

export const RunsPage = Schema.Struct({
  count: Schema.Int.annotations({ description: "the project's runs, across all pages" }),
  next: Schema.NullOr(Schema.String).annotations({ description: "relative URL of the next page, or null" }),
  previous: Schema.NullOr(Schema.String).annotations({
    description: "relative URL of the previous page, or null",
  }),
  results: Schema.Array(RunRecord),
}).annotations({ identifier: "V1RunsPage" })
export type RunsPage = typeof RunsPage.Type

/** One side of a change: a value with its status and citations. */
export const RunChangeSide = Schema.Struct({
  value: ResultValue,
  resolution_status: Schema.String,
  references: ResultReferences,
  sources: Schema.Array(ResultSource),
}).annotations({ identifier: "V1RunChangeSide" })

export const RunChange = Schema.Struct({
  agent_id: Uuid,
  agent_name: Schema.String,
  atomic_value_id: Uuid.annotations({ description: "the agent's combination of dimension values" }),
  result_name: Schema.String,
  dimension_values: Schema.Record({ key: Schema.String, value: Schema.String }).annotations({
    description: "dimension name → value; {} for results no dimension splits",
  }),
  resolution_result_id: Schema.NullOr(Uuid).annotations({
    description:
      "the current result of that combination (for /results/{resolution_result_id}/), null when gone",
  }),
  previous: RunChangeSide.annotations({ description: "the value before the run" }),
  current: RunChangeSide.annotations({ description: "the value the run resolved" }),
}).annotations({ identifier: "V1RunChange" })
export type RunChange = typeof RunChange.Type

export const RunChangesPage = Schema.Struct({
  run_number: Schema.Int,
  previous_run_number: Schema.NullOr(Schema.Int).annotations({
    description: "the project's run before this one, null for its first",
  }),
  count: Schema.Int.annotations({ description: "values the run changed, across all pages" }),
  next: Schema.NullOr(Schema.String).annotations({ description: "relative URL of the next page, or null" }),
  previous: Schema.NullOr(Schema.String).annotations({
    description: "relative URL of the previous page, or null",
  }),
  results: Schema.Array(RunChange),
}).annotations({ identifier: "V1RunChangesPage" })
export type RunChangesPage = typeof RunChangesPage.Type
