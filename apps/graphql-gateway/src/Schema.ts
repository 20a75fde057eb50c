import type { Agent, Document, Project } from "@dxs/domain/Records"
import type { ExtractionResult, ResultDetail } from "@dxs/services"
import { Launches, OutputSchemas, Projects, Results } from "@dxs/services"
import { Effect } from "effect"
import { GraphQLScalarType, Kind, printSchema, type ValueNode } from "graphql"
import { createSchema } from "graphql-yoga"
import { resolutionStatusArgument } from "./Arguments.ts"
import { contentResolvers, contentTypeDefs } from "./Content.ts"
import type { GraphqlContext } from "./Context.ts"
import { fileEditResolvers, fileEditTypeDefs } from "./FileEdits.ts"
import { mutationResolvers, mutationTypeDefs } from "./Mutations.ts"
import { documentRecordFields, panelResolvers, panelTypeDefs } from "./Panels.ts"
import { subscriptionResolvers, subscriptionTypeDefs } from "./Subscriptions.ts"
import { webhookResolvers, webhookTypeDefs } from "./Webhooks.ts"

/**
 * The read side of the API as GraphQL. Field names are those of the REST records (snake_case), and
 * every resolver calls a use-case of `@dxs/services` (through the request's loaders or `run`), so REST
 * and GraphQL answer with the same values.
 */
