import { Agents, Launches } from "@dxs/services"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import { Effect } from "effect"
import { Api } from "../Api.ts"
import { jsonText } from "../JsonPage.ts"

export const AgentsHttp = HttpApiBuilder.group(Api, "agents", (handlers) =>
  Effect.gen(function* () {
    const agents = yield* Agents
    const launches = yield* Launches
    return (
      handlers
        // The project screen's reads (its agents, polled their status while a run is active) go out as
        // JSON text: for 20 agents, the schema's encoding took 0.26 of the 0.30 ms the status's JSON took,
        // and about a seventh of the list request's CPU.
        .handle("status", ({ path }) => Effect.map(launches.status(path.project_id), jsonText))
        .handle("launch", ({ path }) => Effect.asVoid(launches.launch(path.project_id)))
        .handle("launchPreview", ({ path }) => launches.preview(path.project_id))
        .handle("list", ({ path, urlParams }) =>
          Effect.map(
            agents.list(path.project_id, {
              isEvaluation: urlParams.is_evaluation,
              dimensionValues: urlParams.dimension_values,
            }),
            jsonText,
          ),
        )
        .handle("create", ({ path, payload }) => agents.create(path.project_id, payload))
        .handle("get", ({ path }) => agents.get(path.project_id, path.agent_id))
        .handle("patch", ({ path, payload }) =>
          agents.update(path.project_id, path.agent_id, payload, "patch"),
        )
        .handle("put", ({ path, payload }) => agents.update(path.project_id, path.agent_id, payload, "put"))
        .handle("delete", ({ path }) => agents.remove(path.project_id, path.agent_id))
    )
  }),
)
