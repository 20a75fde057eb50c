import { DELIVERIES_MAX_LIMIT } from "@dxs/services"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Authentication } from "../Auth.ts"
import { flexibleBody } from "../Body.ts"
import { BadRequest, NotFound, Uuid, wholeNumber } from "../Common.ts"

const DateTime = Schema.String.annotations({ format: "date-time" })

const EventNames = Schema.Array(Schema.String).annotations({
  description: "event names from GET /webhooks/events/ (at least one)",
})
const Headers = Schema.Record({ key: Schema.String, value: Schema.String }).annotations({
  description:
    "custom delivery headers, name to value: at most 10, each value at most 1 KB, at most 4 KB in all; Host, Connection, Content-Length, Transfer-Encoding, Content-Type, Service-*, webhook-id, webhook-timestamp and webhook-signature are reserved. Replaces all custom headers on update.",
})
const Url = Schema.String.annotations({
  description:
    "HTTPS URL that receives events; it must not resolve to a private, loopback, link-local or metadata address",
})

export const WebhookCreate = Schema.Struct({
  name: Schema.optional(Schema.String.annotations({ description: 'default ""' })),
  url: Url,
  subscribed_events: EventNames,
  headers: Schema.optional(Headers),
}).annotations({
  identifier: "V1WebhookSubscriptionCreate",
  // Every missing or invalid member is reported, not only the first.
  parseOptions: { errors: "all" },
})

export const WebhookPatch = Schema.Struct({
  name: Schema.optional(Schema.String),
  url: Schema.optional(Url),
  subscribed_events: Schema.optional(EventNames),
  headers: Schema.optional(Headers),
}).annotations({ identifier: "V1WebhookSubscriptionPatch" })

const subscriptionFields = {
  id: Uuid,
  name: Schema.String,
  url: Schema.String,
  subscribed_events: Schema.Array(Schema.String),
  is_active: Schema.Boolean,
  headers: Schema.Record({ key: Schema.String, value: Schema.String }).annotations({
    description: "the custom header names; values are always redacted",
  }),
  created_at: DateTime,
  updated_at: DateTime,
}

export const WebhookSubscription = Schema.Struct(subscriptionFields).annotations({
  identifier: "V1WebhookSubscription",
})

const Secret = Schema.String.annotations({
  description:
    "the Standard Webhooks signing secret (whsec_…): shown only in this response; deliveries carry webhook-id, webhook-timestamp and webhook-signature (v1,<base64 HMAC-SHA256 of id.timestamp.body>)",
})

export const WebhookSubscriptionCreated = Schema.Struct({
  ...subscriptionFields,
  secret: Secret,
}).annotations({
  identifier: "V1WebhookSubscriptionWithSecret",
})

export const WebhookEvent = Schema.Struct({
  name: Schema.String,
  description: Schema.String,
  payload_schema: Schema.Record({ key: Schema.String, value: Schema.Unknown }).annotations({
    jsonSchema: {
      type: "object",
      description: "JSON Schema of the delivery body (envelope and data) for this event",
    },
  }),
}).annotations({ identifier: "V1WebhookEventType" })

export const WebhookAttempt = Schema.Struct({
  id: Schema.String.annotations({ description: "the attempt's Service-Delivery-Id" }),
  number: Schema.Int,
  status_code: Schema.NullOr(Schema.Int),
  error: Schema.NullOr(Schema.String),
  duration_ms: Schema.Int,
  attempted_at: DateTime,
}).annotations({ identifier: "V1WebhookAttempt" })

export const WebhookDelivery = Schema.Struct({
  id: Schema.String.annotations({ description: "the delivery's webhook-id, stable across attempts" }),
  event_type: Schema.String,
  status: Schema.Literal("pending", "succeeded", "failed"),
  attempt_count: Schema.Int,
  last_status_code: Schema.NullOr(Schema.Int),
  last_error: Schema.NullOr(Schema.String),
  created_at: DateTime,
  delivered_at: Schema.NullOr(DateTime),
  next_attempt_at: Schema.NullOr(DateTime).annotations({
    description: "when a pending delivery is tried next",
  }),
  attempts: Schema.Array(WebhookAttempt),
}).annotations({ identifier: "V1WebhookDelivery" })

export const WebhookDeliveriesPage = Schema.Struct({
  count: Schema.Int,
  results: Schema.Array(WebhookDelivery),
}).annotations({ identifier: "V1WebhookDeliveryList" })

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
      .addSuccess(Schema.Array(WebhookEvent))
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
      .addSuccess(Schema.Struct({ delivery_id: Uuid }).annotations({ identifier: "V1WebhookTestResponse" }), {
        status: 202,
      })
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
      .addSuccess(Schema.Struct({ secret: Secret }).annotations({ identifier: "V1WebhookSecret" }))
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
