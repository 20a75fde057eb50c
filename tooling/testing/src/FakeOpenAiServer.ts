/**
 * A fake OpenAI-compatible Chat Completions server, for tests and benchmarks only: a real `node:http` server
 * on 127.0.0.1 (a free port) that answers `POST /v1/chat/completions` (and `/chat/completions`) in the
 * OpenAI response shape, and `GET /v1/models`.
 *
 * - `respond(body)` produces the answer's JSON content; by default a minimal object valid for the request's
 *   `response_format.json_schema` (empty arrays, first enum values, nulls where allowed).
 * - `latencyMs` delays every answer; `failures` (and `fail(...)`) script the answers to the next requests:
 *   an HTTP error status (with `Retry-After`), a completion with raw (malformed) content, or a dropped
 *   connection.
 * - Every request is recorded with its headers, body and what was answered; `inFlight` and `maxInFlight`
 *   count concurrent requests.
 *
 * Not part of the product's runtime: nothing in the service starts it.
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"

export interface ChatMessage {
  readonly role: string
  readonly content: string
}

export interface ChatCompletionRequestBody {
  readonly model?: string
  readonly messages?: ReadonlyArray<ChatMessage>
  readonly temperature?: number
  readonly response_format?: {
    readonly type?: string
    readonly json_schema?: { readonly name?: string; readonly strict?: boolean; readonly schema?: unknown }
  }
  readonly [key: string]: unknown
}

/** A scripted answer to one request, in place of a completion. */
export type FakeFailure =
  /** An HTTP error: `retryAfter` (seconds, or any header text) becomes the `Retry-After` header. */
  | { readonly status: number; readonly retryAfter?: number | string; readonly body?: unknown }
  /** A 200 completion whose message content is this raw text (for example not JSON). */
  | { readonly content: string }
  /** The connection is destroyed without an answer (a network error for the client). */
  | { readonly drop: true }

export interface FakeUsage {
  readonly prompt_tokens: number
  readonly completion_tokens: number
  readonly prompt_tokens_details?: { readonly cached_tokens: number }
}

export interface FakeOpenAiRequest {
  readonly method: string
  readonly path: string
  readonly headers: IncomingHttpHeaders
  readonly body: ChatCompletionRequestBody
  /** The status answered (0 for a dropped connection or one the client closed first). */
  status: number
  /** The message content sent back with a 200 (the raw text). */
  content?: string
  usage?: FakeUsage
}

/** The answer's content: an object (sent as its JSON) or a string (sent as it is). */
export type FakeResponder = (body: ChatCompletionRequestBody) => unknown | Promise<unknown>

export interface FakeOpenAiOptions {
  /** Delay before every answer, failures included (default 0). */
  readonly latencyMs?: number
  readonly respond?: FakeResponder
  /** Answers for the first requests, in arrival order; later requests get completions. */
  readonly failures?: ReadonlyArray<FakeFailure>
  /**
   * Token counts reported per completion (default: about four characters per token, with the longest
   * prefix of messages already seen by this server reported as cached, like a server's prefix cache).
   */
  readonly usage?: (body: ChatCompletionRequestBody, content: string) => FakeUsage
  /**
   * The log-probability of each token of an answer, for requests that ask for `logprobs` (the content is
   * cut into tokens of up to four characters). Unset: log-probabilities are not returned.
   */
  readonly logprob?: (token: string, content: string) => number
}

export interface FakeOpenAiServer {
  /** The API root to configure clients with: `http://127.0.0.1:<port>/v1`. */
  readonly baseUrl: string
  readonly port: number
  /** Chat-completion requests received, in arrival order. */
  readonly requests: ReadonlyArray<FakeOpenAiRequest>
  /** 200 completions sent. */
  readonly completions: number
  readonly inFlight: number
  readonly maxInFlight: number
  latencyMs: number
  respond: FakeResponder
  /** Scripts the answers to the next requests (after those already scripted). */
  readonly fail: (...failures: ReadonlyArray<FakeFailure>) => void
  /** Forgets recorded requests, counters and pending failures. */
  readonly reset: () => void
  readonly close: () => Promise<void>
}

