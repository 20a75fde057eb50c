import { unavailableFor } from "@dxs/services"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Effect } from "effect"
import { REQUEST_ID_HEADER } from "./Problem.ts"

/**
 * Storage or the database out of reach while a request ran: 503 problem+json with Retry-After (added with
 * the request id when problems are finalised), logged as a warning, not as a failure of the server's own.
 * An API-level middleware: it sees a handler's defects before the framework turns them into a 500.
 */
export const OutageAnswersLive = HttpApiBuilder.middleware((app) =>
  Effect.catchAllCause(app, (cause) => {
    const outage = unavailableFor(cause)
    if (outage === undefined) return Effect.failCause(cause)
    return Effect.gen(function* () {
      const request = yield* HttpServerRequest.HttpServerRequest
      yield* Effect.logWarning(`request not carried out: ${outage.message}`).pipe(
        Effect.annotateLogs({
          request_id: request.headers[REQUEST_ID_HEADER] ?? "",
          method: request.method,
          url: request.url.split("?")[0] ?? "",
        }),
      )
      const { _tag, ...problem } = outage.problem
      return HttpServerResponse.text(JSON.stringify(problem), {
        status: 503,
        contentType: "application/problem+json",
      })
    })
  }),
)
