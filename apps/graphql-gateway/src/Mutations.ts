/**
 * The write side of the API as GraphQL mutations. Like the queries, every resolver calls a use-case of
 * `@dxs/services` — the very method, with the very arguments, that the REST operation's handler calls —
 * so a mutation and its REST operation apply the same rules and answer with the same records. Input
 * field names are the REST body field names (snake_case); the resolvers only translate arguments.
 */

import type { AgentReference } from "@dxs/domain/AgentReferences"
import {
  type AgentDimensionInput,
  type AgentInput,
  Agents,
  type DimensionCreate,
  type DimensionPatch,
  Dimensions,
  Documents,
  type FolderInput,
  Folders,
  Launches,
  OutputSchemas,
  type ProjectCreate,
  type ProjectPatch,
  Projects,
  type ResultOverride,
  type ResultReview,
  Results,
} from "@dxs/services"
import { Effect } from "effect"
import { GraphQLError, GraphQLScalarType, Kind, print } from "graphql"
import { resolutionStatusArgument } from "./Arguments.ts"
import type { GraphqlContext } from "./Context.ts"

/** The agent's settings, alike in the body that creates or replaces an agent and in the one that patches it. */
const agentSettings = /* GraphQL */ `
    extraction_instructions: String
    value_type: AgentValueType
    unit: String
    examples: String
    inconsistency_instructions: String
    resolution_instructions: String
    enable_complex_calculations_in_resolution: Boolean
    enable_web_search: Boolean
    value_if_not_found: String`

