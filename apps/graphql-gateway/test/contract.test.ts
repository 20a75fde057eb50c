/**
 * The GraphQL schema against the contract's records (`@dxs/domain/contract`): every object type that
 * mirrors a REST record has the record's fields with the same nullability, and every enum has the values of
 * the domain's enumeration; every input type has the fields of the request body it stands for, required
 * where the body requires them. A field added to a record and not to the SDL (or the reverse) fails here.
 */

import { contentFormats } from "@dxs/domain/Content"
import {
  Agent,
  AgentCreateRequest,
  AgentDimension,
  AgentDimensionRequest,
  AgentPatchRequest,
  AgentProgress,
  AgentReferenceRequest,
  DerivedAgentReference,
  StageProgress,
} from "@dxs/domain/contract/Agent"
import { Dimension, DimensionCreate, DimensionPatch } from "@dxs/domain/contract/Dimension"
import {
  Document,
  DocumentBulkFailure,
  DocumentBulkRequest,
  DocumentBulkResponse,
  DocumentCopyResponse,
  DocumentListItem,
  DocumentPage,
  DocumentsPage,
  DocumentTag,
  PageTable,
} from "@dxs/domain/contract/Document"
import { FileEditProblem, FileEditStatus } from "@dxs/domain/contract/FileEdit"
import { Folder, FolderCreate, FolderPatch } from "@dxs/domain/contract/Folder"
import { Diagnostic, OutputSchemaRecord } from "@dxs/domain/contract/OutputSchema"
import { Project, ProjectCreate, ProjectPatch, ProjectStatus } from "@dxs/domain/contract/Project"
import {
  BoundingBox,
  BoundingBoxesResponse,
  ExtractionResult,
  ExtractionsPage,
  RelevantPagesResponse,
  ResultDetail,
  ResultDimensionInstance,
  ResultOverrideRequest,
  ResultReviewRequest,
  ResultRow,
  ResultSource,
  ResultSummary,
  ResultsGrid,
  ResultsGridColumn,
  ResultsGridRow,
  ResultsPage,
} from "@dxs/domain/contract/Result"
import {
  BlockingDocument,
  LaunchPreview,
  LaunchRejection,
  RunRecord,
  RunsPage,
  RunUsage,
} from "@dxs/domain/contract/Run"
import {
  WebhookAttempt,
  WebhookCreate,
  WebhookDeliveriesPage,
  WebhookDelivery,
  WebhookEventRecord,
  WebhookPatch,
  WebhookSecret,
  WebhookSubscription,
  WebhookSubscriptionCreated,
  WebhookTestResponse,
} from "@dxs/domain/contract/Webhook"
import { AgentType, AgentValueType, DimensionValueType, ReviewStatus } from "@dxs/domain/Enums"
import { Effect, Exit, type Schema, SchemaAST } from "effect"
import { GraphQLEnumType, GraphQLInputObjectType, GraphQLNonNull, GraphQLObjectType } from "graphql"
import { describe, expect, it } from "vitest"
import { resolutionStatusArgument } from "../src/Arguments.ts"
import { schema } from "../src/Schema.ts"

type AnySchema = Schema.Schema.Any

/** The struct a property holds (through arrays, `NullOr` and annotations). */
const structAt = (record: AnySchema, field: string): SchemaAST.TypeLiteral => {
  const literal = typeLiteralOf(record.ast)
  const property = literal.propertySignatures.find((p) => p.name === field)
  if (property === undefined) throw new Error(`no field ${field}`)
  return typeLiteralOf(property.type)
}

const typeLiteralOf = (ast: SchemaAST.AST): SchemaAST.TypeLiteral => {
  switch (ast._tag) {
    case "TypeLiteral":
      return ast
    case "TupleType":
      return typeLiteralOf(ast.rest[0]!.type)
    case "Union": {
      const objects = ast.types.filter((t) => !(SchemaAST.isLiteral(t) && t.literal === null))
      if (objects.length === 1) return typeLiteralOf(objects[0]!)
      break
    }
    case "Refinement":
      return typeLiteralOf(ast.from)
    case "Transformation":
      return typeLiteralOf(ast.to)
  }
  throw new Error(`not a struct: ${ast._tag}`)
}

