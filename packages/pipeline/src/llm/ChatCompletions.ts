/**
 * One Chat Completions request through the official `openai` SDK, its outcome sorted for the provider's retry
 * loop (`OpenAi.ts`): a completion, a failure worth retrying, or a fatal one.
 *
 * The SDK's own retries are off (`maxRetries: 0`): ours are not equivalent, so they stay. They release the
 * concurrency slot while waiting, retry 408 like 429, follow `Retry-After` up to `maxRetryDelayMs` (the SDK
 * ignores waits of a minute or more), and count every attempt in the metrics. The SDK's timeout is ours
 * (`timeoutMs`, response body included), once per attempt.
 *
 * The SDK is loaded on the first request, so that processes on the local model never load it.
 */
import { collapseWhitespace } from "@dxs/domain/Values"
import type { OpenAI } from "openai"

export interface ChatCompletionsOptions {
  readonly baseUrl: string
  readonly apiKey?: string
  readonly timeoutMs: number
  readonly fetch?: typeof fetch
}

export type Attempt =
  | {
      readonly kind: "completion"
      readonly content: unknown
      readonly promptTokens: number
      /** Prompt tokens the server served from its prefix cache (0 when it does not say). */
      readonly cachedTokens: number
      readonly completionTokens: number
      /** The content's tokens with their log-probabilities, when the server returned them. */
      readonly logprobs: ReadonlyArray<TokenLogprob> | undefined
    }
  | { readonly kind: "retry"; readonly message: string; readonly retryAfterMs: number | undefined }
  | { readonly kind: "fatal"; readonly message: string }

export interface TokenLogprob {
  readonly token: string
  readonly logprob: number
}

/** The request body, as the provider builds it (the SDK sends it as it is). */
export type ChatCompletionsBody = OpenAI.Chat.ChatCompletionCreateParamsNonStreaming

/** `Retry-After` as milliseconds: delta-seconds (decimals accepted) or an HTTP date. */
export const parseRetryAfter = (header: string | null, now = Date.now()): number | undefined => {
  if (header === null || header.trim() === "") return undefined
  const seconds = Number(header.trim())
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000)
  const date = Date.parse(header)
  return Number.isNaN(date) ? undefined : Math.max(0, date - now)
}

const tokenCount = (u: unknown): number => (typeof u === "number" && Number.isFinite(u) && u >= 0 ? u : 0)

/** `choices[0].logprobs.content` as tokens and log-probabilities; undefined when absent or malformed. */
const logprobsOf = (u: unknown): ReadonlyArray<TokenLogprob> | undefined => {
  if (!Array.isArray(u) || u.length === 0) return undefined
  const tokens: Array<TokenLogprob> = []
  for (const t of u) {
    if (typeof t?.token !== "string" || typeof t?.logprob !== "number" || !Number.isFinite(t.logprob))
      return undefined
    tokens.push({ token: t.token, logprob: Math.min(0, t.logprob) })
  }
  return tokens
}

/** What an error answer says: its JSON's message, else the text itself (at most 300 characters). */
const errorDetail = (body: string): string => {
  try {
    const parsed = JSON.parse(body)
    const message = parsed?.error?.message ?? parsed?.message ?? parsed?.error
    if (typeof message === "string" && message.trim() !== "") return message.trim().slice(0, 300)
  } catch {
    // not JSON: the text itself
  }
  return collapseWhitespace(body).slice(0, 300)
}

/** The SDK's status errors keep only the body's `error` field; the whole body is what our messages quote. */
const BODY = Symbol("body")

const makeClient = async (options: ChatCompletionsOptions): Promise<OpenAI> => {
  const sdk = await import("openai")
  class Client extends sdk.OpenAI {
    protected override makeStatusError(
      status: number,
      error: object,
      message: string | undefined,
      headers: Headers,
    ) {
      return Object.assign(super.makeStatusError(status, error, message, headers), {
        [BODY]: message ?? JSON.stringify(error),
      })
    }
  }
  const keyless = options.apiKey === undefined || options.apiKey === ""
  return new Client({
    baseURL: options.baseUrl.replace(/\/+$/, ""),
    // Self-hosted servers often need no key: the SDK insists on one, so a placeholder that is never sent.
    apiKey: keyless ? "unused" : options.apiKey,
    defaultHeaders: keyless ? { Authorization: null } : undefined,
    // What the SDK would otherwise read from its own environment variables (only OPENAI_CUSTOM_HEADERS stays).
    organization: null,
    project: null,
    webhookSecret: null,
    logLevel: "off",
    maxRetries: 0,
    timeout: options.timeoutMs,
    ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
  })
}

/** The transport's cause of a failed request: the system error code when there is one (`ECONNREFUSED`, …). */
const connectionDetail = (error: unknown): string => {
  const transport = (error as { cause?: unknown } | null)?.cause ?? error
  const cause = (transport as { cause?: { code?: unknown; message?: unknown } } | null)?.cause
  if (typeof cause?.code === "string") return cause.code
  if (typeof cause?.message === "string") return cause.message
  return transport instanceof Error ? transport.message : String(transport)
}

/** One request per call of the returned function, which never rejects. */
export const makeChatCompletions = (options: ChatCompletionsOptions) => {
  let client: Promise<OpenAI> | undefined
  return async (body: ChatCompletionsBody, interrupt: AbortSignal): Promise<Attempt> => {
    try {
      client ??= makeClient(options).catch((error) => {
        client = undefined
        throw error
      })
      const completion: unknown = await (await client).chat.completions.create(body, { signal: interrupt })
      // A 200 that is not a completion has no content: asked again, like a malformed answer.
      const parsed = completion as {
        choices?: Array<{ message?: { content?: unknown }; logprobs?: { content?: unknown } | null }>
        usage?: {
          prompt_tokens?: unknown
          completion_tokens?: unknown
          prompt_tokens_details?: { cached_tokens?: unknown } | null
        }
      } | null
      return {
        kind: "completion",
        content: parsed?.choices?.[0]?.message?.content,
        promptTokens: tokenCount(parsed?.usage?.prompt_tokens),
        cachedTokens: tokenCount(parsed?.usage?.prompt_tokens_details?.cached_tokens),
        completionTokens: tokenCount(parsed?.usage?.completion_tokens),
        logprobs: logprobsOf(parsed?.choices?.[0]?.logprobs?.content),
      }
    } catch (error) {
      // A 200 whose JSON does not parse holds no answer: asked again, like a malformed one.
      if (error instanceof SyntaxError)
        return {
          kind: "completion",
          content: undefined,
          promptTokens: 0,
          cachedTokens: 0,
          completionTokens: 0,
          logprobs: undefined,
        }
      const { APIConnectionTimeoutError, APIError } = await import("openai")
      if (error instanceof APIConnectionTimeoutError)
        return {
          kind: "retry",
          message: `model request timed out after ${options.timeoutMs} ms`,
          retryAfterMs: undefined,
        }
      if (error instanceof APIError && typeof error.status === "number") {
        const text = (error as { [BODY]?: unknown })[BODY]
        const message = `model server answered ${error.status}: ${errorDetail(typeof text === "string" ? text : "")}`
        if (error.status === 429 || error.status === 408 || error.status >= 500)
          return {
            kind: "retry",
            message,
            retryAfterMs: parseRetryAfter(error.headers?.get("retry-after") ?? null),
          }
        return { kind: "fatal", message }
      }
      return {
        kind: "retry",
        message: `model server unreachable: ${connectionDetail(error)}`,
        retryAfterMs: undefined,
      }
    }
  }
}
