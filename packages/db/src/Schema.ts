import type { PageBlock } from "@dxs/domain/Content"
import type { Table } from "@dxs/domain/Tables"
import type { ColumnType, Generated, GeneratedAlways, Insertable, Selectable, Updateable } from "kysely"
import type {
  FileEditJobsTable,
  IdempotencyKeysTable,
  MembersTable,
  RateCountersTable,
  SessionsTable,
  WebhookAttemptsTable,
  WebhookDeliveriesTable,
  WebhookSubscriptionsTable,
} from "./SchemaAccess.ts"
import type {
  DocumentTalliesTable,
  PairTalliesTable,
  ResultConfidenceTalliesTable,
  ResultRowsTable,
  ResultRowTalliesTable,
  ResultTalliesTable,
  ReviewDocumentsTable,
  ReviewTalliesTable,
  RunUsageTable,
  SearchStringsTable,
  WebSearchTalliesTable,
} from "./SchemaTallies.ts"

type NullableTimestamp = ColumnType<Date | null, Date | string | null | undefined, Date | string | null>
type Json<T> = ColumnType<T, string | T | undefined, string | T>

export interface OrganizationsTable {
  id: Generated<string>
  name: string
  created_at: Generated<Date>
}

export interface ApiKeysTable {
  id: Generated<string>
  organization_id: string
  name: Generated<string>
  key_prefix: string
  key_hash: string
  created_at: Generated<Date>
  last_used_at: NullableTimestamp
  revoked_at: NullableTimestamp
}

export interface ServerSecretsTable {
  name: string
  value: string
  created_at: Generated<Date>
}

export interface FoldersTable {
  id: Generated<string>
  organization_id: string
  name: string
  parent_id: string | null
  created_at: Generated<Date>
  updated_at: Generated<Date>
}

export interface ProjectsTable {
  id: Generated<string>
  organization_id: string
  name: string
  description: Generated<string>
  // pg returns `date` as a JS Date unless a type parser says otherwise; Db installs one returning strings.
  reference_date: ColumnType<string | null, string | null | undefined, string | null>
  auto_archive_after_days: number | null
  auto_attach_document_dimension: Generated<boolean>
  is_pinned: Generated<boolean>
  folder_id: string | null
  project_modules: Json<Record<string, boolean>>
  target_output_schema: Json<unknown | null>
  output_mapping_status: Generated<string>
  output_auto_map: Generated<boolean>
  output_mapping: Json<unknown | null>
  output_mapping_source: Generated<string>
  output_mapping_generated_by: string | null
  output_mapping_error: string | null
  output_mapping_generated_at: NullableTimestamp
  output_schema_in_sync: Generated<boolean>
  output_schema_version: Generated<number>
  output_launch_after_mapping: Generated<boolean>
  last_visited_at: NullableTimestamp
  archived_at: NullableTimestamp
  archive_of_project_id: string | null
  created_at: Generated<Date>
  updated_at: Generated<Date>
}

export interface DocumentsTable {
  id: Generated<string>
  project_id: string
  file_name: string
  type: string
  status: Generated<string>
  page_count: Generated<number>
  version: Generated<number>
  summary: Generated<string>
  metadata: Generated<string>
  failure_reason: string | null
  uses_agentic_extraction: Generated<boolean>
  last_parsed_at: NullableTimestamp
  archive_requested_at: NullableTimestamp
  blob_key: string
  content_type: string
  size_bytes: ColumnType<string, number | string, number | string>
  sha256: string
  parent_document_id: string | null
  uploaded_at: Generated<Date>
}

export interface DocumentTagsTable {
  document_id: string
  key: string
  value: string
}

export interface DimensionsTable {
  id: Generated<string>
  project_id: string
  name: string
  description: Generated<string>
  example_values: Generated<string>
  value_type: Generated<string>
  source: Generated<string>
  tag_key: string | null
  auto_attach_to_new_agents: Generated<boolean>
  created_at: Generated<Date>
}

