import { MAX_TEXT_LENGTH } from "@dxs/domain/Limits"
import { createProject } from "@dxs/testing/RestClient"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { graphqlTextDepth } from "../src/InputLimits.ts"
import { codesOf, type Gateway, graphqlOn, startGateway } from "./support.ts"

let gateway: Gateway
let key: string
let project: string
const gql = graphqlOn(() => gateway)

beforeAll(async () => {
  gateway = await startGateway()
  key = await gateway.api.newKey("acme")
  project = await createProject(gateway.api.client(key))
})
afterAll(() => gateway.close())

const post = (body: string, contentType = "application/json") =>
  fetch(gateway.url, { method: "POST", headers: { "content-type": contentType, "x-api-key": key }, body })

const deep = (n: number) => JSON.parse(`${'{"a":'.repeat(n)}1${"}".repeat(n)}`)

describe("GraphQL input limits", () => {
  it("refuses a NUL byte or a lone surrogate in a variable with BAD_USER_INPUT naming it", async () => {
    const r = await gql(key, "mutation($n: String!) { createProject(input: { name: $n }) { id } }", {
      n: "a\u0000b",
    })
    expect(codesOf(r)).toEqual(["BAD_USER_INPUT"])
    expect(r.errors?.[0]?.message).toMatch(/variables\/n: .*NUL/)
    const surrogate = await post(
      '{"query":"mutation($n: String!) { createProject(input: { name: $n }) { id } }","variables":{"n":"\\ud800"}}',
    )
    expect(codesOf((await surrogate.json()) as never)).toEqual(["BAD_USER_INPUT"])
  })

  it("refuses a NUL byte or an over-long string written into the query", async () => {
    const nul = await gql(key, `mutation { createProject(input: { name: "a\\u0000b" }) { id } }`)
    expect(codesOf(nul)).toEqual(["BAD_USER_INPUT"])
    const long = await gql(
      key,
      `mutation { createProject(input: { name: "x", description: "${"d".repeat(MAX_TEXT_LENGTH + 1)}" }) { id } }`,
    )
    expect(codesOf(long)).toEqual(["BAD_USER_INPUT"])
  })

  it("refuses a schema nested deeper than the limit, as a variable or written into the query", async () => {
    const r = await gql(
      key,
      "mutation($p: ID!, $s: JSON!) { setOutputSchema(projectId: $p, schema: $s, autoMap: true) { status } }",
      { p: project, s: { type: "object", properties: deep(3000) } },
    )
    expect(codesOf(r)).toEqual(["BAD_USER_INPUT"])
    const literal = `mutation { setOutputSchema(projectId: "${project}", autoMap: true, schema: ${"{a:".repeat(3000)}1${"}".repeat(3000)}) { status } }`
    const l = await gql(key, literal)
    expect(codesOf(l)).toEqual(["BAD_USER_INPUT"])
  })

  it("refuses a body over the limit with 413 and a malformed one with 400", async () => {
    const big = await post(
      JSON.stringify({ query: "{ projects { id } }", variables: { x: "y".repeat(1_100_000) } }),
    )
    expect(big.status).toBe(413)
    expect(codesOf((await big.json()) as never)).toEqual(["PAYLOAD_TOO_LARGE"])
    const malformed = await post('{"query": "{ projects { id } }",}')
    expect(malformed.status).toBe(400)
    const body = (await malformed.json()) as { errors: Array<{ message: string }> }
    expect(body.errors[0]?.message).toMatch(/not valid JSON/)
  })

  it("takes only JSON posts (no multipart uploads)", async () => {
    const form = new FormData()
    form.set("operations", JSON.stringify({ query: "{ projects { id } }" }))
    const r = await fetch(gateway.url, { method: "POST", headers: { "x-api-key": key }, body: form })
    expect(r.status).toBe(415)
  })

  it("still answers ordinary operations", async () => {
    const r = await gql(key, "{ projects { id } }")
    expect(r.errors).toBeUndefined()
  })
})

describe("graphqlTextDepth", () => {
  it.each([
    ["{ a }", 1],
    ["{ a { b(x: {c: [1]}) } }", 5],
    ['{ a(s: "{{{{") }', 2],
    ['{ a(s: """ {{{ \\""" {{ """) }', 2],
    ["# {{{{\n{ a }", 1],
  ])("%s is %d deep", (text, depth) => {
    expect(graphqlTextDepth(text, 100)).toBe(depth)
  })
})
