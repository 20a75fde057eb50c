/** Webhook subscriptions, their event types and delivery log (api-v1.md "Webhooks"). */
import { Schema } from "effect"
import { Timestamp as DateTime, Uuid } from "./Fields.ts"

const EventNames = Schema.Array(Schema.String).annotations({
  jsonSchema: {
    type: "array",
    items: { type: "string" },
    minItems: 1,
    description: "event names from GET /webhooks/events/ (at least one)",
  },
})
const Headers = Schema.Record({ key: Schema.String, value: Schema.String }).annotations({
  description:
    "custom delivery headers, name to value: at most 10, each value at most 1 KB, at most 4 KB in all; Host, Connection, Content-Length, Transfer-Encoding, Content-Type, Service-*, webhook-id, webhook-timestamp and webhook-signature are reserved. Replaces all custom headers on update.",
})
const Url = Schema.String.annotations({
  jsonSchema: {
    type: "string",
    format: "uri",
    pattern: "^[Hh][Tt][Tt][Pp][Ss]://",
    description:
      "HTTPS URL that receives events; it must not resolve to a private, loopback, link-local or metadata address (a server configured to allow loopback targets also takes http:// to loopback)",
  },
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
export type WebhookCreate = typeof WebhookCreate.Type

export const WebhookPatch = Schema.Struct({
  name: Schema.optional(Schema.String),
  url: Schema.optional(Url),
  subscribed_events: Schema.optional(EventNames),
  headers: Schema.optional(Headers),
}).annotations({ identifier: "V1WebhookSubscriptionPatch" })
export type WebhookPatch = typeof WebhookPatch.Type

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
export type WebhookSubscription = typeof WebhookSubscription.Type

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
export type WebhookSubscriptionCreated = typeof WebhookSubscriptionCreated.Type

export const WebhookSecret = Schema.Struct({ secret: Secret }).annotations({ identifier: "V1WebhookSecret" })
export type WebhookSecret = typeof WebhookSecret.Type

export const WebhookTestResponse = Schema.Struct({ delivery_id: Uuid }).annotations({
  identifier: "V1WebhookTestResponse",
})
export type WebhookTestResponse = typeof WebhookTestResponse.Type

/** An event a subscription can receive, with the JSON Schema of its deliveries. */
export const WebhookEventRecord = Schema.Struct({
  name: Schema.String,
  description: Schema.String,
  payload_schema: Schema.Record({ key: Schema.String, value: Schema.Unknown }).annotations({
    jsonSchema: {
      type: "object",
      description: "JSON Schema of the delivery body (envelope and data) for this event",
    },
  }),
}).annotations({ identifier: "V1WebhookEventType" })
export type WebhookEventRecord = typeof WebhookEventRecord.Type

export const WebhookAttempt = Schema.Struct({
  id: Schema.String.annotations({ description: "the attempt's Service-Delivery-Id" }),
  number: Schema.Int,
  status_code: Schema.NullOr(Schema.Int),
  error: Schema.NullOr(Schema.String),
  duration_ms: Schema.Int,
  attempted_at: DateTime,
}).annotations({ identifier: "V1WebhookAttempt" })
export type WebhookAttempt = typeof WebhookAttempt.Type

export const WebhookDeliveryStatus = Schema.Literal("pending", "succeeded", "failed")
export type WebhookDeliveryStatus = typeof WebhookDeliveryStatus.Type

export const WebhookDelivery = Schema.Struct({
  id: Schema.String.annotations({ description: "the delivery's webhook-id, stable across attempts" }),
  event_type: Schema.String,
  status: WebhookDeliveryStatus,
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
export type WebhookDelivery = typeof WebhookDelivery.Type

export const WebhookDeliveriesPage = Schema.Struct({
  count: Schema.Int,
  results: Schema.Array(WebhookDelivery),
}).annotations({ identifier: "V1WebhookDeliveryList" })
export type WebhookDeliveriesPage = typeof WebhookDeliveriesPage.Type
