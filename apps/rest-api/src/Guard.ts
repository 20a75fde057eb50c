/**
 * What every REST request passes before any route sees it: a request id, and the limits of DESIGN §4
 * on its URL and body (size, nesting depth, string content and lengths), checked with the domain's
 * rules before any work is done. A refusal is a 4xx problem; a defect is logged with the request id.
 */
import { randomUUID } from "node:crypto"
import type { IncomingMessage } from "node:http"
import {
  type InputIssue,
  inputIssue,
  jsonTextDepth,
  MAX_TEXT_LENGTH,
  stringContentProblem,
} from "@dxs/domain/Limits"
import {
  BadRequest,
  CSRF_HEADER,
  PayloadTooLarge,
  problemType,
  RequestLimits,
  recordHttpRequest,
  type requestAuthenticator,
  routeOf,
  SESSION_COOKIE,
} from "@dxs/services"
import type * as HttpApp from "@effect/platform/HttpApp"
import * as HttpIncomingMessage from "@effect/platform/HttpIncomingMessage"
import * as HttpServerError from "@effect/platform/HttpServerError"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as NodeHttpServerRequest from "@effect/platform-node/NodeHttpServerRequest"
import { Cause, Effect, Exit, Option } from "effect"
import { FORM_MARKER } from "./Body.ts"
import { problemAnswer, REQUEST_ID_HEADER } from "./Problem.ts"
import { organizationOf } from "./RequestLog.ts"
import { allowOf, type Route, routesOf } from "./Routes.ts"

/** A client's own request id is kept when it is short and plain; otherwise the server makes one. */
const SANE_REQUEST_ID = /^[A-Za-z0-9._:@/+=-]{1,128}$/

const incomingOf = (request: HttpServerRequest.HttpServerRequest): IncomingMessage | undefined => {
  const source = NodeHttpServerRequest.toIncomingMessage(request) as unknown
  return source !== null && typeof source === "object" && "headers" in source && "socket" in source
    ? (source as IncomingMessage)
    : undefined
}

/** The request's id: the client's `X-Request-Id` if sane, else a new UUID, recorded on the request. */
const assignRequestId = (request: HttpServerRequest.HttpServerRequest): string => {
  const given = request.headers[REQUEST_ID_HEADER]
  const id = given !== undefined && SANE_REQUEST_ID.test(given) ? given : randomUUID()
  const incoming = incomingOf(request)
  if (incoming) incoming.headers[REQUEST_ID_HEADER] = id
  return id
}

/** Endpoints whose multipart bodies carry files: they read their bodies under the upload limits. */
const UPLOAD_PATHS: ReadonlyArray<{ readonly method: string; readonly path: RegExp }> = [
  { method: "POST", path: /^\/api\/v1\/projects\/[^/]+\/documents\/?$/i },
  { method: "PUT", path: /^\/api\/v1\/projects\/[^/]+\/documents\/[^/]+\/file\/?$/i },
  { method: "POST", path: /^\/api\/v1\/extract\/?$/i },
  { method: "POST", path: /^\/api\/v1\/projects\/[^/]+\/file-edit\/?$/i },
]
const isUpload = (method: string, path: string) =>
  UPLOAD_PATHS.some((u) => u.method === method && u.path.test(path))

const badRequest = (detail: string, errors?: ReadonlyArray<InputIssue>) => BadRequest.of(detail, errors)

const issueProblem = (where: string, issue: InputIssue) =>
  badRequest(`Invalid ${where}: ${issue.path === "" ? "" : `${issue.path}: `}${issue.message}`, [issue])

/** Decodes a percent-encoded URL component strictly (a broken escape or bad UTF-8 is an error). */
const decodeStrict = (s: string): string | undefined => {
  try {
    return decodeURIComponent(s)
  } catch {
    return undefined
  }
}

