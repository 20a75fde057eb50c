import {
  CSRF_HEADER,
  CurrentOrganization,
  problemResponses,
  requestAuthenticator,
  SESSION_COOKIE,
  type TooManyRequests,
  Unauthorized,
} from "@dxs/services"
import * as HttpApiMiddleware from "@effect/platform/HttpApiMiddleware"
import * as HttpApiSecurity from "@effect/platform/HttpApiSecurity"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import { Effect, Layer, Option, Redacted, Schema } from "effect"
import { noteOrganization } from "./RequestLog.ts"

export const sessionSecurity = HttpApiSecurity.apiKey({ key: SESSION_COOKIE, in: "cookie" })

/**
 * Every endpoint but the public schema, docs and sign-in needs `X-API-Key` or a signed-in session (the
 * `dxs_session` cookie; writes also need the session's `X-CSRF-Token`); it yields the current organisation
 * (and, for a session, the member).
 */
export class Authentication extends HttpApiMiddleware.Tag<Authentication>()("Authentication", {
  failure: Schema.Union(
    problemResponses.Unauthorized,
    problemResponses.Forbidden,
    problemResponses.TooManyRequests,
  ),
  provides: CurrentOrganization,
  security: {
    ApiKeyAuth: HttpApiSecurity.apiKey({ key: "X-API-Key", in: "header" }),
    SessionAuth: sessionSecurity,
  },
}) {}

/** The client's address: the TCP peer of the connection (no proxy header is trusted). */
export const clientAddressOf = (request: HttpServerRequest.HttpServerRequest) =>
  Option.getOrUndefined(request.remoteAddress)

/**
 * A refused API key's answer, kept for the session handler that the middleware tries next, so a request
 * is judged (and its refusal counted) once.
 */
const keyRefusals = new WeakMap<HttpServerRequest.HttpServerRequest, Unauthorized | TooManyRequests>()

/**
 * A request without an API key, refused by the key's handler before the session's is tried: made once, as
 * every request of the web application (a session's) passes here and making the error validates its fields.
 */
const NO_KEY = Unauthorized.of("The X-API-Key header is required")

export const AuthenticationLive = Layer.effect(
  Authentication,
  Effect.gen(function* () {
    const authenticate = yield* requestAuthenticator
    return {
      ApiKeyAuth: (key: Redacted.Redacted<string>) =>
        Effect.gen(function* () {
          const request = yield* HttpServerRequest.HttpServerRequest
          const apiKey = Redacted.value(key)
          // No key: the session handler decides (and counts a request without credentials).
          if (apiKey === "") return yield* NO_KEY
          return yield* authenticate.key(apiKey, clientAddressOf(request)).pipe(
            Effect.tapError((refusal) => Effect.sync(() => keyRefusals.set(request, refusal))),
            Effect.tap((org) => Effect.sync(() => noteOrganization(request, org.id))),
          )
        }),
      // Tried when the API key is missing or refused: the session, else the API key's own answer (its
      // problem, or its rate limit); a throttled address is not let in by a session either.
      SessionAuth: (token: Redacted.Redacted<string>) =>
        Effect.gen(function* () {
          const request = yield* HttpServerRequest.HttpServerRequest
          const sessionToken = Redacted.value(token)
          const refusal = keyRefusals.get(request)
          if (refusal !== undefined && (sessionToken === "" || refusal._tag === "TooManyRequests"))
            return yield* refusal
          return yield* authenticate
            .request({
              apiKey: undefined,
              sessionToken,
              csrfToken: request.headers[CSRF_HEADER],
              method: request.method,
              clientAddress: clientAddressOf(request),
            })
            .pipe(Effect.tap((org) => Effect.sync(() => noteOrganization(request, org.id))))
        }),
    }
  }),
)