export interface AgentsTable {
  id: Generated<string>
  project_id: string
  template_id: string | null
  name: string
  extraction_instructions: Generated<string>
  value_type: Generated<string>
  unit: Generated<string>
  examples: Generated<string>
  inconsistency_instructions: Generated<string>
  resolution_instructions: Generated<string>
  enable_complex_calculations_in_resolution: Generated<boolean>
  enable_web_search: Generated<boolean>
  value_if_not_found: Generated<string>
  agent_type: Generated<string>
  derived_prompt: Generated<string>
  is_evaluation: Generated<boolean>
  is_draft: Generated<boolean>
  extraction_status: Generated<string>
  requires_attention: Generated<boolean>
  improvement_tip_summary: string | null
  inconsistency_summary: string | null
  config_version: Generated<number>
  created_at: Generated<Date>
  updated_at: Generated<Date>
}

export interface AgentDimensionsTable {
  id: Generated<string>
  agent_id: string
  dimension_id: string
  are_values_dynamic: Generated<boolean>
  values: Json<string[]>
  order: Generated<number>
}

export interface AgentReferencesTable {
  agent_id: string
  referenced_agent_id: string
  position: Generated<number>
}

export interface TasksTable {
  id: Generated<string>
  kind: string
  idempotency_key: string
  payload: Json<Record<string, unknown>>
  project_id: string | null
  status: Generated<"pending" | "running" | "succeeded" | "failed">
  attempts: Generated<number>
  max_attempts: Generated<number>
  lease_expirations: Generated<number>
  run_after: Generated<Date>
  locked_by: string | null
  locked_until: NullableTimestamp
  last_error: string | null
  created_at: Generated<Date>
  updated_at: Generated<Date>
  completed_at: NullableTimestamp
  /** The pipeline run this task belongs to, if any. */
  run_id: Generated<string | null>
  /** Language-model usage of a pipeline task, summed into its run when the run ends. */
  usage: Json<Record<string, number> | null>
  /**
   * When the task first met an outage (storage or the database out of reach, its worker gone) since it last
   * failed for a reason of its own; attempts within the retry window from then do not count.
   */
  outage_since: NullableTimestamp
}

/** A positioned piece of page text as stored in `pages.layout` (see the pipeline's LayoutItem). */
export interface PageLayoutItem {
  readonly text: string
  readonly x: number
  readonly y: number
  readonly width: number
  readonly height: number
  readonly confidence?: number
}

export interface PagesTable {
  document_id: string
  /** 1-based. */
  number: number
  text: string
  layout: Json<ReadonlyArray<PageLayoutItem>>
  /** The page's tables as cells (see @dxs/domain/Tables); empty for pages parsed before tables were read. */
  tables: Json<ReadonlyArray<Table>>
  /** The page's blocks in reading order (see @dxs/domain/Content); empty when the parser recorded none. */
  blocks: Json<ReadonlyArray<PageBlock>>
  width: number | null
  height: number | null
  unit: string | null
  /** `to_tsvector('english', left(text, 100000))`, maintained by Postgres. */
  tsv: GeneratedAlways<string>
}

export type RunStatus = "queued" | "running" | "succeeded" | "failed"

export interface RunsTable {
  id: Generated<string>
  project_id: string
  run_number: number
  status: RunStatus
  /** The stage the run is in: `parse`, `extract`, `resolve`, `derive:<level>`, or null before it starts. */
  phase: string | null
  plan: Json<Record<string, unknown>>
  failure_reason: string | null
  error: string | null
  model_calls: Generated<number>
  cache_hits: Generated<number>
  prompt_tokens: ColumnType<string, number | string | undefined, number | string>
  completion_tokens: ColumnType<string, number | string | undefined, number | string>
  created_at: Generated<Date>
  started_at: NullableTimestamp
  finished_at: NullableTimestamp
}

export interface DimensionInstancesTable {
  id: Generated<string>
  dimension_id: string
  value: string
  /** Set for instances of the `Document` dimension. */
  document_id: string | null
}

/** One dimension value of an atomic value, as stored in `atomic_values.dimension_values`. */
export interface StoredDimensionValue {
  /** The dimension instance's id. */
  readonly id: string
  readonly dimension_id: string
  /** The dimension's name. */
  readonly name: string
  readonly dimension_value: string
  readonly document_id: string | null
}

export interface AtomicValuesTable {
  id: Generated<string>
  project_id: string
  agent_id: string
  /** Canonical key of the combination (JSON of the instance ids in the agent's dimension order). */
  dimension_key: string
  dimension_values: Json<ReadonlyArray<StoredDimensionValue>>
  /** The dimension values as the results grid shows them: a JSON object of names to values, as text. */
  dimension_values_json: GeneratedAlways<string>
  created_at: Generated<Date>
}