export const typeDefs = /* GraphQL */ `
  "Any JSON value (objects, arrays, strings, numbers, booleans, null)."
  scalar JSON

  type Query {
    "The organisation's live projects, by name."
    projects: [Project!]!
    "One project of the organisation (NOT_FOUND otherwise)."
    project(id: ID!): Project
    "The project's current results, filtered and paginated as REST GET …/results/ (maxConfidence: max_confidence, only results at or below that confidence, least confident first)."
    results(
      projectId: ID!
      agentId: ID
      resolutionStatus: String
      dimensionValue: String
      maxConfidence: Float
      limit: Int
      offset: Int
    ): ResultPage!
    "One current result with its sources."
    result(projectId: ID!, id: ID!): ResultDetail
    "Beyond the contract: what the next launch would do and the model requests it would make (REST GET …/agents/launch/preview/)."
    launchPreview(projectId: ID!): LaunchPreview!
    "Beyond the contract: the project's runs, newest first, with their model usage (REST GET …/runs/)."
    runs(projectId: ID!, limit: Int, offset: Int): RunPage!
  }

  "A document that failed processing, which blocks a launch."
  type BlockingDocument {
    id: ID!
    name: String!
  }

  "Why the next launch would be refused."
  type LaunchRejection {
    "The status the launch would answer with (409, or 400)."
    status: Int!
    detail: String!
    failed_documents: [BlockingDocument!]!
  }

  "What the next launch would do; model_requests and the token estimates are what an OpenAI-compatible provider would be sent (the local provider sends none)."
  type LaunchPreview {
    extraction_pairs: Int!
    documents: Int!
    agents: Int!
    documents_not_parsed: Int!
    model_requests: Int!
    estimated_input_tokens: Float!
    estimated_output_tokens: Float!
    provider: String!
    rejected: LaunchRejection
  }

  "The model usage a run's tasks recorded."
  type RunUsage {
    requests: Int!
    cache_hits: Int!
    input_tokens: Float!
    cached_input_tokens: Float!
    output_tokens: Float!
  }

  "A pipeline run of the project."
  type Run {
    id: ID!
    number: Int!
    status: String!
    failure_reason: String
    created_at: String!
    started_at: String
    finished_at: String
    extraction_pairs: Int!
    agents: [ID!]!
    usage: RunUsage!
  }

  "A page of runs (REST GET …/runs/)."
  type RunPage {
    count: Int!
    next: String
    previous: String
    results: [Run!]!
  }

  "A mapping finding: where (slash-separated, [*] array items, {*} dimension-keyed values), how bad, what."
  type MappingDiagnostic {
    path: String!
    severity: String!
    code: String!
    message: String!
  }

  "The output schema record (REST GET …/schema/)."
  type OutputSchema {
    schema: JSON!
    auto_map: Boolean!
    mapping: JSON
    status: String!
    source: String!
    "The language model that generated the mapping (local: the offline planner); null when sent by hand."
    generated_by: String
    error: String
    generated_at: String
    schema_in_sync: Boolean!
    diagnostics: [MappingDiagnostic!]!
  }

  type Project {
    id: ID!
    name: String!
    description: String!
    created_at: String!
    last_visited_at: String
    reference_date: String
    auto_archive_after_days: Int
    document_count: Int!
    agent_count: Int!
    is_pinned: Boolean!
    folder_id: ID
    project_modules: JSON!
    target_output_schema: JSON
    output_mapping_status: String!
    documents: [Document!]!
    agents: [Agent!]!
    dimensions: [Dimension!]!
    status: ProjectStatus!
    "The output schema record; null when the project has none."
    output_schema: OutputSchema
    "The results in the shape of the output schema (REST GET …/results/schema/): they validate against it, or fail with BAD_USER_INPUT (status 422, extensions.errors) unless enrich is true."
    schema_results(enrich: Boolean): JSON!
  }

  type DocumentsByStatus {
    Pending: Int!
    Processed: Int!
    Failed: Int!
  }

  type ProjectStatus {
    pipeline_running: Boolean!
    schema_status: String!
    parsing_state: String!
    document_count: Int!
    documents_by_status: DocumentsByStatus!
  }

  type DocumentTag {
    key: String!
    value: String!
  }

  type Document {
${documentRecordFields}    "The parsed pages (empty until the document is processed)."
    pages: [Page!]!
  }

  type Page {
    document_id: ID!
    page_number: Int!
    text: String!
    width: Float
    height: Float
    unit: String
    layout: JSON!
  }

  type Dimension {
    id: ID!
    project_id: ID!
    name: String!
    description: String!
    example_values: String!
    value_type: String!
    source: String!
    auto_attach_to_new_agents: Boolean!
    created_at: String!
  }

  type AgentDimension {
    dimension_id: ID!
    dimension_mapping_id: ID!
    name: String!
    description: String!
    values: [String!]!
    value_count: Int!
    order: Int!
    are_values_dynamic: Boolean!
    source: String!
  }

  type DerivedAgentReference {
    agent_id: ID!
    agent_name: String!
  }

  type StageProgress {
    total: Int!
    completed: Int!
    percentage: Int!
  }

  type AgentProgress {
    parsing: StageProgress!
    extraction: StageProgress!
    web_search: StageProgress!
    resolution: StageProgress!
    is_running: Boolean!
    is_pending: Boolean!
  }

  type Agent {
    id: ID!
    project_id: ID!
    template_id: ID
    dimensions: [AgentDimension!]!
    created_at: String!
    extraction_status: String!
    requires_attention: Boolean!
    improvement_tip_summary: String
    name: String!
    extraction_instructions: String!
    value_type: String!
    unit: String!
    examples: String!
    inconsistency_instructions: String!
    resolution_instructions: String!
    enable_complex_calculations_in_resolution: Boolean!
    enable_web_search: Boolean!
    value_if_not_found: String!
    inconsistency_summary: String
    agent_type: String!
    derived_prompt: String!
    is_evaluation: Boolean!
    derived_agent_references: [DerivedAgentReference!]!
    "The agent's run progress, as in REST GET …/agents/status/."
    progress: AgentProgress
    """
    The pages of the project's processed documents that match the agent's key terms, best first (REST GET
    …/agents/{agent_id}/relevant-pages/). documentId: only pages of this document; limit: default 20, at
    most 100.
    """
    relevant_pages(documentId: ID, limit: Int): RelevantPages!
  }

  type RelevantPage {
    document_id: ID!
    document_name: String!
    "1-based."
    page_number: Int!
    "Full-text rank for the agent's key terms, 0 to 1."
    score: Float!
    snippet: String!
  }

  "The answer of REST GET …/agents/{agent_id}/relevant-pages/."
  type RelevantPages {
    agent_id: ID!
    pages: [RelevantPage!]!
  }

  "A box around one line of a passage: top-left origin, in the page's unit."
  type BoundingBox {
    x: Float!
    y: Float!
    width: Float!
    height: Float!
    text: String!
  }

  "Where an extraction's passage is on its page (REST GET …/extractions/{extraction_id}/bounding-boxes/)."
  type BoundingBoxes {
    extraction_id: ID!
    document_id: ID
    page_number: Int
    page_width: Float
    page_height: Float
    "pt or px; null when unknown."
    unit: String
    "One per line of the passage on the page; empty when not located or for web extractions."
    boxes: [BoundingBox!]!
  }

  type ResultDimensionInstance {
    id: ID!
    dimension_id: ID!
    dimension_value: String!
    name: String!
    document_id: ID
  }

  type ResultSummary {
    id: ID!
    value: JSON
    resolution_status: String!
    references: JSON!
    justification_for_resolution_status: String
    source_type: String!
    updated_by_email: String
    "0 to 1; null when there is no value."
    confidence: Float
  }

  type ResultRow {
    id: ID!
    atomic_value_id: ID!
    agent_id: ID!
    agent_name: String!
    result_name: String!
    value_type: String!
    extraction_status: String!
    resolution_result: ResultSummary!
    dimension_instances: [ResultDimensionInstance!]!
  }

  type ResultPage {
    count: Int!
    next: String
    previous: String
    results: [ResultRow!]!
  }

  type ResultSource {
    document_name: String!
    page_number: Int!
    document_id: ID!
    atomic_value_ids: [ID!]!
  }

  type Extraction {
    id: ID!
    value: String!
    relevant_passage: String!
    reasoning: String!
    consistent: Boolean
    justification_for_consistency: String
    source_type: String!
    document_id: ID
    document_name: String
    page_number: Int
    extracted_at: String!
    web_search_query: String
    web_search_timestamp: String
    web_citations: JSON!
    derived_sources: JSON!
    "False when the passage is not on the cited page or does not state the value."
    grounded: Boolean!
    "0 to 1; null when not computed."
    confidence: Float
    "Where the passage is on its page (REST GET …/extractions/{id}/bounding-boxes/)."
    bounding_boxes: BoundingBoxes!
  }

  type ExtractionsPage {
    data: [Extraction!]!
    total_count: Int!
  }

  type ResultDetail {
    id: ID!
    atomic_value_id: ID!
    result_name: String!
    agent_id: ID!
    agent_name: String!
    value_type: String!
    unit: String!
    extraction_status: String!
    requires_attention: Boolean!
    value: JSON
    resolution_status: String!
    justification_for_resolution_status: String
    references: JSON!
    source_type: String!
    is_web_supplement: Boolean!
    web_supplement: JSON
    is_overridden: Boolean!
    "Who gave the value: model (the pipeline) or manual (set by hand), as a REST grid cell's source."
    source: String!
    updated_by_email: String
    created_at: String!
    updated_at: String!
    dimension_instances: [ResultDimensionInstance!]!
    sources: [ResultSource!]!
    latest_review_status: String
    latest_review_comment: String!
    latest_review_at: String
    latest_review_by: String
    "0 to 1; null when there is no value."
    confidence: Float
    "The extractions behind the result, as REST GET …/results/{id}/extractions/."
    extractions(limit: Int, offset: Int): ExtractionsPage!
  }
`

