import { outageInCause } from "@dxs/db/Outage"
import { Diagnostic } from "@dxs/domain/contract/OutputSchema"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import { Cause, Schema } from "effect"

/**
 * Errors that cross a boundary, as RFC 9457 problem documents (`application/problem+json`).
 * The HTTP status is annotated once here; REST and GraphQL translate from these.
 */
export const FieldError = Schema.Struct({ path: Schema.String, message: Schema.String })
export type FieldError = typeof FieldError.Type

const problem = {
  type: Schema.String,
  title: Schema.String,
  status: Schema.Int,
  detail: Schema.String,
  errors: Schema.optional(Schema.Array(FieldError)),
}

const problemEncoding = { kind: "Json", contentType: "application/problem+json" } as const

const typeUri = (slug: string) => `urn:dxs:problem:${slug}`

export class BadRequest extends Schema.TaggedError<BadRequest>()(
  "BadRequest",
  problem,
  HttpApiSchema.annotations({ status: 400, description: "The request is malformed or a value is invalid" }),
) {
  static of(detail: string, errors?: ReadonlyArray<FieldError>) {
    return new BadRequest({ type: typeUri("bad-request"), title: "Bad request", status: 400, detail, errors })
  }
}

export class Unauthorized extends Schema.TaggedError<Unauthorized>()(
  "Unauthorized",
  problem,
  HttpApiSchema.annotations({ status: 401, description: "Missing, malformed, unknown or revoked API key" }),
) {
  static of(detail: string) {
    return new Unauthorized({ type: typeUri("unauthorized"), title: "Unauthorized", status: 401, detail })
  }
}

export class Forbidden extends Schema.TaggedError<Forbidden>()(
  "Forbidden",
  problem,
  HttpApiSchema.annotations({
    status: 403,
    description: "A write with a session cookie but without its X-CSRF-Token header",
  }),
) {
  static of(detail: string) {
    return new Forbidden({ type: typeUri("forbidden"), title: "Forbidden", status: 403, detail })
  }
}

export class TooManyRequests extends Schema.TaggedError<TooManyRequests>()(
  "TooManyRequests",
  { ...problem, retry_after: Schema.Int },
  HttpApiSchema.annotations({
    status: 429,
    description:
      "Too many requests in the current minute (of this API key or member, sign-in attempts, or refused credentials from this client); see Retry-After",
  }),
) {
  static of(detail: string, retryAfterSeconds: number) {
    return new TooManyRequests({
      type: typeUri("too-many-requests"),
      title: "Too many requests",
      status: 429,
      detail,
      retry_after: retryAfterSeconds,
    })
  }
}

/** Every live subscription (a stream of changes) a key or member may hold at once is open. */
export class TooManySubscriptions extends Schema.TaggedError<TooManySubscriptions>()(
  "TooManySubscriptions",
  problem,
  HttpApiSchema.annotations({
    status: 429,
    description: "This API key or member already holds as many live subscriptions as it may; end one first",
  }),
) {
  static of(limit: number) {
    return new TooManySubscriptions({
      type: typeUri("too-many-subscriptions"),
      title: "Too many live subscriptions",
      status: 429,
      detail: `This API key or member already has ${limit} live subscriptions, the most it may hold at once; end one first`,
    })
  }
}

export class NotFound extends Schema.TaggedError<NotFound>()(
  "NotFound",
  problem,
  HttpApiSchema.annotations({ status: 404, description: "The resource does not exist in this organisation" }),
) {
  static of(what: string, id?: string) {
    return new NotFound({
      type: typeUri("not-found"),
      title: "Not found",
      status: 404,
      detail: id === undefined ? `${what} not found` : `${what} ${id} not found`,
    })
  }
}

export const FailedDocument = Schema.Struct({ id: Schema.String, name: Schema.String })

export class Conflict extends Schema.TaggedError<Conflict>()(
  "Conflict",
  { ...problem, failed_documents: Schema.optional(Schema.Array(FailedDocument)) },
  HttpApiSchema.annotations({ status: 409, description: "The request conflicts with the current state" }),
) {
  static of(detail: string, errors?: ReadonlyArray<FieldError>) {
    return new Conflict({ type: typeUri("conflict"), title: "Conflict", status: 409, detail, errors })
  }
}

