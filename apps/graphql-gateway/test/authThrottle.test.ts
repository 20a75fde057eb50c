/**
 * Refused credentials are counted per client address across the REST API and GraphQL (one count in
 * PostgreSQL): beyond the limit GraphQL answers RATE_LIMITED instead of UNAUTHENTICATED, in the standalone
 * gateway and in the all-in-one process's /graphql route, while a valid key from the same address keeps
 * working.
 */

import { startTestApi, type TestApi } from "@dxs/rest-api/TestApi"
import { movableClock } from "@dxs/testing/MovableClock"
import { expectProblem, fetchFrom } from "@dxs/testing/RestClient"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { graphqlRoute } from "../src/index.ts"
import { codesOf, type Gateway, type Reply, startGateway } from "./support.ts"

const FAILURES = 30

let gql: Gateway
let allInOne: TestApi
/** The time of every process here: it stands still until a test moves it. */
const clock = movableClock()

beforeAll(async () => {
  gql = await startGateway({ authFailuresPerMinute: FAILURES, clock: clock.clock })
  allInOne = await startTestApi({
    authFailuresPerMinute: FAILURES,
    clock: clock.clock,
    routes: ({ dbUrl, blobDir }) =>
      graphqlRoute({
        dbUrl,
        blobDir,
        rateLimitPerMinute: 100_000,
        authThrottle: { signInAttemptsPerMinute: 100_000, authFailuresPerMinute: FAILURES },
        clock: clock.clock,
      }),
  })
})

afterAll(async () => {
  await gql?.close()
})

const query = (url: string, from: string, headers: Record<string, string> = {}) =>
  fetchFrom(from, url, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify({ query: "{ projects { id } }" }),
  }).then((r) => r.body as Reply)

describe("refused credentials on GraphQL", () => {
  it("are RATE_LIMITED beyond the limit per address, counted with the REST API's; a valid key still works", async () => {
    clock.toNextMinute()
    const from = "127.0.0.81"
    const key = await gql.api.newKey("acme")
    for (let i = 0; i < FAILURES / 2; i++) {
      expect(codesOf(await query(gql.url, from, { "x-api-key": "nope" }))).toEqual(["UNAUTHENTICATED"])
      expectProblem(
        await fetchFrom(from, `${gql.api.base}/projects/`, { headers: { "x-api-key": "nope" } }),
        401,
      )
    }
    const limited = await query(gql.url, from, { "x-api-key": "nope" })
    expect(codesOf(limited)).toEqual(["RATE_LIMITED"])
    expect(limited.errors?.[0]?.extensions?.retry_after).toBeGreaterThanOrEqual(1)
    expect(codesOf(await query(gql.url, from))).toEqual(["RATE_LIMITED"])
    expectProblem(await fetchFrom(from, `${gql.api.base}/projects/`), 429)
    const valid = await query(gql.url, from, { "x-api-key": key })
    expect(valid.errors).toBeUndefined()
    expect(valid.data.projects).toEqual([])
    expect(codesOf(await query(gql.url, "127.0.0.82", { "x-api-key": "nope" }))).toEqual(["UNAUTHENTICATED"])
    // Once retry_after's seconds have passed, the address is counted afresh in both.
    clock.adjust(limited.errors?.[0]?.extensions?.retry_after * 1000)
    expect(codesOf(await query(gql.url, from, { "x-api-key": "nope" }))).toEqual(["UNAUTHENTICATED"])
    expectProblem(
      await fetchFrom(from, `${gql.api.base}/projects/`, { headers: { "x-api-key": "nope" } }),
      401,
    )
  })

  it("are counted by client address in the all-in-one process's /graphql route too", async () => {
    clock.toNextMinute()
    const from = "127.0.0.83"
    const url = `${allInOne.origin}/graphql`
    const key = await allInOne.newKey("acme")
    for (let i = 0; i < FAILURES; i++)
      expect(codesOf(await query(url, from, { "x-api-key": "nope" }))).toEqual(["UNAUTHENTICATED"])
    expect(codesOf(await query(url, from, { "x-api-key": "nope" }))).toEqual(["RATE_LIMITED"])
    expect((await query(url, from, { "x-api-key": key })).errors).toBeUndefined()
    expect(codesOf(await query(url, "127.0.0.84"))).toEqual(["UNAUTHENTICATED"])
  })
})