export const mutationTypeDefs = /* GraphQL */ `
  "A string or a number (a result value set by hand)."
  scalar StringOrNumber

  "An agent's value_type, as in REST: string or number; bool, date and datetime are accepted as legacy values."
  enum AgentValueType {
    string
    number
    bool
    date
    datetime
  }

  "An agent's agent_type, as in REST."
  enum AgentType {
    extraction
    derived
  }

  "A dimension's value_type, as in REST."
  enum DimensionValueType {
    string
    number
    bool
    date
    datetime
  }

  "A review's status, as in REST."
  enum ReviewStatus {
    none
    positive
    negative
  }

  "A folder of projects (REST GET /folders/{id}/)."
  type Folder {
    id: ID!
    name: String!
    parent_id: ID
    created_at: String!
    updated_at: String!
  }

  extend type Query {
    "The organisation's folders, by name (REST GET /folders/)."
    folders: [Folder!]!
  }

  type DocumentIdMapping {
    source_document_id: ID!
    copied_document_id: ID!
  }

  "The answer of REST POST …/documents/copy/."
  type DocumentCopyResult {
    copied_count: Int!
    document_id_mappings: [DocumentIdMapping!]!
  }

  "The run a launch queued or joined."
  type LaunchResult {
    run_id: ID!
    run_number: Int!
    "false when the launch joined a run already queued."
    queued_new_run: Boolean!
  }

  """
  A project body (REST POST /projects/ and PUT /projects/{id}/). As in every input here, a null in a field
  that REST does not accept null for means the same as leaving the field out.
  """
  input ProjectInput {
    name: String!
    description: String
    "YYYY-MM-DD; null for none."
    reference_date: String
    "Create only (ignored by replaceProject, as by REST PUT)."
    auto_attach_document_dimension: Boolean
    folder_id: ID
    "A positive number of days, or null."
    auto_archive_after_days: Int
    is_pinned: Boolean
  }

  "Fields of a project to change (REST PATCH /projects/{id}/); omitted fields are kept."
  input ProjectPatchInput {
    name: String
    description: String
    reference_date: String
    auto_archive_after_days: Int
    is_pinned: Boolean
    folder_id: ID
  }

  "A folder body (REST POST /folders/)."
  input FolderInput {
    name: String!
    "The parent folder; null or omitted for a top-level folder."
    parent_id: ID
  }

  "Fields of a folder to change (REST PATCH /folders/{id}/): rename or move."
  input FolderPatchInput {
    name: String
    parent_id: ID
  }

  input DocumentTagInput {
    key: String!
    value: String!
  }

  "A dimension attached to an agent (REST V1AgentDimensionRequest)."
  input AgentDimensionInput {
    dimension_id: ID!
    "true discovers the values from the documents; when omitted, false if values are given, else the current setting."
    are_values_dynamic: Boolean
    "Required and non-empty unless the values are dynamic; omitted keeps the values already attached."
    values: [String!]
    "Updates the dimension for every agent of the project."
    description: String
    "Updates the dimension for every agent; null leaves it unchanged."
    value_type: DimensionValueType
    "Also attach the dimension to every other agent of the project and to future agents."
    add_to_all_agents: Boolean
  }

  "An agent a derived agent reads: agent_id is tried first, then the exact agent_name."
  input AgentReferenceInput {
    agent_id: ID
    agent_name: String
  }

  "An agent body (REST POST …/agents/ and PUT …/agents/{id}/, where omitted fields reset to defaults)."
  input AgentInput {
    name: String!
    ${agentSettings}
    "Authoritative: attached dimensions left out are detached; [] or omitted attaches none."
    dimensions: [AgentDimensionInput!]
    "extraction on create; omitted on replace keeps the type."
    agent_type: AgentType
    "May mention agents (and documents) as @Name, @\\"Long Name\\"."
    derived_prompt: String
    "An evaluation agent's value_type is always number."
    is_evaluation: Boolean
    derived_agent_references: [AgentReferenceInput!]
  }

  "Fields of an agent to change (REST PATCH …/agents/{id}/); omitted fields are kept."
  input AgentPatchInput {
    name: String
    ${agentSettings}
    "Authoritative: attached dimensions left out are detached, [] removes all, omitted leaves them."
    dimensions: [AgentDimensionInput!]
    agent_type: AgentType
    derived_prompt: String
    is_evaluation: Boolean
    derived_agent_references: [AgentReferenceInput!]
  }

  "A custom dimension body (REST POST …/dimensions/)."
  input DimensionInput {
    "Unique within the project (case-insensitive); not Document nor one of the project's tag keys."
    name: String!
    description: String
    "Comma-separated list to guide extraction."
    example_values: String
    value_type: DimensionValueType
    "Attach the dimension to every agent created from now on."
    auto_attach_to_new_agents: Boolean
  }

  "Fields of a dimension to change (REST PATCH …/dimensions/{id}/); omitted fields are kept."
  input DimensionPatchInput {
    name: String
    description: String
    example_values: String
    value_type: DimensionValueType
    auto_attach_to_new_agents: Boolean
  }

  "A value set by hand (REST PATCH …/results/{id}/)."
  input ResultOverrideInput {
    "The new value; null or omitted for none. A number agent's value must be a number."
    value: StringOrNumber
    "One of Not resolved, Requires attention, Resolved, Ignored, No result; default Resolved."
    resolution_status: String
    justification_for_resolution_status: String
    "The e-mail of the person who set the value."
    updated_by_email: String
  }

  "A review of a result (REST POST …/results/{id}/review/)."
  input ResultReviewInput {
    status: ReviewStatus!
    comment: String
    "The reviewer's e-mail."
    reviewed_by: String
  }

  """
  The write operations of the REST API, with the same rules and answers. Files are not uploaded here:
  upload a document, or replace a document's file, through REST multipart (POST
  /projects/{id}/documents/, PUT /projects/{id}/documents/{document_id}/file/).
  """
  type Mutation {
    """
    Set the project's output schema, as REST PUT …/schema/: autoMap true generates agents and a mapping in
    the background; with autoMap false a mapping object saves it, null clears it, and an omitted mapping is
    kept (only for a new or changed schema). A mapping with error diagnostics fails with BAD_USER_INPUT and
    the diagnostics in extensions.
    """
    setOutputSchema(projectId: ID!, schema: JSON!, autoMap: Boolean!, mapping: JSON): OutputSchema!

    "Create a project (REST POST /projects/)."
    createProject(input: ProjectInput!): Project!
    "Update some fields of a project (REST PATCH /projects/{id}/)."
    updateProject(id: ID!, input: ProjectPatchInput!): Project!
    "Replace a project's editable fields; omitted ones reset to defaults (REST PUT /projects/{id}/)."
    replaceProject(id: ID!, input: ProjectInput!): Project!
    "Delete a project with its documents, agents, dimensions and results (REST DELETE /projects/{id}/)."
    deleteProject(id: ID!): Boolean!

    "Create a folder (REST POST /folders/)."
    createFolder(input: FolderInput!): Folder!
    "Rename or move a folder (REST PATCH /folders/{id}/)."
    updateFolder(id: ID!, input: FolderPatchInput!): Folder!
    "Delete a folder and its subfolders; the projects in them become unfiled (REST DELETE /folders/{id}/)."
    deleteFolder(id: ID!): Boolean!

    "Replace a document's tags; TAG dimensions follow (REST PUT …/documents/{id}/tags/)."
    setDocumentTags(projectId: ID!, documentId: ID!, tags: [DocumentTagInput!]!): Document!
    "Copy processed documents into another live project (REST POST …/documents/copy/)."
    copyDocuments(projectId: ID!, targetProjectId: ID!, documentIds: [ID!]!): DocumentCopyResult!
    """
    Request archival: the document moves into the project's archive project in the background (REST POST
    …/documents/{id}/archive/). Answers the document with archive_requested_at set.
    """
    archiveDocument(projectId: ID!, documentId: ID!): Document!
    "Delete a document, its tags and its stored file (REST DELETE …/documents/{id}/)."
    deleteDocument(projectId: ID!, documentId: ID!): Boolean!

    "Create an agent (REST POST …/agents/)."
    createAgent(projectId: ID!, input: AgentInput!): Agent!
    "Update some fields of an agent; only supplied fields change (REST PATCH …/agents/{id}/)."
    updateAgent(projectId: ID!, id: ID!, input: AgentPatchInput!): Agent!
    "Replace an agent's fields; omitted ones reset, an omitted agent_type is kept (REST PUT …/agents/{id}/)."
    replaceAgent(projectId: ID!, id: ID!, input: AgentInput!): Agent!
    "Delete an agent (REST DELETE …/agents/{id}/)."
    deleteAgent(projectId: ID!, id: ID!): Boolean!
    """
    Launch the pipeline (REST POST …/agents/launch/): only outstanding work is done; during a run the launch
    is queued (joining an already queued launch). CONFLICT, listing in extensions.errors the documents that
    failed processing.
    """
    launch(projectId: ID!): LaunchResult!

    "Create a custom dimension (REST POST …/dimensions/); a name already taken is a CONFLICT."
    createDimension(projectId: ID!, input: DimensionInput!): Dimension!
    "Update a dimension; system-managed ones cannot be renamed (REST PATCH …/dimensions/{id}/)."
    updateDimension(projectId: ID!, id: ID!, input: DimensionPatchInput!): Dimension!
    "Delete a custom dimension, detaching it from every agent (REST DELETE …/dimensions/{id}/)."
    deleteDimension(projectId: ID!, id: ID!): Boolean!

    "Set a result's value by hand; the status defaults to Resolved (REST PATCH …/results/{id}/)."
    overrideResult(projectId: ID!, id: ID!, input: ResultOverrideInput!): ResultDetail!
    "Record a review of a result (REST POST …/results/{id}/review/)."
    reviewResult(projectId: ID!, id: ID!, input: ResultReviewInput!): ResultDetail!
  }
`

