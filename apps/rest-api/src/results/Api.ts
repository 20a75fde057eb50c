import {
  BoundingBoxesResponse,
  ExtractionsPage,
  RelevantPagesResponse,
  ResolutionStatusInput,
  ResultDetail,
  ResultOverrideRequest,
  ResultReviewRequest,
  ResultsExportFormats,
  ResultsGrid,
  ResultsPage,
  ReviewQueue,
} from "@dxs/domain/contract/Result"
import { ResolutionStatuses } from "@dxs/domain/Enums"
import {
  GRID_DEFAULT_LIMIT,
  GRID_MAX_LIMIT,
  GRID_SEARCH_MAX_LENGTH,
  RELEVANT_PAGES_MAX_LIMIT,
  RESULTS_MAX_LIMIT,
  REVIEW_QUEUE_DEFAULT_LIMIT,
  REVIEW_QUEUE_MAX_LIMIT,
} from "@dxs/services"
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import { Schema } from "effect"
import { Authentication } from "../Auth.ts"
import { flexibleBody } from "../Body.ts"
import { BadRequest, cursorParam, NotFound, Uuid, wholeNumber } from "../Common.ts"

/**
 * A confidence in a query string: a number from 0 to 1, described as such (see `wholeNumber` for why the
 * text schema comes first).
 */
const confidenceText = (() => {
  const message = () => "must be a number from 0 to 1"
  return Schema.compose(
    Schema.String.annotations({ jsonSchema: { type: "number", minimum: 0, maximum: 1 } }),
    Schema.NumberFromString.pipe(
      Schema.finite({ message }),
      Schema.greaterThanOrEqualTo(0, { message }),
      Schema.lessThanOrEqualTo(1, { message }),
    ),
  )
})()

export const ResultsListParams = Schema.Struct({
  agent_id: Schema.optional(Uuid.annotations({ description: "only this agent's results" })),
  resolution_status: Schema.optional(
    ResolutionStatusInput.annotations({
      description: `only results with this status: ${ResolutionStatuses.join(", ")}`,
    }),
  ),
  dimension_value: Schema.optional(
    Schema.String.annotations({
      description: "only results with a dimension instance of exactly this value",
    }),
  ),
  max_confidence: Schema.optional(
    confidenceText.annotations({
      description:
        "only results whose confidence is at or below this (0 to 1), least confident first; results without a confidence (no value) are left out",
    }),
  ),
  limit: Schema.optional(
    wholeNumber(1, RESULTS_MAX_LIMIT).annotations({
      description: `page size, default 50, at most ${RESULTS_MAX_LIMIT}`,
    }),
  ),
  offset: Schema.optional(wholeNumber(0).annotations({ description: "rows to skip, default 0" })),
  cursor: Schema.optional(cursorParam),
})

/** The grid's and the export's filters and sort (beyond the contract). */
const gridFilters = {
  agent_id: Schema.optional(
    Uuid.annotations({
      description: "only rows with a cell of this agent that matches the other cell filters",
    }),
  ),
  resolution_status: Schema.optional(
    ResolutionStatusInput.annotations({
      description: `only rows with a cell of this status: ${ResolutionStatuses.join(", ")}`,
    }),
  ),
  dimension_value: Schema.optional(
    Schema.String.annotations({
      description:
        "only rows with a cell whose result has a dimension instance whose value contains this, ignoring case (part of a file name is enough; `GET …/results/` keeps its exact match)",
    }),
  ),
  document_id: Schema.optional(
    Uuid.annotations({
      description: "only rows with a cell of this document (its Document dimension instance)",
    }),
  ),
  max_confidence: Schema.optional(
    confidenceText.annotations({
      description: "only rows with a cell whose confidence is at or below this (0 to 1)",
    }),
  ),
  review_status: Schema.optional(
    Schema.String.annotations({
      description:
        "only rows with a cell whose latest review is this: `none` (never reviewed), `positive` (marked correct) or `negative` (marked wrong)",
    }),
  ),
  source: Schema.optional(
    Schema.String.annotations({
      description: "only rows with a cell whose value is the pipeline's (`model`) or set by hand (`manual`)",
    }),
  ),
  search: Schema.optional(
    Schema.String.annotations({
      jsonSchema: {
        type: "string",
        minLength: 1,
        maxLength: GRID_SEARCH_MAX_LENGTH,
        description: `1 to ${GRID_SEARCH_MAX_LENGTH} characters: only rows whose name, dimension values or a cell's value contain this, case-insensitively`,
      },
    }),
  ),
  sort: Schema.optional(
    Schema.String.annotations({
      description:
        "`name` (default) or `-name`; `agent:<agent id>` or `-agent:<agent id>` sorts by that agent's value (numbers numerically, ISO dates of date agents as dates, else text case-insensitively; rows without a value last in both directions; ties by name)",
    }),
  ),
}

