/**
 * The shapes of the REST API's answers that the web application reads (a subset of api-v1.md; see
 * apps/rest-api/src/∗/Api.ts and packages/services/src/Results.ts for the full records).
 */

export interface Member {
  readonly id: string
  readonly email: string
  readonly organization: { readonly id: string; readonly name: string }
  readonly created_at: string
}

export interface Session {
  readonly member: Member
  readonly csrf_token: string
  readonly expires_at: string
}

export interface Project {
  readonly id: string
  readonly name: string
  readonly description: string
  readonly created_at: string
  readonly document_count: number
  readonly agent_count: number
}

export type DocumentStatus = "Pending" | "Processed" | "Failed"

export interface DocumentRecord {
  readonly id: string
  readonly project_id: string
  readonly file_name: string
  readonly type: string
  readonly status: DocumentStatus
  readonly page_count: number
  readonly uploaded_at: string
  readonly failure_reason: string | null
  readonly parent_document_id: string | null
}

export interface DocumentPage {
  readonly document_id: string
  readonly page_number: number
  readonly text: string
  readonly width: number | null
  readonly height: number | null
  readonly unit: string | null
}

export type ValueType = "string" | "number" | "bool" | "date" | "datetime"

export interface AgentDimension {
  readonly dimension_id: string
  readonly name: string
  readonly values: ReadonlyArray<string>
}

export interface Agent {
  readonly id: string
  readonly name: string
  readonly extraction_instructions: string
  readonly value_type: ValueType
  readonly extraction_status: "Pending" | "Processed" | "No Result"
  readonly created_at: string
  readonly dimensions: ReadonlyArray<AgentDimension>
}

export interface StageProgress {
  readonly total: number
  readonly completed: number
  readonly percentage: number
}

export interface AgentProgress {
  readonly parsing: StageProgress
  readonly extraction: StageProgress
  readonly web_search: StageProgress
  readonly resolution: StageProgress
  readonly is_running: boolean
  readonly is_pending: boolean
}

export interface AgentsStatus {
  readonly progress: Readonly<Record<string, AgentProgress>>
  readonly pipeline_running: boolean
}

export type ResolutionStatus = "Not resolved" | "Requires attention" | "Resolved" | "Ignored" | "No result"

export type ResultValue = string | number | boolean | null

export interface DimensionInstance {
  readonly id: string
  readonly dimension_id: string
  readonly dimension_value: string
  readonly name: string
  readonly document_id: string | null
}

export interface ResultRow {
  readonly id: string
  readonly agent_id: string
  readonly agent_name: string
  readonly result_name: string
  readonly value_type: ValueType
  readonly resolution_result: {
    readonly id: string
    readonly value: ResultValue
    readonly resolution_status: ResolutionStatus
  }
  readonly dimension_instances: ReadonlyArray<DimensionInstance>
}

export interface ResultsPage {
  readonly count: number
  readonly next: string | null
  readonly previous: string | null
  readonly results: ReadonlyArray<ResultRow>
}

export interface ResultDetail {
  readonly id: string
  readonly result_name: string
  readonly agent_id: string
  readonly agent_name: string
  readonly value_type: ValueType
  readonly unit: string
  readonly value: ResultValue
  readonly resolution_status: ResolutionStatus
  readonly justification_for_resolution_status: string | null
  readonly is_overridden: boolean
  readonly updated_by_email: string | null
  readonly updated_at: string
  readonly dimension_instances: ReadonlyArray<DimensionInstance>
  readonly latest_review_status: "positive" | "negative" | "none" | null
  readonly latest_review_comment: string
  readonly latest_review_by: string | null
}

export interface Extraction {
  readonly id: string
  readonly value: string
  readonly relevant_passage: string
  readonly reasoning: string
  readonly consistent: boolean | null
  readonly source_type: "document" | "web" | "derived"
  readonly document_id: string | null
  readonly document_name: string | null
  readonly page_number: number | null
}

export interface ExtractionsPage {
  readonly data: ReadonlyArray<Extraction>
  readonly total_count: number
}

export interface BoundingBox {
  readonly x: number
  readonly y: number
  readonly width: number
  readonly height: number
  readonly text: string
}

export interface BoundingBoxes {
  readonly extraction_id: string
  readonly document_id: string | null
  readonly page_number: number | null
  readonly page_width: number | null
  readonly page_height: number | null
  readonly unit: string | null
  readonly boxes: ReadonlyArray<BoundingBox>
}

