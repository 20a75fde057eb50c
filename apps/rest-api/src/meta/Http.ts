import { HttpApiBuilder, HttpServerResponse, OpenApi } from "@effect/platform"
import { Effect } from "effect"
import { stringify } from "yaml"
import { Api } from "../Api.ts"

export const openApiDocument = () => OpenApi.fromApi(Api)

export const MetaHttp = HttpApiBuilder.group(Api, "meta", (handlers) =>
  Effect.sync(() => {
    const spec = openApiDocument()
    const json = JSON.stringify(spec)
    const yaml = stringify(spec, { aliasDuplicateObjects: false })
    return handlers.handleRaw("schema", ({ urlParams }) =>
      Effect.succeed(
        urlParams.format === "json"
          ? HttpServerResponse.text(json, { contentType: "application/json" })
          : HttpServerResponse.text(yaml, { contentType: "application/yaml" }),
      ),
    )
  }),
)
