/**
 * What the gateway logs about errors. graphql-yoga logs every error it masks or recodes at error level
 * with its stack, which would let any client flood the log: the errors a client causes (the codes below,
 * GraphQL's own refusals of a request, a client going away before its answer) go to debug level in one
 * line instead; anything else stays an error with its stack.
 */
import { GraphQLError } from "graphql"
import { createLogger, type LogLevel, type YogaLogger } from "graphql-yoga"

/** The `extensions.code`s of errors that are the client's doing, not the service's. */
export const CLIENT_ERROR_CODES: ReadonlySet<string> = new Set([
  "UNAUTHENTICATED",
  "FORBIDDEN",
  "NOT_FOUND",
  "BAD_USER_INPUT",
  "CONFLICT",
  "RATE_LIMITED",
  "DEPTH_LIMIT_EXCEEDED",
  "COMPLEXITY_LIMIT_EXCEEDED",
])

/**
 * The code under which an error is the client's doing: its code (or that of the first error it wraps
 * with one) if it is a client error code; `BAD_REQUEST` for an error GraphQL raised about the request
 * itself without a code (a variable of the wrong type: HTTP status 4xx); otherwise none.
 */
export const clientErrorCode = (error: unknown): string | undefined => {
  let request = false
  for (let e: unknown = error; e instanceof GraphQLError; e = e.originalError) {
    const code = e.extensions?.code
    if (typeof code === "string") return CLIENT_ERROR_CODES.has(code) ? code : undefined
    const status = (e.extensions?.http as { status?: unknown } | undefined)?.status
    if (typeof status === "number" && status >= 400 && status < 500) request = true
  }
  return request ? "BAD_REQUEST" : undefined
}

/** A client that went away before its answer (an AbortError, possibly inside a GraphQL error). */
const isAbort = (error: unknown): boolean => {
  for (
    let e: unknown = error;
    e instanceof Error;
    e = e instanceof GraphQLError ? e.originalError : undefined
  )
    if (e.name === "AbortError") return true
  return false
}

/** Where the gateway logs: a yoga logger, a level of yoga's console logger, or on/off. */
export type GatewayLogging = YogaLogger | LogLevel | boolean

/** `logging` as a logger that writes client errors at debug level (see above). */
export const gatewayLogger = (logging: GatewayLogging = true): YogaLogger => {
  const logger =
    typeof logging === "object"
      ? logging
      : createLogger(logging === true ? "info" : logging === false ? "silent" : logging)
  return {
    debug: (...args) => logger.debug(...args),
    info: (...args) => logger.info(...args),
    warn: (...args) => logger.warn(...args),
    error: (...args) => {
      const [error] = args
      const code = args.length === 1 ? clientErrorCode(error) : undefined
      if (args.length === 1 && isAbort(error)) logger.debug("Request aborted: the client went away")
      else if (code !== undefined) {
        const { message, path } = error as GraphQLError
        logger.debug(`${code}${path === undefined ? "" : ` at ${path.join(".")}`}: ${message}`)
      } else logger.error(...args)
    },
  }
}
