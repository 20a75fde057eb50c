/**
 * The enumerations of the API contract (spec/api-v1.md) and of DESIGN §4, each as a tuple of its
 * values, a `Schema.Literal` and a TypeScript type of the same name.
 */
import * as Schema from "effect/Schema"

/** Document `type`, inferred from the file extension at upload. */
export const DocumentTypes = [
  "PDF",
  "Audio",
  "Image",
  "Text",
  "Excel",
  "PPT",
  "Word Document",
  "Website",
  "Email",
] as const
export const DocumentType = Schema.Literal(...DocumentTypes)
export type DocumentType = typeof DocumentType.Type

/** Document `status`. */
export const DocumentStatuses = ["Pending", "Processed", "Failed"] as const
export const DocumentStatus = Schema.Literal(...DocumentStatuses)
export type DocumentStatus = typeof DocumentStatus.Type

/** Agent `value_type`. Only `string` and `number` work end to end; the rest are accepted as legacy values. */
export const AgentValueTypes = ["string", "number", "bool", "date", "datetime"] as const
export const AgentValueType = Schema.Literal(...AgentValueTypes)
export type AgentValueType = typeof AgentValueType.Type

/** The agent value types that work end to end. */
export const SupportedAgentValueTypes = ["string", "number"] as const
export const SupportedAgentValueType = Schema.Literal(...SupportedAgentValueTypes)
export type SupportedAgentValueType = typeof SupportedAgentValueType.Type

/** True for the value types the schema lists only for backwards compatibility. */
export const isLegacyValueType = (valueType: AgentValueType): boolean =>
  !(SupportedAgentValueTypes as ReadonlyArray<string>).includes(valueType)

/** Agent `agent_type`. */
export const AgentTypes = ["extraction", "derived"] as const
export const AgentType = Schema.Literal(...AgentTypes)
export type AgentType = typeof AgentType.Type

/** Agent `extraction_status`, derived from the pipeline state (see AgentState.ts). */
export const ExtractionStatuses = ["Pending", "Processed", "No Result"] as const
export const ExtractionStatus = Schema.Literal(...ExtractionStatuses)
export type ExtractionStatus = typeof ExtractionStatus.Type

/** Dimension `value_type`. */
export const DimensionValueTypes = ["string", "number", "bool", "date", "datetime"] as const
export const DimensionValueType = Schema.Literal(...DimensionValueTypes)
export type DimensionValueType = typeof DimensionValueType.Type

/** Dimension `source`: `CUSTOM` is user-defined, `DOCUMENT` and `TAG` are system-managed. */
export const DimensionSources = ["CUSTOM", "DOCUMENT", "TAG"] as const
export const DimensionSource = Schema.Literal(...DimensionSources)
export type DimensionSource = typeof DimensionSource.Type

/** Result `resolution_status` (also the `<field>_consistency` values of enriched schema results). */
export const ResolutionStatuses = [
  "Not resolved",
  "Requires attention",
  "Resolved",
  "Ignored",
  "No result",
] as const
export const ResolutionStatus = Schema.Literal(...ResolutionStatuses)
export type ResolutionStatus = typeof ResolutionStatus.Type

/** Result detail `source_type`. */
export const SourceTypes = ["document", "web", "document_and_web", "derived"] as const
export const SourceType = Schema.Literal(...SourceTypes)
export type SourceType = typeof SourceType.Type

/** Extraction `source_type` (an extraction is never `document_and_web`). */
export const ExtractionSourceTypes = ["document", "web", "derived"] as const
export const ExtractionSourceType = Schema.Literal(...ExtractionSourceTypes)
export type ExtractionSourceType = typeof ExtractionSourceType.Type

/** Output schema mapping `status`. */
export const MappingStatuses = ["pending", "success", "failed"] as const
export const MappingStatus = Schema.Literal(...MappingStatuses)
export type MappingStatus = typeof MappingStatus.Type

/** Output schema mapping `source`. */
export const MappingSources = ["llm", "manual"] as const
export const MappingSource = Schema.Literal(...MappingSources)
export type MappingSource = typeof MappingSource.Type

/** Mapping diagnostic `severity`: `error` makes a mapping unsaveable, `warning` is informational. */
export const DiagnosticSeverities = ["error", "warning"] as const
export const DiagnosticSeverity = Schema.Literal(...DiagnosticSeverities)
export type DiagnosticSeverity = typeof DiagnosticSeverity.Type

/** Mapping diagnostic `code`. */
export const DiagnosticCodes = [
  "node_kind_mismatch",
  "property_not_in_schema",
  "required_unmapped",
  "agent_not_found",
  "agent_ambiguous",
  "dimension_not_found",
  "dimension_not_on_agent",
  "dimension_not_in_scope",
  "dimension_value_unknown",
  "type_incompatible",
] as const
export const DiagnosticCode = Schema.Literal(...DiagnosticCodes)
export type DiagnosticCode = typeof DiagnosticCode.Type

/** Project status `parsing_state` (DESIGN §4): `stuck` means a parse task exhausted its lease repeatedly. */
export const ParsingStates = ["idle", "parsing", "stuck", "failed"] as const
export const ParsingState = Schema.Literal(...ParsingStates)
export type ParsingState = typeof ParsingState.Type

/** Pipeline run status (DESIGN §3). */
export const RunStatuses = ["queued", "running", "succeeded", "failed"] as const
export const RunStatus = Schema.Literal(...RunStatuses)
export type RunStatus = typeof RunStatus.Type

/** Result review status. */
export const ReviewStatuses = ["none", "positive", "negative"] as const
export const ReviewStatus = Schema.Literal(...ReviewStatuses)
export type ReviewStatus = typeof ReviewStatus.Type

/** Webhook event names. */
export const WebhookEvents = [
  "agent.completion.succeeded",
  "agent.completion.failed",
  "webhook.ping",
] as const
export const WebhookEvent = Schema.Literal(...WebhookEvents)
export type WebhookEvent = typeof WebhookEvent.Type

/**
 * `failure_reason` of `agent.completion.failed`. Only `internal_error` is emitted today; the others are
 * reserved. Receivers must tolerate unknown values, so decoders should use `FailureReasonOrUnknown`.
 */
export const FailureReasons = ["internal_error", "validation_failed", "extraction_failed", "expired"] as const
export const FailureReason = Schema.Literal(...FailureReasons)
export type FailureReason = typeof FailureReason.Type
export const FailureReasonOrUnknown = Schema.Union(FailureReason, Schema.String)
