import { gridPageBytes, jsonPageBytes, Results } from "@dxs/services"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import { Effect } from "effect"
import { Api } from "../Api.ts"
import { streamedDownload } from "../Download.ts"
import { jsonBytes } from "../JsonPage.ts"

export const ResultsHttp = HttpApiBuilder.group(Api, "results", (handlers) =>
  Effect.gen(function* () {
    const results = yield* Results
    return handlers
      .handle("list", ({ path, urlParams }) =>
        Effect.map(results.listPage(path.project_id, urlParams), (page) => jsonBytes(jsonPageBytes(page))),
      )
      .handle("grid", ({ path, urlParams }) =>
        Effect.map(results.gridPage(path.project_id, urlParams), (page) => jsonBytes(gridPageBytes(page))),
      )
      .handle("export", ({ path, urlParams }) =>
        Effect.flatMap(results.export(path.project_id, urlParams), streamedDownload),
      )
      .handle("reviewQueue", ({ path, urlParams }) => results.reviewQueue(path.project_id, urlParams))
      .handle("get", ({ path }) => results.detail(path.project_id, path.resolution_result_id))
      .handle("extractions", ({ path, urlParams }) =>
        results.extractions(path.project_id, path.resolution_result_id, urlParams),
      )
      .handle("override", ({ path, payload }) =>
        results.override(path.project_id, path.resolution_result_id, payload),
      )
      .handle("review", ({ path, payload }) =>
        results.review(path.project_id, path.resolution_result_id, payload),
      )
      .handle("relevantPages", ({ path, urlParams }) =>
        results.relevantPages(path.project_id, path.agent_id, urlParams),
      )
      .handle("boundingBoxes", ({ path }) => results.boundingBoxes(path.project_id, path.extraction_id))
  }),
)
