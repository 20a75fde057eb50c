import { timingSafeEqual } from "node:crypto"
import { Db } from "@dxs/db"
import {
  ApiKeys,
  CurrentOrganization,
  consumeRequest,
  Forbidden,
  keySubject,
  Members,
  memberSubject,
  problemResponses,
  Unauthorized,
} from "@dxs/services"
import { HttpApiMiddleware, HttpApiSecurity, HttpServerRequest } from "@effect/platform"
import { Effect, Layer, Redacted, Schema } from "effect"

/** The session cookie of the web application (HttpOnly, SameSite=Lax). */
export const SESSION_COOKIE = "dxs_session"
/** Cookie-authenticated writes must send the session's CSRF token in this header. */
export const CSRF_HEADER = "x-csrf-token"

export const sessionSecurity = HttpApiSecurity.apiKey({ key: SESSION_COOKIE, in: "cookie" })

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"])

const sameToken = (given: string, expected: string) => {
  const a = Buffer.from(given)
  const b = Buffer.from(expected)
  return a.length === b.length && timingSafeEqual(a, b)
}

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
    const byKey = (key: string | undefined) =>
      keys.authenticate(key).pipe(
        Effect.tap(() => consumeRequest(keySubject(key ?? ""))),
        Effect.provideService(Db, db),
      )
    return {
      ApiKeyAuth: (key: Redacted.Redacted<string>) => byKey(Redacted.value(key)),
      // Tried when the API key is missing or refused.
      SessionAuth: (token: Redacted.Redacted<string>) =>
        Effect.gen(function* () {
          const request = yield* HttpServerRequest.HttpServerRequest
          const value = Redacted.value(token)
          // No session either: the API key's own answer (its problem, or its rate limit) is the answer.
          if (value === "") {
            const key = request.headers["x-api-key"]
            if (key === undefined || key === "")
              return yield* Unauthorized.of(
                "Send an API key in the X-API-Key header, or sign in (POST /api/v1/auth/sign-in/) and send the session cookie",
              )
            return yield* byKey(key)
          }
          const session = yield* members.authenticate(value)
          if (
            !SAFE_METHODS.has(request.method) &&
            !sameToken(request.headers[CSRF_HEADER] ?? "", session.csrf_token)
          )
            return yield* Forbidden.of(
              "A write with a session needs the session's CSRF token in the X-CSRF-Token header (GET /api/v1/auth/session/ gives it)",
            )
          yield* consumeRequest(memberSubject(session.member.id))
          return {
            id: session.member.organization.id,
            name: session.member.organization.name,
            member: { id: session.member.id, email: session.member.email },
          }
        }).pipe(Effect.provideService(Db, db)),
    }
  }),
)
