import { Effect } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import { addUsage, LanguageModel, noUsage } from "../../src/llm/LanguageModel.ts"
import { openAiModelLayer, parseContent, parseRetryAfter } from "../../src/llm/OpenAi.ts"
import { memoryResponseCache } from "../../src/llm/ResponseCache.ts"
import {
  agent,
  type FakeOpenAiServer,
  failure,
  modelFor,
  page,
  schemaName,
  schemaOf,
  startFakeOpenAiServer,
  userMessage,
} from "./FakeOpenAi.ts"

const servers: Array<FakeOpenAiServer> = []
const start = async (options: Parameters<typeof startFakeOpenAiServer>[0] = {}) => {
  const server = await startFakeOpenAiServer(options)
  servers.push(server)
  return server
}
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()))
})

const extractRequest = (text = "Revenue was 1,234.50 EUR in 2024.") => ({
  agent: agent({ valueType: "number", unit: "EUR" }),
  document: { id: "doc-1", name: "report.pdf" },
  pages: [page(1, text)],
  dimensions: [],
  referenceDate: "2026-01-15",
})

const answer = {
  values: [
    { value: "1,234.50", relevant_passage: "Revenue was 1,234.50 EUR", reasoning: "r", page_number: 1 },
  ],
}

describe("openai provider: requests", () => {
  it("posts a Chat Completions request with a strict JSON schema and the bearer key", async () => {
    const server = await start({ respond: () => answer })
    const model = modelFor(server, { apiKey: "sk-test-123" })
    expect(model.name).toBe("openai:test-model")
    await Effect.runPromise(model.extract(extractRequest()))

    expect(server.requests).toHaveLength(1)
    const [request] = server.requests
    expect(request!.path).toBe("/v1/chat/completions")
    expect(request!.headers.authorization).toBe("Bearer sk-test-123")
    expect(request!.headers["content-type"]).toBe("application/json")
    const body = request!.body
    expect(body.model).toBe("test-model")
    expect(body.temperature).toBe(0)
    expect(body.messages!.map((m) => m.role)).toEqual(["system", "user"])
    expect(body.response_format?.type).toBe("json_schema")
    expect(body.response_format?.json_schema?.strict).toBe(true)
    expect(schemaName(body)).toBe("extract_values")
    const schema = schemaOf(body)
    expect(schema.required).toEqual(["values"])
    expect(schema.additionalProperties).toBe(false)
    expect(schema.properties.values.items.required).toEqual(
      expect.arrayContaining(["value", "relevant_passage", "reasoning", "page_number"]),
    )
    const user = userMessage(body)
    expect(user).toContain("Agent: Revenue")
    expect(user).toContain("Total revenue of the fiscal year")
    expect(user).toContain("Reference date (today): 2026-01-15")
    expect(user).toContain("--- Page 1 ---\nRevenue was 1,234.50 EUR in 2024.")
  })

  it("sends no Authorization header without a key, and accepts a base URL with a trailing slash", async () => {
    const server = await start({ respond: () => answer })
    const model = modelFor(server, { baseUrl: `${server.baseUrl}/` })
    await Effect.runPromise(model.extract(extractRequest()))
    expect(server.requests[0]!.path).toBe("/v1/chat/completions")
    expect(server.requests[0]!.headers.authorization).toBeUndefined()
  })

  it("provides the LanguageModel service through its layer", async () => {
    const server = await start()
    const name = await Effect.runPromise(
      Effect.map(LanguageModel, (m) => m.name).pipe(
        Effect.provide(openAiModelLayer({ baseUrl: server.baseUrl, model: "m1" })),
      ),
    )
    expect(name).toBe("openai:m1")
  })
})

