import { DimensionValueType } from "@dxs/domain/Enums"
import { Dimension } from "@dxs/domain/Records"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Authentication } from "../Auth.ts"
import { flexibleBody } from "../Body.ts"
import { BadRequest, Conflict, NotFound, Uuid } from "../Common.ts"

const Name = Schema.String.pipe(
  Schema.filter((s) => s.trim() !== "" || "must not be empty"),
  Schema.annotations({
    description:
      "unique within the project (case-insensitive); cannot be `Document` or one of the project's tag keys",
  }),
)

export const DimensionCreate = Schema.Struct({
  name: Name,
  description: Schema.optional(Schema.String),
  example_values: Schema.optional(
    Schema.String.annotations({ description: "comma-separated list to guide extraction" }),
  ),
  value_type: Schema.optional(DimensionValueType),
  auto_attach_to_new_agents: Schema.optional(
    Schema.Boolean.annotations({ description: "attach the dimension to every agent created from now on" }),
  ),
}).annotations({ identifier: "V1DimensionCreate" })

export const DimensionPatch = Schema.Struct({
  name: Schema.optional(Name),
  description: Schema.optional(Schema.String),
  example_values: Schema.optional(Schema.String),
  value_type: Schema.optional(DimensionValueType),
  auto_attach_to_new_agents: Schema.optional(Schema.Boolean),
}).annotations({ identifier: "V1DimensionPatch" })

const ProjectPath = Schema.Struct({ project_id: Uuid })
const DimensionPath = Schema.Struct({ project_id: Uuid, dimension_id: Uuid })

export class DimensionsApi extends HttpApiGroup.make("dimensions")
  .add(
    HttpApiEndpoint.get("list", "/projects/:project_id/dimensions/")
      .setPath(ProjectPath)
      .addSuccess(Schema.Array(Dimension))
      .annotate(OpenApi.Summary, "List the project's dimensions, oldest first"),
  )
  .add(
    HttpApiEndpoint.post("create", "/projects/:project_id/dimensions/")
      .setPath(ProjectPath)
      .setPayload(flexibleBody(DimensionCreate))
      .addSuccess(Dimension, { status: 201 })
      .annotate(OpenApi.Summary, "Create a custom dimension"),
  )
  .add(
    HttpApiEndpoint.get("get", "/projects/:project_id/dimensions/:dimension_id/")
      .setPath(DimensionPath)
      .addSuccess(Dimension)
      .annotate(OpenApi.Summary, "Retrieve a dimension of the project"),
  )
  .add(
    HttpApiEndpoint.patch("patch", "/projects/:project_id/dimensions/:dimension_id/")
      .setPath(DimensionPath)
      .setPayload(flexibleBody(DimensionPatch))
      .addSuccess(Dimension)
      .annotate(
        OpenApi.Summary,
        "Update a dimension; renaming follows the create rules, system-managed dimensions cannot be renamed",
      ),
  )
  .add(
    HttpApiEndpoint.del("delete", "/projects/:project_id/dimensions/:dimension_id/")
      .setPath(DimensionPath)
      .addSuccess(HttpApiSchema.NoContent)
      .annotate(
        OpenApi.Summary,
        "Delete a custom dimension (detaching it from every agent); system-managed ones cannot be deleted",
      ),
  )
  .addError(BadRequest)
  .addError(NotFound)
  .addError(Conflict)
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Dimensions")
  .annotate(
    OpenApi.Description,
    "Project-scoped axes that split an agent's output into one value per dimension value. `Document` (one value per document) and one dimension per document tag key are system-managed.",
  ) {}