export interface ExtractionPairsTable {
  agent_id: string
  document_id: string
  agent_config_version: number
  document_version: number
  dimensions_key: string
  value_count: Generated<number>
  extracted_at: Generated<Date>
  /** Counts for the agent's progress (set by the database: the document processed, live, at this version). */
  counted: Generated<boolean>
}

export interface WebCitation {
  readonly snippets: ReadonlyArray<{ readonly text: string }>
  readonly source: { readonly url: string; readonly title: string }
}

export interface DerivedSource {
  readonly source_agent_id: string
  readonly source_agent_name: string
  readonly source_resolution_result_id: string
  readonly dimension_values: Readonly<Record<string, string>>
  readonly resolved_value: string
}

export interface ExtractionsTable {
  id: Generated<string>
  project_id: string
  agent_id: string
  agent_config_version: number
  atomic_value_id: string
  document_id: string | null
  value: string
  relevant_passage: Generated<string>
  reasoning: Generated<string>
  page_number: number | null
  consistent: boolean | null
  justification_for_consistency: string | null
  source_type: "document" | "web" | "derived"
  web_search_query: string | null
  web_search_timestamp: NullableTimestamp
  web_citations: Json<ReadonlyArray<WebCitation>>
  derived_sources: Json<ReadonlyArray<DerivedSource>>
  extracted_at: Generated<Date>
  /** The passage is on its cited page and states the value (`domain/Grounding`); true for web and derived ones. */
  grounded: Generated<boolean>
  /** 0 to 1 (`domain/Confidence`); null when not computed. */
  confidence: number | null
}

export interface ResultSource {
  readonly document_name: string
  readonly page_number: number
  readonly document_id: string
  readonly atomic_value_ids: ReadonlyArray<string>
}

export interface ResolutionResultsTable {
  id: Generated<string>
  project_id: string
  agent_id: string
  agent_config_version: number
  atomic_value_id: string
  result_name: string
  value: Json<unknown>
  resolution_status: string
  justification: string | null
  /** `{extraction_id: [document_name, page]}`; page null for web sources. */
  references: Json<Readonly<Record<string, readonly [string, number | null]>>>
  sources: Json<ReadonlyArray<ResultSource>>
  source_type: Generated<string>
  is_web_supplement: Generated<boolean>
  web_supplement: Json<{
    readonly text: string
    readonly sources: ReadonlyArray<{ url: string; title: string }>
  } | null>
  /** A person set the value by hand: re-resolution at the same config version keeps it. */
  is_overridden: Generated<boolean>
  updated_by_email: string | null
  latest_review_status: string | null
  latest_review_comment: Generated<string>
  latest_review_at: NullableTimestamp
  latest_review_by: string | null
  created_at: Generated<Date>
  updated_at: Generated<Date>
  /** 0 to 1 (`domain/Confidence`); null when there is no value or it was never computed. */
  confidence: number | null
  /** The document of the result's Document dimension instance, if any (set by the database). */
  document_id: Generated<string | null>
  // Set by the database from the result's agent and atomic value (a BEFORE trigger), for its reads:
  /** The agent is published and at the config version the result was resolved for. */
  is_current: Generated<boolean>
  agent_created_at: Generated<Date | null>
  value_type: Generated<string>
  /** The atomic value's combination (JSON of the dimension instance ids): the results grid's row. */
  dimension_key: Generated<string>
  dimension_values: Generated<ReadonlyArray<string>>
  /** The grid row's name: `All documents` when no dimension splits the result, else the result name. */
  row_name: Generated<string>
  search_text: Generated<string>
  /** The keys of the search text's parts in `search_strings` (md5 as a uuid), which a search reads by. */
  search_keys: GeneratedAlways<ReadonlyArray<string>>
  // Generated columns (sort keys).
  list_name: GeneratedAlways<string>
  row_hash: GeneratedAlways<string>
  row_rank: GeneratedAlways<number>
  row_sort: GeneratedAlways<string>
  row_exact: GeneratedAlways<string>
  value_missing: GeneratedAlways<number>
  value_rank: GeneratedAlways<number>
  value_num: GeneratedAlways<string>
  value_text: GeneratedAlways<string>
  /** The results list's `resolution_result` of it, as JSON text. */
  summary_json: GeneratedAlways<string>
  /**
   * The grid's cell of it as a member of its row's `cells` (`"<agent id>":{…}`, JSON text), and its row's name,
   * both carried by the index a row's cells are read by; null when too long for it (see `results/Grid.ts`).
   */
  grid_cell_json: GeneratedAlways<string | null>
  grid_row_name: GeneratedAlways<string | null>
}

