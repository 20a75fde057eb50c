import { randomBytes } from "node:crypto"
import { Db, transaction, withDb } from "@dxs/db"
import * as Repository from "@dxs/db/repositories/Webhooks"
import type {
  WebhookAttempt,
  WebhookDelivery,
  WebhookPatch,
  WebhookSubscription,
} from "@dxs/domain/contract/Webhook"
import { MAX_NAME_LENGTH } from "@dxs/domain/Limits"
import {
  checkWebhookUrl,
  isWebhookEventName,
  validateHeaders,
  WEBHOOK_EVENT_NAMES,
  WEBHOOK_EVENTS,
  type WebhookEventType,
} from "@dxs/domain/Webhooks"
import { encryptSecret, newEncryptionKey } from "@dxs/pipeline/webhooks/Encryption"
import { addDelivery } from "@dxs/pipeline/webhooks/Queue"
import type { WebhookSettings } from "@dxs/pipeline/webhooks/Settings"
import { Context, Effect } from "effect"
import { CurrentOrganization } from "./CurrentOrganization.ts"
import { BadRequest, type FieldError, NotFound } from "./Errors.ts"
import { checkPage } from "./Results.ts"
import { iso, isoOrNull } from "./Time.ts"

/** Longer target URLs are refused (browsers and proxies commonly stop near this length). */
const MAX_URL_LENGTH = 2048

/** A key for processes started without configuration: secrets stored with it last as long as the process. */
const processKey = newEncryptionKey()

/**
 * Webhook settings of the API: the encryption key of secrets at rest (webhook secrets and custom headers,
 * and the key that signs `file_url` links: every process sharing the database needs the same key), and
 * whether loopback targets are allowed.
 */
export class WebhookConfig extends Context.Reference<WebhookConfig>()("@dxs/services/WebhookConfig", {
  defaultValue: (): WebhookSettings => ({ encryptionKey: processKey, allowLoopback: false }),
}) {}

/** Custom header values are never shown once stored. */
export const REDACTED_HEADER_VALUE = "********"

export const WEBHOOK_PING_MESSAGE = "This is a test event from dxs."

export const DELIVERIES_DEFAULT_LIMIT = 20
export const DELIVERIES_MAX_LIMIT = 100

/** A create or patch body; create requires `url` and `subscribed_events`. */
/** A subscription body; `headers` of another shape than an object of strings is refused (400), whatever the adapter passed. */
export type WebhookInput = WebhookPatch

export type { WebhookAttempt, WebhookDelivery, WebhookSubscription }

const toSubscription = (r: Repository.SubscriptionRow): WebhookSubscription => ({
  id: r.id,
  name: r.name,
  url: r.url,
  subscribed_events: [...r.subscribed_events],
  is_active: r.is_active,
  headers: Object.fromEntries(Object.keys(r.headers).map((k) => [k, REDACTED_HEADER_VALUE])),
  created_at: iso(r.created_at),
  updated_at: iso(r.updated_at),
})

/** A Standard Webhooks secret: `whsec_` and base64 of 24 random bytes. */
const newSecret = () => `whsec_${randomBytes(24).toString("base64")}`

const badRequest = (errors: ReadonlyArray<FieldError>) =>
  BadRequest.of(errors.map((e) => (e.path === "" ? e.message : `${e.path}: ${e.message}`)).join("; "), errors)

/** An active subscription of the current organisation, or 404. */
const findActive = (id: string) =>
  Effect.gen(function* () {
    const org = yield* CurrentOrganization
    const row = yield* withDb((db) => Repository.findActiveSubscription(db, org.id, id))
    return row ? row : yield* Effect.fail(NotFound.of("Webhook subscription", id))
  })

/** Field errors of the supplied members (create: the required ones must be supplied). */
const fieldErrors = (input: WebhookInput, settings: WebhookSettings, create: boolean) => {
  const errors: Array<FieldError> = []
  // A webhook's name may be empty (it is a label), but not longer than any other name.
  if (input.name !== undefined && input.name.length > MAX_NAME_LENGTH)
    errors.push({ path: "name", message: `must be at most ${MAX_NAME_LENGTH} characters` })
  if (create && input.url === undefined) errors.push({ path: "url", message: "is required" })
  if (input.url !== undefined && input.url.length > MAX_URL_LENGTH)
    errors.push({ path: "url", message: `must be at most ${MAX_URL_LENGTH} characters` })
  else if (input.url !== undefined) {
    const check = checkWebhookUrl(input.url, settings)
    if (!check.ok) errors.push({ path: "url", message: check.message })
  }
  if (create && input.subscribed_events === undefined)
    errors.push({ path: "subscribed_events", message: "is required" })
  if (input.subscribed_events !== undefined) {
    if (input.subscribed_events.length === 0)
      errors.push({
        path: "subscribed_events",
        message: `must name at least one event (${WEBHOOK_EVENT_NAMES.join(", ")})`,
      })
    input.subscribed_events.forEach((name, i) => {
      if (!isWebhookEventName(name))
        errors.push({
          path: `subscribed_events/${i}`,
          message: `unknown event "${name}"; known events: ${WEBHOOK_EVENT_NAMES.join(", ")}`,
        })
    })
  }
  if (input.headers !== undefined) errors.push(...validateHeaders(input.headers))
  return errors
}

/**
 * Validates the supplied members. A URL's host name is not resolved here: delivery resolves and checks it
 * at every attempt (the pipeline's `checkTarget`), so a receiver can be registered before its name resolves.
 */
const validateInput = (input: WebhookInput, create: boolean) =>
  Effect.gen(function* () {
    const settings = yield* WebhookConfig
    const errors = fieldErrors(input, settings, create)
    if (errors.length > 0) return yield* badRequest(errors)
    return settings
  })

