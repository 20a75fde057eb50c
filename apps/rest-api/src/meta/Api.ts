import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import { Schema } from "effect"

const description = "the OpenAPI 3.1 description of this API"

export class MetaApi extends HttpApiGroup.make("meta")
  .add(
    HttpApiEndpoint.get("schema", "/schema/")
      .setUrlParams(Schema.Struct({ format: Schema.optional(Schema.Literal("yaml", "json")) }))
      .addSuccess(Schema.Unknown)
      .annotate(
        OpenApi.Summary,
        "This OpenAPI 3.1 description (YAML by default, JSON with ?format=json); no key needed",
      )
      // One status, two media types (the generator gives a status one): YAML text, or the JSON document.
      .annotate(OpenApi.Transform, (op) => {
        const responses = op.responses as Record<string, { content?: unknown }>
        responses["200"] = {
          ...responses["200"],
          content: {
            "application/yaml": { schema: { type: "string", description: `${description}, as YAML` } },
            "application/json": { schema: { type: "object", description: `${description} (?format=json)` } },
          },
        }
        return op
      }),
  )
  .annotate(OpenApi.Title, "Meta") {}