const literal = (node: ValueNode, variables: Record<string, unknown> | null | undefined): unknown => {
  switch (node.kind) {
    case Kind.STRING:
    case Kind.BOOLEAN:
    case Kind.ENUM:
      return node.value
    case Kind.INT:
    case Kind.FLOAT:
      return Number(node.value)
    case Kind.NULL:
      return null
    case Kind.LIST:
      return node.values.map((v) => literal(v, variables))
    case Kind.OBJECT:
      return Object.fromEntries(node.fields.map((f) => [f.name.value, literal(f.value, variables)]))
    case Kind.VARIABLE:
      return variables?.[node.name.value]
  }
}

const JSONScalar = new GraphQLScalarType({
  name: "JSON",
  serialize: (v) => v,
  parseValue: (v) => v,
  parseLiteral: literal,
})

type ResultDetailParent = ResultDetail & { readonly project_id: string }

/** An extraction with its project, as `ResultDetail.extractions` answers it (for `bounding_boxes`). */
type ExtractionParent = ExtractionResult & { readonly project_id: string }

export const resolvers = {
  JSON: JSONScalar,
  Query: {
    projects: (_: unknown, __: unknown, ctx: GraphqlContext) =>
      ctx.run(Effect.flatMap(Projects, (p) => p.list({ _tag: "All" }))),
    project: (_: unknown, args: { id: string }, ctx: GraphqlContext) =>
      ctx.run(Effect.flatMap(Projects, (p) => p.get(args.id))),
    results: (
      _: unknown,
      args: {
        projectId: string
        agentId?: string | null
        resolutionStatus?: string | null
        dimensionValue?: string | null
        maxConfidence?: number | null
        limit?: number | null
        offset?: number | null
      },
      ctx: GraphqlContext,
    ) => {
      return ctx.run(
        Effect.flatMap(resolutionStatusArgument("resolutionStatus", args.resolutionStatus), (status) =>
          Effect.flatMap(Results, (r) =>
            r.list(args.projectId, {
              agent_id: args.agentId ?? undefined,
              resolution_status: status,
              dimension_value: args.dimensionValue ?? undefined,
              max_confidence: args.maxConfidence ?? undefined,
              limit: args.limit ?? undefined,
              offset: args.offset ?? undefined,
            }),
          ),
        ),
      )
    },
    launchPreview: (_: unknown, args: { projectId: string }, ctx: GraphqlContext) =>
      ctx.run(Effect.flatMap(Launches, (l) => l.preview(args.projectId))),
    runs: (
      _: unknown,
      args: { projectId: string; limit?: number | null; offset?: number | null },
      ctx: GraphqlContext,
    ) =>
      ctx.run(
        Effect.flatMap(Launches, (l) =>
          l.runs(args.projectId, { limit: args.limit ?? undefined, offset: args.offset ?? undefined }),
        ),
      ),
    result: (_: unknown, args: { projectId: string; id: string }, ctx: GraphqlContext) =>
      ctx.run(
        Effect.map(
          Effect.flatMap(Results, (r) => r.detail(args.projectId, args.id)),
          (detail): ResultDetailParent => ({ ...detail, project_id: args.projectId }),
        ),
      ),
  },
  Project: {
    documents: (p: Project, _: unknown, ctx: GraphqlContext) => ctx.loaders.documents.load(p.id),
    agents: (p: Project, _: unknown, ctx: GraphqlContext) => ctx.loaders.agents.load(p.id),
    dimensions: (p: Project, _: unknown, ctx: GraphqlContext) => ctx.loaders.dimensions.load(p.id),
    status: (p: Project, _: unknown, ctx: GraphqlContext) => ctx.loaders.status.load(p.id),
    output_schema: (p: Project, _: unknown, ctx: GraphqlContext) =>
      ctx.run(
        Effect.flatMap(OutputSchemas, (o) => o.get(p.id)).pipe(
          Effect.catchTag("NotFound", () => Effect.succeed(null)),
        ),
      ),
    schema_results: (p: Project, args: { enrich?: boolean | null }, ctx: GraphqlContext) =>
      ctx.run(Effect.flatMap(OutputSchemas, (o) => o.results(p.id, { enrich: args.enrich ?? false }))),
  },
  Document: {
    pages: (d: Document, _: unknown, ctx: GraphqlContext) => ctx.loaders.pages.load(d.id),
  },
  Agent: {
    progress: async (a: Agent, _: unknown, ctx: GraphqlContext) =>
      (await ctx.loaders.agentsStatus.load(a.project_id)).progress[a.id] ?? null,
    relevant_pages: (
      a: Agent,
      args: { documentId?: string | null; limit?: number | null },
      ctx: GraphqlContext,
    ) =>
      ctx.run(
        Effect.flatMap(Results, (r) =>
          r.relevantPages(a.project_id, a.id, {
            document_id: args.documentId ?? undefined,
            limit: args.limit ?? undefined,
          }),
        ),
      ),
  },
  ResultDetail: {
    source: (r: ResultDetailParent) => (r.is_overridden ? "manual" : "model"),
    extractions: (
      r: ResultDetailParent,
      args: { limit?: number | null; offset?: number | null },
      ctx: GraphqlContext,
    ) =>
      ctx.run(
        Effect.flatMap(Results, (s) =>
          s.extractions(r.project_id, r.id, {
            limit: args.limit ?? undefined,
            offset: args.offset ?? undefined,
          }),
        ).pipe(
          Effect.map((page) => ({
            ...page,
            data: page.data.map((e): ExtractionParent => ({ ...e, project_id: r.project_id })),
          })),
        ),
      ),
  },
  Extraction: {
    bounding_boxes: (e: ExtractionParent, _: unknown, ctx: GraphqlContext) =>
      ctx.loaders.boundingBoxes.load(e.id),
  },
}

/** The executable schema. */
export const schema = createSchema<GraphqlContext>({
  typeDefs: [
    typeDefs,
    mutationTypeDefs,
    subscriptionTypeDefs,
    webhookTypeDefs,
    contentTypeDefs,
    panelTypeDefs,
    fileEditTypeDefs,
  ],
  resolvers: [
    resolvers,
    mutationResolvers,
    subscriptionResolvers,
    webhookResolvers,
    contentResolvers,
    panelResolvers,
    fileEditResolvers,
  ],
})

/** The SDL of the schema, as printed by `dxs graphql schema`. */
export const schemaSdl = (): string => printSchema(schema)