/** A minimal value valid for a JSON schema: first enum value, null when allowed, empty strings and arrays. */
export const minimalForSchema = (schema: unknown): unknown => {
  if (typeof schema !== "object" || schema === null) return null
  const s = schema as Record<string, unknown>
  if (Array.isArray(s.enum) && s.enum.length > 0) return s.enum[0]
  if ("const" in s) return s.const
  const types = Array.isArray(s.type) ? (s.type as Array<unknown>) : [s.type]
  if (types.includes("null")) return null
  if (Array.isArray(s.anyOf) && s.anyOf.length > 0) return minimalForSchema(s.anyOf[0])
  if (types.includes("object") || typeof s.properties === "object") {
    const properties = (s.properties ?? {}) as Record<string, unknown>
    const required = Array.isArray(s.required) ? (s.required as Array<string>) : Object.keys(properties)
    return Object.fromEntries(required.map((name) => [name, minimalForSchema(properties[name])]))
  }
  if (types.includes("array")) return []
  if (types.includes("string")) return ""
  if (types.includes("integer") || types.includes("number")) return 0
  if (types.includes("boolean")) return false
  return null
}

/** The default responder: a minimal object valid for the request's JSON schema (`{}` without one). */
export const genericResponder: FakeResponder = (body) => {
  const schema = body.response_format?.json_schema?.schema
  return schema === undefined ? {} : minimalForSchema(schema)
}

const messageChars = (messages: ReadonlyArray<ChatMessage>) =>
  messages.reduce((n, m) => n + String(m.content ?? "").length, 0)

/**
 * About four characters per token; the messages of the longest prefix seen before count as cached when they
 * are 1,024 tokens or more.
 */
const prefixCachedUsage =
  (seen: Set<string>) =>
  (body: ChatCompletionRequestBody, content: string): FakeUsage => {
    const messages = body.messages ?? []
    let cachedChars = 0
    for (let n = messages.length - 1; n > 0; n--) {
      if (seen.has(JSON.stringify(messages.slice(0, n)))) {
        // Like OpenAI's: only prefixes of 1,024 tokens or more are cached.
        const chars = messageChars(messages.slice(0, n))
        if (chars >= 4096) cachedChars = chars
        break
      }
    }
    for (let n = 1; n < messages.length; n++) seen.add(JSON.stringify(messages.slice(0, n)))
    return {
      prompt_tokens: Math.max(1, Math.ceil(messageChars(messages) / 4)),
      completion_tokens: Math.max(1, Math.ceil(content.length / 4)),
      prompt_tokens_details: { cached_tokens: Math.floor(cachedChars / 4) },
    }
  }

/** The content cut into tokens of up to four characters, with their log-probabilities. */
const logprobsOf = (content: string, logprob: (token: string, content: string) => number) => {
  const tokens: Array<{ token: string; logprob: number }> = []
  for (let i = 0; i < content.length; i += 4) {
    const token = content.slice(i, i + 4)
    tokens.push({ token, logprob: logprob(token, content) })
  }
  return { content: tokens }
}

/** The value as a JSON answer, unless the response has ended already. */
const sendJson = (
  res: ServerResponse,
  status: number,
  value: unknown,
  headers: Record<string, string> = {},
) => {
  if (res.destroyed || res.writableEnded) return
  const text = JSON.stringify(value)
  res.writeHead(status, {
    "content-type": "application/json",
    "content-length": String(Buffer.byteLength(text)),
    ...headers,
  })
  res.end(text)
}

/** A completion in the OpenAI response shape (with log-probabilities when asked for and `logprob` is set). */
const chatCompletion = (
  sequence: number,
  body: ChatCompletionRequestBody,
  content: string,
  usage: FakeUsage,
  logprob: FakeOpenAiOptions["logprob"],
) => ({
  id: `chatcmpl-fake-${sequence}`,
  object: "chat.completion",
  created: Math.floor(Date.now() / 1000),
  model: body.model ?? "fake",
  choices: [
    {
      index: 0,
      message: { role: "assistant", content },
      finish_reason: "stop",
      ...(body.logprobs === true && logprob !== undefined ? { logprobs: logprobsOf(content, logprob) } : {}),
    },
  ],
  usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
})

/**
 * A scripted answer: the connection dropped, a completion of the raw content (`complete`), or an HTTP error
 * recorded and sent.
 */
