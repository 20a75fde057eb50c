/**
 * An answer whose JSON the database built (a page of results or of the grid, see services' `JsonPage`), sent
 * as it is, never parsed and encoded again. Its shape is the endpoint's described success schema. The text
 * goes to Node's socket as a string (a raw body with its byte length): Node encodes it while writing, where
 * a text body would first be copied into a new byte array on every answer.
 */
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"

export const jsonText = (text: string) =>
  HttpServerResponse.raw(text, { contentType: "application/json", contentLength: Buffer.byteLength(text) })