/** Whether a record's field may be null or absent in an answer. */
const acceptsNull = (ast: SchemaAST.AST): boolean => {
  switch (ast._tag) {
    case "Literal":
      return ast.literal === null
    case "Union":
      return ast.types.some(acceptsNull)
    case "Refinement":
      return acceptsNull(ast.from)
    case "Transformation":
      return acceptsNull(ast.to)
    case "UnknownKeyword": {
      // A JSON value described as "an object, or null" (`JsonObjectOrNull`) versus "an object".
      const described = SchemaAST.getJSONSchemaAnnotation(ast)
      const anyOf = described._tag === "Some" ? (described.value as { anyOf?: unknown[] }).anyOf : undefined
      return anyOf?.some((s) => (s as { type?: string }).type === "null") ?? false
    }
    default:
      return false
  }
}

/** Field name → nullable, as the record declares it. */
const recordFields = (literal: SchemaAST.TypeLiteral) =>
  Object.fromEntries(
    literal.propertySignatures.map((p) => [String(p.name), p.isOptional || acceptsNull(p.type)]),
  )

/** Field name → nullable, as the SDL declares it, without the fields only GraphQL resolves. */
const sdlFields = (typeName: string, graphqlOnly: ReadonlyArray<string>) => {
  const type = schema.getType(typeName)
  if (!(type instanceof GraphQLObjectType)) throw new Error(`${typeName} is not an object type`)
  return Object.fromEntries(
    Object.values(type.getFields())
      .filter((f) => !graphqlOnly.includes(f.name))
      .map((f) => [f.name, !(f.type instanceof GraphQLNonNull)]),
  )
}

