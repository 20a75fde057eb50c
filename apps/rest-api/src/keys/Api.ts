import { ApiKey, KeyCreateRequest, NewApiKey } from "@dxs/domain/contract/Key"
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import { Schema } from "effect"
import { Authentication } from "../Auth.ts"
import { flexibleBody } from "../Body.ts"
import { BadRequest, NotFound, Uuid } from "../Common.ts"

const KeyPath = Schema.Struct({ id: Uuid })

export class KeysApi extends HttpApiGroup.make("keys")
  .add(
    HttpApiEndpoint.get("list", "/keys/")
      .addSuccess(Schema.Array(ApiKey))
      .annotate(OpenApi.Summary, "The organisation's API keys (revoked ones too), newest first"),
  )
  .add(
    HttpApiEndpoint.post("create", "/keys/")
      .setPayload(flexibleBody(KeyCreateRequest))
      .addSuccess(NewApiKey, { status: 201 })
      .annotate(OpenApi.Summary, "Create an API key; the key is in this answer only"),
  )
  .add(
    HttpApiEndpoint.post("rotate", "/keys/:id/rotate/")
      .setPath(KeyPath)
      .addSuccess(NewApiKey, { status: 201 })
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
