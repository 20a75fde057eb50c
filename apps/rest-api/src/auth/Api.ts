import { Session, SignInRequest } from "@dxs/domain/contract/Member"
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import { Authentication } from "../Auth.ts"
import { flexibleBody } from "../Body.ts"
import { BadRequest, Forbidden, TooManyRequests, Unauthorized } from "../Common.ts"

export class AuthApi extends HttpApiGroup.make("auth")
  .add(
    HttpApiEndpoint.post("signIn", "/auth/sign-in/")
      .setPayload(flexibleBody(SignInRequest))
      .addSuccess(Session)
      .addError(BadRequest)
      .addError(Unauthorized)
      .addError(TooManyRequests)
      .annotate(
        OpenApi.Summary,
        "Sign a member in: sets the HttpOnly dxs_session cookie and answers the session's CSRF token",
      )
      .annotate(
        OpenApi.Description,
        "Attempts are limited per e-mail address and per client address (SIGN_IN_ATTEMPTS_PER_MINUTE, 10 by default): beyond it, 429 with Retry-After whatever the password.",
      ),
  )
  .add(
    HttpApiEndpoint.post("signOut", "/auth/sign-out/")
      .addSuccess(HttpApiSchema.NoContent)
      .addError(BadRequest)
      .addError(Unauthorized)
      .addError(Forbidden)
      .annotate(
        OpenApi.Summary,
        "End the session of the dxs_session cookie (with its X-CSRF-Token) and clear the cookie",
      ),
  )
  .add(
    HttpApiEndpoint.get("session", "/auth/session/")
      .addSuccess(Session)
      .addError(BadRequest)
      .middleware(Authentication)
      .annotate(OpenApi.Summary, "The signed-in member, the session's CSRF token and its expiry"),
  )
  .annotate(OpenApi.Title, "Sign-in")
  .annotate(
    OpenApi.Description,
    "Sessions of the web application's members. API clients use X-API-Key instead; with a session cookie, writes need the X-CSRF-Token header.",
  ) {}
