import { problemResponses } from "@dxs/services"
import { Schema } from "effect"

export const Uuid = Schema.UUID.annotations({ description: "UUID" })
export const IsoDateInput = Schema.String.pipe(
  Schema.pattern(/^\d{4}-\d{2}-\d{2}$/, { message: () => "must be a date in the form YYYY-MM-DD" }),
  Schema.filter((s) => !Number.isNaN(Date.parse(`${s}T00:00:00Z`)) || "must be a real calendar date"),
)
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
