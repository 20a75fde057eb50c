/**
 * GraphQL with the web application's session, by the REST API's rules: the `dxs_session` cookie
 * authenticates, anything but GET also needs the session's CSRF token, the member's organisation scopes
 * everything, and a member's override records the member's e-mail whatever the input says.
 */
import { randomUUID } from "node:crypto"
import { type Client, createProject } from "@dxs/testing/RestClient"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { codesOf, type Gateway, type Reply, seedAmountResult, startGateway } from "./support.ts"

const PASSWORD = "correct horse battery staple"

let gql: Gateway
let org: string
let a: Client
let b: Client

interface Session {
  readonly cookie: string
  readonly csrf: string
}

const signIn = async (email: string): Promise<Session> => {
  const res = await fetch(`${gql.api.base}/auth/sign-in/`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email, password: PASSWORD }),
  })
  const body = (await res.json()) as any
  expect(res.status, JSON.stringify(body)).toBe(200)
  const cookie = /^(dxs_session=[^;]+)/.exec(res.headers.get("set-cookie") ?? "")?.[1]
  expect(cookie).toBeDefined()
  return { cookie: cookie!, csrf: body.csrf_token }
}

/** A GraphQL request as the web application sends it: the cookie, and the CSRF token when `csrf`. */
const post = async (
  s: Session | undefined,
  query: string,
  variables: Record<string, unknown> = {},
  csrf = true,
): Promise<Reply> => {
  const res = await fetch(gql.url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      ...(s === undefined ? {} : { cookie: s.cookie }),
      ...(s !== undefined && csrf ? { "x-csrf-token": s.csrf } : {}),
    },
    body: JSON.stringify({ query, variables }),
  })
  return (await res.json()) as Reply
}

const get = async (s: Session, query: string): Promise<Reply> => {
  const res = await fetch(`${gql.url}?query=${encodeURIComponent(query)}`, {
    headers: { cookie: s.cookie, accept: "application/json" },
  })
  return (await res.json()) as Reply
}

beforeAll(async () => {
  gql = await startGateway()
  org = `session-${randomUUID()}`
  await gql.api.newMember(org, "ada@example.com", PASSWORD)
  a = gql.api.client(await gql.api.newKey(org))
  b = gql.api.client(await gql.api.newKey(`other-${randomUUID()}`))
})

afterAll(async () => {
  await gql?.close()
})

describe("GraphQL with a session", () => {
  it("reads the member's organisation; a POST needs the CSRF token, a GET does not", async () => {
    const project = await createProject(a, { name: "Ours" })
    const other = await createProject(b, { name: "Theirs" })
    const s = await signIn("ada@example.com")
    const query = `{ projects { id name } }`

    const withToken = await post(s, query)
    expect(withToken.errors).toBeUndefined()
    expect(withToken.data.projects.map((p: any) => p.id)).toEqual([project])
    const viaGet = await get(s, query)
    expect(viaGet.errors).toBeUndefined()
    expect(viaGet.data.projects.map((p: any) => p.id)).toEqual([project])

    const withoutToken = await post(s, query, {}, false)
    expect(codesOf(withoutToken)).toEqual(["FORBIDDEN"])
    const wrongToken = await post({ ...s, csrf: "not-the-token" }, query)
    expect(codesOf(wrongToken)).toEqual(["FORBIDDEN"])

    const theirs = await post(s, `query ($p: ID!) { project(id: $p) { id } }`, { p: other })
    expect(codesOf(theirs)).toEqual(["NOT_FOUND"])
  })

  it("records the member's e-mail on an override, whatever the input names", async () => {
    const { project, result } = await seedAmountResult(gql.api, a)
    const s = await signIn("ada@example.com")
    const override = `mutation ($p: ID!, $id: ID!, $input: ResultOverrideInput!) {
      overrideResult(projectId: $p, id: $id, input: $input) { value updated_by_email } }`
    const variables = {
      p: project,
      id: result,
      input: { value: "1300", updated_by_email: "someone@else.io" },
    }
    expect(codesOf(await post(s, override, variables, false))).toEqual(["FORBIDDEN"])
    const r = await post(s, override, variables)
    expect(r.errors).toBeUndefined()
    expect(r.data.overrideResult).toEqual({ value: 1300, updated_by_email: "ada@example.com" })
    expect((await a.get(`/projects/${project}/results/${result}/`)).body).toMatchObject({
      value: 1300,
      updated_by_email: "ada@example.com",
    })
  })

  it("is UNAUTHENTICATED without credentials, with an unknown session, and after sign-out", async () => {
    const none = await post(undefined, `{ projects { id } }`)
    expect(codesOf(none)).toEqual(["UNAUTHENTICATED"])
    expect(none.errors?.[0]?.message).toMatch(/X-API-Key.*sign in/)
    const unknown = await post({ cookie: "dxs_session=nope", csrf: "x" }, `{ projects { id } }`)
    expect(codesOf(unknown)).toEqual(["UNAUTHENTICATED"])
    const s = await signIn("ada@example.com")
    const out = await fetch(`${gql.api.base}/auth/sign-out/`, {
      method: "POST",
      headers: { cookie: s.cookie, "x-csrf-token": s.csrf },
    })
    expect(out.status).toBe(204)
    expect(codesOf(await post(s, `{ projects { id } }`))).toEqual(["UNAUTHENTICATED"])
  })
})