export const ResultsGridParams = Schema.Struct({
  ...gridFilters,
  limit: Schema.optional(
    wholeNumber(1, GRID_MAX_LIMIT).annotations({
      description: `rows per page, default ${GRID_DEFAULT_LIMIT}, at most ${GRID_MAX_LIMIT}`,
    }),
  ),
  offset: Schema.optional(wholeNumber(0).annotations({ description: "rows to skip, default 0" })),
  cursor: Schema.optional(cursorParam),
})

export const ResultsExportParams = Schema.Struct({
  ...gridFilters,
  format: Schema.optional(
    Schema.String.annotations({
      jsonSchema: {
        type: "string",
        enum: [...ResultsExportFormats],
        description: `${ResultsExportFormats.join(" or ")}; default csv`,
      },
    }),
  ),
  include: Schema.optional(
    Schema.String.annotations({
      description:
        "columns to add per agent, comma-separated: `confidence` (`<agent name> confidence`, 0 to 1, empty when there is no value) and `review` (`<agent name> review`: none, positive or negative; `<agent name> source`: model or manual)",
    }),
  ),
})

/** Described as any media type: text/csv or the XLSX type, by `format`. */
const ExportBytes = HttpApiSchema.Uint8Array({ contentType: "*/*" }).annotations({
  description:
    "a CSV file (text/csv; charset=utf-8, with a UTF-8 byte order mark) or an XLSX workbook, sent as an attachment",
})

export const ExtractionsParams = Schema.Struct({
  limit: Schema.optional(wholeNumber(1, 500).annotations({ description: "page size, default 10" })),
  offset: Schema.optional(wholeNumber(0).annotations({ description: "zero-indexed, default 0" })),
})

export const RelevantPagesParams = Schema.Struct({
  document_id: Schema.optional(Uuid.annotations({ description: "only pages of this document" })),
  limit: Schema.optional(
    wholeNumber(1, RELEVANT_PAGES_MAX_LIMIT).annotations({
      description: `pages to return, default 20, at most ${RELEVANT_PAGES_MAX_LIMIT}`,
    }),
  ),
})

export const ReviewQueueParams = Schema.Struct({
  limit: Schema.optional(
    wholeNumber(1, REVIEW_QUEUE_MAX_LIMIT).annotations({
      description: `documents per page, default ${REVIEW_QUEUE_DEFAULT_LIMIT}, at most ${REVIEW_QUEUE_MAX_LIMIT}`,
    }),
  ),
  cursor: Schema.optional(cursorParam),
  after_document: Schema.optional(
    Uuid.annotations({
      description:
        "only the documents after this one in the queue (a document without values: from the start); not with cursor",
    }),
  ),
  before_document: Schema.optional(
    Uuid.annotations({
      description: "only the documents before this one in the queue, nearest first; not with cursor",
    }),
  ),
})

const ProjectPath = Schema.Struct({ project_id: Uuid })
const ResultPath = Schema.Struct({ project_id: Uuid, resolution_result_id: Uuid })
const AgentPath = Schema.Struct({ project_id: Uuid, agent_id: Uuid })
const ExtractionPath = Schema.Struct({ project_id: Uuid, extraction_id: Uuid })