/** A coded error: the gateway's error masking keeps its message and code. */
const notStringOrNumber = (given: string) =>
  new GraphQLError(`StringOrNumber cannot represent ${given}: give a string, a number or null`, {
    extensions: { code: "BAD_USER_INPUT" },
  })

const StringOrNumber = new GraphQLScalarType({
  name: "StringOrNumber",
  serialize: (v) => v,
  parseValue: (v) => {
    if (typeof v === "string" || (typeof v === "number" && Number.isFinite(v))) return v
    throw notStringOrNumber(JSON.stringify(v) ?? String(v))
  },
  parseLiteral: (node) => {
    if (node.kind === Kind.STRING) return node.value
    if (node.kind === Kind.INT || node.kind === Kind.FLOAT) return Number(node.value)
    throw notStringOrNumber(print(node))
  },
})

/** A GraphQL input object: any optional field may also be null. */
type Nullable<T> = { readonly [K in keyof T]: T[K] | null }

/**
 * The service's input from a GraphQL input object. GraphQL lets every optional field be null, REST only
 * some (`nullable`); a null anywhere else means the same as leaving the field out.
 */
const compact = <T extends object>(input: Nullable<T>, nullable: ReadonlyArray<keyof T & string> = []): T =>
  Object.fromEntries(
    Object.entries(input).filter(([k, v]) => v !== null || (nullable as ReadonlyArray<string>).includes(k)),
  ) as T

