/**
 * The `webhook-deliver` task (DESIGN §4): sends one delivery to its subscription's URL, signed per Standard
 * Webhooks v1, and records the attempt. Each attempt has its own `Service-Delivery-Id` (the envelope's `id`);
 * the `webhook-id` is the delivery's id, the same for every attempt, so a receiver can drop repeats.
 *
 * - The target is checked at every attempt (resolve, check the addresses, connect to the checked one): a
 *   target that now resolves to a private, loopback (unless allowed), link-local or metadata address is
 *   refused and counts as a failed attempt.
 * - A 2xx answer is success. 410 Gone deactivates the subscription and ends the delivery. Anything else (an
 *   error status, no answer within the timeout, a connection or TLS failure) is retried on the schedule:
 *   immediately, then after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h and 24 h (±20 % jitter), 10
 *   attempts in all; after the last the delivery fails.
 * - A failed HTTP attempt is no failure of the task: it is recorded with the delivery's new state and the
 *   task's next due time in one transaction. Only database errors (defects) fail it (the task queue then
 *   retries the task).
 */
import { randomUUID } from "node:crypto"
import * as http from "node:http"
import * as https from "node:https"
import type { LookupFunction } from "node:net"
import { rootCertificates } from "node:tls"
import { type TaskRow, transactionOn } from "@dxs/db"
import { logLine } from "@dxs/db/Log"
import * as Webhooks from "@dxs/db/repositories/Webhooks"
import type { TaskTrx } from "@dxs/db/TaskQueue"
import { reschedule } from "@dxs/db/TaskQueue"
import { Data, Effect } from "effect"
import { decryptSecret } from "./Encryption.ts"
import type { WebhookTaskContext } from "./Fanout.ts"
import type { WebhookSettings } from "./Settings.ts"
import { signWebhook } from "./Signing.ts"
import { checkTarget } from "./Target.ts"

/** The delay before each attempt of a delivery, in ms: the first is immediate; 10 attempts in all. */
export const DELIVERY_SCHEDULE_MS: ReadonlyArray<number> = [
  0,
  5_000,
  5 * 60_000,
  30 * 60_000,
  2 * 3_600_000,
  5 * 3_600_000,
  10 * 3_600_000,
  14 * 3_600_000,
  20 * 3_600_000,
  24 * 3_600_000,
]

/** How long an attempt may take, connection to the end of the answer's headers. */
export const DELIVERY_TIMEOUT_MS = 15_000

/** The part of an answer's body kept with its attempt. */
export const RESPONSE_BODY_LIMIT = 1024

/**
 * The delay before the next attempt after `attemptsMade` attempts failed, with ±20 % jitter from `random`
 * (a number in [0, 1)); undefined when none remain.
 */
export const nextAttemptDelayMs = (
  attemptsMade: number,
  random: () => number = Math.random,
  schedule: ReadonlyArray<number> = DELIVERY_SCHEDULE_MS,
): number | undefined => {
  if (attemptsMade >= schedule.length) return undefined
  const base = schedule[Math.max(0, attemptsMade)] ?? 0
  return Math.round(base * (0.8 + 0.4 * random()))
}

export interface DeliveryOptions extends WebhookSettings {
  /** Default 15 s. */
  readonly fetchTimeoutMs?: number
  /** Jitter source (default Math.random). */
  readonly random?: () => number
  /** The delays before each attempt (default `retrySchedule`, else DELIVERY_SCHEDULE_MS). */
  readonly schedule?: ReadonlyArray<number>
  /** Name resolution for the target check (default: the system's). */
  readonly resolve?: Parameters<typeof checkTarget>[2]
}

/** The JSON body of every delivery (spec: Events). */
export interface DeliveryEnvelope {
  /** This attempt's id: equal to the `Service-Delivery-Id` header. */
  readonly id: string
  readonly event: string
  readonly occurred_at: string
  readonly subscription_id: string
  readonly data: Record<string, unknown>
}

/** What came of one attempt: an answer (with its status) or an error before one. */
interface AttemptOutcome {
  readonly statusCode: number | null
  readonly responseBody: string | null
  readonly error: string | null
  readonly durationMs: number
}

const deliveryIdOf = (task: TaskRow): string | undefined => {
  const id = (task.payload as { deliveryId?: unknown }).deliveryId
  return typeof id === "string" ? id : undefined
}

