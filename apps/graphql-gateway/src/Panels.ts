import { DocumentBulkRequest } from "@dxs/domain/contract/Document"
import { DocumentStatus } from "@dxs/domain/Enums"
import { Documents, Results } from "@dxs/services"
import { Effect } from "effect"
import { optionalArgument, resolutionStatusArgument } from "./Arguments.ts"
import type { GraphqlContext } from "./Context.ts"

/** The fields of REST's document record, as `Document` and `DocumentListItem` both have them. */
export const documentRecordFields = `
    id: ID!
    project_id: ID!
    file_url: String!
    uploaded_at: String!
    type: String!
    page_count: Int!
    version: Int!
    summary: String!
    metadata: String!
    status: String!
    uses_agentic_extraction: Boolean!
    last_parsed_at: String
    archive_requested_at: String
    tags: [DocumentTag!]!
    file_name: String!
    failure_reason: String
    parent_document_id: ID
`

/**
 * What the web application's panels read and do beyond the contract, as REST serves it: the results grid
 * (GET …/results/grid/), the documents page (GET …/documents/page/), a re-parse (POST …/reparse/) and
 * actions on many documents (POST …/documents/bulk/), through the same services, with the same
 * arguments, refusals and answers.
 */
export const panelTypeDefs = /* GraphQL */ `
  "An agent's column of the results grid."
  type ResultsGridColumn {
    agent_id: ID!
    agent_name: String!
    value_type: String!
    unit: String
  }

  "A row of the results grid: one combination of dimension values."
  type ResultsGridRow {
    "The row's identity (opaque): two combinations may share a name."
    key: String!
    "The row's name as shown: All documents for results no dimension splits, else the result name."
    name: String!
    "Dimension name → value; {} for the All documents row."
    dimension_values: JSON!
    """
    Agent id → cell, as REST gives it (JSON, so that a page of many agents stays within the cost limit):
    {resolution_result_id, value, resolution_status, confidence, is_overridden, latest_review_status, source}.
    An agent without a key here has no result in this row yet.
    """
    cells: JSON!
  }

  "A page of the results grid (REST GET …/results/grid/)."
  type ResultsGrid {
    count: Int!
    next: String
    previous: String
    "Every agent of the project, oldest first."
    columns: [ResultsGridColumn!]!
    rows: [ResultsGridRow!]!
  }

  "A document as the documents page lists it: with the number of its e-mail attachments."
  type DocumentListItem {
${documentRecordFields}    attachment_count: Int!
  }

  "A page of documents (REST GET …/documents/page/)."
  type DocumentsPage {
    count: Int!
    next: String
    previous: String
    results: [DocumentListItem!]!
  }

  "Documents an action could not be carried out on, with what their own request would have answered."
  type DocumentBulkFailure {
    document_id: ID!
    status: Int!
    detail: String!
  }

  type DocumentBulkResult {
    succeeded: [ID!]!
    failed: [DocumentBulkFailure!]!
  }

  input DocumentBulkInput {
    "delete or archive, as the single-document mutations do."
    action: String!
    "The documents to act on: 1 to 500 ids, each once."
    document_ids: [ID!]!
  }

  extend type Query {
    """
    Beyond the contract: the matrix of the project's results, one row per combination of dimension values
    and one column per agent (REST GET …/results/grid/, its arguments in camelCase; sort: name, -name,
    agent:<agent id>, -agent:<agent id>; cursor: from a next or previous link).
    """
    resultsGrid(
      projectId: ID!
      agentId: ID
      resolutionStatus: String
      dimensionValue: String
      maxConfidence: Float
      search: String
      reviewStatus: String
      source: String
      sort: String
      limit: Int
      offset: Int
      cursor: String
    ): ResultsGrid!
    "Beyond the contract: a page of the project's documents, newest first (REST GET …/documents/page/)."
    documentsPage(
      projectId: ID!
      search: String
      status: String
      tagKey: String
      tagValue: String
      parentDocumentId: ID
      limit: Int
      offset: Int
      cursor: String
    ): DocumentsPage!
  }

  extend type Mutation {
    "Parse a document again from its stored file: a new version, Pending until parsed (REST POST …/reparse/)."
    reparseDocument(projectId: ID!, documentId: ID!): Document!
    "Delete or archive many documents at once, each as its own mutation would (REST POST …/documents/bulk/)."
    bulkDocuments(projectId: ID!, input: DocumentBulkInput!): DocumentBulkResult!
  }
`

