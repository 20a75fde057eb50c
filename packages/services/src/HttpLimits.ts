/**
 * Limits of the HTTP servers (REST API, GraphQL gateway, the all-in-one process), so that no client can
 * hold a request open forever or take every connection, and of what a request body may carry.
 */
import { randomUUID } from "node:crypto"
import type { Server } from "node:http"
import type { Socket } from "node:net"
import type { Duplex } from "node:stream"
import { DEFAULT_MAX_JSON_BYTES, DEFAULT_MAX_JSON_DEPTH } from "@dxs/domain/Limits"
import { Context } from "effect"
import { problemType } from "./Errors.ts"

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

/** What Node's HTTP parser refused, as the status and words of the answer. */
const parserRefusal = (code: string | undefined) => {
  switch (code) {
    case "HPE_HEADER_OVERFLOW":
      return {
        status: 431,
        reason: "Request Header Fields Too Large",
        slug: "request-header-fields-too-large",
        detail:
          "The request line and headers are larger than the limit of 16 KB (long values belong in the body)",
      }
    case "ERR_HTTP_REQUEST_TIMEOUT":
      return {
        status: 408,
        reason: "Request Timeout",
        slug: "request-timeout",
        detail: "The request was not received in time (HTTP_REQUEST_TIMEOUT_SECONDS)",
      }
    default:
      return {
        status: 400,
        reason: "Bad Request",
        slug: "bad-request",
        detail: "The request is not valid HTTP/1.1",
      }
  }
}

/**
 * What Node answers itself (a request it cannot parse, headers over its limit, a request not received in
 * time) as problem+json with a request id, like every other answer; then the rest of what the client is
 * still sending is read and dropped for a moment, so that it can read the answer before the connection
 * closes (closing with unread data would reset the connection and lose the answer).
 */
const answerClientError = (error: NodeJS.ErrnoException, socket: Duplex) => {
  const pending = (socket as { _httpMessage?: { headersSent?: boolean } })._httpMessage
  if (!socket.writable || pending?.headersSent) {
    socket.destroy()
    return
  }
  const refusal = parserRefusal(error.code)
  const requestId = randomUUID()
  const body = JSON.stringify({
    type: problemType(refusal.slug),
    title: refusal.reason,
    status: refusal.status,
    detail: refusal.detail,
    request_id: requestId,
  })
  socket.removeAllListeners("data")
  socket.on("data", () => undefined)
  socket.on("error", () => undefined)
  socket.end(
    `HTTP/1.1 ${refusal.status} ${refusal.reason}\r\ncontent-type: application/problem+json\r\n` +
      `content-length: ${Buffer.byteLength(body)}\r\nx-request-id: ${requestId}\r\nconnection: close\r\n\r\n${body}`,
  )
  socket.resume()
  setTimeout(() => socket.destroy(), 2000).unref()
}

/**
 * Applies the settings to a Node HTTP server: a request not received in time gets 408, one Node cannot
 * parse 400 and one whose headers are too large 431 (problem+json, see `answerClientError`); idle sockets
 * are closed, and connections beyond the per-client limit as they arrive.
 */
export const limitServer = <S extends Server>(server: S, settings: HttpServerSettings): S => {
  server.requestTimeout = settings.requestTimeoutSeconds * 1000
  server.headersTimeout = Math.min(settings.headersTimeoutSeconds, settings.requestTimeoutSeconds) * 1000
  server.setTimeout(settings.idleTimeoutSeconds * 1000, (socket: Socket) => socket.destroy())
  // An idle keep-alive connection is closed by the client first (clients close after a few seconds, or
  // as the `Keep-Alive: timeout` hint says): a server that closed it after Node's default of 5 s races a
  // client reusing it, which then reads ECONNRESET.
  server.keepAliveTimeout = settings.idleTimeoutSeconds * 1000
  server.on("clientError", answerClientError)
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

/**
 * A server that drains when it is closed (on shutdown): it stops accepting at once, closes each connection
 * as soon as it has no request in flight (idle keep-alive connections at once, the others after their
 * answer), and closes whatever is still open after `graceMs`, interrupting those requests. Node's own
 * `close` closes idle connections only once and then waits for every other connection to end, which a
 * keep-alive client or a live subscription could put off for as long as it likes.
 */
export const drainOnClose = <S extends Server>(server: S, graceMs: number): S => {
  const plain: Server = server
  const close = plain.close.bind(plain)
  plain.close = (callback?: (error?: Error) => void) => {
    const idle = setInterval(() => plain.closeIdleConnections(), 50)
    const cut = setTimeout(() => plain.closeAllConnections(), graceMs)
    idle.unref()
    cut.unref()
    close((error?: Error) => {
      clearInterval(idle)
      clearTimeout(cut)
      callback?.(error)
    })
    return plain
  }
  return server
}
