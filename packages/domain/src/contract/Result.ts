/**
 * Results (api-v1.md "Result row (list) and result detail", "Extraction (V1ExtractionResult)"): the records,
 * and the bodies that override and review a result.
 */
import { Schema } from "effect"
import {
  AgentValueType,
  ExtractionSourceType,
  ExtractionStatus,
  ResolutionStatus,
  ResolutionStatuses,
  ReviewStatus,
  SourceType,
} from "../Enums.ts"
import { DateTime, Email, EmailInput, RecordId as Uuid } from "./Fields.ts"

export const ResultValue = Schema.Union(
  Schema.String,
  Schema.Number,
  Schema.Boolean,
  Schema.Null,
).annotations({
  identifier: "V1ResultValue",
  description: "a string for `string` agents, a number for `number` agents; null when there is no value",
})
export type ResultValue = typeof ResultValue.Type

export const ResultReferences = Schema.Record({
  key: Schema.String,
  value: Schema.Tuple(Schema.String, Schema.NullOr(Schema.Int)),
}).annotations({
  identifier: "V1ResultReferences",
  description: "reference id → [document_name, page]; page is 1-based, null for web sources; {} when none",
})

export const ResultDimensionInstance = Schema.Struct({
  id: Uuid,
  dimension_id: Uuid,
  dimension_value: Schema.String,
  name: Schema.String.annotations({ description: "the dimension's name" }),
  document_id: Schema.NullOr(Uuid).annotations({ description: "set for the Document dimension" }),
}).annotations({ identifier: "V1ResultDimensionInstance" })
export type ResultDimensionInstance = typeof ResultDimensionInstance.Type

export const ResultSummary = Schema.Struct({
  id: Uuid.annotations({
    description: "the resolution result id: use it in /results/{resolution_result_id}/",
  }),
  value: ResultValue,
  resolution_status: ResolutionStatus,
  references: ResultReferences,
  justification_for_resolution_status: Schema.NullOr(Schema.String),
  source_type: SourceType,
  updated_by_email: Schema.NullOr(Email),
  confidence: Schema.NullOr(Schema.Number).annotations({
    description:
      "0 to 1: how sure the service is of the value (its extractions' confidence, agreement across documents); null when there is no value. See the README's Confidence section",
  }),
}).annotations({ identifier: "V1ResolutionResultSummary" })

export const ResultRow = Schema.Struct({
  id: Uuid.annotations({ description: "the atomic value id (not the resolution result id)" }),
  atomic_value_id: Uuid,
  agent_id: Uuid,
  agent_name: Schema.String,
  result_name: Schema.String,
  value_type: AgentValueType,
  extraction_status: ExtractionStatus,
  resolution_result: ResultSummary,
  dimension_instances: Schema.Array(ResultDimensionInstance),
}).annotations({ identifier: "V1ResultRow" })
export type ResultRow = typeof ResultRow.Type

export const ResultsPage = Schema.Struct({
  count: Schema.Int.annotations({ description: "rows matching the filters, across all pages" }),
  next: Schema.NullOr(Schema.String).annotations({ description: "relative URL of the next page, or null" }),
  previous: Schema.NullOr(Schema.String).annotations({
    description: "relative URL of the previous page, or null",
  }),
  results: Schema.Array(ResultRow),
}).annotations({ identifier: "V1ResultsPage" })
export type ResultsPage = typeof ResultsPage.Type

export const ResultSource = Schema.Struct({
  document_name: Schema.String,
  page_number: Schema.Int.annotations({ description: "1-based" }),
  document_id: Uuid,
  atomic_value_ids: Schema.Array(Uuid),
}).annotations({ identifier: "V1ResultSource" })

export const WebSupplement = Schema.Struct({
  text: Schema.String,
  sources: Schema.Array(
    Schema.Struct({ url: Schema.String.annotations({ format: "uri" }), title: Schema.String }),
  ),
}).annotations({ identifier: "V1WebSupplement" })