/** Each SDL object type that answers a REST record: the record, and the fields GraphQL adds (resolved links). */
const mirrors: Record<string, { readonly record: SchemaAST.TypeLiteral; readonly graphqlOnly?: string[] }> = {
  Project: {
    record: typeLiteralOf(Project.ast),
    graphqlOnly: ["documents", "agents", "dimensions", "status", "output_schema", "schema_results"],
  },
  ProjectStatus: { record: typeLiteralOf(ProjectStatus.ast) },
  DocumentsByStatus: { record: structAt(ProjectStatus, "documents_by_status") },
  Folder: { record: typeLiteralOf(Folder.ast) },
  DocumentTag: { record: typeLiteralOf(DocumentTag.ast) },
  Document: { record: typeLiteralOf(Document.ast), graphqlOnly: ["pages", "content"] },
  Page: { record: typeLiteralOf(DocumentPage.ast) },
  Table: { record: typeLiteralOf(PageTable.ast) },
  DocumentCopyResult: { record: typeLiteralOf(DocumentCopyResponse.ast) },
  DocumentIdMapping: { record: structAt(DocumentCopyResponse, "document_id_mappings") },
  Dimension: { record: typeLiteralOf(Dimension.ast) },
  AgentDimension: { record: typeLiteralOf(AgentDimension.ast) },
  DerivedAgentReference: { record: typeLiteralOf(DerivedAgentReference.ast) },
  StageProgress: { record: typeLiteralOf(StageProgress.ast) },
  AgentProgress: { record: typeLiteralOf(AgentProgress.ast) },
  Agent: { record: typeLiteralOf(Agent.ast), graphqlOnly: ["progress", "relevant_pages"] },
  RelevantPages: { record: typeLiteralOf(RelevantPagesResponse.ast) },
  RelevantPage: { record: structAt(RelevantPagesResponse, "pages") },
  BoundingBox: { record: typeLiteralOf(BoundingBox.ast) },
  BoundingBoxes: { record: typeLiteralOf(BoundingBoxesResponse.ast) },
  ResultDimensionInstance: { record: typeLiteralOf(ResultDimensionInstance.ast) },
  ResultSummary: { record: typeLiteralOf(ResultSummary.ast) },
  ResultRow: { record: typeLiteralOf(ResultRow.ast) },
  ResultPage: { record: typeLiteralOf(ResultsPage.ast) },
  ResultSource: { record: typeLiteralOf(ResultSource.ast) },
  Extraction: { record: typeLiteralOf(ExtractionResult.ast), graphqlOnly: ["bounding_boxes"] },
  ExtractionsPage: { record: typeLiteralOf(ExtractionsPage.ast) },
  ResultDetail: { record: typeLiteralOf(ResultDetail.ast), graphqlOnly: ["extractions", "source"] },
  MappingDiagnostic: { record: typeLiteralOf(Diagnostic.ast) },
  OutputSchema: { record: typeLiteralOf(OutputSchemaRecord.ast) },
  WebhookSubscription: { record: typeLiteralOf(WebhookSubscription.ast), graphqlOnly: ["deliveries"] },
  WebhookSubscriptionWithSecret: { record: typeLiteralOf(WebhookSubscriptionCreated.ast) },
  WebhookEventType: { record: typeLiteralOf(WebhookEventRecord.ast) },
  WebhookAttempt: { record: typeLiteralOf(WebhookAttempt.ast) },
  WebhookDelivery: { record: typeLiteralOf(WebhookDelivery.ast) },
  WebhookDeliveryPage: { record: typeLiteralOf(WebhookDeliveriesPage.ast) },
  WebhookTestResult: { record: typeLiteralOf(WebhookTestResponse.ast) },
  WebhookSecret: { record: typeLiteralOf(WebhookSecret.ast) },
  LaunchPreview: { record: typeLiteralOf(LaunchPreview.ast) },
  LaunchRejection: { record: typeLiteralOf(LaunchRejection.ast) },
  BlockingDocument: { record: typeLiteralOf(BlockingDocument.ast) },
  Run: { record: typeLiteralOf(RunRecord.ast) },
  RunUsage: { record: typeLiteralOf(RunUsage.ast) },
  RunPage: { record: typeLiteralOf(RunsPage.ast) },
  ResultsGrid: { record: typeLiteralOf(ResultsGrid.ast) },
  ResultsGridColumn: { record: typeLiteralOf(ResultsGridColumn.ast) },
  ResultsGridRow: { record: typeLiteralOf(ResultsGridRow.ast) },
  DocumentListItem: { record: typeLiteralOf(DocumentListItem.ast) },
  DocumentsPage: { record: typeLiteralOf(DocumentsPage.ast) },
  DocumentBulkFailure: { record: typeLiteralOf(DocumentBulkFailure.ast) },
  DocumentBulkResult: { record: typeLiteralOf(DocumentBulkResponse.ast) },
  FileEditStatus: { record: typeLiteralOf(FileEditStatus.ast) },
  FileEditProgress: { record: structAt(FileEditStatus, "progress") },
  FileEditProblem: { record: typeLiteralOf(FileEditProblem.ast) },
}

/** Field name → whether an input must give it, as a request body declares it (a required null is optional in GraphQL). */
const bodyFields = (body: AnySchema) =>
  Object.fromEntries(
    typeLiteralOf(body.ast).propertySignatures.map((p) => [
      String(p.name),
      !p.isOptional && !acceptsNull(p.type),
    ]),
  )

/** Field name → whether the SDL's input type requires it. */
const inputFields = (typeName: string) => {
  const type = schema.getType(typeName)
  if (!(type instanceof GraphQLInputObjectType)) throw new Error(`${typeName} is not an input type`)
  return Object.fromEntries(
    Object.values(type.getFields()).map((f) => [f.name, f.type instanceof GraphQLNonNull]),
  )
}

