import { problemType } from "@dxs/services"
import * as Headers from "@effect/platform/Headers"
import * as HttpApp from "@effect/platform/HttpApp"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Effect } from "effect"

export const REQUEST_ID_HEADER = "x-request-id"

/**
 * Every error response is RFC 9457 problem+json. Our own errors already are; this turns the framework's
 * (request decoding, unknown routes, defects) into the same shape, and strips the internal `_tag`.
 */
const titles: Record<number, string> = {
  400: "Bad request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not found",
  405: "Method not allowed",
  409: "Conflict",
  413: "Payload too large",
  415: "Unsupported media type",
  422: "Unprocessable content",
  429: "Too many requests",
  500: "Internal server error",
  503: "Service unavailable",
}
const slug = (status: number) => (titles[status] ?? "error").toLowerCase().replace(/[^a-z]+/g, "-")

const problemResponseOf = (
  status: number,
  body: Record<string, unknown>,
  headers?: HttpServerResponse.HttpServerResponse["headers"],
) =>
  HttpServerResponse.text(JSON.stringify(body), {
    status,
    contentType: "application/problem+json",
    ...(headers ? { headers } : {}),
  })

const generic = (status: number, detail: string) => ({
  type: problemType(slug(status)),
  title: titles[status] ?? "Error",
  status,
  detail,
})

interface DecodeIssue {
  readonly path: ReadonlyArray<PropertyKey>
  readonly message: string
}

/** The form marker's path (see Body.ts): never the client's member, never reported. */
const FORM_MARKER = "\u0000form"

const EXPECTED = /^Expected (.*), actual (.*)$/s
const UNEXPECTED = /^is unexpected, expected: (.*)$/s