const errorText = (e: unknown): string => {
  if (!(e instanceof Error)) return String(e)
  const code = (e as { code?: unknown }).code
  return typeof code === "string" && !e.message.includes(code) ? `${e.message} (${code})` : e.message
}

/** The error of an attempt cut off before its answer was recorded: the endpoint may or may not have it. */
export const INTERRUPTED =
  "interrupted: the worker stopped or lost the task before the answer was recorded (the endpoint may have received it)"

/** Postgres text holds no NUL characters. */
const storable = (text: string) => text.replaceAll("\u0000", "")

const bodyText = (chunks: ReadonlyArray<Buffer>) =>
  storable(Buffer.concat(chunks).subarray(0, RESPONSE_BODY_LIMIT).toString("utf8"))

interface Target {
  readonly url: URL
  readonly address: string
  readonly family: number
}

/**
 * POSTs `body` to the checked target: the connection goes to the checked address whatever the name
 * resolves to now, while the TLS server name and the Host header stay the URL's host. Never rejects.
 */
const post = (
  target: Target,
  headers: Readonly<Record<string, string>>,
  body: string,
  options: { readonly timeoutMs: number; readonly ca: string | undefined; readonly signal: AbortSignal },
): Promise<AttemptOutcome> =>
  new Promise((resolve) => {
    const started = performance.now()
    const elapsed = () => Math.round(performance.now() - started)
    let settled = false
    let timer: ReturnType<typeof setTimeout> | undefined
    let request: http.ClientRequest | undefined
    const onAbort = () => request?.destroy(new Error("abandoned: the worker stopped or lost the task"))
    const settle = (outcome: Omit<AttemptOutcome, "durationMs">) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      options.signal.removeEventListener("abort", onAbort)
      resolve({ ...outcome, durationMs: elapsed() })
    }
    const fail = (e: unknown) => settle({ statusCode: null, responseBody: null, error: errorText(e) })

    const { url } = target
    const secure = url.protocol === "https:"
    const lookup: LookupFunction = (_hostname, lookupOptions, callback) => {
      if (lookupOptions.all) callback(null, [{ address: target.address, family: target.family }])
      else callback(null, target.address, target.family)
    }
    try {
      request = (secure ? https : http).request({
        method: "POST",
        protocol: url.protocol,
        hostname: url.hostname.replace(/^\[(.*)\]$/, "$1"),
        port: url.port === "" ? (secure ? 443 : 80) : Number(url.port),
        path: `${url.pathname}${url.search}`,
        headers: { ...headers, "content-length": String(Buffer.byteLength(body)) },
        lookup,
        // A connection of its own: never a pooled one opened to another address.
        agent: false,
        ...(secure && options.ca !== undefined ? { ca: [...rootCertificates, options.ca] } : {}),
      })
    } catch (e) {
      // Invalid header names or values are refused before anything is sent.
      fail(e)
      return
    }
    const sent = request
    timer = setTimeout(
      () => sent.destroy(new Error(`no answer within ${options.timeoutMs / 1000} s`)),
      options.timeoutMs,
    )
    options.signal.addEventListener("abort", onAbort)
    if (options.signal.aborted) onAbort()

    sent.on("error", fail)
    sent.on("response", (response) => {
      const chunks: Buffer[] = []
      let size = 0
      // The status decides; the body is read up to the limit, then the connection is closed.
      const done = () => {
        settle({ statusCode: response.statusCode ?? null, responseBody: bodyText(chunks), error: null })
        response.destroy()
      }
      response.on("data", (chunk: Buffer) => {
        chunks.push(chunk)
        size += chunk.length
        if (size >= RESPONSE_BODY_LIMIT) done()
      })
      response.on("end", done)
      response.on("close", done)
      response.on("error", done)
    })
    sent.end(body)
  })

/** The task could not be rescheduled for the delivery's next attempt: this worker no longer holds it. */
export class NotRescheduled extends Data.TaggedError("NotRescheduled")<{ readonly taskId: string }> {
  override get message() {
    return `lease lost on task ${this.taskId}: not rescheduled`
  }
}

