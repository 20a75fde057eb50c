import { Folders } from "@dxs/services"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import { Effect } from "effect"
import { Api } from "../Api.ts"

export const FoldersHttp = HttpApiBuilder.group(Api, "folders", (handlers) =>
  Effect.gen(function* () {
    const folders = yield* Folders
    return handlers
      .handle("list", () => folders.list())
      .handle("create", ({ payload }) => folders.create(payload))
      .handle("get", ({ path }) => folders.get(path.id))
      .handle("patch", ({ path, payload }) => folders.update(path.id, payload))
      .handle("delete", ({ path }) => folders.remove(path.id))
  }),
)