/** The `application/x-www-form-urlencoded` pairs of a query string or form body, decoded strictly. */
const formPairs = (text: string, where: string) =>
  Effect.gen(function* () {
    const pairs: Array<[string, string]> = []
    for (const part of text.split("&")) {
      if (part === "") continue
      const at = part.indexOf("=")
      const rawKey = at < 0 ? part : part.slice(0, at)
      const rawValue = at < 0 ? "" : part.slice(at + 1)
      const key = decodeStrict(rawKey.replace(/\+/g, " "))
      if (key === undefined)
        return yield* badRequest(`Invalid ${where}: a field name has a malformed percent-escape`)
      const value = decodeStrict(rawValue.replace(/\+/g, " "))
      if (value === undefined)
        return yield* badRequest(`Invalid ${where}: ${key}: malformed percent-escape`, [
          { path: key, message: "has a malformed percent-escape (or is not UTF-8)" },
        ])
      pairs.push([key, value])
    }
    return pairs
  })

const checkPairs = (pairs: ReadonlyArray<[string, string]>, where: string) =>
  Effect.gen(function* () {
    for (const [key, value] of pairs) {
      const issue = inputIssue({ [key]: value })
      if (issue !== undefined) return yield* issueProblem(where, issue)
    }
  })

/** The path's segments and the query's parameters: strictly decodable, no NUL, not over-long. */
const checkUrl = (url: string) =>
  Effect.gen(function* () {
    const q = url.indexOf("?")
    const path = q < 0 ? url : url.slice(0, q)
    // The router skips empty segments: `/projects//` would list projects instead of naming one.
    if (path.toLowerCase().startsWith("/api/") && path.slice(1, -1).split("/").includes(""))
      return yield* badRequest("Invalid path: an empty segment (`//`) where an identifier belongs")
    for (const segment of path.split("/")) {
      const decoded = decodeStrict(segment)
      if (decoded === undefined) return yield* badRequest("Invalid path: a malformed percent-escape")
      const problem = stringContentProblem(decoded)
      if (problem !== undefined) return yield* badRequest(`Invalid path: a segment ${problem}`)
      if (decoded.length > MAX_TEXT_LENGTH) return yield* badRequest("Invalid path: a segment is too long")
    }
    if (q >= 0) yield* checkPairs(yield* formPairs(url.slice(q + 1), "query parameter"), "query parameter")
    return path
  })

/** A checked form body with the member that has it decoded as a form (see `FORM_MARKER`). */
const markedForm = (text: string) => `${text}${text === "" ? "" : "&"}${encodeURIComponent(FORM_MARKER)}=1`

const mediaType = (contentType: string) => contentType.split(";")[0]!.trim().toLowerCase()

/** The `boundary` parameter of a multipart content type (RFC 2046: 1–70 characters), if valid. */
const boundaryOf = (contentType: string) => {
  const match = /;\s*boundary=(?:"([^"]{1,70})"|([^\s;"]{1,70}))\s*(?:;|$)/i.exec(contentType)
  return match ? (match[1] ?? match[2]) : undefined
}

/**
 * The body's bytes, read under the size limit; the route decodes the same text later: the request's own
 * cache of its body is seeded with it, since the stream is consumed (every body-carrying test of the API
 * depends on this).
 */
const bodyBytes = (request: HttpServerRequest.HttpServerRequest, maxBytes: number) =>
  Effect.gen(function* () {
    const tooLarge = PayloadTooLarge.of(
      `The request body is larger than the limit of ${maxBytes} bytes (MAX_JSON_BYTES)`,
    )
    const declared = Number(request.headers["content-length"] ?? Number.NaN)
    if (Number.isFinite(declared) && declared > maxBytes) {
      yield* discardRest(request, maxBytes)
      return yield* tooLarge
    }
    const incoming = incomingOf(request)
    if (incoming === undefined) return yield* badRequest("The request body could not be read")
    const read = yield* readBody(incoming, maxBytes)
    if (read === "too large") return yield* tooLarge
    if (read === "unreadable") return yield* badRequest("The request body could not be read to its end")
    return read.bytes
  })

const seedText = (request: HttpServerRequest.HttpServerRequest, text: string) => {
  ;(request as unknown as { textEffect?: Effect.Effect<string> }).textEffect = Effect.succeed(text)
}

