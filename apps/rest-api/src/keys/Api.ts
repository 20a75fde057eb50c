import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Authentication } from "../Auth.ts"
import { flexibleBody } from "../Body.ts"
import { BadRequest, NotFound, Uuid } from "../Common.ts"

const managedKeyFields = {
  id: Uuid,
  name: Schema.String,
  prefix: Schema.String.annotations({ description: "`dxs_live_` and the key's next four characters" }),
  created_at: Schema.String.annotations({ format: "date-time" }),
  last_used_at: Schema.NullOr(Schema.String.annotations({ format: "date-time" })),
  revoked_at: Schema.NullOr(Schema.String.annotations({ format: "date-time" })),
}

export const ManagedKey = Schema.Struct(managedKeyFields).annotations({ identifier: "V1ApiKey" })
export const NewKey = Schema.Struct({
  ...managedKeyFields,
  key: Schema.String.annotations({ description: "the key itself: shown this once, never again" }),
}).annotations({ identifier: "V1NewApiKey" })

export const KeyCreateRequest = Schema.Struct({
  name: Schema.optionalWith(Schema.String, { default: () => "" }).annotations({
    description: "a label, e.g. where the key is used",
  }),
}).annotations({ identifier: "V1ApiKeyCreate" })

const KeyPath = Schema.Struct({ id: Uuid })

export class KeysApi extends HttpApiGroup.make("keys")
  .add(
    HttpApiEndpoint.get("list", "/keys/")
      .addSuccess(Schema.Array(ManagedKey))
      .annotate(OpenApi.Summary, "The organisation's API keys (revoked ones too), newest first"),
  )
  .add(
    HttpApiEndpoint.post("create", "/keys/")
      .setPayload(flexibleBody(KeyCreateRequest))
      .addSuccess(NewKey, { status: 201 })
      .annotate(OpenApi.Summary, "Create an API key; the key is in this answer only"),
  )
  .add(
    HttpApiEndpoint.post("rotate", "/keys/:id/rotate/")
      .setPath(KeyPath)
      .addSuccess(NewKey, { status: 201 })
      .annotate(
        OpenApi.Summary,
        "Replace an active key with a new one of the same name (the old one is revoked)",
      ),
  )
  .add(
    HttpApiEndpoint.del("revoke", "/keys/:id/")
      .setPath(KeyPath)
      .addSuccess(HttpApiSchema.NoContent)
      .annotate(OpenApi.Summary, "Revoke an active key"),
  )
  .addError(BadRequest)
  .addError(NotFound)
  .middleware(Authentication)
  .annotate(OpenApi.Title, "API keys")
  .annotate(
    OpenApi.Description,
    "The web application's developer page: signed-in members manage the organisation's keys. A request made with an API key is refused (403).",
  ) {}