export interface ApiKey {
  readonly id: string
  readonly name: string
  readonly prefix: string
  readonly created_at: string
  readonly last_used_at: string | null
  readonly revoked_at: string | null
}

export interface NewApiKey extends ApiKey {
  readonly key: string
}

export type DiagnosticSeverity = "error" | "warning"

/** A finding about a mapping against its schema (README "Output schemas", Diagnostics). */
export interface MappingDiagnostic {
  readonly path: string
  readonly severity: DiagnosticSeverity
  readonly code: string
  readonly message: string
}

export type MappingStatus = "pending" | "success" | "failed"

/** A project's output schema record (V1SchemaResponse). */
export interface OutputSchemaRecord {
  readonly schema: unknown
  readonly auto_map: boolean
  readonly mapping: unknown
  readonly status: MappingStatus
  readonly source: "llm" | "manual"
  readonly error: string | null
  readonly generated_at: string | null
  readonly schema_in_sync: boolean
  readonly diagnostics: ReadonlyArray<MappingDiagnostic>
}

export interface WebhookSubscription {
  readonly id: string
  readonly name: string
  readonly url: string
  readonly subscribed_events: ReadonlyArray<string>
  readonly is_active: boolean
  readonly headers: Readonly<Record<string, string>>
  readonly created_at: string
  readonly updated_at: string
}

export interface NewWebhookSubscription extends WebhookSubscription {
  /** The signing secret (`whsec_…`): in the create answer only. */
  readonly secret: string
}

export interface WebhookEventType {
  readonly name: string
  readonly description: string
  readonly payload_schema: Readonly<Record<string, unknown>>
}

export interface WebhookAttempt {
  readonly id: string
  readonly number: number
  readonly status_code: number | null
  readonly error: string | null
  readonly duration_ms: number
  readonly attempted_at: string
}

export interface WebhookDelivery {
  readonly id: string
  readonly event_type: string
  readonly status: "pending" | "succeeded" | "failed"
  readonly attempt_count: number
  readonly last_status_code: number | null
  readonly last_error: string | null
  readonly created_at: string
  readonly delivered_at: string | null
  readonly next_attempt_at: string | null
  readonly attempts: ReadonlyArray<WebhookAttempt>
}

export interface WebhookDeliveriesPage {
  readonly count: number
  readonly results: ReadonlyArray<WebhookDelivery>
}

// ---------------------------------------------------------------------------------------------------------
// Folders, project organisation, dimensions and the full agent record

export interface Folder {
  readonly id: string
  readonly name: string
  readonly parent_id: string | null
  readonly created_at: string
  readonly updated_at: string
}

/** A project as listed by `GET /projects/`: with its pin and folder. */
export interface ProjectListItem extends Project {
  readonly is_pinned: boolean
  readonly folder_id: string | null
}

/** `CUSTOM` is user-defined; `DOCUMENT` and `TAG` are system-managed. */
export type DimensionSource = "CUSTOM" | "DOCUMENT" | "TAG"

export interface Dimension {
  readonly id: string
  readonly project_id: string
  readonly name: string
  readonly description: string
  readonly example_values: string
  readonly value_type: ValueType
  readonly source: DimensionSource
  readonly auto_attach_to_new_agents: boolean
  readonly created_at: string
}

export interface AgentDimensionRecord extends AgentDimension {
  readonly dimension_mapping_id: string
  readonly description: string
  readonly value_count: number
  readonly order: number
  readonly are_values_dynamic: boolean
  readonly source: DimensionSource
}

export type AgentType = "extraction" | "derived"

/** Every field of an agent as the API answers it. */
export interface AgentRecord extends Agent {
  readonly project_id: string
  readonly dimensions: ReadonlyArray<AgentDimensionRecord>
  readonly requires_attention: boolean
  readonly unit: string
  readonly examples: string
  readonly inconsistency_instructions: string
  readonly resolution_instructions: string
  readonly enable_complex_calculations_in_resolution: boolean
  readonly enable_web_search: boolean
  readonly value_if_not_found: string
  readonly agent_type: AgentType
  readonly derived_prompt: string
  readonly is_evaluation: boolean
  readonly derived_agent_references: ReadonlyArray<{ readonly agent_id: string; readonly agent_name: string }>
}

/** One dimension attachment of an agent write (`dimensions` of PATCH /agents/{id}/). */
export interface AgentDimensionRequest {
  readonly dimension_id: string
  readonly are_values_dynamic?: boolean
  readonly values?: ReadonlyArray<string>
}