const bodyText = (request: HttpServerRequest.HttpServerRequest, maxBytes: number) =>
  Effect.map(bodyBytes(request, maxBytes), (bytes) => {
    // Invalid UTF-8 sequences become U+FFFD (WHATWG decoding): stored safely, never refused.
    const text = bytes.toString("utf8")
    seedText(request, text)
    return text
  })

/**
 * A multipart body of an endpoint that takes no files is read whole (it is small) by the platform's own
 * parser (the WHATWG `FormData` of Node's fetch), refused when malformed or truncated, and handed to the
 * route as the equivalent url-encoded form: both forms decode through the same schema.
 */
const multipartAsForm = (
  request: HttpServerRequest.HttpServerRequest,
  contentType: string,
  limits: RequestLimits["Type"],
) =>
  Effect.gen(function* () {
    const bytes = yield* bodyBytes(request, limits.maxJsonBytes)
    const form = yield* Effect.tryPromise({
      try: () => new Response(new Uint8Array(bytes), { headers: { "content-type": contentType } }).formData(),
      catch: () =>
        badRequest(
          "The multipart/form-data body is malformed or truncated (each part needs its headers, and the body its closing boundary)",
        ),
    })
    const pairs: Array<[string, string]> = []
    for (const [key, value] of form.entries()) {
      if (typeof value !== "string")
        return yield* badRequest(`This endpoint takes no files (part "${key}" is a file)`, [
          { path: key, message: "must be a plain field, not a file" },
        ])
      pairs.push([key, value])
    }
    yield* checkPairs(pairs, "form field")
    const incoming = incomingOf(request)
    if (incoming) incoming.headers["content-type"] = "application/x-www-form-urlencoded"
    seedText(request, markedForm(new URLSearchParams(pairs).toString()))
  })

/**
 * Reads a JSON or form body under the size limit (the text is kept for the route's own decoding) and
 * refuses it when it is too large, malformed, too deep, or carries a bad string.
 */
const checkBody = (
  request: HttpServerRequest.HttpServerRequest,
  type: string,
  limits: RequestLimits["Type"],
) =>
  Effect.gen(function* () {
    const text = yield* bodyText(request, limits.maxJsonBytes)
    if (type === "application/x-www-form-urlencoded") {
      yield* checkPairs(yield* formPairs(text, "form field"), "form field")
      seedText(request, markedForm(text))
      return
    }
    if (text.trim() === "") return
    const depth = jsonTextDepth(text, limits.maxJsonDepth)
    if (depth > limits.maxJsonDepth)
      return yield* badRequest(
        `Invalid body: it nests deeper than the limit of ${limits.maxJsonDepth} levels (MAX_JSON_DEPTH)`,
      )
    let parsed: unknown
    try {
      parsed = JSON.parse(text)
    } catch (e) {
      return yield* badRequest(
        `The request body is not valid JSON: ${e instanceof Error ? e.message : String(e)}`,
      )
    }
    const issue = inputIssue(parsed, {
      maxDepth: limits.maxJsonDepth,
      maxStringLength: MAX_TEXT_LENGTH,
      maxArrayLength: 10_000,
    })
    if (issue !== undefined) return yield* issueProblem("body", issue)
  })

/**
 * Reads a body of at most `maxBytes`. Beyond the limit it answers
 * at once and discards the rest (see `discardRest`) so that the client can read the refusal.
 */
const readBody = (incoming: IncomingMessage, maxBytes: number) =>
  Effect.async<{ readonly bytes: Buffer } | "too large" | "unreadable">((resume) => {
    const chunks: Array<Buffer> = []
    let size = 0
    let done = false
    const finish = (outcome: { readonly bytes: Buffer } | "too large" | "unreadable") => {
      if (done) return
      done = true
      cleanup()
      resume(Effect.succeed(outcome))
    }
    const onData = (chunk: Buffer) => {
      size += chunk.length
      if (size <= maxBytes) chunks.push(chunk)
      else {
        finish("too large")
        discardIncoming(incoming, maxBytes)
      }
    }
    const onEnd = () => finish({ bytes: Buffer.concat(chunks) })
    const onError = () => finish("unreadable")
    const cleanup = () => {
      incoming.off("data", onData)
      incoming.off("end", onEnd)
      incoming.off("error", onError)
      incoming.off("aborted", onError)
    }
    incoming.on("data", onData)
    incoming.on("end", onEnd)
    incoming.on("error", onError)
    incoming.on("aborted", onError)
    return Effect.sync(cleanup)
  })

