/**
 * A page whose rows the database built as JSON (see services' `JsonPage`), sent as it is: the envelope's text
 * around the rows, never parsed and encoded again. Its shape is the endpoint's described success schema.
 */
import { type JsonPage, jsonPageText } from "@dxs/services"
import { HttpServerResponse } from "@effect/platform"

export const jsonPageResponse = (page: JsonPage) =>
  HttpServerResponse.text(jsonPageText(page), { contentType: "application/json" })
