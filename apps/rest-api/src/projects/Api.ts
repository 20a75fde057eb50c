import { Project, ProjectCreate, ProjectPatch, ProjectPut, ProjectStatus } from "@dxs/domain/contract/Project"
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import { Schema } from "effect"
import { Authentication } from "../Auth.ts"
import { flexibleBody } from "../Body.ts"
import { BadRequest, Conflict, NotFound, Uuid } from "../Common.ts"

const IdPath = Schema.Struct({ id: Uuid })

export class ProjectsApi extends HttpApiGroup.make("projects")
  .add(
    HttpApiEndpoint.get("list", "/projects/")
      .setUrlParams(
        Schema.Struct({
          folder_id: Schema.optional(
            Schema.Union(Schema.Literal(""), Uuid).annotations({
              description:
                "omitted: every live project; empty: unfiled projects only; a folder id: that folder's",
            }),
          ),
          archived: Schema.optional(
            Schema.BooleanFromString.annotations({
              description: "true: the projects archived by hand instead",
            }),
          ),
        }),
      )
      .addSuccess(Schema.Array(Project))
      .annotate(OpenApi.Summary, "List live projects, ordered by name"),
  )
  .add(
    HttpApiEndpoint.post("create", "/projects/")
      .setPayload(flexibleBody(ProjectCreate))
      .addSuccess(Project, { status: 201 })
      .annotate(OpenApi.Summary, "Create a project"),
  )
  .add(
    HttpApiEndpoint.get("get", "/projects/:id/")
      .setPath(IdPath)
      .addSuccess(Project)
      .annotate(OpenApi.Summary, "Retrieve a live or archived project"),
  )
  .add(
    HttpApiEndpoint.patch("patch", "/projects/:id/")
      .setPath(IdPath)
      .setPayload(flexibleBody(ProjectPatch))
      .addSuccess(Project)
      .annotate(OpenApi.Summary, "Update some fields of a project"),
  )
  .add(
    HttpApiEndpoint.put("put", "/projects/:id/")
      .setPath(IdPath)
      .setPayload(flexibleBody(ProjectPut))
      .addSuccess(Project)
      .annotate(OpenApi.Summary, "Replace a project's editable fields (omitted ones reset to defaults)"),
  )
  .add(
    HttpApiEndpoint.del("delete", "/projects/:id/")
      .setPath(IdPath)
      .addSuccess(HttpApiSchema.NoContent)
      .annotate(OpenApi.Summary, "Delete a project with its documents, agents, dimensions and results"),
  )
  .add(
    HttpApiEndpoint.post("archive", "/projects/:id/archive/")
      .setPath(IdPath)
      .addSuccess(Project)
      .addError(Conflict)
      .annotate(
        OpenApi.Summary,
        "Archive a project: hidden from the live list (GET /projects/?archived=true lists it), still retrievable, no uploads or launches",
      ),
  )
  .add(
    HttpApiEndpoint.post("unarchive", "/projects/:id/unarchive/")
      .setPath(IdPath)
      .addSuccess(Project)
      .addError(Conflict)
      .annotate(OpenApi.Summary, "Restore an archived project to the live list"),
  )
  .add(
    HttpApiEndpoint.get("status", "/projects/:id/status/")
      .setPath(IdPath)
      .addSuccess(ProjectStatus)
      .annotate(OpenApi.Summary, "Project status: pipeline, output schema and parsing state"),
  )
  .addError(BadRequest)
  .addError(NotFound)
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Projects") {}