const projectNullable = ["reference_date", "folder_id", "auto_archive_after_days"] as const

type AgentArgs = Nullable<Omit<AgentInput, "dimensions" | "derived_agent_references">> & {
  readonly dimensions?: ReadonlyArray<Nullable<AgentDimensionInput>> | null
  readonly derived_agent_references?: ReadonlyArray<Nullable<AgentReference>> | null
}

const agentInput = ({ dimensions, derived_agent_references, ...fields }: AgentArgs): AgentInput => ({
  ...compact<Omit<AgentInput, "dimensions" | "derived_agent_references">>(fields),
  ...(dimensions == null
    ? {}
    : { dimensions: dimensions.map((d) => compact<AgentDimensionInput>(d, ["value_type"])) }),
  ...(derived_agent_references == null
    ? {}
    : {
        derived_agent_references: derived_agent_references.map((r) =>
          compact<AgentReference>(r, ["agent_id", "agent_name"]),
        ),
      }),
})

/** A result detail with its project, as the `result` query answers it (for the `extractions` field). */
const withProject =
  (projectId: string) =>
  <A extends object>(detail: A) => ({ ...detail, project_id: projectId })

type ProjectArgs = { readonly projectId: string }
type ProjectItemArgs = { readonly projectId: string; readonly id: string }
type DocumentArgs = { readonly projectId: string; readonly documentId: string }

