import { Dimensions } from "@dxs/services"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import { Effect } from "effect"
import { Api } from "../Api.ts"

export const DimensionsHttp = HttpApiBuilder.group(Api, "dimensions", (handlers) =>
  Effect.gen(function* () {
    const dimensions = yield* Dimensions
    return handlers
      .handle("list", ({ path }) => dimensions.list(path.project_id))
      .handle("create", ({ path, payload }) => dimensions.create(path.project_id, payload))
      .handle("get", ({ path }) => dimensions.get(path.project_id, path.dimension_id))
      .handle("patch", ({ path, payload }) => dimensions.update(path.project_id, path.dimension_id, payload))
      .handle("delete", ({ path }) => dimensions.remove(path.project_id, path.dimension_id))
  }),
)
