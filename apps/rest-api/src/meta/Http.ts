import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as OpenApi from "@effect/platform/OpenApi"
import { Effect } from "effect"
import { Api } from "../Api.ts"

export const openApiDocument = () => OpenApi.fromApi(Api)

/**
 * GET /schema/: the API's description as YAML (default) or JSON, each made on the first request that asks
 * for it and then kept. Made at start-up, the YAML text (with the yaml package's loading) took a good part
 * of the time before the server's first answer.
 */
export const MetaHttp = HttpApiBuilder.group(Api, "meta", (handlers) =>
  Effect.gen(function* () {
    const json = yield* Effect.cached(Effect.sync(() => JSON.stringify(openApiDocument())))
    const yaml = yield* Effect.cached(
      Effect.promise(async () => {
        const { stringify } = await import("yaml")
        return stringify(openApiDocument(), { aliasDuplicateObjects: false })
      }),
    )
    return handlers.handleRaw("schema", ({ urlParams }) =>
      urlParams.format === "json"
        ? Effect.map(json, (text) => HttpServerResponse.text(text, { contentType: "application/json" }))
        : Effect.map(yaml, (text) => HttpServerResponse.text(text, { contentType: "application/yaml" })),
    )
  }),
)