export const ResultDetail = Schema.Struct({
  id: Uuid.annotations({ description: "resolution result id" }),
  atomic_value_id: Uuid,
  result_name: Schema.String,
  agent_id: Uuid,
  agent_name: Schema.String,
  value_type: AgentValueType,
  unit: Schema.String,
  extraction_status: ExtractionStatus,
  requires_attention: Schema.Boolean,
  value: ResultValue,
  resolution_status: ResolutionStatus,
  justification_for_resolution_status: Schema.NullOr(Schema.String),
  references: ResultReferences,
  source_type: SourceType,
  is_web_supplement: Schema.Boolean,
  web_supplement: Schema.NullOr(WebSupplement),
  is_overridden: Schema.Boolean.annotations({ description: "a person set the value by hand" }),
  updated_by_email: Schema.NullOr(Email),
  created_at: DateTime,
  updated_at: DateTime,
  dimension_instances: Schema.Array(ResultDimensionInstance),
  sources: Schema.Array(ResultSource),
  latest_review_status: Schema.NullOr(ReviewStatus),
  latest_review_comment: Schema.String,
  latest_review_at: Schema.NullOr(DateTime),
  latest_review_by: Schema.NullOr(Email),
  confidence: Schema.NullOr(Schema.Number).annotations({
    description:
      "0 to 1: how sure the service is of the value (its extractions' confidence, agreement across documents); null when there is no value. See the README's Confidence section",
  }),
}).annotations({ identifier: "V1ResultDetailResponse" })
export type ResultDetail = typeof ResultDetail.Type

export const WebCitation = Schema.Struct({
  snippets: Schema.Array(Schema.Struct({ text: Schema.String })),
  source: Schema.Struct({ url: Schema.String.annotations({ format: "uri" }), title: Schema.String }),
}).annotations({ identifier: "V1WebCitation" })

export const DerivedSource = Schema.Struct({
  source_agent_id: Uuid,
  source_agent_name: Schema.String,
  source_resolution_result_id: Uuid,
  dimension_values: Schema.Record({ key: Schema.String, value: Schema.String }),
  resolved_value: Schema.String,
}).annotations({ identifier: "V1DerivedSource" })

export const ExtractionResult = Schema.Struct({
  id: Uuid,
  value: Schema.String.annotations({ description: "numbers as canonical decimals" }),
  relevant_passage: Schema.String.annotations({ description: "verbatim source passage" }),
  reasoning: Schema.String,
  consistent: Schema.NullOr(Schema.Boolean).annotations({ description: "null until evaluated" }),
  justification_for_consistency: Schema.NullOr(Schema.String),
  source_type: ExtractionSourceType,
  document_id: Schema.NullOr(Uuid),
  document_name: Schema.NullOr(Schema.String),
  page_number: Schema.NullOr(Schema.Int).annotations({ description: "1-based; null for web" }),
  extracted_at: DateTime,
  web_search_query: Schema.NullOr(Schema.String),
  web_search_timestamp: Schema.NullOr(DateTime),
  web_citations: Schema.Array(WebCitation),
  derived_sources: Schema.Array(DerivedSource),
  grounded: Schema.Boolean.annotations({
    description:
      "false when the passage is not on the cited page or does not state the value (such a value needs a person's look); true for web and derived extractions",
  }),
  confidence: Schema.NullOr(Schema.Number).annotations({
    description:
      "0 to 1 (the model's own, or a default, at most 0.2 when not grounded); null when not computed",
  }),
}).annotations({ identifier: "V1ExtractionResult" })
export type ExtractionResult = typeof ExtractionResult.Type

export const ExtractionsPage = Schema.Struct({
  data: Schema.Array(ExtractionResult),
  total_count: Schema.Int.annotations({ description: "extractions of the result across all pages" }),
}).annotations({ identifier: "V1ExtractionListResponse" })
export type ExtractionsPage = typeof ExtractionsPage.Type