export interface AgentResolutionsTable {
  agent_id: string
  agent_config_version: number
  complete: Generated<boolean>
  resolved_at: Generated<Date>
}

/** One web search of an agent's resolution per atomic value; `searched_at` null until it is done. */
export interface WebSearchesTable {
  atomic_value_id: string
  agent_id: string
  agent_config_version: number
  query: string
  result_count: Generated<number>
  searched_at: NullableTimestamp
}

export interface EventsTable {
  id: Generated<string>
  seq: GeneratedAlways<string>
  organization_id: string
  project_id: string | null
  run_id: string | null
  type: string
  data: Json<Record<string, unknown>>
  occurred_at: Generated<Date>
}

export interface LlmCacheTable {
  key: string
  model: string
  response: Json<unknown>
  prompt_tokens: Generated<number>
  completion_tokens: Generated<number>
  created_at: Generated<Date>
}

export interface Database {
  organizations: OrganizationsTable
  members: MembersTable
  sessions: SessionsTable
  rate_counters: RateCountersTable
  idempotency_keys: IdempotencyKeysTable
  api_keys: ApiKeysTable
  server_secrets: ServerSecretsTable
  folders: FoldersTable
  projects: ProjectsTable
  documents: DocumentsTable
  document_tags: DocumentTagsTable
  dimensions: DimensionsTable
  agents: AgentsTable
  agent_dimensions: AgentDimensionsTable
  agent_references: AgentReferencesTable
  tasks: TasksTable
  pages: PagesTable
  runs: RunsTable
  dimension_instances: DimensionInstancesTable
  atomic_values: AtomicValuesTable
  extraction_pairs: ExtractionPairsTable
  extractions: ExtractionsTable
  resolution_results: ResolutionResultsTable
  result_tallies: ResultTalliesTable
  result_confidence_tallies: ResultConfidenceTalliesTable
  result_rows: ResultRowsTable
  result_row_tallies: ResultRowTalliesTable
  search_strings: SearchStringsTable
  pair_tallies: PairTalliesTable
  document_tallies: DocumentTalliesTable
  web_search_tallies: WebSearchTalliesTable
  run_usage: RunUsageTable
  review_documents: ReviewDocumentsTable
  review_tallies: ReviewTalliesTable
  agent_resolutions: AgentResolutionsTable
  web_searches: WebSearchesTable
  events: EventsTable
  llm_cache: LlmCacheTable
  webhook_subscriptions: WebhookSubscriptionsTable
  webhook_deliveries: WebhookDeliveriesTable
  webhook_attempts: WebhookAttemptsTable
  file_edit_jobs: FileEditJobsTable
}

export type ProjectRow = Selectable<ProjectsTable>
export type NewProject = Insertable<ProjectsTable>
export type ProjectUpdate = Updateable<ProjectsTable>
export type DocumentRow = Selectable<DocumentsTable>
export type DimensionRow = Selectable<DimensionsTable>
export type AgentRow = Selectable<AgentsTable>
export type AgentDimensionRow = Selectable<AgentDimensionsTable>
export type FolderRow = Selectable<FoldersTable>
export type ApiKeyRow = Selectable<ApiKeysTable>
export type TaskRow = Selectable<TasksTable>
export type FileEditJobRow = Selectable<FileEditJobsTable>
export type PageRow = Selectable<PagesTable>
export type RunRow = Selectable<RunsTable>
export type AtomicValueRow = Selectable<AtomicValuesTable>
export type ExtractionRow = Selectable<ExtractionsTable>
export type ResolutionResultRow = Selectable<ResolutionResultsTable>
export type EventRow = Selectable<EventsTable>

export type * from "./SchemaAccess.ts"
export type * from "./SchemaTallies.ts"