/** Decrypts the subscription's secret and custom headers. */
const openSecrets = (
  key: Uint8Array,
  subscription: { readonly secret: string; readonly headers: Readonly<Record<string, string>> },
) => ({
  secret: decryptSecret(key, subscription.secret),
  headers: Object.fromEntries(
    Object.entries(subscription.headers).map(([name, value]) => [name, decryptSecret(key, value)]),
  ),
})

type Subscription = NonNullable<
  Effect.Effect.Success<ReturnType<typeof Webhooks.findSubscriptionForDelivery>>
>
type Delivery = NonNullable<Effect.Effect.Success<ReturnType<typeof Webhooks.findDelivery>>>

/** Sends one attempt (never rejects: whatever went wrong is the outcome's `error`). */
const sendAttempt = async (
  options: DeliveryOptions,
  delivery: Delivery,
  subscription: Subscription,
  attemptId: string,
  signal: AbortSignal,
): Promise<AttemptOutcome> => {
  let secrets: ReturnType<typeof openSecrets>
  try {
    secrets = openSecrets(options.encryptionKey, subscription)
  } catch {
    return {
      statusCode: null,
      responseBody: null,
      error:
        "the subscription's secret or headers cannot be decrypted: every dxs process must use the same DXS_ENCRYPTION_KEY",
      durationMs: 0,
    }
  }
  const started = performance.now()
  const checked = await Promise.resolve(
    checkTarget(subscription.url, { allowLoopback: options.allowLoopback }, options.resolve),
  ).catch((e: unknown) => ({ ok: false as const, reason: errorText(e) }))
  if (!checked.ok)
    return {
      statusCode: null,
      responseBody: null,
      error: `target refused: ${checked.reason}`,
      durationMs: Math.round(performance.now() - started),
    }
  const envelope: DeliveryEnvelope = {
    id: attemptId,
    event: delivery.event_type,
    occurred_at: new Date(delivery.occurred_at).toISOString(),
    subscription_id: subscription.id,
    data: delivery.data,
  }
  const body = JSON.stringify(envelope)
  const timestamp = Math.floor(Date.now() / 1000)
  // The subscription's headers first: the delivery's own override any of the same name.
  const headers: Record<string, string> = {
    ...secrets.headers,
    "Content-Type": "application/json",
    "Service-Delivery-Id": attemptId,
    "webhook-id": delivery.id,
    "webhook-timestamp": String(timestamp),
    "webhook-signature": signWebhook({ secret: secrets.secret, id: delivery.id, timestamp, body }),
  }
  return post({ url: checked.url, address: checked.address, family: checked.family }, headers, body, {
    timeoutMs: options.fetchTimeoutMs ?? DELIVERY_TIMEOUT_MS,
    ca: options.ca,
    signal,
  })
}

const completeIn = (ctx: WebhookTaskContext) => (trx: TaskTrx) => Effect.promise(() => ctx.complete(trx))