/** Each SDL input type and the REST request body it stands for. */
const inputs: Record<string, AnySchema> = {
  ProjectInput: ProjectCreate,
  ProjectPatchInput: ProjectPatch,
  FolderInput: FolderCreate,
  FolderPatchInput: FolderPatch,
  DocumentTagInput: DocumentTag,
  AgentDimensionInput: AgentDimensionRequest,
  AgentReferenceInput: AgentReferenceRequest,
  AgentInput: AgentCreateRequest,
  AgentPatchInput: AgentPatchRequest,
  DimensionInput: DimensionCreate,
  DimensionPatchInput: DimensionPatch,
  ResultOverrideInput: ResultOverrideRequest,
  ResultReviewInput: ResultReviewRequest,
  DocumentBulkInput: DocumentBulkRequest,
  WebhookInput: WebhookCreate,
  WebhookPatchInput: WebhookPatch,
}

/** Object types with no REST record: the roots, and answers only GraphQL gives. */
const graphqlOnlyTypes = [
  "Query",
  "Mutation",
  "Subscription",
  "LaunchResult",
  "RunProgress",
  "AgentRunProgress",
]

const enums: Record<string, ReadonlyArray<string>> = {
  AgentValueType: AgentValueType.literals,
  AgentType: AgentType.literals,
  DimensionValueType: DimensionValueType.literals,
  ReviewStatus: ReviewStatus.literals,
  ContentFormat: contentFormats.map((f) => f.toUpperCase()),
}

const ownTypes = Object.values(schema.getTypeMap()).filter((t) => !t.name.startsWith("__"))

describe("GraphQL schema against the contract", () => {
  it.each(Object.entries(mirrors))(
    "%s has the record's fields and nullability",
    (name, { record, graphqlOnly }) => {
      expect(sdlFields(name, graphqlOnly ?? [])).toEqual(recordFields(record))
    },
  )

  it("names a record (or says it has none) for every object type", () => {
    const objectTypes = ownTypes.filter((t) => t instanceof GraphQLObjectType).map((t) => t.name)
    const unaccounted = objectTypes.filter((n) => !(n in mirrors) && !graphqlOnlyTypes.includes(n))
    expect(unaccounted).toEqual([])
  })

  it.each(Object.entries(inputs))("input %s has the request body's fields, required alike", (name, body) => {
    expect(inputFields(name)).toEqual(bodyFields(body))
  })

  it("names a request body for every input type", () => {
    const inputTypes = ownTypes.filter((t) => t instanceof GraphQLInputObjectType).map((t) => t.name)
    expect(inputTypes.filter((n) => !(n in inputs))).toEqual([])
  })

  it.each(Object.entries(enums))("enum %s has the domain's values", (name, values) => {
    const type = schema.getType(name)
    expect(type).toBeInstanceOf(GraphQLEnumType)
    expect((type as GraphQLEnumType).getValues().map((v) => v.value)).toEqual([...values])
  })

  it("checks every enum of the schema", () => {
    const enumTypes = ownTypes.filter((t) => t instanceof GraphQLEnumType).map((t) => t.name)
    expect(enumTypes.filter((n) => !(n in enums))).toEqual([])
  })

  it("notices a drift: a record field missing from the SDL, or a nullability that differs", () => {
    const project = recordFields(typeLiteralOf(Project.ast))
    const sdl = sdlFields("Project", mirrors.Project!.graphqlOnly!)
    expect({ ...sdl, reference_date: false }).not.toEqual(project)
    const { name: _, ...withoutName } = sdl
    expect(withoutName).not.toEqual(project)
  })

  it("decodes resolution_status with the contract's enumeration and refuses others as before", () => {
    expect(Effect.runSync(resolutionStatusArgument("resolutionStatus", "Requires attention"))).toBe(
      "Requires attention",
    )
    expect(Effect.runSync(resolutionStatusArgument("resolutionStatus", null))).toBeUndefined()
    const refused = Effect.runSyncExit(resolutionStatusArgument("resolution_status", "Done"))
    expect(
      Exit.isFailure(refused) && refused.cause._tag === "Fail" ? refused.cause.error : refused,
    ).toMatchObject({
      status: 400,
      detail:
        "resolution_status must be one of Not resolved, Requires attention, Resolved, Ignored, No result",
      errors: [{ path: "resolution_status", message: "unknown value" }],
    })
  })
})
