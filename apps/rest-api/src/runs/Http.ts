import { Launches } from "@dxs/services"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import { Effect } from "effect"
import { Api } from "../Api.ts"

export const RunsHttp = HttpApiBuilder.group(Api, "runs", (handlers) =>
  Effect.gen(function* () {
    const launches = yield* Launches
    return handlers
      .handle("list", ({ path, urlParams }) => launches.runs(path.project_id, urlParams))
      .handle("changes", ({ path, urlParams }) =>
        launches.changes(path.project_id, path.run_number, urlParams),
      )
  }),
)
