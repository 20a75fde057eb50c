import { CSRF_HEADER, Members, PublicUrl, SESSION_COOKIE, SessionSettings, Unauthorized } from "@dxs/services"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpApp from "@effect/platform/HttpApp"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Effect } from "effect"
import { Api } from "../Api.ts"
import { clientAddressOf } from "../Auth.ts"

const cookieOf = (request: HttpServerRequest.HttpServerRequest) => request.cookies[SESSION_COOKIE] ?? ""

/** The cookie's attributes: HttpOnly, SameSite=Lax, for the whole site; Secure behind https. */
const cookieOptions = (publicUrl: string, maxAgeSeconds: number) => ({
  httpOnly: true,
  sameSite: "lax" as const,
  path: "/",
  secure: publicUrl.startsWith("https:"),
  maxAge: `${maxAgeSeconds} seconds` as const,
})

const setCookie = (value: string, publicUrl: string, maxAgeSeconds: number) =>
  HttpApp.appendPreResponseHandler((_request, response) =>
    Effect.orDie(
      HttpServerResponse.setCookie(response, SESSION_COOKIE, value, cookieOptions(publicUrl, maxAgeSeconds)),
    ),
  )

export const AuthHttp = HttpApiBuilder.group(Api, "auth", (handlers) =>
  Effect.gen(function* () {
    const members = yield* Members
    return handlers
      .handle("signIn", ({ payload, request }) =>
        Effect.gen(function* () {
          const grant = yield* members.signIn(payload.email, payload.password, clientAddressOf(request))
          const { ttlSeconds } = yield* SessionSettings
          yield* setCookie(grant.token, yield* PublicUrl, ttlSeconds)
          return { member: grant.member, csrf_token: grant.csrf_token, expires_at: grant.expires_at }
        }),
      )
      .handle("signOut", ({ request }) =>
        Effect.gen(function* () {
          const token = cookieOf(request)
          if (token !== "") yield* members.signOut(token, request.headers[CSRF_HEADER])
          yield* setCookie("", yield* PublicUrl, 0)
        }),
      )
      .handle("session", () =>
        Effect.gen(function* () {
          const token = cookieOf(yield* HttpServerRequest.HttpServerRequest)
          if (token === "")
            return yield* Unauthorized.of("This request is signed with an API key, not a session")
          return yield* members.authenticate(token)
        }),
      )
  }),
)
