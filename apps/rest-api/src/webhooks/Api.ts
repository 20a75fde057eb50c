import {
  WebhookCreate,
  WebhookDeliveriesPage,
  WebhookEventRecord,
  WebhookPatch,
  WebhookSecret,
  WebhookSubscription,
  WebhookSubscriptionCreated,
  WebhookTestResponse,
} from "@dxs/domain/contract/Webhook"
import { DELIVERIES_MAX_LIMIT } from "@dxs/services"
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import { Schema } from "effect"
import { Authentication } from "../Auth.ts"
import { flexibleBody } from "../Body.ts"
import { BadRequest, NotFound, Uuid, wholeNumber } from "../Common.ts"

const DeliveriesParams = Schema.Struct({
  limit: Schema.optional(
    wholeNumber(1, DELIVERIES_MAX_LIMIT).annotations({
      description: `page size, default 20, at most ${DELIVERIES_MAX_LIMIT}`,
    }),
  ),
  offset: Schema.optional(wholeNumber(0).annotations({ description: "rows to skip, default 0" })),
})

const IdPath = Schema.Struct({ id: Uuid })

export class WebhooksApi extends HttpApiGroup.make("webhooks")
  .add(
    HttpApiEndpoint.get("list", "/webhooks/")
      .addSuccess(Schema.Array(WebhookSubscription))
      .annotate(OpenApi.Summary, "List the organisation's active webhook subscriptions, newest first"),
  )
  .add(
    HttpApiEndpoint.get("events", "/webhooks/events/")
      .addSuccess(Schema.Array(WebhookEventRecord))
      .annotate(OpenApi.Summary, "The event types a subscription can receive, with their payload schemas"),
  )
  .add(
    HttpApiEndpoint.post("create", "/webhooks/")
      .setPayload(flexibleBody(WebhookCreate))
      .addSuccess(WebhookSubscriptionCreated, { status: 201 })
      .annotate(
        OpenApi.Summary,
        "Create a webhook subscription; the answer carries the signing secret, shown only this once",
      ),
  )
  .add(
    HttpApiEndpoint.get("get", "/webhooks/:id/")
      .setPath(IdPath)
      .addSuccess(WebhookSubscription)
      .annotate(OpenApi.Summary, "Retrieve an active webhook subscription"),
  )
  .add(
    HttpApiEndpoint.patch("patch", "/webhooks/:id/")
      .setPath(IdPath)
      .setPayload(flexibleBody(WebhookPatch))
      .addSuccess(WebhookSubscription)
      .annotate(
        OpenApi.Summary,
        "Update some members of a subscription; headers replaces all custom headers",
      ),
  )
  .add(
    HttpApiEndpoint.del("delete", "/webhooks/:id/")
      .setPath(IdPath)
      .addSuccess(HttpApiSchema.NoContent)
      .annotate(OpenApi.Summary, "Delete a subscription permanently, with its delivery log"),
  )
  .add(
    HttpApiEndpoint.post("test", "/webhooks/:id/test/")
      .setPath(IdPath)
      .addSuccess(WebhookTestResponse, { status: 202 })
      .annotate(OpenApi.Summary, "Send a synthetic webhook.ping event to the subscription"),
  )
  .add(
    HttpApiEndpoint.get("deliveries", "/webhooks/:id/deliveries/")
      .setPath(IdPath)
      .setUrlParams(DeliveriesParams)
      .addSuccess(WebhookDeliveriesPage)
      .annotate(OpenApi.Summary, "The subscription's delivery log, newest first, with every attempt"),
  )
  .add(
    HttpApiEndpoint.post("rotateSecret", "/webhooks/:id/rotate-secret/")
      .setPath(IdPath)
      .addSuccess(WebhookSecret)
      .annotate(
        OpenApi.Summary,
        "Replace the signing secret; the new one is shown only in this response and signs every later delivery",
      ),
  )
  .addError(BadRequest)
  .addError(NotFound)
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Webhooks")
  .annotate(
    OpenApi.Description,
    "Subscriptions receive events by HTTPS POST when a launched run ends. Deliveries are signed per Standard Webhooks and retried; the subscription's custom headers are encrypted at rest and redacted when read.",
  ) {}