const discardIncoming = (incoming: IncomingMessage, maxBytes: number) => {
  if (incoming.readableEnded || incoming.destroyed) return
  const cap = Math.max(maxBytes, 64 * 1024 * 1024)
  let discarded = 0
  incoming.on("data", (chunk: Buffer) => {
    discarded += chunk.length
    if (discarded > cap) incoming.destroy()
  })
  incoming.resume()
}

/**
 * After refusing a body half way, read and discard the rest, so the client gets to read the answer and its
 * connection stays usable; a client that keeps sending far beyond the limit is cut off.
 */
export const discardRest = (request: HttpServerRequest.HttpServerRequest, maxBytes: number) =>
  Effect.sync(() => {
    const incoming = incomingOf(request)
    if (incoming) discardIncoming(incoming, maxBytes)
  })

/** A request for a route that does not exist: the client's mistake (answered 404), not the server's failure. */
const isUnknownRoute = (cause: Cause.Cause<unknown>) =>
  Option.exists(
    Cause.failureOption(cause),
    (e) => e !== null && typeof e === "object" && (e as { _tag?: unknown })._tag === "RouteNotFound",
  )

/** Paths of the REST API's operations (the docs page is served beside them). */
const isApiPath = (path: string) => /^\/api\/v1\//i.test(path) && !/^\/api\/v1\/docs\b/i.test(path)

const hasBody = (method: string) => method !== "GET" && method !== "HEAD" && method !== "OPTIONS"

/** The value of one cookie of the request, if sent. */
const cookie = (request: HttpServerRequest.HttpServerRequest, name: string) => request.cookies[name]

/**
 * Whether the request's credentials let it in, judged as the operation's own authentication would (and
 * counted once, since the operation does not run): a refusal of what the request carries would otherwise
 * tell a client without credentials about the API before it has shown a key.
 */
const credentialsRefusal = (request: HttpServerRequest.HttpServerRequest, authenticator: Authenticator) =>
  authenticator
    .request({
      apiKey: request.headers["x-api-key"],
      sessionToken: cookie(request, SESSION_COOKIE),
      csrfToken: request.headers[CSRF_HEADER],
      method: request.method,
      clientAddress: Option.getOrUndefined(request.remoteAddress),
    })
    .pipe(
      Effect.as(undefined),
      Effect.catchAll((refusal) => Effect.succeed(refusal)),
    )

/** A method the path does not have: 405 with the methods it has. */
const methodNotAllowed = (method: string, routes: ReadonlyArray<Route>) => ({
  type: problemType("method-not-allowed"),
  title: "Method not allowed",
  status: 405,
  detail: `${method} is not an operation of this path; it has ${allowOf(routes)}`,
})

/** The status the client got for a request whose handling failed (a defect, an unknown route, …). */
const failureStatus = (cause: Cause.Cause<unknown>) =>
  Cause.isInterruptedOnly(cause)
    ? Effect.succeed(CLIENT_GONE)
    : Effect.map(HttpServerError.causeResponse(cause), ([response]) => response.status)

/** How the operations judge credentials (`requestAuthenticator` of @dxs/services). */
export type Authenticator = Effect.Effect.Success<typeof requestAuthenticator>

/**
 * The checks, then the app; non-upload bodies are read under MAX_JSON_BYTES by the framework too. With an
 * `authenticator`, a request refused for its content is first judged by its credentials.
 */
