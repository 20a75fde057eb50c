/**
 * The HTTP metrics of the adapters, kept in the process's one registry (@dxs/db's Metrics, which `dxs`
 * serves on its metrics port) beside the tasks' and the parsers'.
 */
import { httpRequestSeconds, httpRequests } from "@dxs/db/Metrics"

export { routeOf } from "@dxs/db/Metrics"

/** Counts an answered request of `route` (see `routeOf`) and the time it took. */
export const recordHttpRequest = (request: {
  readonly method: string
  readonly route: string
  readonly status: number
  readonly seconds: number
}) => {
  httpRequests.inc({ method: request.method, route: request.route, status: String(request.status) })
  httpRequestSeconds.observe({ method: request.method, route: request.route }, request.seconds)
}
