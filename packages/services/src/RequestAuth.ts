/**
 * Who a request acts for, as every adapter decides it: an API key (`X-API-Key`), or a member's session
 * (the web application's `dxs_session` cookie) whose writes must echo the session's CSRF token. Each
 * request counts against its key's or member's per-minute limit; refused credentials count against the
 * client address's limit, beyond which they are answered 429 instead of 401.
 */
import { Db } from "@dxs/db"
import { Context, Effect } from "effect"
import { ApiKeys } from "./ApiKeys.ts"
import type { CurrentOrganization } from "./CurrentOrganization.ts"
import { Forbidden, Unauthorized } from "./Errors.ts"
import { Members, sameSecret } from "./Members.ts"
import { consumeRequest, keySubject, memberSubject, refuseCredentials } from "./RateLimits.ts"

/** The session cookie of the web application (HttpOnly, SameSite=Lax). */
export const SESSION_COOKIE = "dxs_session"
/** Cookie-authenticated writes must send the session's CSRF token in this header. */
export const CSRF_HEADER = "x-csrf-token"

/** Methods that change nothing: a session needs no CSRF token for them. */
const SAFE_METHODS: ReadonlySet<string> = new Set(["GET", "HEAD", "OPTIONS"])

/**
 * The organisation of a live API key, counted against its limit. A refused key counts against
 * `clientAddress` (the TCP peer): beyond the limit, 429 instead of 401; a valid key is never refused for
 * its address.
 */
export const authenticateKey = (key: string | undefined, clientAddress: string | undefined) =>
  Effect.flatMap(ApiKeys, (keys) => keys.authenticate(key)).pipe(
    Effect.catchTag("Unauthorized", (refusal) => refuseCredentials(refusal, clientAddress)),
    Effect.tap(() => consumeRequest(keySubject(key ?? ""))),
  )

/**
 * The organisation and member of a request: its API key if it sends one, else its session, which must
 * come with its CSRF token unless the method changes nothing (GET, HEAD, OPTIONS). A request without valid
 * credentials counts against `clientAddress` like a refused key.
 */
export const authenticateRequest = (request: {
  readonly apiKey: string | undefined
  readonly sessionToken: string | undefined
  readonly csrfToken: string | undefined
  readonly method: string
  /** The client's address as the TCP peer (no proxy header is trusted); undefined when unknown. */
  readonly clientAddress: string | undefined
}) =>
  Effect.gen(function* () {
    if (request.apiKey !== undefined && request.apiKey !== "")
      return yield* authenticateKey(request.apiKey, request.clientAddress)
    const session = yield* Effect.gen(function* () {
      if (request.sessionToken === undefined || request.sessionToken === "")
        return yield* Unauthorized.of(
          "Send an API key in the X-API-Key header, or sign in (POST /api/v1/auth/sign-in/) and send the session cookie",
        )
      return yield* Effect.flatMap(Members, (m) => m.authenticate(request.sessionToken!))
    }).pipe(Effect.catchTag("Unauthorized", (refusal) => refuseCredentials(refusal, request.clientAddress)))
    if (
      !SAFE_METHODS.has(request.method.toUpperCase()) &&
      !sameSecret(request.csrfToken ?? "", session.csrf_token)
    )
      return yield* Forbidden.of(
        "With a session, a request other than GET needs the session's CSRF token in the X-CSRF-Token header (GET /api/v1/auth/session/ gives it)",
      )
    yield* consumeRequest(memberSubject(session.member.id))
    return {
      id: session.member.organization.id,
      name: session.member.organization.name,
      member: { id: session.member.id, email: session.member.email },
    }
  })

/**
 * Whose limits an authenticated request counts against (as `authenticateRequest` decided): its API key's
 * when it sent one, else its member's.
 */
export const requestSubject = (
  request: { readonly apiKey: string | undefined },
  organization: CurrentOrganization["Type"],
): string =>
  request.apiKey !== undefined && request.apiKey !== ""
    ? keySubject(request.apiKey)
    : memberSubject(organization.member?.id ?? "")

/**
 * `authenticateKey` and `authenticateRequest` over the services and database at hand when this is run (an
 * adapter's middleware, built once): its checks then need nothing from the request's context.
 */
export const requestAuthenticator = Effect.gen(function* () {
  const keys = yield* ApiKeys
  const members = yield* Members
  const db = yield* Db
  // One context provided at once: each service provided on its own changed the fiber's context three
  // times per request.
  const context = Context.make(ApiKeys, keys).pipe(Context.add(Members, members), Context.add(Db, db))
  const provide = <A, E>(effect: Effect.Effect<A, E, ApiKeys | Members | Db>) =>
    Effect.provide(effect, context)
  return {
    key: (key: string | undefined, clientAddress: string | undefined) =>
      provide(authenticateKey(key, clientAddress)),
    request: (request: Parameters<typeof authenticateRequest>[0]) => provide(authenticateRequest(request)),
  }
})
