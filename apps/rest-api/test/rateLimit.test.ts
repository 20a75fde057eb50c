/**
 * The per-key (and per-member) request limit: counted in PostgreSQL per minute, 429 problem+json with
 * Retry-After beyond it, each key and member on its own count.
 */
import { movableClock } from "@dxs/testing/MovableClock"
import { expectProblem } from "@dxs/testing/RestClient"
import { beforeAll, describe, expect, it } from "vitest"
import { startTestApi, type TestApi } from "./harness.ts"

let api: TestApi
const LIMIT = 5
/** The server's time, which stands still until a test moves it. */
const clock = movableClock()

beforeAll(async () => {
  api = await startTestApi({ rateLimitPerMinute: LIMIT, clock: clock.clock })
})

describe("the request limit", () => {
  it("answers 429 with Retry-After beyond the limit, for that key only", async () => {
    clock.toNextMinute()
    const a = api.client(await api.newKey("acme"))
    const b = api.client(await api.newKey("acme"))
    for (let i = 0; i < LIMIT; i++) expect((await a.get("/projects/")).status).toBe(200)
    const over = await a.get("/projects/")
    expectProblem(over, 429)
    const retryAfter = Number(over.headers.get("retry-after"))
    expect(retryAfter).toBeGreaterThanOrEqual(1)
    expect(retryAfter).toBeLessThanOrEqual(60)
    expect(over.body.retry_after).toBe(retryAfter)
    expect(over.body.detail).toMatch(/5 requests/)
    // Another key of the same organisation has its own count.
    expect((await b.get("/projects/")).status).toBe(200)
    // Once Retry-After's seconds have passed, the key is counted afresh.
    clock.adjust(retryAfter * 1000)
    expect((await a.get("/projects/")).status).toBe(200)
  })

  it("counts a signed-in member's requests on their own", async () => {
    clock.toNextMinute()
    await api.newMember("acme", "lin@example.com", "a long enough password")
    const signIn = await fetch(`${api.base}/auth/sign-in/`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: "lin@example.com", password: "a long enough password" }),
    })
    const cookie = /^(dxs_session=[^;]+)/.exec(signIn.headers.get("set-cookie") ?? "")![1]!
    const get = () => fetch(`${api.base}/projects/`, { headers: { cookie } })
    for (let i = 0; i < LIMIT; i++) expect((await get()).status).toBe(200)
    const over = await get()
    expect(over.status).toBe(429)
    expect(over.headers.get("retry-after")).toMatch(/^\d+$/)
  })
})
