import { Db } from "@dxs/db"
import {
  ApiKeys,
  authenticateKey,
  authenticateRequest,
  CSRF_HEADER,
  CurrentOrganization,
  Members,
  problemResponses,
  SESSION_COOKIE,
} from "@dxs/services"
import { HttpApiMiddleware, HttpApiSecurity, HttpServerRequest } from "@effect/platform"
import { Effect, Layer, Redacted, Schema } from "effect"

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

export const AuthenticationLive = Layer.effect(
  Authentication,
  Effect.gen(function* () {
    const keys = yield* ApiKeys
    const members = yield* Members
    const db = yield* Db
    const provide = <A, E>(effect: Effect.Effect<A, E, ApiKeys | Members | Db>) =>
      effect.pipe(
        Effect.provideService(ApiKeys, keys),
        Effect.provideService(Members, members),
        Effect.provideService(Db, db),
      )
    return {
      ApiKeyAuth: (key: Redacted.Redacted<string>) => provide(authenticateKey(Redacted.value(key))),
      // Tried when the API key is missing or refused: the session, else the API key's own answer (its
      // problem, or its rate limit).
      SessionAuth: (token: Redacted.Redacted<string>) =>
        Effect.gen(function* () {
          const request = yield* HttpServerRequest.HttpServerRequest
          const sessionToken = Redacted.value(token)
          return yield* provide(
            authenticateRequest({
              apiKey: sessionToken === "" ? request.headers["x-api-key"] : undefined,
              sessionToken,
              csrfToken: request.headers[CSRF_HEADER],
              method: request.method,
            }),
          )
        }),
    }
  }),
)