export class ResultsApi extends HttpApiGroup.make("results")
  .add(
    HttpApiEndpoint.get("list", "/projects/:project_id/results/")
      .setPath(ProjectPath)
      .setUrlParams(ResultsListParams)
      .addSuccess(ResultsPage)
      .annotate(
        OpenApi.Summary,
        "List the project's results (current configuration of non-draft agents), by agent then result name",
      )
      .annotate(
        OpenApi.Description,
        "In a row, `id` is the atomic value; links to a result use `resolution_result.id`. `next` and `previous` are relative links that keep the filters. With `max_confidence` (beyond the contract), only the results at or below that confidence, least confident first.",
      ),
  )
  .add(
    HttpApiEndpoint.get("grid", "/projects/:project_id/results/grid/")
      .setPath(ProjectPath)
      .setUrlParams(ResultsGridParams)
      .addSuccess(ResultsGrid)
      .annotate(
        OpenApi.Summary,
        "The results as a matrix: one row per combination of dimension values, one column per agent (beyond the contract)",
      )
      .annotate(
        OpenApi.Description,
        'Beyond the contract. A row is a combination of dimension values ("All documents" for results no dimension splits, else the result name); the columns are every agent of the project, oldest first; a cell missing from `cells` has no result yet. Cell filters (`agent_id`, `resolution_status`, `dimension_value`, `document_id`, `max_confidence`, `review_status`, `source`) list a row when one of its cells matches all of them. Each cell carries its latest review (`latest_review_status`) and who gave its value (`source`: model or manual). Paged by rows; `next` and `previous` are relative links that keep the filters and the sort.',
      ),
  )
  .add(
    HttpApiEndpoint.get("export", "/projects/:project_id/results/export/")
      .setPath(ProjectPath)
      .setUrlParams(ResultsExportParams)
      .addSuccess(ExportBytes)
      .annotate(OpenApi.Summary, "Export the results grid as CSV or XLSX (beyond the contract)")
      .annotate(
        OpenApi.Description,
        "Beyond the contract. The grid's rows with its filters and sort, streamed: columns `Row`, one per dimension, then per agent (oldest first) `<agent name>` (the value, with the agent's unit), `<agent name> status` and `<agent name> citations` (`<document name> p.<page>` joined by `; `), with `include=confidence,review` also `<agent name> confidence`, `<agent name> review` and `<agent name> source`. Sent as an attachment named `<project name>-results.csv` or `.xlsx`.",
      ),
  )
  .add(
    HttpApiEndpoint.get("reviewQueue", "/projects/:project_id/review/queue/")
      .setPath(ProjectPath)
      .setUrlParams(ReviewQueueParams)
      .addSuccess(ReviewQueue)
      .annotate(
        OpenApi.Summary,
        "The documents to review, those with a value requiring attention first, then the least confident first (beyond the contract)",
      )
      .annotate(
        OpenApi.Description,
        "Beyond the contract. The project's documents with current values (a document's values are the results whose Document dimension instance is that document), each with its values counted (all, reviewed, requiring attention), its least confidence and whether it is reviewed (every value has a review, positive or negative, or a value set by hand); documents with a value requiring attention come first, then by least confidence (documents without one last), then by id. `total_documents` and `reviewed_documents` count the whole queue. `next` is a relative link (a cursor) to the following page, or null. With `after_document` (or `before_document`), the documents after (before, nearest first) that one, the way a reviewer moves through the queue; `next` is then null.",
      ),
  )
  .add(
    HttpApiEndpoint.get("get", "/projects/:project_id/results/:resolution_result_id/")
      .setPath(ResultPath)
      .addSuccess(ResultDetail)
      .annotate(OpenApi.Summary, "Retrieve a result with its sources, web supplement and review"),
  )
  .add(
    HttpApiEndpoint.get("extractions", "/projects/:project_id/results/:resolution_result_id/extractions/")
      .setPath(ResultPath)
      .setUrlParams(ExtractionsParams)
      .addSuccess(ExtractionsPage)
      .annotate(
        OpenApi.Summary,
        "The extractions behind a result: web first, then consistent ones, then by document and page",
      ),
  )
  .add(
    HttpApiEndpoint.patch("override", "/projects/:project_id/results/:resolution_result_id/")
      .setPath(ResultPath)
      .setPayload(flexibleBody(ResultOverrideRequest))
      .addSuccess(ResultDetail)
      .annotate(
        OpenApi.Summary,
        "Set a result's value by hand (kept until the agent's configuration changes); status defaults to Resolved",
      ),
  )
  .add(
    HttpApiEndpoint.post("review", "/projects/:project_id/results/:resolution_result_id/review/")
      .setPath(ResultPath)
      .setPayload(flexibleBody(ResultReviewRequest))
      .addSuccess(ResultDetail)
      .annotate(OpenApi.Summary, "Record a review of a result (positive, negative or none)"),
  )
  .add(
    HttpApiEndpoint.get("relevantPages", "/projects/:project_id/agents/:agent_id/relevant-pages/")
      .setPath(AgentPath)
      .setUrlParams(RelevantPagesParams)
      .addSuccess(RelevantPagesResponse)
      .annotate(
        OpenApi.Summary,
        "The pages of the project's processed documents that match the agent's key terms, best first",
      ),
  )
  .add(
    HttpApiEndpoint.get("boundingBoxes", "/projects/:project_id/extractions/:extraction_id/bounding-boxes/")
      .setPath(ExtractionPath)
      .addSuccess(BoundingBoxesResponse)
      .annotate(
        OpenApi.Summary,
        "Where an extraction's passage is on its page: boxes (one per line) in the page's unit; empty for web extractions",
      ),
  )
  .addError(BadRequest)
  .addError(NotFound)
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Results")
  .annotate(
    OpenApi.Description,
    "Resolved values of the agents, one per atomic value (agent and combination of dimension values), with citations.",
  ) {}