describe("openai provider: retries and errors", () => {
  it("waits as Retry-After says on 429, then succeeds; only completions count as calls", async () => {
    const server = await start({ respond: () => answer, failures: [{ status: 429, retryAfter: 0 }] })
    // A back-off this long would time the test out: only Retry-After (0 s) lets it finish.
    const model = modelFor(server, { retryBaseMs: 600_000 })
    const result = await Effect.runPromise(model.extract(extractRequest()))
    expect(server.requests.map((r) => r.status)).toEqual([429, 200])
    expect(result.usage.calls).toBe(1)
    expect(result.values.map((v) => v.value)).toEqual(["1234.5"])
  })

  it("retries 500, 503 and dropped connections with back-off", async () => {
    const server = await start({
      respond: () => answer,
      failures: [{ status: 500 }, { status: 503 }, { drop: true }],
    })
    const result = await Effect.runPromise(modelFor(server).extract(extractRequest()))
    expect(server.requests).toHaveLength(4)
    expect(result.values).toHaveLength(1)
    expect(result.usage.calls).toBe(1)
  })

  it("gives up after maxRetries with a retryable ModelError", async () => {
    const server = await start({ failures: Array.from({ length: 10 }, () => ({ status: 500 })) })
    const error = await failure(modelFor(server, { maxRetries: 3 }).extract(extractRequest()))
    expect(error._tag).toBe("ModelError")
    expect(error.retryable).toBe(true)
    expect(error.message).toContain("500")
    expect(error.message).toContain("4 attempts")
    expect(server.requests).toHaveLength(4)
  })

  it("fails at once, not retryable, on 400 and 401", async () => {
    const server = await start({
      failures: [{ status: 400, body: { error: { message: "response_format is not supported" } } }],
    })
    const error = await failure(modelFor(server).extract(extractRequest()))
    expect(error.retryable).toBe(false)
    expect(error.message).toContain("400")
    expect(error.message).toContain("response_format is not supported")
    expect(server.requests).toHaveLength(1)

    server.fail({ status: 401 })
    const unauthorized = await failure(
      modelFor(server, { apiKey: "sk-secret-key" }).extract(extractRequest()),
    )
    expect(unauthorized.retryable).toBe(false)
    expect(unauthorized.message).not.toContain("sk-secret-key")
    expect(server.requests).toHaveLength(2)
  })

  it("times out slow requests, retries them, then fails retryable", async () => {
    const server = await start({ latencyMs: 2_000 })
    const error = await failure(modelFor(server, { timeoutMs: 50, maxRetries: 1 }).extract(extractRequest()))
    expect(error.retryable).toBe(true)
    expect(error.message).toContain("timed out after 50 ms")
    expect(server.requests).toHaveLength(2)
  })

  it("fails retryable when the server is unreachable", async () => {
    const server = await start()
    const baseUrl = server.baseUrl
    await server.close()
    servers.length = 0
    const error = await failure(modelFor(server, { baseUrl, maxRetries: 1 }).extract(extractRequest()))
    expect(error.retryable).toBe(true)
    expect(error.message).toContain("unreachable")
  })

  it("asks again once after a malformed answer, and fails not retryable after a second", async () => {
    const server = await start({
      respond: () => answer,
      failures: [{ content: "Sure! Here is the value: 1234" }],
    })
    const ok = await Effect.runPromise(modelFor(server).extract(extractRequest()))
    expect(ok.values).toHaveLength(1)
    expect(ok.usage.calls).toBe(2)

    server.fail({ content: "not json" }, { content: '{"wrong": true}' })
    const error = await failure(modelFor(server).extract(extractRequest()))
    expect(error.retryable).toBe(false)
    expect(error.message).toContain("malformed")
    expect(server.requests).toHaveLength(4)
  })

  it("reads JSON wrapped in a code fence or after a think block", () => {
    expect(parseContent('```json\n{"a": 1}\n```')).toEqual({ a: 1 })
    expect(parseContent('<think>hmm</think>\n{"a": 2}')).toEqual({ a: 2 })
    expect(parseContent([{ type: "text", text: '{"a": 3}' }])).toEqual({ a: 3 })
    expect(parseContent("no json")).toBeUndefined()
    expect(parseRetryAfter("2")).toBe(2000)
    expect(parseRetryAfter("0.5")).toBe(500)
    expect(parseRetryAfter(new Date(61_000).toUTCString(), 1_000)).toBe(60_000)
    expect(parseRetryAfter(null)).toBeUndefined()
  })
})