export const webhookDeliverHandler =
  (options: DeliveryOptions) =>
  (task: TaskRow, ctx: WebhookTaskContext): Effect.Effect<void, NotRescheduled> =>
    Effect.gen(function* () {
      const schedule = options.schedule ?? options.retrySchedule ?? DELIVERY_SCHEDULE_MS
      const random = options.random ?? Math.random
      const complete = completeIn(ctx)
      const deliveryId = deliveryIdOf(task)
      const delivery = deliveryId === undefined ? undefined : yield* Webhooks.findDelivery(ctx.db, deliveryId)
      const subscription =
        delivery === undefined
          ? undefined
          : yield* Webhooks.findSubscriptionForDelivery(ctx.db, delivery.subscription_id)

      // Nothing to send: the subscription was deleted (its deliveries with it), or this one is settled.
      if (!delivery || !subscription || delivery.status !== "pending")
        return yield* transactionOn(ctx.db, complete)
      if (!subscription.is_active)
        return yield* transactionOn(ctx.db, (trx) =>
          Effect.zipRight(
            Webhooks.failPendingDelivery(trx, delivery.id, "subscription inactive"),
            complete(trx),
          ),
        )

      // The attempt is recorded before anything is sent, so that one cut off by a crash stays in the log.
      const attemptId = randomUUID()
      const number = yield* transactionOn(ctx.db, (trx) =>
        Webhooks.beginAttempt(trx, {
          id: attemptId,
          deliveryId: delivery.id,
          url: subscription.url,
          // An earlier attempt still without an answer or an error was cut off (its worker died or lost the task).
          interruptedError: INTERRUPTED,
        }),
      )
      // Settled or deleted meanwhile.
      if (number === undefined) return yield* transactionOn(ctx.db, complete)

      const settle = (outcome: AttemptOutcome) =>
        transactionOn(ctx.db, (trx) =>
          Effect.gen(function* () {
            const current = yield* Webhooks.lockDeliveryStatus(trx, delivery.id)
            // Deleted with its subscription meanwhile.
            if (current === undefined) return yield* complete(trx)
            yield* Webhooks.recordAttemptOutcome(trx, attemptId, {
              status_code: outcome.statusCode,
              error: outcome.error === null ? null : storable(outcome.error),
              duration_ms: outcome.durationMs,
              response_body: outcome.responseBody,
            })
            const code = outcome.statusCode
            const answered = code === null ? null : `the endpoint answered ${code}`
            // Logged with the attempt's record (its transaction commits right after): never the URL's secrets.
            yield* logLine(
              code !== null && code >= 200 && code < 300 ? "info" : "warning",
              "webhook attempt",
              {
                subscription_id: subscription.id,
                delivery_id: delivery.id,
                attempt: number,
                status_code: code,
                ms: outcome.durationMs,
                error: outcome.error === null ? undefined : storable(outcome.error),
              },
            )
            const settleAs = (
              set: Pick<Webhooks.DeliverySettlement, "status" | "lastError" | "nextAttemptInMs">,
            ) =>
              Webhooks.settleDelivery(trx, delivery.id, {
                ...set,
                attemptCount: number,
                lastStatusCode: code,
              })

            if (current !== "pending") return yield* complete(trx)
            if (code !== null && code >= 200 && code < 300) {
              yield* settleAs({ status: "succeeded", nextAttemptInMs: null, lastError: null })
              return yield* complete(trx)
            }
            if (code === 410) {
              yield* Webhooks.deactivateSubscription(trx, subscription.id, "the endpoint answered 410 Gone")
              yield* settleAs({
                status: "failed",
                nextAttemptInMs: null,
                lastError: "the endpoint answered 410 Gone: subscription deactivated",
              })
              return yield* complete(trx)
            }
            const error = answered ?? storable(outcome.error ?? "no answer")
            const delay = nextAttemptDelayMs(number, random, schedule)
            if (delay === undefined) {
              yield* settleAs({
                status: "failed",
                nextAttemptInMs: null,
                lastError: `${error} (attempt ${number} of ${schedule.length}, the last)`,
              })
              return yield* complete(trx)
            }
            yield* settleAs({ status: "pending", nextAttemptInMs: delay, lastError: error })
            // Due again after the delay; the task queue does not count this as one of its attempts.
            if (!(yield* Effect.promise(() => reschedule(trx, task.id, ctx.workerId, delay))))
              return yield* new NotRescheduled({ taskId: task.id })
          }),
        )

      // Interrupted (the worker stopped or lost the task) before the outcome was recorded: whoever claims
      // the task next sends it again. The attempt keeps the answer if one came, else says it was cut off.
      const started = performance.now()
      let outcome: AttemptOutcome | undefined
      let recorded = false
      const recordCutOff = Effect.suspend(() =>
        recorded
          ? Effect.void
          : Webhooks.recordAttemptOutcome(
              ctx.db,
              attemptId,
              outcome === undefined || outcome.statusCode === null
                ? {
                    error: INTERRUPTED,
                    duration_ms: outcome?.durationMs ?? Math.round(performance.now() - started),
                  }
                : {
                    status_code: outcome.statusCode,
                    response_body: outcome.responseBody,
                    duration_ms: outcome.durationMs,
                  },
            ).pipe(
              Effect.catchAllDefect(() => Effect.void),
              Effect.asVoid,
            ),
      )
      yield* Effect.gen(function* () {
        outcome = yield* Effect.promise((signal) =>
          sendAttempt(options, delivery, subscription, attemptId, signal),
        )
        yield* settle(outcome).pipe(
          Effect.zipRight(Effect.sync(() => (recorded = true))),
          Effect.uninterruptible,
        )
      }).pipe(Effect.onInterrupt(() => recordCutOff))
    })