const answerScripted = (
  req: IncomingMessage,
  res: ServerResponse,
  record: FakeOpenAiRequest,
  failure: FakeFailure,
  complete: (content: string) => void,
) => {
  if ("drop" in failure) {
    req.socket.destroy()
    return
  }
  if ("content" in failure) {
    complete(failure.content)
    return
  }
  record.status = failure.status
  const headers: Record<string, string> =
    failure.retryAfter === undefined ? {} : { "retry-after": String(failure.retryAfter) }
  sendJson(
    res,
    failure.status,
    failure.body ?? { error: { message: `scripted failure ${failure.status}`, type: "fake_error" } },
    headers,
  )
}

export const startFakeOpenAiServer = async (options: FakeOpenAiOptions = {}): Promise<FakeOpenAiServer> => {
  const requests: Array<FakeOpenAiRequest> = []
  let failures: Array<FakeFailure> = [...(options.failures ?? [])]
  let inFlight = 0
  let maxInFlight = 0
  let completions = 0
  let sequence = 0
  const timers = new Set<NodeJS.Timeout>()
  const prefixes = new Set<string>()
  const usageOf = options.usage ?? prefixCachedUsage(prefixes)

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      if (ms <= 0) return resolve()
      const timer = setTimeout(() => {
        timers.delete(timer)
        resolve()
      }, ms)
      timers.add(timer)
    })

  const completion = (record: FakeOpenAiRequest, res: ServerResponse, content: string) => {
    if (res.destroyed || res.writableEnded) return
    const usage = usageOf(record.body, content)
    record.status = 200
    record.content = content
    record.usage = usage
    completions += 1
    sendJson(res, 200, chatCompletion(++sequence, record.body, content, usage, options.logprob))
  }

  const server: FakeOpenAiServer & { latencyMs: number; respond: FakeResponder } = {
    baseUrl: "",
    port: 0,
    requests,
    get completions() {
      return completions
    },
    get inFlight() {
      return inFlight
    },
    get maxInFlight() {
      return maxInFlight
    },
    latencyMs: options.latencyMs ?? 0,
    respond: options.respond ?? genericResponder,
    fail: (...more) => {
      failures.push(...more)
    },
    reset: () => {
      requests.length = 0
      failures = []
      maxInFlight = inFlight
      completions = 0
      prefixes.clear()
    },
    close: async () => {
      for (const timer of timers) clearTimeout(timer)
      timers.clear()
      http.closeAllConnections()
      await new Promise<void>((resolve) => http.close(() => resolve()))
    },
  }

  const http = createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (chunk: Buffer) => chunks.push(chunk))
    req.on("end", () => {
      const path = (req.url ?? "/").split("?")[0]!
      if (req.method === "GET" && /^(\/v1)?\/models\/?$/.test(path)) {
        sendJson(res, 200, { object: "list", data: [{ id: "fake", object: "model", owned_by: "fake" }] })
        return
      }
      if (req.method !== "POST" || !/^(\/v1)?\/chat\/completions\/?$/.test(path)) {
        sendJson(res, 404, { error: { message: `no route for ${req.method} ${path}`, type: "not_found" } })
        return
      }
      let body: ChatCompletionRequestBody
      try {
        body = JSON.parse(Buffer.concat(chunks).toString("utf8"))
      } catch {
        sendJson(res, 400, { error: { message: "the body is not JSON", type: "invalid_request_error" } })
        return
      }
      const record: FakeOpenAiRequest = { method: req.method, path, headers: req.headers, body, status: 0 }
      requests.push(record)
      inFlight += 1
      maxInFlight = Math.max(maxInFlight, inFlight)
      let finished = false
      res.on("close", () => {
        if (finished) return
        finished = true
        inFlight -= 1
      })
      const failure = failures.shift()
      void (async () => {
        await sleep(server.latencyMs)
        if (res.destroyed || res.writableEnded) return
        if (failure !== undefined) {
          answerScripted(req, res, record, failure, (content) => completion(record, res, content))
          return
        }
        let content: string
        try {
          const answer = await server.respond(body)
          content = typeof answer === "string" ? answer : JSON.stringify(answer)
        } catch (error) {
          record.status = 500
          sendJson(res, 500, { error: { message: `responder failed: ${String(error)}`, type: "fake_error" } })
          return
        }
        completion(record, res, content)
      })()
    })
  })

  await new Promise<void>((resolve, reject) => {
    http.once("error", reject)
    http.listen(0, "127.0.0.1", () => resolve())
  })
  const port = (http.address() as AddressInfo).port
  return Object.assign(server, { port, baseUrl: `http://127.0.0.1:${port}/v1` })
}

