import { Db } from "@dxs/db"
import { ApiKeys, CurrentOrganization, problemResponses } from "@dxs/services"
import { HttpApiMiddleware, HttpApiSecurity } from "@effect/platform"
import { Effect, Layer, Redacted } from "effect"

/** Every endpoint but the public schema and docs needs `X-API-Key`; it yields the current organisation. */
export class Authentication extends HttpApiMiddleware.Tag<Authentication>()("Authentication", {
  failure: problemResponses.Unauthorized,
  provides: CurrentOrganization,
  security: { ApiKeyAuth: HttpApiSecurity.apiKey({ key: "X-API-Key", in: "header" }) },
}) {}

export const AuthenticationLive = Layer.effect(
  Authentication,
  Effect.gen(function* () {
    const keys = yield* ApiKeys
    const db = yield* Db
    return {
      ApiKeyAuth: (key: Redacted.Redacted<string>) =>
        keys.authenticate(Redacted.value(key)).pipe(Effect.provideService(Db, db)),
    }
  }),
)
