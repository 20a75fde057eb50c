import { Folder } from "@dxs/domain/Records"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Authentication } from "../Auth.ts"
import { flexibleBody } from "../Body.ts"
import { BadRequest, NotFound, Uuid } from "../Common.ts"

const FolderCreate = Schema.Struct({
  name: Schema.String,
  parent_id: Schema.optional(Schema.NullOr(Uuid)),
}).annotations({ identifier: "V1FolderCreate" })
const FolderPatch = Schema.Struct({
  name: Schema.optional(Schema.String),
  parent_id: Schema.optional(Schema.NullOr(Uuid)),
}).annotations({ identifier: "V1FolderPatch" })
const IdPath = Schema.Struct({ id: Uuid })

export class FoldersApi extends HttpApiGroup.make("folders")
  .add(HttpApiEndpoint.get("list", "/folders/").addSuccess(Schema.Array(Folder)))
  .add(
    HttpApiEndpoint.post("create", "/folders/")
      .setPayload(flexibleBody(FolderCreate))
      .addSuccess(Folder, { status: 201 })
      .addError(BadRequest),
  )
  .add(HttpApiEndpoint.get("get", "/folders/:id/").setPath(IdPath).addSuccess(Folder))
  .add(
    HttpApiEndpoint.patch("patch", "/folders/:id/")
      .setPath(IdPath)
      .setPayload(flexibleBody(FolderPatch))
      .addSuccess(Folder)
      .annotate(OpenApi.Summary, "Rename or move a folder"),
  )
  .add(
    HttpApiEndpoint.del("delete", "/folders/:id/")
      .setPath(IdPath)
      .addSuccess(HttpApiSchema.NoContent)
      .annotate(OpenApi.Summary, "Delete a folder and its subfolders; the projects in them become unfiled"),
  )
  .addError(BadRequest)
  .addError(NotFound)
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Folders")
  .annotate(OpenApi.Description, "Folders organise projects; a project's folder_id names one.") {}