describe("openai provider: concurrency, cache and usage", () => {
  it("never has more than `concurrency` requests in flight, and answers every call", async () => {
    const server = await start({ latencyMs: 30, respond: () => answer })
    const model = modelFor(server, { concurrency: 3 })
    const results = await Effect.runPromise(
      Effect.all(
        Array.from({ length: 20 }, () => model.extract(extractRequest())),
        { concurrency: "unbounded" },
      ),
    )
    expect(results).toHaveLength(20)
    expect(results.every((r) => r.values.length === 1)).toBe(true)
    expect(server.requests).toHaveLength(20)
    expect(server.maxInFlight).toBe(3)
    expect(server.inFlight).toBe(0)
  })

  it("answers an identical request from the cache without a request", async () => {
    const server = await start({ respond: () => answer })
    const cache = memoryResponseCache()
    const model = modelFor(server, { cache })
    const first = await Effect.runPromise(model.extract(extractRequest()))
    const second = await Effect.runPromise(model.extract(extractRequest()))
    expect(server.requests).toHaveLength(1)
    expect(first.usage.calls).toBe(1)
    expect(first.usage.cacheHits).toBe(0)
    expect(second.usage).toEqual({
      calls: 0,
      cacheHits: 1,
      promptTokens: 0,
      cachedTokens: 0,
      completionTokens: 0,
    })
    expect(second.values).toEqual(first.values)

    // Another model instance sharing the cache hits it too; a different request does not.
    await Effect.runPromise(modelFor(server, { cache }).extract(extractRequest()))
    expect(server.requests).toHaveLength(1)
    await Effect.runPromise(model.extract(extractRequest("Revenue was 9 EUR.")))
    expect(server.requests).toHaveLength(2)
    // A different model name is a different key.
    await Effect.runPromise(modelFor(server, { cache, model: "other-model" }).extract(extractRequest()))
    expect(server.requests).toHaveLength(3)
  })

  it("does not cache malformed answers", async () => {
    const server = await start({ respond: () => answer, failures: [{ content: "x" }, { content: "y" }] })
    const cache = memoryResponseCache()
    const model = modelFor(server, { cache })
    await failure(model.extract(extractRequest()))
    const ok = await Effect.runPromise(model.extract(extractRequest()))
    expect(ok.usage.calls).toBe(1)
    expect(server.requests).toHaveLength(3)
  })

  it("reports the server's token counts, which sum across calls", async () => {
    const server = await start({
      respond: () => answer,
      usage: (body) => ({ prompt_tokens: 100 + (body.messages?.length ?? 0), completion_tokens: 7 }),
    })
    const model = modelFor(server)
    const a = await Effect.runPromise(model.extract(extractRequest()))
    const b = await Effect.runPromise(model.extract(extractRequest("Revenue was 3 EUR.")))
    expect(a.usage).toEqual({
      calls: 1,
      cacheHits: 0,
      promptTokens: 102,
      cachedTokens: 0,
      completionTokens: 7,
    })
    const total = [a.usage, b.usage].reduce(addUsage, noUsage)
    expect(total).toEqual({
      calls: 2,
      cacheHits: 0,
      promptTokens: 204,
      cachedTokens: 0,
      completionTokens: 14,
    })
    const served = server.requests.reduce(
      (n, r) => ({ p: n.p + (r.usage?.prompt_tokens ?? 0), c: n.c + (r.usage?.completion_tokens ?? 0) }),
      { p: 0, c: 0 },
    )
    expect(served).toEqual({ p: total.promptTokens, c: total.completionTokens })
  })

  it("counts the tokens of a malformed answer that was asked again", async () => {
    const server = await start({
      respond: () => answer,
      failures: [{ content: "oops" }],
      usage: () => ({ prompt_tokens: 10, completion_tokens: 3 }),
    })
    const result = await Effect.runPromise(modelFor(server).extract(extractRequest()))
    expect(result.usage).toEqual({
      calls: 2,
      cacheHits: 0,
      promptTokens: 20,
      cachedTokens: 0,
      completionTokens: 6,
    })
  })
})
