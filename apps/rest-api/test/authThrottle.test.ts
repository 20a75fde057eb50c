/**
 * Guessing is throttled: sign-in attempts per e-mail and per client address, and refused credentials per
 * client address, are counted per minute in PostgreSQL; beyond the limit the answer is 429 with
 * Retry-After, whatever the credentials. Sign-out needs the session's CSRF token like any other write.
 * Each test speaks from its own loopback address (the server sees the TCP peer).
 */
import { movableClock } from "@dxs/testing/MovableClock"
import { expectProblem, fetchFrom, type Reply } from "@dxs/testing/RestClient"
import { beforeAll, describe, expect, it } from "vitest"
import { startTestApi, type TestApi } from "./harness.ts"

const SIGN_INS = 10
const FAILURES = 30
const PASSWORD = "correct horse battery staple"

let api: TestApi
let key: string
/** The server's time: it stands still until a test moves it, so no count crosses into a new minute. */
const clock = movableClock()

beforeAll(async () => {
  api = await startTestApi({
    signInAttemptsPerMinute: SIGN_INS,
    authFailuresPerMinute: FAILURES,
    clock: clock.clock,
  })
  key = await api.newKey("acme")
  for (const name of ["ada", "bob", "cy", "dee", "eve", "fay"])
    await api.newMember("acme", `${name}@example.com`, PASSWORD)
})

const signIn = (from: string, email: string, password: string) =>
  fetchFrom(from, `${api.base}/auth/sign-in/`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email, password }),
  })

const expectThrottled = (r: Reply) => {
  expectProblem(r, 429)
  const retryAfter = Number(r.headers.get("retry-after"))
  expect(retryAfter).toBeGreaterThanOrEqual(1)
  expect(retryAfter).toBeLessThanOrEqual(60)
  expect(r.body.retry_after).toBe(retryAfter)
  expect(r.headers.get("set-cookie")).toBeNull()
}

describe("sign-in attempts", () => {
  it("are limited per client address: the 11th in a minute is 429, even with the right password", async () => {
    clock.toNextMinute()
    const from = "127.0.0.21"
    for (let i = 0; i < SIGN_INS; i++)
      expectProblem(await signIn(from, `nobody${i}@example.com`, "wrong password!"), 401)
    const eleventh = await signIn(from, "ada@example.com", PASSWORD)
    expectThrottled(eleventh)
    expect(eleventh.body.detail).toMatch(/sign-in attempts/)
    // Another address is not throttled.
    expect((await signIn("127.0.0.22", "ada@example.com", PASSWORD)).status).toBe(200)
  })

  it("are limited per e-mail address (any case), from however many addresses", async () => {
    clock.toNextMinute()
    for (let i = 0; i < SIGN_INS; i++)
      expectProblem(
        await signIn(`127.0.0.${31 + i}`, i % 2 ? "BOB@example.com" : "bob@example.com", "nope"),
        401,
      )
    expectThrottled(await signIn("127.0.0.41", "bob@example.com", PASSWORD))
    expectThrottled(await signIn("127.0.0.42", "bob@example.com", "still wrong"))
    // Someone else signs in from the same address.
    expect((await signIn("127.0.0.41", "cy@example.com", PASSWORD)).status).toBe(200)
  })

  it("a successful sign-in does not reset the count", async () => {
    clock.toNextMinute()
    const from = "127.0.0.51"
    for (let i = 0; i < 5; i++) expectProblem(await signIn(from, "dee@example.com", "wrong password"), 401)
    expect((await signIn(from, "eve@example.com", PASSWORD)).status).toBe(200)
    for (let i = 0; i < 4; i++) expectProblem(await signIn(from, "dee@example.com", "wrong password"), 401)
    expectThrottled(await signIn(from, "fay@example.com", PASSWORD))
  })
})

describe("refused credentials", () => {
  const projects = (from: string, headers: Record<string, string> = {}) =>
    fetchFrom(from, `${api.base}/projects/`, { headers })

  it("answer 429 beyond the limit per address, while a valid key from that address keeps working", async () => {
    clock.toNextMinute()
    const from = "127.0.0.61"
    const bad: Array<Record<string, string>> = [
      { "x-api-key": "nope" },
      { "x-api-key": `dxs_live_${"a".repeat(32)}` },
      {},
      { cookie: "dxs_session=not-a-session" },
    ]
    for (let i = 0; i < FAILURES; i++) expectProblem(await projects(from, bad[i % bad.length]), 401)
    for (const headers of bad) expectThrottled(await projects(from, headers))
    expect((await projects(from, { "x-api-key": key })).status).toBe(200)
    // Other addresses are not affected.
    expectProblem(await projects("127.0.0.62", { "x-api-key": "nope" }), 401)
    // In the next minute the address is counted afresh.
    const retryAfter = Number((await projects(from)).headers.get("retry-after"))
    clock.adjust(retryAfter * 1000)
    expectProblem(await projects(from, { "x-api-key": "nope" }), 401)
  })
})

describe("sign-out", () => {
  it("needs the session's CSRF token (403 without it or with another); without a session it is 204", async () => {
    const from = "127.0.0.71"
    const signedIn = await signIn(from, "ada@example.com", PASSWORD)
    expect(signedIn.status).toBe(200)
    const cookie = /^(dxs_session=[^;]+)/.exec(signedIn.headers.get("set-cookie") ?? "")![1]!
    const csrf = signedIn.body.csrf_token as string
    const signOut = (headers: Record<string, string>) =>
      fetchFrom(from, `${api.base}/auth/sign-out/`, { method: "POST", headers })
    const session = () => fetchFrom(from, `${api.base}/auth/session/`, { headers: { cookie } })

    const without = await signOut({ cookie })
    expectProblem(without, 403)
    expect(without.body.detail).toMatch(/X-CSRF-Token/)
    expect(without.headers.get("set-cookie")).toBeNull()
    expectProblem(await signOut({ cookie, "x-csrf-token": "not-the-token" }), 403)
    expect((await session()).status).toBe(200)

    const out = await signOut({ cookie, "x-csrf-token": csrf })
    expect(out.status).toBe(204)
    expect(out.headers.get("set-cookie")).toMatch(/^dxs_session=;.*Max-Age=0/)
    expectProblem(await session(), 401)
    expect((await signOut({})).status).toBe(204)
  })
})
