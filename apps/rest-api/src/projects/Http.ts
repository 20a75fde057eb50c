import { Projects } from "@dxs/services"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import { Effect } from "effect"
import { Api } from "../Api.ts"

export const ProjectsHttp = HttpApiBuilder.group(Api, "projects", (handlers) =>
  Effect.gen(function* () {
    const projects = yield* Projects
    return handlers
      .handle("list", ({ urlParams }) =>
        projects.list(
          urlParams.folder_id === undefined
            ? { _tag: "All" }
            : urlParams.folder_id === ""
              ? { _tag: "Unfiled" }
              : { _tag: "In", id: urlParams.folder_id },
          { archived: urlParams.archived },
        ),
      )
      .handle("archive", ({ path }) => projects.setArchived(path.id, true))
      .handle("unarchive", ({ path }) => projects.setArchived(path.id, false))
      .handle("create", ({ payload }) => projects.create(payload))
      .handle("get", ({ path }) => projects.get(path.id))
      .handle("patch", ({ path, payload }) => projects.update(path.id, payload, "patch"))
      .handle("put", ({ path, payload }) => projects.update(path.id, payload, "put"))
      .handle("delete", ({ path }) => projects.remove(path.id))
      .handle("status", ({ path }) => projects.status(path.id))
  }),
)