export class PayloadTooLarge extends Schema.TaggedError<PayloadTooLarge>()(
  "PayloadTooLarge",
  problem,
  HttpApiSchema.annotations({ status: 413, description: "The uploaded file is larger than the limit" }),
) {
  static of(detail: string) {
    return new PayloadTooLarge({
      type: typeUri("payload-too-large"),
      title: "Payload too large",
      status: 413,
      detail,
    })
  }
}

export class UnsupportedMediaType extends Schema.TaggedError<UnsupportedMediaType>()(
  "UnsupportedMediaType",
  problem,
  HttpApiSchema.annotations({ status: 415, description: "The file type is not supported" }),
) {
  static of(detail: string) {
    return new UnsupportedMediaType({
      type: typeUri("unsupported-media-type"),
      title: "Unsupported media type",
      status: 415,
      detail,
    })
  }
}

export { Diagnostic }

export class Unprocessable extends Schema.TaggedError<Unprocessable>()(
  "Unprocessable",
  { ...problem, diagnostics: Schema.optional(Schema.Array(Diagnostic)) },
  HttpApiSchema.annotations({
    status: 422,
    description: "The request is well-formed but cannot be carried out (for example a mapping with errors)",
  }),
) {
  static of(detail: string, diagnostics?: ReadonlyArray<typeof Diagnostic.Type>) {
    return new Unprocessable({
      type: typeUri("unprocessable"),
      title: "Unprocessable content",
      status: 422,
      detail,
      diagnostics,
    })
  }
}

/** Seconds a client is asked to wait (`Retry-After`) when storage or the database is out of reach. */
export const OUTAGE_RETRY_AFTER_SECONDS = 5

/**
 * Object storage or the database is out of reach (refusing, not answering before its deadline, restarting):
 * the request did nothing that stays, and may be sent again after `retry_after` seconds.
 */
export class ServiceUnavailable extends Schema.TaggedError<ServiceUnavailable>()(
  "ServiceUnavailable",
  { ...problem, retry_after: Schema.Int, unavailable: Schema.Literal("storage", "database") },
  HttpApiSchema.annotations({
    status: 503,
    description:
      "Object storage or the database cannot be reached now (an outage, a restart): the request was not carried out. Send it again after Retry-After seconds",
  }),
) {
  static of(part: "storage" | "database") {
    return new ServiceUnavailable({
      type: typeUri("service-unavailable"),
      title: "Service unavailable",
      status: 503,
      detail:
        part === "storage"
          ? "Object storage cannot be reached now, so the request was not carried out; send it again in a moment"
          : "The database cannot be reached now, so the request was not carried out; send it again in a moment",
      retry_after: OUTAGE_RETRY_AFTER_SECONDS,
      unavailable: part,
    })
  }
}

/**
 * The 503 of a failed request's cause when it is an outage of storage or the database (with what went
 * wrong, for the log); undefined for any other cause.
 */
export const unavailableFor = (
  cause: Cause.Cause<unknown>,
): { readonly problem: ServiceUnavailable; readonly message: string } | undefined => {
  const outage = Cause.isInterruptedOnly(cause) ? undefined : outageInCause(cause)
  return outage === undefined
    ? undefined
    : { problem: ServiceUnavailable.of(outage.part), message: outage.message }
}

/** The problem+json schemas as HTTP error responses (content type `application/problem+json`). */
export const problemResponses = {
  BadRequest: BadRequest.pipe(HttpApiSchema.withEncoding(problemEncoding)),
  Unauthorized: Unauthorized.pipe(HttpApiSchema.withEncoding(problemEncoding)),
  Forbidden: Forbidden.pipe(HttpApiSchema.withEncoding(problemEncoding)),
  TooManyRequests: TooManyRequests.pipe(HttpApiSchema.withEncoding(problemEncoding)),
  NotFound: NotFound.pipe(HttpApiSchema.withEncoding(problemEncoding)),
  Conflict: Conflict.pipe(HttpApiSchema.withEncoding(problemEncoding)),
  PayloadTooLarge: PayloadTooLarge.pipe(HttpApiSchema.withEncoding(problemEncoding)),
  UnsupportedMediaType: UnsupportedMediaType.pipe(HttpApiSchema.withEncoding(problemEncoding)),
  Unprocessable: Unprocessable.pipe(HttpApiSchema.withEncoding(problemEncoding)),
}

export const problemType = typeUri
