import type { ColumnType, Generated, GeneratedAlways, Insertable, Selectable, Updateable } from "kysely"

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
  width: number | null
  height: number | null
  unit: string | null
  /** `to_tsvector('english', left(text, 100000))`, maintained by Postgres. */
  tsv: GeneratedAlways<string>
}

export interface Database {
  organizations: OrganizationsTable
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
export type PageRow = Selectable<PagesTable>