export const RelevantPagesResponse = Schema.Struct({
  agent_id: Uuid,
  pages: Schema.Array(
    Schema.Struct({
      document_id: Uuid,
      document_name: Schema.String,
      page_number: Schema.Int.annotations({ description: "1-based" }),
      score: Schema.Number.annotations({ description: "full-text rank for the agent's key terms, 0 to 1" }),
      snippet: Schema.String,
    }),
  ),
}).annotations({ identifier: "V1RelevantPagesResponse" })
export type RelevantPagesResponse = typeof RelevantPagesResponse.Type

export const BoundingBox = Schema.Struct({
  x: Schema.Number,
  y: Schema.Number,
  width: Schema.Number,
  height: Schema.Number,
  text: Schema.String,
}).annotations({ identifier: "V1BoundingBox", description: "top-left origin, in the page's unit" })
export type BoundingBox = typeof BoundingBox.Type

export const BoundingBoxesResponse = Schema.Struct({
  extraction_id: Uuid,
  document_id: Schema.NullOr(Uuid),
  page_number: Schema.NullOr(Schema.Int),
  page_width: Schema.NullOr(Schema.Number),
  page_height: Schema.NullOr(Schema.Number),
  unit: Schema.NullOr(Schema.String).annotations({ description: "`pt` or `px`; null when unknown" }),
  boxes: Schema.Array(BoundingBox).annotations({
    description: "one per line of the passage on the page; empty when not located or for web extractions",
  }),
}).annotations({ identifier: "V1BoundingBoxesResponse" })
export type BoundingBoxesResponse = typeof BoundingBoxesResponse.Type

/** `resolution_status` in a request (a filter or an override), refused with the list of its values. */
export const ResolutionStatusInput = ResolutionStatus.annotations({
  message: () => `must be one of ${ResolutionStatuses.join(", ")}`,
})

export const ResultOverrideRequest = Schema.Struct({
  value: Schema.Union(Schema.String, Schema.Number, Schema.Null).annotations({
    description: "the new value (required; null for none); a `number` agent's value must be a number",
  }),
  resolution_status: Schema.optional(ResolutionStatus.annotations({ description: "default `Resolved`" })),
  justification_for_resolution_status: Schema.optional(Schema.NullOr(Schema.String)),
  updated_by_email: Schema.optional(
    Schema.NullOr(EmailInput).annotations({ description: "the person who set the value" }),
  ),
}).annotations({ identifier: "V1ResultOverrideRequest" })
export type ResultOverrideRequest = typeof ResultOverrideRequest.Type

export const ResultReviewRequest = Schema.Struct({
  status: ReviewStatus,
  comment: Schema.optional(Schema.String),
  reviewed_by: Schema.optional(
    Schema.NullOr(EmailInput).annotations({ description: "the reviewer's e-mail" }),
  ),
}).annotations({ identifier: "V1ResultReviewRequest" })
export type ResultReviewRequest = typeof ResultReviewRequest.Type

// ---------------------------------------------------------------------------------------------------------
// The results grid (beyond the contract): the matrix of a project's results, one row per combination of
// dimension values and one column per agent.

export const ResultsGridColumn = Schema.Struct({
  agent_id: Uuid,
  agent_name: Schema.String,
  value_type: AgentValueType,
  unit: Schema.NullOr(Schema.String).annotations({ description: "the agent's unit, or null" }),
}).annotations({ identifier: "V1ResultsGridColumn" })
export type ResultsGridColumn = typeof ResultsGridColumn.Type

/** Who gave a result its value. */
export const ValueSources = ["model", "manual"] as const
export const ValueSource = Schema.Literal(...ValueSources).annotations({
  description: "model: the pipeline's value; manual: a value set by hand (an override)",
})
export type ValueSource = typeof ValueSource.Type