export const mutationResolvers = {
  StringOrNumber,
  Query: {
    folders: (_: unknown, __: unknown, ctx: GraphqlContext) =>
      ctx.run(Effect.flatMap(Folders, (f) => f.list())),
  },
  Mutation: {
    setOutputSchema: (
      _: unknown,
      args: { projectId: string; schema: unknown; autoMap: boolean; mapping?: unknown },
      ctx: GraphqlContext,
    ) =>
      ctx.run(
        Effect.flatMap(OutputSchemas, (o) =>
          o.put(args.projectId, {
            schema: args.schema,
            auto_map: args.autoMap,
            ...("mapping" in args ? { mapping: args.mapping ?? null } : {}),
          }),
        ),
      ),

    // Projects
    createProject: (_: unknown, args: { input: Nullable<ProjectCreate> }, ctx: GraphqlContext) =>
      ctx.run(Effect.flatMap(Projects, (p) => p.create(compact(args.input, [...projectNullable])))),
    updateProject: (_: unknown, args: { id: string; input: Nullable<ProjectPatch> }, ctx: GraphqlContext) =>
      ctx.run(
        Effect.flatMap(Projects, (p) =>
          p.update(args.id, compact(args.input, [...projectNullable]), "patch"),
        ),
      ),
    replaceProject: (_: unknown, args: { id: string; input: Nullable<ProjectCreate> }, ctx: GraphqlContext) =>
      ctx.run(
        Effect.flatMap(Projects, (p) => p.update(args.id, compact(args.input, [...projectNullable]), "put")),
      ),
    deleteProject: (_: unknown, args: { id: string }, ctx: GraphqlContext) =>
      ctx.run(
        Effect.as(
          Effect.flatMap(Projects, (p) => p.remove(args.id)),
          true,
        ),
      ),

    // Folders
    createFolder: (_: unknown, args: { input: Nullable<FolderInput> }, ctx: GraphqlContext) =>
      ctx.run(Effect.flatMap(Folders, (f) => f.create(compact(args.input, ["parent_id"])))),
    updateFolder: (_: unknown, args: { id: string; input: Nullable<FolderInput> }, ctx: GraphqlContext) =>
      ctx.run(Effect.flatMap(Folders, (f) => f.update(args.id, compact(args.input, ["parent_id"])))),
    deleteFolder: (_: unknown, args: { id: string }, ctx: GraphqlContext) =>
      ctx.run(
        Effect.as(
          Effect.flatMap(Folders, (f) => f.remove(args.id)),
          true,
        ),
      ),

    // Documents
    setDocumentTags: (
      _: unknown,
      args: DocumentArgs & { tags: ReadonlyArray<{ key: string; value: string }> },
      ctx: GraphqlContext,
    ) => ctx.run(Effect.flatMap(Documents, (d) => d.setTags(args.projectId, args.documentId, args.tags))),
    copyDocuments: (
      _: unknown,
      args: ProjectArgs & { targetProjectId: string; documentIds: ReadonlyArray<string> },
      ctx: GraphqlContext,
    ) =>
      ctx.run(
        Effect.flatMap(Documents, (d) =>
          d.copy(args.projectId, { target_project_id: args.targetProjectId, document_ids: args.documentIds }),
        ),
      ),
    archiveDocument: (_: unknown, args: DocumentArgs, ctx: GraphqlContext) =>
      ctx.run(Effect.flatMap(Documents, (d) => d.requestArchive(args.projectId, args.documentId))),
    deleteDocument: (_: unknown, args: DocumentArgs, ctx: GraphqlContext) =>
      ctx.run(
        Effect.as(
          Effect.flatMap(Documents, (d) => d.remove(args.projectId, args.documentId)),
          true,
        ),
      ),

    // Agents
    createAgent: (_: unknown, args: ProjectArgs & { input: AgentArgs }, ctx: GraphqlContext) =>
      ctx.run(Effect.flatMap(Agents, (a) => a.create(args.projectId, agentInput(args.input)))),
    updateAgent: (_: unknown, args: ProjectItemArgs & { input: AgentArgs }, ctx: GraphqlContext) =>
      ctx.run(
        Effect.flatMap(Agents, (a) => a.update(args.projectId, args.id, agentInput(args.input), "patch")),
      ),
    replaceAgent: (_: unknown, args: ProjectItemArgs & { input: AgentArgs }, ctx: GraphqlContext) =>
      ctx.run(
        Effect.flatMap(Agents, (a) => a.update(args.projectId, args.id, agentInput(args.input), "put")),
      ),
    deleteAgent: (_: unknown, args: ProjectItemArgs, ctx: GraphqlContext) =>
      ctx.run(
        Effect.as(
          Effect.flatMap(Agents, (a) => a.remove(args.projectId, args.id)),
          true,
        ),
      ),
    launch: (_: unknown, args: ProjectArgs, ctx: GraphqlContext) =>
      ctx.run(Effect.flatMap(Launches, (l) => l.launch(args.projectId))),

    // Dimensions
    createDimension: (
      _: unknown,
      args: ProjectArgs & { input: Nullable<DimensionCreate> },
      ctx: GraphqlContext,
    ) => ctx.run(Effect.flatMap(Dimensions, (d) => d.create(args.projectId, compact(args.input)))),
    updateDimension: (
      _: unknown,
      args: ProjectItemArgs & { input: Nullable<DimensionPatch> },
      ctx: GraphqlContext,
    ) => ctx.run(Effect.flatMap(Dimensions, (d) => d.update(args.projectId, args.id, compact(args.input)))),
    deleteDimension: (_: unknown, args: ProjectItemArgs, ctx: GraphqlContext) =>
      ctx.run(
        Effect.as(
          Effect.flatMap(Dimensions, (d) => d.remove(args.projectId, args.id)),
          true,
        ),
      ),

    // Results
    overrideResult: (
      _: unknown,
      args: ProjectItemArgs & {
        input: Nullable<Omit<ResultOverride, "value">> & { value?: string | number | null }
      },
      ctx: GraphqlContext,
    ) => {
      const { value, resolution_status, ...fields } = args.input
      return ctx.run(
        Effect.flatMap(resolutionStatusArgument("resolution_status", resolution_status), (status) =>
          Effect.flatMap(Results, (r) =>
            r.override(args.projectId, args.id, {
              ...compact<Omit<ResultOverride, "value" | "resolution_status">>(fields, [
                "justification_for_resolution_status",
                "updated_by_email",
              ]),
              value: value ?? null,
              ...(status === undefined ? {} : { resolution_status: status }),
            }),
          ),
        ).pipe(Effect.map(withProject(args.projectId))),
      )
    },
    reviewResult: (
      _: unknown,
      args: ProjectItemArgs & { input: Nullable<ResultReview> },
      ctx: GraphqlContext,
    ) =>
      ctx.run(
        Effect.flatMap(Results, (r) =>
          r.review(args.projectId, args.id, compact(args.input, ["reviewed_by"])),
        ).pipe(Effect.map(withProject(args.projectId))),
      ),
  },
}
