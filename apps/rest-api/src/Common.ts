import { IDEMPOTENCY_KEY_PATTERN, problemResponses } from "@dxs/services"
import { Schema } from "effect"

export const Uuid = Schema.UUID.annotations({ description: "UUID" })
export const IsoDateInput = Schema.String.pipe(
  Schema.pattern(/^\d{4}-\d{2}-\d{2}$/, { message: () => "must be a date in the form YYYY-MM-DD" }),
  Schema.filter((s) => !Number.isNaN(Date.parse(`${s}T00:00:00Z`)) || "must be a real calendar date"),
)
/** PostgreSQL's `integer`: page numbers, counts and offsets beyond it cannot name anything. */
export const MAX_INT = 2_147_483_647

/** A whole number in a path or query string, from `min` to `max` (default: the largest `integer`). */
export const wholeNumber = (min: number, max: number = MAX_INT) => {
  const message = () => `must be a whole number from ${min} to ${max}`
  return Schema.NumberFromString.pipe(
    Schema.int({ message }),
    Schema.greaterThanOrEqualTo(min, { message }),
    Schema.lessThanOrEqualTo(max, { message }),
  )
}

/**
 * A whole number in a JSON body, from `min` to `max` (default: the largest `integer`). Described as a
 * plain integer range: the generated refinement of `Schema.Int` would put `minimum` beside a `$ref`
 * with no `type`, which strict JSON Schema validators refuse.
 */
export const wholeNumberValue = (min: number, max: number = MAX_INT) => {
  const message = () => `must be a whole number from ${min} to ${max}`
  return Schema.Number.pipe(
    Schema.int({ message }),
    Schema.greaterThanOrEqualTo(min, { message }),
    Schema.lessThanOrEqualTo(max, { message }),
  ).annotations({ jsonSchema: { type: "integer", minimum: min, maximum: max } })
}

export const {
  BadRequest,
  Unauthorized,
  Forbidden,
  TooManyRequests,
  NotFound,
  Conflict,
  PayloadTooLarge,
  UnsupportedMediaType,
  Unprocessable,
} = problemResponses

/** The optional Idempotency-Key header of uploads and `POST /extract/`. */
export const IdempotencyHeaders = Schema.Struct({
  "idempotency-key": Schema.optional(
    Schema.String.pipe(
      Schema.pattern(IDEMPOTENCY_KEY_PATTERN, {
        message: () => "must be 1-255 printable ASCII characters",
      }),
    ).annotations({
      description:
        "Optional. 1-255 printable ASCII characters chosen by the client, unique per request it means. For 24 hours, a repeated request with the same key (in this organisation, for this operation) gets the first successful answer again, with the header `Idempotent-Replayed: true`, and creates nothing; the same key with a different request (another project, another file, other fields) is refused with 422.",
    }),
  ),
})
