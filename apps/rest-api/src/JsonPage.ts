/**
 * An answer whose JSON the database built (a page of results or of the grid, see services' `JsonPage`), sent
 * as it is, never parsed and encoded again. Its shape is the endpoint's described success schema.
 */
import { HttpServerResponse } from "@effect/platform"

export const jsonText = (text: string) => HttpServerResponse.text(text, { contentType: "application/json" })
