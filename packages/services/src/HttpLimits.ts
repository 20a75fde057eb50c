/**
 * Limits of the HTTP servers (REST API, GraphQL gateway, the all-in-one process), so that no client can
 * hold a request open forever or take every connection, and of what a request body may carry.
 */
import type { Server } from "node:http"
import type { Socket } from "node:net"
import { DEFAULT_MAX_JSON_BYTES, DEFAULT_MAX_JSON_DEPTH } from "@dxs/domain/Limits"
import { Context } from "effect"

export interface HttpServerSettings {
  /** Time to receive a request's headers. */
  readonly headersTimeoutSeconds: number
  /** Time to receive a whole request, body included (uploads too); then 408 and the connection closes. */
  readonly requestTimeoutSeconds: number
  /** A connection with no traffic either way for this long is closed (subscriptions ping every 12 s). */
  readonly idleTimeoutSeconds: number
  /** Open connections per client address; more are closed at once. */
  readonly maxConnectionsPerClient: number
}

export const defaultHttpServerSettings: HttpServerSettings = {
  headersTimeoutSeconds: 30,
  requestTimeoutSeconds: 300,
  idleTimeoutSeconds: 60,
  maxConnectionsPerClient: 128,
}

/** Options for `http.createServer`: how often Node checks the request timeouts. */
export const serverOptions = (settings: HttpServerSettings) => ({
  connectionsCheckingInterval: Math.max(
    100,
    Math.min(1000, (Math.min(settings.headersTimeoutSeconds, settings.requestTimeoutSeconds) * 1000) / 2),
  ),
})

/**
 * Applies the settings to a Node HTTP server: Node answers 408 to a request not received in time and
 * closes idle sockets; connections beyond the per-client limit are closed as they arrive.
 */
export const limitServer = <S extends Server>(server: S, settings: HttpServerSettings): S => {
  server.requestTimeout = settings.requestTimeoutSeconds * 1000
  server.headersTimeout = Math.min(settings.headersTimeoutSeconds, settings.requestTimeoutSeconds) * 1000
  server.setTimeout(settings.idleTimeoutSeconds * 1000, (socket: Socket) => socket.destroy())
  const open = new Map<string, number>()
  server.on("connection", (socket: Socket) => {
    const client = socket.remoteAddress ?? "unknown"
    const count = (open.get(client) ?? 0) + 1
    if (count > settings.maxConnectionsPerClient) {
      socket.destroy()
      return
    }
    open.set(client, count)
    socket.once("close", () => {
      const left = (open.get(client) ?? 1) - 1
      if (left <= 0) open.delete(client)
      else open.set(client, left)
    })
  })
  return server
}

/** What a JSON or form body may carry (`MAX_JSON_BYTES`, `MAX_JSON_DEPTH`). */
export class RequestLimits extends Context.Reference<RequestLimits>()("@dxs/services/RequestLimits", {
  defaultValue: (): { readonly maxJsonBytes: number; readonly maxJsonDepth: number } => ({
    maxJsonBytes: DEFAULT_MAX_JSON_BYTES,
    maxJsonDepth: DEFAULT_MAX_JSON_DEPTH,
  }),
}) {}