/** An expected type of the decoder, in the words of the description ("a string", "null", …). */
const inWords = (type: string): string | undefined => {
  if (type === "undefined") return undefined
  if (type === "string") return "a string"
  if (type === "number") return "a number"
  if (type === "boolean") return "true or false"
  if (type === "null") return "null"
  if (/^".*"$/s.test(type)) return JSON.parse(type) as string
  if (/^(ReadonlyArray|Array)<|^readonly \[|^\[/.test(type)) return "an array"
  if (/^\{/.test(type)) return "an object"
  return type
}

/**
 * One entry per field, in words: a union (a nullable field, a literal enum) is reported once per member
 * ("Expected string, actual 5", "Expected null, actual 5"); these become one message ("must be a string or
 * null (got 5)"). An unknown member is named as such. Other messages of a field are kept, once each.
 */
const fieldErrors = (issues: ReadonlyArray<DecodeIssue>) => {
  const byPath = new Map<string, Array<string>>()
  for (const issue of issues) {
    if (issue.path[0] === FORM_MARKER) continue
    const path = issue.path.map(String).join("/")
    const messages = byPath.get(path) ?? []
    if (!messages.includes(issue.message)) messages.push(issue.message)
    byPath.set(path, messages)
  }
  return [...byPath].map(([path, messages]) => {
    const unexpected = messages.map((m) => UNEXPECTED.exec(m)).find((m) => m !== null)
    if (unexpected)
      return {
        path,
        message: `is not a member of this body (its members: ${unexpected[1]!.replace(/"/g, "").split(" | ").join(", ")})`,
      }
    const expected = messages.map((m) => EXPECTED.exec(m))
    const literals = expected.filter((m) => m !== null && m[1] !== "undefined")
    if (
      messages.length > 1 &&
      expected.every((m) => m !== null) &&
      literals.length > 0 &&
      literals.every((m) => /^".*"$/s.test(m![1]!))
    )
      return {
        path,
        message: `must be one of ${literals.map((m) => JSON.parse(m![1]!) as string).join(", ")} (got ${literals[0]![2]})`,
      }
    const custom = messages.filter((_, i) => expected[i] === null)
    const alternatives = [
      ...custom.map((m) => m.replace(/^must be /, "")),
      ...expected.flatMap((m) => (m === null ? [] : [inWords(m[1]!)])).filter((w) => w !== undefined),
    ]
    const got = expected.find((m) => m !== null)?.[2]
    if (got === undefined) return { path, message: messages.join("; ") }
    const unique = [...new Set(alternatives)]
    return { path, message: `must be ${unique.join(" or ")} (got ${got})` }
  })
}

const rewrite = (
  res: HttpServerResponse.HttpServerResponse,
  requestId: string | undefined,
): HttpServerResponse.HttpServerResponse => {
  if (res.status < 400) return res
  const problemResponse = (
    status: number,
    body: Record<string, unknown>,
    headers?: HttpServerResponse.HttpServerResponse["headers"],
  ) => problemResponseOf(status, requestId === undefined ? body : { ...body, request_id: requestId }, headers)
  const body = res.body
  let parsed: Record<string, unknown> | undefined
  if (body._tag === "Uint8Array" && body.body.length > 0) {
    try {
      parsed = JSON.parse(new TextDecoder().decode(body.body))
    } catch {
      parsed = undefined
    }
  }
  const headers = res.headers
  if (parsed && parsed._tag === "HttpApiDecodeError") {
    const issues = (parsed.issues as ReadonlyArray<DecodeIssue> | undefined) ?? []
    const errors = fieldErrors(issues)
    const detail =
      errors.length > 0
        ? `Invalid request: ${errors.map((e) => (e.path ? `${e.path}: ${e.message}` : e.message)).join("; ")}`
        : String(parsed.message ?? "Invalid request")
    return problemResponse(400, { ...generic(400, detail), errors }, headers)
  }
  if (parsed && typeof parsed.type === "string" && typeof parsed.title === "string") {
    const { _tag, ...problem } = parsed
    // A rate-limited answer, or one in an outage, says when to come back.
    const retry =
      (res.status === 429 || res.status === 503) && typeof problem.retry_after === "number"
        ? Headers.set(headers, "retry-after", String(problem.retry_after))
        : headers
    return problemResponse(res.status, problem, retry)
  }
  if (parsed && parsed._tag === "HttpApiMultipartError") {
    return problemResponse(
      400,
      generic(400, `Invalid multipart body: ${String(parsed.message ?? "")}`),
      headers,
    )
  }
  const detail =
    res.status === 404
      ? "No such endpoint"
      : res.status === 413
        ? "The request body is larger than the limit"
        : res.status >= 500
          ? "The server failed to handle this request; it has been logged"
          : (titles[res.status] ?? "Error")
  return problemResponse(res.status, generic(res.status, detail), headers)
}

/**
 * A problem raised outside the routes (the guard's refusals, an outage), in its final form; one with a
 * `retry_after` says it in `Retry-After` too.
 */
export const problemAnswer = (
  problem: { readonly status: number } & Record<string, unknown>,
  requestId: string,
): HttpServerResponse.HttpServerResponse => {
  const { _tag, ...body } = problem
  const answer = HttpServerResponse.setHeader(
    problemResponseOf(problem.status, { ...body, request_id: requestId }),
    REQUEST_ID_HEADER,
    requestId,
  )
  return typeof problem.retry_after === "number"
    ? HttpServerResponse.setHeader(answer, "retry-after", String(problem.retry_after))
    : answer
}

/**
 * Every answer carries the request's id (`X-Request-Id`, set by the guard), and every problem body the
 * same id as `request_id`, so a client's report can be found in the server's log.
 */
export const problemJson = <E, R>(app: HttpApp.Default<E, R>): HttpApp.Default<E, R> =>
  Effect.zipRight(
    HttpApp.appendPreResponseHandler((request, response) => {
      const requestId = request.headers[REQUEST_ID_HEADER]
      const rewritten = rewrite(response, requestId)
      return Effect.succeed(
        requestId === undefined
          ? rewritten
          : HttpServerResponse.setHeader(rewritten, REQUEST_ID_HEADER, requestId),
      )
    }),
    app,
  )
