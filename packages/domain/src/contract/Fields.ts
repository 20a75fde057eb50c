/**
 * The building blocks of the API records and request bodies (api-v1.md), shared by every resource's contract.
 * Annotations decide the OpenAPI description, so a field keeps the exact schema it had in its adapter.
 */
import { Schema } from "effect"

/** An id in an answer record. */
export const RecordId = Schema.UUID
/** An id in a request (body, path or query), described as a UUID. */
export const Uuid = Schema.UUID.annotations({ description: "UUID" })
export const DateTime = Schema.String.annotations({ format: "date-time", description: "ISO 8601 date-time" })
/** A date-time as the newer records describe one (format only). */
export const Timestamp = Schema.String.annotations({ format: "date-time" })
export const IsoDate = Schema.String.pipe(Schema.pattern(/^\d{4}-\d{2}-\d{2}$/)).annotations({
  format: "date",
  description: "YYYY-MM-DD",
})

/** A date in a request: the form and a real calendar day. */
export const IsoDateInput = Schema.String.pipe(
  Schema.pattern(/^\d{4}-\d{2}-\d{2}$/, { message: () => "must be a date in the form YYYY-MM-DD" }),
  // Date.parse rolls 2024-02-30 over into March: the date must read back as written (and year 0 does not
  // exist in the calendar PostgreSQL stores).
  Schema.filter((s) => {
    const time = Date.parse(`${s}T00:00:00Z`)
    const real =
      !Number.isNaN(time) && new Date(time).toISOString().slice(0, 10) === s && !s.startsWith("0000")
    return real || "must be a real calendar date"
  }),
).annotations({
  jsonSchema: {
    type: "string",
    format: "date",
    pattern: "^\\d{4}-\\d{2}-\\d{2}$",
    description: "a real calendar date, YYYY-MM-DD",
  },
})

/** PostgreSQL's `integer`: page numbers, counts and offsets beyond it cannot name anything. */
export const MAX_INT = 2_147_483_647

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

/** Text with something other than white space in it: the names of agents and dimensions. */
export const isNotBlank = (s: string): boolean => s.trim() !== ""
export const NotBlank = Schema.String.pipe(Schema.filter((s) => isNotBlank(s) || "must not be empty"))

/**
 * How a name (of a project, folder, agent, dimension or webhook) is described: 1 to MAX_NAME_LENGTH
 * characters, not only spaces, no NUL (the rules the server checks for every name).
 */
export const nameJsonSchema = (description: string) => ({
  type: "string",
  minLength: 1,
  maxLength: 200,
  pattern: "^[^\\u0000]*[^\\s\\u0000][^\\u0000]*$",
  description,
})

/** A name in a request: described as `nameJsonSchema` says; the services check it. */
export const NameInput = (description: string) =>
  NotBlank.annotations({ jsonSchema: nameJsonSchema(description) })

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/
/** Whether a text reads as an e-mail address (a loose check: something@domain.tld, no spaces). */
export const isEmail = (s: string): boolean => EMAIL.test(s)
/** An e-mail address in a request. */
export const EmailInput = Schema.String.pipe(
  Schema.filter((s) => isEmail(s) || "must be an e-mail address"),
).annotations({ jsonSchema: { type: "string", format: "email", description: "an e-mail address" } })
/** An e-mail address in an answer. */
export const Email = Schema.String.annotations({ format: "email" })

/**
 * A JSON object of any shape (a JSON Schema, a mapping, a schema-shaped result), unchecked on decoding.
 * Described as an object: plain `Schema.Unknown` would give every such field the same JSON Schema `$id`
 * (`/schemas/unknown`), and a description with one `$id` on several different schemas cannot be compiled.
 */
export const JsonObject = (description?: string) =>
  Schema.Unknown.annotations({
    jsonSchema: { type: "object", ...(description === undefined ? {} : { description }) },
  })

/** As `JsonObject`, or null. */
export const JsonObjectOrNull = (description?: string) =>
  Schema.Unknown.annotations({
    jsonSchema: {
      anyOf: [{ type: "object" }, { type: "null" }],
      ...(description === undefined ? {} : { description }),
    },
  })
