/**
 * The REST API's routes as the guard sees them before the router does: which operations a path has (so a
 * method it does not have is answered 405 with `Allow`, and a static sub-path such as `documents/bulk/`
 * is never taken for an `{id}`), and whether the operation needs credentials (so they are checked before
 * anything of the request is read).
 */
import * as HttpApi from "@effect/platform/HttpApi"
import type * as HttpApiMiddleware from "@effect/platform/HttpApiMiddleware"
import { Api } from "./Api.ts"
import { Authentication } from "./Auth.ts"

export interface Route {
  readonly method: string
  /** Lower-cased static segments; `undefined` where the path has a parameter. */
  readonly segments: ReadonlyArray<string | undefined>
  /** Whether the operation needs an API key or a session. */
  readonly authenticated: boolean
}

/** The segments of a path without its leading and trailing slash: an empty one (`//`) stays, and matches nothing. */
const segmentsOf = (path: string) => path.replace(/^\//, "").replace(/\/$/, "").split("/")

const ROUTES: ReadonlyArray<Route> = (() => {
  const routes: Array<Route> = []
  HttpApi.reflect(Api, {
    onGroup: () => undefined,
    onEndpoint: ({ endpoint, middleware }) => {
      routes.push({
        method: endpoint.method.toUpperCase(),
        segments: segmentsOf(endpoint.path).map((s) => (s.startsWith(":") ? undefined : s.toLowerCase())),
        authenticated: middleware.has(Authentication as unknown as HttpApiMiddleware.TagClassAny),
      })
    },
  })
  return routes
})()

/** Static segments before parameters, position by position: `documents/bulk/` before `documents/{id}/`. */
const specificity = (route: Route) => route.segments.map((s) => (s === undefined ? "1" : "0")).join("")

/**
 * The operations of the most specific path pattern that `path` (without its query) matches, ignoring case
 * and a trailing slash as the router does; empty when no pattern matches.
 */
export const routesOf = (path: string): ReadonlyArray<Route> => {
  const segments = segmentsOf(path).map((s) => s.toLowerCase())
  const matching = ROUTES.filter(
    (r) =>
      r.segments.length === segments.length &&
      r.segments.every((s, i) => (s === undefined ? segments[i] !== "" : s === segments[i])),
  )
  if (matching.length === 0) return matching
  const best = matching.map(specificity).sort()[0]
  return matching.filter((r) => specificity(r) === best)
}

const METHOD_ORDER = ["GET", "POST", "PUT", "PATCH", "DELETE"]

/** The `Allow` header of a path's operations. */
export const allowOf = (routes: ReadonlyArray<Route>) =>
  [...new Set(routes.map((r) => r.method))]
    .sort((a, b) => METHOD_ORDER.indexOf(a) - METHOD_ORDER.indexOf(b))
    .join(", ")
