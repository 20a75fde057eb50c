import { Dimension, DimensionCreate, DimensionPatch } from "@dxs/domain/contract/Dimension"
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import { Schema } from "effect"
import { Authentication } from "../Auth.ts"
import { flexibleBody } from "../Body.ts"
import { BadRequest, Conflict, NotFound, Uuid } from "../Common.ts"

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
