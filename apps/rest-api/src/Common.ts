import { MAX_INT } from "@dxs/domain/contract/Fields"
import { IDEMPOTENCY_KEY_PATTERN, problemResponses } from "@dxs/services"
import * as Multipart from "@effect/platform/Multipart"
import { Schema } from "effect"

export { IsoDateInput, MAX_INT, Uuid, wholeNumberValue } from "@dxs/domain/contract/Fields"

/**
 * The text of a path or query parameter that holds a whole number, described as OpenAPI describes such a
 * parameter: an integer (its serialisation in the URL is the client's business), with its range. The
 * generated description of `NumberFromString` is the encoded side, a string, which makes generated
 * clients refuse `limit: 10`; as the first step of a composition this text schema decides the
 * description, and the number schema after it still decodes the text as before.
 */
const integerText = (range: { readonly minimum?: number; readonly maximum?: number }) =>
  Schema.String.annotations({ jsonSchema: { type: "integer", ...range } })

/**
 * A whole number in a path or query string, from `min` to `max` (default: the largest `integer`).
 * Described as an integer from `min` to `max`; a `description` given with `.annotations` is kept.
 */
export const wholeNumber = (min: number, max: number = MAX_INT) => {
  const message = () => `must be a whole number from ${min} to ${max}`
  return Schema.compose(
    integerText({ minimum: min, maximum: max }),
    Schema.NumberFromString.pipe(
      Schema.int({ message }),
      Schema.greaterThanOrEqualTo(min, { message }),
      Schema.lessThanOrEqualTo(max, { message }),
    ),
  )
}

/**
 * Beyond the contract: where a page starts, as a `next` or `previous` link of the same list carries it (an
 * opaque token; not with `offset`).
 */
export const cursorParam = Schema.String.pipe(
  Schema.pattern(/^[A-Za-z0-9_-]{1,4096}$/, {
    message: () => "must be a cursor from this list's next or previous link",
  }),
).annotations({
  description:
    "beyond the contract: where the page starts, from a `next` or `previous` link of this list (opaque; not with `offset`). A page read by cursor costs the same at any depth.",
})

/** Any whole number in a query string (a Unix time, say), described as an integer. */
export const integerFromString = Schema.compose(integerText({}), Schema.NumberFromString.pipe(Schema.int()))

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

/** A file part of a multipart upload, as OpenAPI 3.1 describes one: its bytes, whatever their type. */
const binaryFile = { type: "string", format: "binary" } as const

/*
 * The file fields of upload forms. These schemas only describe: uploads are read by `readUploadForm`
 * (UploadForm.ts), never decoded by the framework. The framework's own description of them is an array
 * of `PersistedFile` titled `itemsCount(1)`, which generated clients take for a list of strings; the
 * JSON Schema annotation replaces it (its description included, since it replaces the whole schema).
 */

/** A multipart field carrying exactly one file. */
export const uploadFile = (description: string) =>
  Multipart.SingleFileSchema.annotations({ description, jsonSchema: { ...binaryFile, description } })

/** A multipart field repeated for each of 1 to `max` files. */
export const uploadFiles = (description: string, max: number) =>
  Multipart.FilesSchema.annotations({
    description,
    jsonSchema: { type: "array", items: binaryFile, minItems: 1, maxItems: max, description },
  })
