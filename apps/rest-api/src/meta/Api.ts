import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"

export class MetaApi extends HttpApiGroup.make("meta")
  .add(
    HttpApiEndpoint.get("schema", "/schema/")
      .setUrlParams(Schema.Struct({ format: Schema.optional(Schema.Literal("yaml", "json")) }))
      .addSuccess(Schema.Unknown)
      .annotate(
        OpenApi.Summary,
        "This OpenAPI 3.1 description (YAML by default, JSON with ?format=json); no key needed",
      ),
  )
  .annotate(OpenApi.Title, "Meta") {}
