/**
 * An answer whose JSON the database built (a page of results or of the grid, see services' `JsonPage`), sent
 * as it is, never parsed and encoded again. Its shape is the endpoint's described success schema. The
 * bytes are made in one buffer outside the JavaScript heap (services' `jsonPageBytes`, `gridPageBytes`),
 * which Node's socket writes as they are: a page's text is not copied again by joining, flattening or
 * encoding it on the way out.
 */
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"

export const jsonBytes = (bytes: Uint8Array) =>
  HttpServerResponse.uint8Array(bytes, { contentType: "application/json" })

/**
 * An answer whose value is already its JSON form (every field a string, number, boolean or null, in the
 * schema's order): sent as JSON text instead of through the schema's encoding, which for the project
 * screen's agents list and agents' status cost most of the time their JSON took.
 */
export const jsonText = (value: unknown) => jsonBytes(Buffer.from(JSON.stringify(value)))