const encryptHeaders = (key: Uint8Array, headers: Readonly<Record<string, string>>) =>
  JSON.stringify(Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, encryptSecret(key, v)])))

const uniqueEvents = (events: ReadonlyArray<string>) => JSON.stringify([...new Set(events)])

export class Webhooks extends Effect.Service<Webhooks>()("@dxs/services/Webhooks", {
  effect: Effect.gen(function* () {
    const storage = Context.make(Db, yield* Db).pipe(Context.add(WebhookConfig, yield* WebhookConfig))
    const provide = Effect.provide(storage)
    return {
      /** Active subscriptions of the organisation, newest first. */
      list: () =>
        Effect.gen(function* () {
          const org = yield* CurrentOrganization
          const rows = yield* withDb((db) => Repository.listActiveSubscriptions(db, org.id))
          return rows.map(toSubscription)
        }).pipe(provide),

      get: (id: string) => Effect.map(findActive(id), toSubscription).pipe(provide),

      /** Creates a subscription; the answer carries its signing secret, shown this once. */
      create: (input: WebhookInput) =>
        Effect.gen(function* () {
          const org = yield* CurrentOrganization
          const settings = yield* validateInput(input, true)
          const secret = newSecret()
          const row = yield* withDb((db) =>
            Repository.insertSubscription(db, {
              organizationId: org.id,
              name: input.name ?? "",
              url: input.url!.trim(),
              subscribedEvents: uniqueEvents(input.subscribed_events!),
              headers: encryptHeaders(settings.encryptionKey, input.headers ?? {}),
              secret: encryptSecret(settings.encryptionKey, secret),
            }),
          )
          return { ...toSubscription(row), secret }
        }).pipe(provide),

      /** Changes the supplied members; `headers` replaces all custom headers. */
      update: (id: string, input: WebhookInput) =>
        Effect.gen(function* () {
          yield* findActive(id)
          const settings = yield* validateInput(input, false)
          const row = yield* withDb((db) =>
            Repository.updateSubscription(db, id, {
              ...(input.name !== undefined ? { name: input.name } : {}),
              ...(input.url !== undefined ? { url: input.url.trim() } : {}),
              ...(input.subscribed_events !== undefined
                ? { subscribedEvents: uniqueEvents(input.subscribed_events) }
                : {}),
              ...(input.headers !== undefined
                ? { headers: encryptHeaders(settings.encryptionKey, input.headers) }
                : {}),
            }),
          )
          return toSubscription(row)
        }).pipe(provide),

      /**
       * Deletes a subscription of the organisation for good, with its deliveries and their attempts. A
       * deactivated subscription can be deleted too.
       */
      remove: (id: string) =>
        Effect.gen(function* () {
          const org = yield* CurrentOrganization
          const deleted = yield* withDb((db) => Repository.deleteSubscription(db, org.id, id))
          if (!deleted) return yield* NotFound.of("Webhook subscription", id)
        }).pipe(provide),

      /** The event types a subscription can name. */
      events: (): Effect.Effect<ReadonlyArray<WebhookEventType>> =>
        Effect.succeed(WEBHOOK_EVENTS).pipe(provide),

      /** Queues a `webhook.ping` delivery to the subscription; returns the delivery's id. */
      test: (id: string) =>
        Effect.gen(function* () {
          yield* findActive(id)
          const deliveryId = yield* transaction((trx) =>
            addDelivery(trx, {
              subscriptionId: id,
              eventId: null,
              eventType: "webhook.ping",
              data: { message: WEBHOOK_PING_MESSAGE },
              occurredAt: new Date(),
            }),
          )
          return { delivery_id: deliveryId }
        }).pipe(provide),

      /** The subscription's deliveries, newest first, each with its attempts. */
      deliveries: (
        id: string,
        page: { readonly limit?: number | undefined; readonly offset?: number | undefined },
      ) =>
        Effect.gen(function* () {
          const { limit, offset } = yield* checkPage(page.limit, page.offset, {
            limit: DELIVERIES_DEFAULT_LIMIT,
            max: DELIVERIES_MAX_LIMIT,
          })
          yield* findActive(id)
          const count = yield* withDb((db) => Repository.countDeliveries(db, id))
          const rows = yield* withDb((db) => Repository.listDeliveries(db, id, { limit, offset }))
          const attempts = yield* withDb((db) =>
            Repository.listAttempts(
              db,
              rows.map((r) => r.id),
            ),
          )
          const results = rows.map(
            (r): WebhookDelivery => ({
              id: r.id,
              event_type: r.event_type,
              status: r.status,
              attempt_count: r.attempt_count,
              last_status_code: r.last_status_code,
              last_error: r.last_error,
              created_at: iso(r.created_at),
              delivered_at: isoOrNull(r.delivered_at),
              next_attempt_at: r.status === "pending" ? isoOrNull(r.next_attempt_at) : null,
              attempts: attempts
                .filter((a) => a.delivery_id === r.id)
                .map((a) => ({
                  id: a.id,
                  number: a.number,
                  status_code: a.status_code,
                  error: a.error,
                  duration_ms: a.duration_ms,
                  attempted_at: iso(a.attempted_at),
                })),
            }),
          )
          return { count, results }
        }).pipe(provide),

      /** Replaces the signing secret; the new one is shown this once and signs every later attempt. */
      rotateSecret: (id: string) =>
        Effect.gen(function* () {
          yield* findActive(id)
          const settings = yield* WebhookConfig
          const secret = newSecret()
          yield* withDb((db) =>
            Repository.replaceSubscriptionSecret(db, id, encryptSecret(settings.encryptionKey, secret)),
          )
          return { secret }
        }).pipe(provide),
    }
  }),
}) {}
