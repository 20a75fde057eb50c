/**
 * Webhook subscriptions as GraphQL: the reads of REST GET /webhooks/… and the writes of POST, PATCH and
 * DELETE /webhooks/…. Every resolver calls the `Webhooks` use-case the REST handler calls, with the same
 * arguments, so both answer the same records. Input field names are the REST body field names; the
 * resolvers only translate arguments (GraphQL nulls, the JSON `headers` object) into the service's input.
 */

import { type WebhookInput, type WebhookSubscription, Webhooks } from "@dxs/services"
import { Effect } from "effect"
import type { GraphqlContext } from "./Context.ts"

export const webhookTypeDefs = /* GraphQL */ `
  "A webhook subscription (REST GET /webhooks/{id}/)."
  type WebhookSubscription {
    id: ID!
    name: String!
    "The HTTPS URL that receives the events."
    url: String!
    subscribed_events: [String!]!
    is_active: Boolean!
    "The custom header names, each mapped to a redacted value."
    headers: JSON!
    created_at: String!
    updated_at: String!
    "The delivery log, newest first, with every attempt (REST GET /webhooks/{id}/deliveries/)."
    deliveries(
      "Page size, default 20, at most 100."
      limit: Int
      "Rows to skip, default 0."
      offset: Int
    ): WebhookDeliveryPage!
  }

  """
  A subscription just created (REST POST /webhooks/): the record with its Standard Webhooks signing secret
  (whsec_…), shown only in this answer.
  """
  type WebhookSubscriptionWithSecret {
    id: ID!
    name: String!
    url: String!
    subscribed_events: [String!]!
    is_active: Boolean!
    headers: JSON!
    created_at: String!
    updated_at: String!
    secret: String!
  }

  "An event type a subscription can receive (REST GET /webhooks/events/)."
  type WebhookEventType {
    name: String!
    description: String!
    "JSON Schema of the delivery body (envelope and data) for this event."
    payload_schema: JSON!
  }

  "One attempt of a delivery."
  type WebhookAttempt {
    "The attempt's Service-Delivery-Id."
    id: ID!
    number: Int!
    status_code: Int
    error: String
    duration_ms: Int!
    attempted_at: String!
  }

  "A delivery of an event to a subscription."
  type WebhookDelivery {
    "The delivery's webhook-id, stable across attempts."
    id: ID!
    event_type: String!
    "pending, succeeded or failed."
    status: String!
    attempt_count: Int!
    last_status_code: Int
    last_error: String
    created_at: String!
    delivered_at: String
    "When a pending delivery is tried next."
    next_attempt_at: String
    attempts: [WebhookAttempt!]!
  }

  "A page of a subscription's delivery log (REST GET /webhooks/{id}/deliveries/)."
  type WebhookDeliveryPage {
    count: Int!
    results: [WebhookDelivery!]!
  }

  "The answer of REST POST /webhooks/{id}/test/: the queued webhook.ping delivery."
  type WebhookTestResult {
    delivery_id: ID!
  }

  "The answer of REST POST /webhooks/{id}/rotate-secret/: the new secret, shown only here."
  type WebhookSecret {
    secret: String!
  }

  """
  A subscription body (REST POST /webhooks/). A null in an optional field means the same as leaving it out.
  """
  input WebhookInput {
    "Default empty."
    name: String
    "An HTTPS URL that must not resolve to a private, loopback, link-local or metadata address."
    url: String!
    "Event names from webhookEvents (at least one)."
    subscribed_events: [String!]!
    """
    Custom delivery headers, an object of name to string value: at most 10, each value at most 1 KB, at most
    4 KB in all; Host, Connection, Content-Length, Transfer-Encoding, Content-Type, Service-*, webhook-id,
    webhook-timestamp and webhook-signature are reserved.
    """
    headers: JSON
  }

  "Members of a subscription to change (REST PATCH /webhooks/{id}/); omitted (or null) members are kept."
  input WebhookPatchInput {
    name: String
    url: String
    subscribed_events: [String!]
    "Replaces all custom headers (an object of name to string value)."
    headers: JSON
  }

  extend type Query {
    "The organisation's active webhook subscriptions, newest first (REST GET /webhooks/)."
    webhooks: [WebhookSubscription!]!
    "An active webhook subscription of the organisation (NOT_FOUND otherwise)."
    webhook(id: ID!): WebhookSubscription
    "The event types a subscription can receive, with their payload schemas (REST GET /webhooks/events/)."
    webhookEvents: [WebhookEventType!]!
  }

  extend type Mutation {
    "Create a subscription; the answer carries the signing secret, shown only this once (REST POST /webhooks/)."
    createWebhook(input: WebhookInput!): WebhookSubscriptionWithSecret!
    "Update some members of a subscription; headers replaces all custom headers (REST PATCH /webhooks/{id}/)."
    updateWebhook(id: ID!, input: WebhookPatchInput!): WebhookSubscription!
    "Delete a subscription permanently, with its delivery log (REST DELETE /webhooks/{id}/)."
    deleteWebhook(id: ID!): Boolean!
    "Queue a synthetic webhook.ping event to the subscription (REST POST /webhooks/{id}/test/)."
    testWebhook(id: ID!): WebhookTestResult!
    "Replace the signing secret; the new one is shown only in this answer (REST POST /webhooks/{id}/rotate-secret/)."
    rotateWebhookSecret(id: ID!): WebhookSecret!
  }
`

