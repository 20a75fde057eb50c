import { Agents, Launches } from "@dxs/services"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import { Effect } from "effect"
import { Api } from "../Api.ts"
import { jsonBytes } from "../JsonPage.ts"

export const AgentsHttp = HttpApiBuilder.group(Api, "agents", (handlers) =>
  Effect.gen(function* () {
    const agents = yield* Agents
    const launches = yield* Launches
    return (
      handlers
        // Polled by the project screen while a run is active: its record (numbers and booleans keyed by
        // agent id) is its JSON as it is, so it goes out as JSON text, as the agents list below does (the
        // schema's encoding took 0.26 of the 0.30 ms its JSON took for 20 agents).
        .handle("status", ({ path }) =>
          Effect.map(launches.status(path.project_id), (status) =>
            jsonBytes(Buffer.from(JSON.stringify(status))),
          ),
        )
        .handle("launch", ({ path }) => Effect.asVoid(launches.launch(path.project_id)))
        .handle("launchPreview", ({ path }) => launches.preview(path.project_id))
        // The project screen's most frequent read: its records are their JSON as they are (every field a
        // string, number, boolean or null, in the schema's order), so they go out as JSON text instead of
        // through the schema's encoding, about a seventh of the request's CPU for 20 agents in a profile.
        .handle("list", ({ path, urlParams }) =>
          Effect.map(
            agents.list(path.project_id, {
              isEvaluation: urlParams.is_evaluation,
              dimensionValues: urlParams.dimension_values,
            }),
            (records) => jsonBytes(Buffer.from(JSON.stringify(records))),
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