export const guard = <E, R>(app: HttpApp.Default<E, R>, authenticator?: Authenticator) =>
  Effect.gen(function* () {
    const started = Date.now()
    const request = yield* HttpServerRequest.HttpServerRequest
    const requestId = assignRequestId(request)
    const limits = yield* RequestLimits
    const requestPath = request.url.split("?")[0] ?? ""
    const routes = isApiPath(requestPath) ? routesOf(requestPath) : []
    const route = routes.find((r) => r.method === request.method)
    if (routes.length > 0 && route === undefined && request.method !== "HEAD") {
      yield* logRequest(request, requestId, 405, started)
      return HttpServerResponse.setHeader(
        problemAnswer(methodNotAllowed(request.method, routes), requestId),
        "allow",
        allowOf(routes),
      )
    }
    const checked = yield* Effect.gen(function* () {
      const path = yield* checkUrl(request.url)
      if (!path.toLowerCase().startsWith("/api/") || !hasBody(request.method)) return
      const contentType = request.headers["content-type"] ?? ""
      const type = mediaType(contentType)
      if (type === "multipart/form-data" && boundaryOf(contentType) === undefined)
        return yield* badRequest(
          "A multipart/form-data body needs a boundary parameter in its Content-Type (1 to 70 characters)",
        )
      if (isUpload(request.method, path)) return
      if (type === "multipart/form-data") return yield* multipartAsForm(request, contentType, limits)
      if (
        type === "application/json" ||
        type.endsWith("+json") ||
        type === "application/x-www-form-urlencoded"
      )
        yield* checkBody(request, type, limits)
    }).pipe(
      Effect.as(undefined),
      Effect.catchAll((problem: BadRequest | PayloadTooLarge) => Effect.succeed(problem)),
    )
    // Credentials come first: a request that would be refused for its content is refused for its
    // credentials when the operation needs them and they do not let it in.
    const refused =
      checked !== undefined && route?.authenticated === true && authenticator !== undefined
        ? ((yield* credentialsRefusal(request, authenticator)) ?? checked)
        : checked
    if (refused !== undefined) {
      yield* logRequest(request, requestId, refused.status, started)
      const answer = problemAnswer({ ...refused }, requestId)
      return "retry_after" in refused && typeof refused.retry_after === "number"
        ? HttpServerResponse.setHeader(answer, "retry-after", String(refused.retry_after))
        : answer
    }
    const bounded = isUpload(request.method, requestPath)
      ? app
      : HttpIncomingMessage.withMaxBodySize(app, Option.some(limits.maxJsonBytes))
    return yield* bounded.pipe(
      // A client error (a 409, a 404) is answered and logged as a request, not as an unhandled failure.
      Effect.withUnhandledErrorLogLevel(Option.none()),
      Effect.tapErrorCause((cause) =>
        Cause.isInterruptedOnly(cause) || isUnknownRoute(cause)
          ? Effect.void
          : Effect.logError("request failed", cause).pipe(
              Effect.annotateLogs({ request_id: requestId, method: request.method, url: requestPath }),
            ),
      ),
      Effect.onExit((exit) =>
        Effect.flatMap(
          Exit.isSuccess(exit) ? Effect.succeed(exit.value.status) : failureStatus(exit.cause),
          (status) => logRequest(request, requestId, status, started),
        ),
      ),
    )
  })

/** The status logged for a request whose client went away before its answer (nginx's convention). */
const CLIENT_GONE = 499

/** Routes seen so far; beyond a few hundred (a client probing random paths) they are counted as one. */
const routes = new Set<string>()
const MAX_ROUTES = 500

/**
 * One line per request (method, route, status, duration, request id, organisation: never keys or bodies),
 * at info level whatever the status; a failure on the server's side has its own error line. And the
 * request metrics.
 */
const logRequest = (
  request: HttpServerRequest.HttpServerRequest,
  requestId: string,
  status: number,
  started: number,
) =>
  Effect.suspend(() => {
    const ms = Date.now() - started
    const path = routeOf(request.url)
    if (routes.size < MAX_ROUTES) routes.add(path)
    const route = routes.has(path) ? path : "(other)"
    recordHttpRequest({ method: request.method, route, status, seconds: ms / 1000 })
    // The line's annotations are built only when info lines are written (LOG_LEVEL): below that level they
    // were made and set on the fiber for every request only to be dropped.
    return Effect.whenLogLevel(
      Effect.logInfo("request").pipe(
        Effect.annotateLogs({
          request_id: requestId,
          method: request.method,
          route: path,
          status,
          ms,
          ...(organizationOf(request) === undefined ? {} : { organization_id: organizationOf(request) }),
        }),
      ),
      "Info",
    )
  })
