/**
 * Judging answers by the OpenAPI description's own account, for the suites that aim generated requests at
 * every operation (hostile input, the description's own values): the status must be documented for the
 * operation and not a 5xx, a 4xx problem+json with its members, the media type and body as declared.
 */

import type { HostileFailure } from "@dxs/testing/HostileReport"
import type { RawOutcome, RawRequest, rawClient } from "@dxs/testing/RawClient"
import { type Description, errorsText } from "./description.ts"

/** An operation of the description, as the suites aim requests at it. */
export interface DescribedOperation {
  /** Upper case. */
  readonly method: string
  readonly path: string
  readonly op: any
  /** `METHOD path`. */
  readonly id: string
  readonly operationId: string
}

/** One request aimed at an operation, and what it tries. */
export interface Case {
  readonly operation: DescribedOperation
  /** The class and the input, e.g. `query limit = 2147483648`. */
  readonly input: string
  readonly request: () => RawRequest
}

const isJson = (mediaType: string) => mediaType === "application/json" || mediaType.endsWith("+json")

const matches = (declared: string, actual: string) => {
  if (declared === "*/*" || declared === actual) return true
  return declared.endsWith("/*") && actual.startsWith(declared.slice(0, -1))
}

export const judgeAnswer = (description: Description, c: Case, outcome: RawOutcome): Array<string> => {
  if (outcome.kind === "no answer") return [outcome.reason]
  const { status } = outcome
  const problems: Array<string> = []
  if (status >= 500) problems.push("a server error")
  const documented = c.operation.op.responses?.[String(status)]
  if (documented === undefined) problems.push(`status ${status} is not documented for the operation`)
  const contentType = String(outcome.headers["content-type"] ?? "")
  const mediaType = contentType.split(";")[0]!.trim().toLowerCase()
  const text = outcome.body.toString("utf8")
  let body: any
  if (isJson(mediaType)) {
    try {
      body = JSON.parse(text)
    } catch {
      problems.push(`the ${mediaType} body is not JSON`)
    }
  }
  if (status >= 400) {
    if (mediaType !== "application/problem+json")
      problems.push(`a ${status} answered as ${contentType || "no content type"}, not problem+json`)
    else if (body !== undefined) {
      for (const member of ["type", "title", "detail", "request_id"])
        if (typeof body[member] !== "string") problems.push(`the problem has no ${member}`)
      if (body.status !== status) problems.push(`the problem's status is ${body.status}`)
      if (body.request_id !== undefined && body.request_id !== outcome.headers["x-request-id"])
        problems.push("request_id differs from X-Request-Id")
    }
  }
  if (documented !== undefined) {
    const declared = Object.keys(documented.content ?? {})
    if (declared.length === 0) {
      if (outcome.body.length > 0) problems.push("a body where the description declares none")
    } else {
      const type = declared.find((d) => matches(d, mediaType))
      if (type === undefined)
        problems.push(`${mediaType || "no content type"} is not among ${declared.join(", ")}`)
      else if (isJson(type) && body !== undefined) {
        const validate = description.validator([
          "paths",
          c.operation.path,
          c.operation.method.toLowerCase(),
          "responses",
          String(status),
          "content",
          type,
          "schema",
        ])
        if (!validate(body)) problems.push(`not the documented schema: ${errorsText(validate.errors)}`)
      }
    }
  }
  return problems
}

/** Sends every case, a few at a time, and returns what went wrong, one line per case. */
export const runCases = async (
  setting: {
    readonly raw: ReturnType<typeof rawClient>
    readonly description: Description
    readonly concurrency: number
    /** More to check of an answer than the description says (the case's own expectation). */
    readonly expect?: (c: Case, outcome: RawOutcome) => Array<string>
  },
  name: string,
  cases: ReadonlyArray<Case>,
): Promise<Array<HostileFailure>> => {
  const { raw, description } = setting
  const failures: Array<HostileFailure> = []
  const statuses = new Map<string, number>()
  let next = 0
  const worker = async () => {
    while (next < cases.length) {
      const c = cases[next++]!
      const outcome = await raw.send(c.request())
      const status = outcome.kind === "answer" ? String(outcome.status) : "none"
      statuses.set(status, (statuses.get(status) ?? 0) + 1)
      const problems = [...judgeAnswer(description, c, outcome), ...(setting.expect?.(c, outcome) ?? [])]
      if (problems.length > 0)
        failures.push({
          request: `${c.operation.id} [${c.input}]`,
          problems,
          status: outcome.kind === "answer" ? String(outcome.status) : "—",
          body: outcome.kind === "answer" ? outcome.body.toString("utf8").slice(0, 200) : "",
        })
    }
  }
  await Promise.all(Array.from({ length: setting.concurrency }, worker))
  const tally = [...statuses].sort().map(([status, n]) => `${status}×${n}`)
  console.info(`${name}: ${cases.length} requests, answered ${tally.join(" ")}`)
  return failures
}