/** A `status` argument of the documents page, refused as REST refuses it. */
const documentStatusArgument = optionalArgument(DocumentStatus, "unknown value")

/** The action of a bulk request, refused as REST refuses it. */
const bulkActionArgument = optionalArgument(DocumentBulkRequest.fields.action, "must be delete or archive")

/** null (GraphQL's absent value) as absent. */
const given = <A>(value: A | null | undefined): A | undefined => value ?? undefined

interface GridArgs {
  readonly projectId: string
  readonly agentId?: string | null
  readonly resolutionStatus?: string | null
  readonly dimensionValue?: string | null
  readonly maxConfidence?: number | null
  readonly search?: string | null
  readonly reviewStatus?: string | null
  readonly source?: string | null
  readonly sort?: string | null
  readonly limit?: number | null
  readonly offset?: number | null
  readonly cursor?: string | null
}

interface DocumentsPageArgs {
  readonly projectId: string
  readonly search?: string | null
  readonly status?: string | null
  readonly tagKey?: string | null
  readonly tagValue?: string | null
  readonly parentDocumentId?: string | null
  readonly limit?: number | null
  readonly offset?: number | null
  readonly cursor?: string | null
}

export const panelResolvers = {
  Query: {
    resultsGrid: (_: unknown, args: GridArgs, ctx: GraphqlContext) =>
      ctx.run(
        Effect.flatMap(resolutionStatusArgument("resolutionStatus", args.resolutionStatus), (status) =>
          Effect.flatMap(Results, (r) =>
            r.grid(args.projectId, {
              agent_id: given(args.agentId),
              resolution_status: status,
              dimension_value: given(args.dimensionValue),
              max_confidence: given(args.maxConfidence),
              search: given(args.search),
              review_status: given(args.reviewStatus),
              source: given(args.source),
              sort: given(args.sort),
              limit: given(args.limit),
              offset: given(args.offset),
              cursor: given(args.cursor),
            }),
          ),
        ),
      ),
    documentsPage: (_: unknown, args: DocumentsPageArgs, ctx: GraphqlContext) =>
      ctx.run(
        Effect.flatMap(documentStatusArgument("status", args.status), (status) =>
          Effect.flatMap(Documents, (d) =>
            d.page(args.projectId, {
              search: given(args.search),
              status,
              tag_key: given(args.tagKey),
              tag_value: given(args.tagValue),
              parent_document_id: given(args.parentDocumentId),
              limit: given(args.limit),
              offset: given(args.offset),
              cursor: given(args.cursor),
            }),
          ),
        ),
      ),
  },
  Mutation: {
    reparseDocument: (_: unknown, args: { projectId: string; documentId: string }, ctx: GraphqlContext) =>
      ctx.run(Effect.flatMap(Documents, (d) => d.reparse(args.projectId, args.documentId))),
    bulkDocuments: (
      _: unknown,
      args: { projectId: string; input: { action: string; document_ids: ReadonlyArray<string> } },
      ctx: GraphqlContext,
    ) =>
      ctx.run(
        Effect.flatMap(bulkActionArgument("input.action", args.input.action), (action) =>
          Effect.flatMap(Documents, (d) =>
            d.bulk(args.projectId, { action: action ?? "delete", document_ids: args.input.document_ids }),
          ),
        ),
      ),
  },
}