export const ResultsGridCell = Schema.Struct({
  resolution_result_id: Uuid.annotations({ description: "use it in /results/{resolution_result_id}/" }),
  value: ResultValue,
  resolution_status: ResolutionStatus,
  confidence: Schema.NullOr(Schema.Number).annotations({
    description: "0 to 1; null when there is no value",
  }),
  is_overridden: Schema.Boolean.annotations({ description: "the value was set by hand" }),
  latest_review_status: Schema.NullOr(ReviewStatus).annotations({
    description:
      "the value's latest review (positive: marked correct, negative: marked wrong); null when never reviewed",
  }),
  source: ValueSource,
}).annotations({ identifier: "V1ResultsGridCell" })
export type ResultsGridCell = typeof ResultsGridCell.Type

export const ResultsGridRow = Schema.Struct({
  key: Schema.String.annotations({
    description:
      "the row's identity (opaque): one per combination of dimension values; two combinations may share a name",
  }),
  name: Schema.String.annotations({
    description:
      'the row\'s name as shown: "All documents" for results no dimension splits, else the result name',
  }),
  dimension_values: Schema.Record({ key: Schema.String, value: Schema.String }).annotations({
    description: "dimension name → value; {} for the All documents row",
  }),
  cells: Schema.Record({ key: Schema.String, value: ResultsGridCell }).annotations({
    description: "agent id → cell; an agent without a key here has no result in this row yet",
  }),
}).annotations({ identifier: "V1ResultsGridRow" })
export type ResultsGridRow = typeof ResultsGridRow.Type

export const ResultsGrid = Schema.Struct({
  count: Schema.Int.annotations({ description: "rows matching the filters, across all pages" }),
  next: Schema.NullOr(Schema.String).annotations({ description: "relative URL of the next page, or null" }),
  previous: Schema.NullOr(Schema.String).annotations({
    description: "relative URL of the previous page, or null",
  }),
  columns: Schema.Array(ResultsGridColumn).annotations({
    description: "every agent of the project, oldest first",
  }),
  rows: Schema.Array(ResultsGridRow),
}).annotations({ identifier: "V1ResultsGrid" })
export type ResultsGrid = typeof ResultsGrid.Type

/** The formats of `GET …/results/export/`. */
export const ResultsExportFormats = ["csv", "xlsx"] as const
export type ResultsExportFormat = (typeof ResultsExportFormats)[number]

/** The columns an export may add per agent (`include=confidence,review`). */
export const ResultsExportIncludes = ["confidence", "review"] as const
export type ResultsExportInclude = (typeof ResultsExportIncludes)[number]

/** A document of the review queue (beyond the contract). */
export const ReviewQueueDocument = Schema.Struct({
  document_id: Schema.UUID,
  file_name: Schema.String,
  values: Schema.Int.annotations({
    description: "the document's current values (one per agent and dimension instance)",
  }),
  reviewed_values: Schema.Int.annotations({
    description: "values with a review (positive or negative) or a value set by hand",
  }),
  requires_attention: Schema.Int.annotations({ description: "values whose status is Requires attention" }),
  least_confidence: Schema.NullOr(Schema.Number).annotations({
    description: "the least confidence of its values (0 to 1), null when none has one",
  }),
  reviewed: Schema.Boolean.annotations({ description: "every value of the document is reviewed" }),
}).annotations({ identifier: "V1ReviewQueueDocument" })
export type ReviewQueueDocument = typeof ReviewQueueDocument.Type

/** A page of the review queue with the project's totals (beyond the contract). */
export const ReviewQueue = Schema.Struct({
  total_documents: Schema.Int.annotations({ description: "documents with current values, across all pages" }),
  reviewed_documents: Schema.Int.annotations({ description: "of them, those whose every value is reviewed" }),
  next: Schema.NullOr(Schema.String).annotations({ description: "relative URL of the next page, or null" }),
  documents: Schema.Array(ReviewQueueDocument),
}).annotations({ identifier: "V1ReviewQueue" })
export type ReviewQueue = typeof ReviewQueue.Type