interface WebhookInputArgs {
  readonly name?: string | null
  readonly url?: string | null
  readonly subscribed_events?: ReadonlyArray<string> | null
  readonly headers?: unknown
}

/**
 * The service's input: GraphQL nulls dropped (REST accepts null for none of these members); the service
 * checks the shape of `headers` (a JSON argument) as it checks everything else.
 */
const webhookInput = (input: WebhookInputArgs): WebhookInput => ({
  ...(input.name == null ? {} : { name: input.name }),
  ...(input.url == null ? {} : { url: input.url }),
  ...(input.subscribed_events == null ? {} : { subscribed_events: input.subscribed_events }),
  ...(input.headers == null ? {} : { headers: input.headers as Readonly<Record<string, string>> }),
})

type IdArgs = { readonly id: string }

export const webhookResolvers = {
  Query: {
    webhooks: (_: unknown, __: unknown, ctx: GraphqlContext) =>
      ctx.run(Effect.flatMap(Webhooks, (w) => w.list())),
    webhook: (_: unknown, args: IdArgs, ctx: GraphqlContext) =>
      ctx.run(Effect.flatMap(Webhooks, (w) => w.get(args.id))),
    webhookEvents: (_: unknown, __: unknown, ctx: GraphqlContext) =>
      ctx.run(Effect.flatMap(Webhooks, (w) => w.events())),
  },
  WebhookSubscription: {
    deliveries: (
      s: WebhookSubscription,
      args: { limit?: number | null; offset?: number | null },
      ctx: GraphqlContext,
    ) =>
      ctx.run(
        Effect.flatMap(Webhooks, (w) =>
          w.deliveries(s.id, { limit: args.limit ?? undefined, offset: args.offset ?? undefined }),
        ),
      ),
  },
  Mutation: {
    createWebhook: (_: unknown, args: { input: WebhookInputArgs }, ctx: GraphqlContext) =>
      ctx.run(Effect.flatMap(Webhooks, (w) => w.create(webhookInput(args.input)))),
    updateWebhook: (_: unknown, args: IdArgs & { input: WebhookInputArgs }, ctx: GraphqlContext) =>
      ctx.run(Effect.flatMap(Webhooks, (w) => w.update(args.id, webhookInput(args.input)))),
    deleteWebhook: (_: unknown, args: IdArgs, ctx: GraphqlContext) =>
      ctx.run(
        Effect.as(
          Effect.flatMap(Webhooks, (w) => w.remove(args.id)),
          true,
        ),
      ),
    testWebhook: (_: unknown, args: IdArgs, ctx: GraphqlContext) =>
      ctx.run(Effect.flatMap(Webhooks, (w) => w.test(args.id))),
    rotateWebhookSecret: (_: unknown, args: IdArgs, ctx: GraphqlContext) =>
      ctx.run(Effect.flatMap(Webhooks, (w) => w.rotateSecret(args.id))),
  },
}