// ---------------------------------------------------------------------------------------------------------
// Document extraction requests (`extract_document`), as the tests' and benchmarks' responders read them

export interface DocumentRequestAgent {
  /** The member of the answer (`A1`, …). */
  readonly key: string
  readonly name: string
  readonly instructions: string
  /** The lines the prompt gives the agent (its block), for responders that read more. */
  readonly block: string
}

export interface DocumentRequest {
  readonly document: string
  readonly pages: ReadonlyArray<{ readonly pageNumber: number; readonly text: string }>
  readonly agents: ReadonlyArray<DocumentRequestAgent>
  /** The corrections of a retry (empty on a first request). */
  readonly corrections: ReadonlyArray<string>
}

/** What an `extract_document` request asks: the document's pages and its agents; undefined for others. */
export const documentRequest = (body: ChatCompletionRequestBody): DocumentRequest | undefined => {
  if (body.response_format?.json_schema?.name !== "extract_document") return undefined
  const users = (body.messages ?? []).filter((m) => m.role === "user").map((m) => String(m.content))
  const context = users[0] ?? ""
  const ask = users[users.length - 1] ?? ""
  const document = /^Document: (.*)$/m.exec(context)?.[1] ?? ""
  const pages: Array<{ pageNumber: number; text: string }> = []
  const parts = context.split(/--- Page (\d+) ---\n/)
  for (let i = 1; i + 1 < parts.length; i += 2)
    pages.push({ pageNumber: Number(parts[i]), text: parts[i + 1]!.replace(/\n\n$/, "") })
  const agents: Array<DocumentRequestAgent> = []
  const blocks = ask.split(/^### (A\d+)\n/m)
  for (let i = 1; i + 1 < blocks.length; i += 2) {
    const block = blocks[i + 1]!
    agents.push({
      key: blocks[i]!,
      name: /^Agent: (.*)$/m.exec(block)?.[1]?.trim() ?? "",
      instructions: /^Instructions: (.*)$/m.exec(block)?.[1]?.trim() ?? "",
      block,
    })
  }
  const corrections = [...ask.matchAll(/^- (A\d+: .*)$/gm)].map((m) => m[1]!)
  return { document, pages, agents, corrections }
}

export interface FakeValue {
  readonly value: string | null
  readonly relevant_passage: string
  readonly page_number: number
  readonly reasoning: string
  readonly dimension_values?: Readonly<Record<string, string>>
}

/** An `extract_document` answer from each agent's values (`valuesOf` answers per agent). */
export const answerDocument = (
  request: DocumentRequest,
  valuesOf: (agent: DocumentRequestAgent, request: DocumentRequest) => ReadonlyArray<FakeValue>,
): Record<string, ReadonlyArray<FakeValue>> =>
  Object.fromEntries(request.agents.map((agent) => [agent.key, valuesOf(agent, request)]))

export interface LabelledLineOptions {
  /** The label an agent's line starts with (before `:`); the agent's name by default. */
  readonly label?: (agent: DocumentRequestAgent) => string
  /** The value read from the text after the label (trimmed); undefined skips the line. Identity by default. */
  readonly value?: (text: string) => string | undefined
  /** Only the first page's line that matches (else one value per page that has one). */
  readonly firstOnly?: boolean
}

/**
 * The values of "Label: value" lines for one agent of a document request, as a model that reads them would
 * answer: each line quoted verbatim as the passage, on its page.
 */
export const labelledLines = (
  request: DocumentRequest,
  agent: DocumentRequestAgent,
  options: LabelledLineOptions = {},
): Array<FakeValue> => {
  const label = options.label?.(agent) ?? agent.name
  const found: Array<FakeValue> = []
  if (label === "") return found
  for (const page of request.pages) {
    const line = page.text.split("\n").find((l) => l.startsWith(`${label}:`))
    if (line === undefined) continue
    const text = line.slice(label.length + 1).trim()
    const value = options.value === undefined ? text : options.value(text)
    if (value === undefined) continue
    found.push({
      value,
      relevant_passage: line,
      page_number: page.pageNumber,
      reasoning: `The line labelled "${label}" states it.`,
    })
    if (options.firstOnly) break
  }
  return found
}
