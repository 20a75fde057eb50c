/**
 * `/graphql` as a route of an Effect HTTP API's router whose gateway (graphql-yoga, the schema, the
 * services' runtime: a few hundred modules) is loaded by the route's first request, not when the server
 * starts: the all-in-one process answers its first REST request that much sooner. Only this module and
 * the types of Server.ts are loaded up front.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import { Effect, Scope } from "effect"
import type { GatewayOptions } from "./Server.ts"

export const lazyGraphqlRoute = (options: GatewayOptions) =>
  HttpApiBuilder.Router.use((router) =>
    Effect.gen(function* () {
      const scope = yield* Effect.scope
      // Once, for the first request (concurrent first requests wait for it); the runtime it makes is
      // released with the router.
      const handler = yield* Effect.cached(
        Effect.promise(() => import("./Server.ts")).pipe(
          Effect.flatMap((server) => server.graphqlHandler(options)),
          Scope.extend(scope),
        ),
      )
      yield* router.all("/graphql", Effect.flatten(handler))
    }),
  )
