import { Folder, FolderCreate, FolderPatch } from "@dxs/domain/contract/Folder"
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import { Schema } from "effect"
import { Authentication } from "../Auth.ts"
import { flexibleBody } from "../Body.ts"
import { BadRequest, NotFound, Uuid } from "../Common.ts"

const IdPath = Schema.Struct({ id: Uuid })

export class FoldersApi extends HttpApiGroup.make("folders")
  .add(
    HttpApiEndpoint.get("list", "/folders/")
      .addSuccess(Schema.Array(Folder))
      .annotate(OpenApi.Summary, "List the organisation's folders, ordered by name")
      .annotate(
        OpenApi.Description,
        "Every folder of the tree, flat: a folder's parent_id names its parent, null at the root.",
      ),
  )
  .add(
    HttpApiEndpoint.post("create", "/folders/")
      .setPayload(flexibleBody(FolderCreate))
      .addSuccess(Folder, { status: 201 })
      .addError(BadRequest)
      .annotate(OpenApi.Summary, "Create a folder, at the root or inside parent_id")
      .annotate(OpenApi.Description, "400 for an empty name or a parent_id that names no folder."),
  )
  .add(
    HttpApiEndpoint.get("get", "/folders/:id/")
      .setPath(IdPath)
      .addSuccess(Folder)
      .annotate(OpenApi.Summary, "Retrieve a folder"),
  )
  .add(
    HttpApiEndpoint.patch("patch", "/folders/:id/")
      .setPath(IdPath)
      .setPayload(flexibleBody(FolderPatch))
      .addSuccess(Folder)
      .annotate(OpenApi.Summary, "Rename or move a folder")
      .annotate(
        OpenApi.Description,
        "parent_id null moves it to the root; a folder cannot be moved into itself or one of its subfolders (400).",
      ),
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
