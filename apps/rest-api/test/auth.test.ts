/**
 * Members' sessions through the REST API: sign-in sets an HttpOnly SameSite cookie, the cookie
 * authenticates like an API key (tenant-scoped), writes need the session's CSRF token, sessions expire
 * and end at sign-out, and actions record the member's e-mail.
 */
import { makeKysely } from "@dxs/db"
import { PASSWORD_HASH_COST } from "@dxs/services"
import { type Client, createProject, expectProblem } from "@dxs/testing/RestClient"
import { agentVersion, projectRows } from "@dxs/testing/Seeding"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startTestApi, type TestApi } from "./harness.ts"

let api: TestApi
let db: ReturnType<typeof makeKysely>
let a: Client
const PASSWORD = "correct horse battery staple"

beforeAll(async () => {
  // The service's own cost of password hashes (the suites' harness lowers it), as the server stores them.
  api = await startTestApi({ passwordHashCost: PASSWORD_HASH_COST })
  db = makeKysely(api.dbUrl, 2)
  await api.newMember("acme", "Ada@Example.com", PASSWORD)
  await api.newMember("globex", "grace@example.com", PASSWORD)
  a = api.client(await api.newKey("acme"))
})

afterAll(async () => {
  await db?.destroy()
})

interface Session {
  readonly cookie: string
  readonly csrf: string
  readonly setCookie: string
  readonly body: any
}

const signIn = async (email: string, password = PASSWORD): Promise<Session> => {
  const res = await fetch(`${api.base}/auth/sign-in/`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email, password }),
  })
  const body = (await res.json()) as any
  expect(res.status, JSON.stringify(body)).toBe(200)
  const setCookie = res.headers.get("set-cookie") ?? ""
  const cookie = /^(dxs_session=[^;]+)/.exec(setCookie)?.[1] ?? ""
  return { cookie, csrf: body.csrf_token, setCookie, body }
}

/** A request as a browser of this session sends it (the cookie; the CSRF header when `csrf`). */
const call = async (s: Session, method: string, path: string, body?: unknown, csrf = true) => {
  const res = await fetch(api.base + path, {
    method,
    headers: {
      cookie: s.cookie,
      ...(csrf ? { "x-csrf-token": s.csrf } : {}),
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  })
  const text = await res.text()
  return { status: res.status, headers: res.headers, body: text === "" ? undefined : JSON.parse(text) }
}

describe("sign-in", () => {
  it("sets an HttpOnly, SameSite=Lax session cookie and answers the member and a CSRF token", async () => {
    const s = await signIn("ada@example.com")
    expect(s.body).toEqual({
      member: {
        id: expect.any(String),
        email: "Ada@Example.com",
        organization: { id: expect.any(String), name: "acme" },
        created_at: expect.any(String),
      },
      csrf_token: expect.stringMatching(/^[A-Za-z0-9_-]{40,}$/),
      expires_at: expect.any(String),
    })
    expect(s.cookie).toMatch(/^dxs_session=[A-Za-z0-9_-]{40,}$/)
    expect(s.setCookie).toMatch(/HttpOnly/)
    expect(s.setCookie).toMatch(/SameSite=Lax/)
    expect(s.setCookie).toMatch(/Path=\//)
    expect(s.setCookie).toMatch(/Max-Age=43200/)
    const hours = (Date.parse(s.body.expires_at) - Date.now()) / 3_600_000
    expect(hours).toBeGreaterThan(11.9)
    expect(hours).toBeLessThanOrEqual(12)
  })

  it("refuses a wrong password and an unknown e-mail alike, and a malformed body", async () => {
    const wrong = async (email: string, password: string) => {
      const res = await fetch(`${api.base}/auth/sign-in/`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ email, password }),
      })
      return { status: res.status, headers: res.headers, body: (await res.json()) as any }
    }
    const badPassword = await wrong("ada@example.com", "nope nope nope nope")
    const unknown = await wrong("nobody@example.com", PASSWORD)
    expectProblem(badPassword, 401)
    expectProblem(unknown, 401)
    expect(badPassword.body.detail).toBe(unknown.body.detail)
    expect(badPassword.headers.get("set-cookie")).toBeNull()
    const res = await fetch(`${api.base}/auth/sign-in/`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: "ada@example.com" }),
    })
    expect(res.status).toBe(400)
  })
})

describe("members", () => {
  it("refuses a taken e-mail (any case) and leaves nothing behind", async () => {
    await expect(api.newMember("initech", "ADA@example.com", PASSWORD)).rejects.toThrow(/already exists/)
    const orgs = await db.selectFrom("organizations").select("name").where("name", "=", "initech").execute()
    expect(orgs).toEqual([])
  })

  it("stores passwords as scrypt hashes only", async () => {
    const rows = await db.selectFrom("members").select(["email", "password_hash"]).execute()
    for (const r of rows) {
      expect(r.password_hash).toMatch(/^scrypt\$32768\$8\$1\$[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+$/)
      expect(r.password_hash).not.toContain(PASSWORD)
    }
  })
})

describe("a session", () => {
  it("authenticates like an API key, scoped to the member's organisation", async () => {
    const s = await signIn("ada@example.com")
    const mine = await createProject(a, { name: "Acme's" })
    const listed = await call(s, "GET", "/projects/")
    expect(listed.status).toBe(200)
    expect(listed.body.map((p: any) => p.id)).toContain(mine)
    const other = await signIn("grace@example.com")
    expect((await call(other, "GET", `/projects/${mine}/`)).status).toBe(404)
    expect((await call(other, "GET", "/projects/")).body.map((p: any) => p.id)).not.toContain(mine)
  })

  it("needs the session's CSRF token for writes (403 without it or with another)", async () => {
    const s = await signIn("ada@example.com")
    const without = await call(s, "POST", "/projects/", { name: "no token" }, false)
    expectProblem(without, 403)
    expect(without.body.detail).toMatch(/X-CSRF-Token/)
    const other = await signIn("ada@example.com")
    const mixed = await call({ ...s, csrf: other.csrf }, "POST", "/projects/", { name: "wrong token" })
    expectProblem(mixed, 403)
    const ok = await call(s, "POST", "/projects/", { name: "with token" })
    expect(ok.status).toBe(201)
    // Reads need no token.
    expect((await call(s, "GET", `/projects/${ok.body.id}/`, undefined, false)).status).toBe(200)
  })

  it("tells its member, token and expiry; an API key is not a session", async () => {
    const s = await signIn("ada@example.com")
    const session = await call(s, "GET", "/auth/session/")
    expect(session.status).toBe(200)
    expect(session.body).toEqual({ member: s.body.member, csrf_token: s.csrf, expires_at: s.body.expires_at })
    expectProblem(await a.get("/auth/session/"), 401)
  })

  it("records the member's e-mail on an override and a review, whatever the body names", async () => {
    const s = await signIn("ada@example.com")
    const projectId = await createProject(a)
    const agent = await a.post(`/projects/${projectId}/agents/`, { name: "Total", value_type: "number" })
    const seed = projectRows(db, projectId)
    const version = await agentVersion(db, agent.body.id)
    const av = await seed.atomicValue(version.id, [])
    const resultId = await seed.result(version, av, {
      result_name: "Total",
      value: 10,
      resolution_status: "Resolved",
    })
    const overridden = await call(s, "PATCH", `/projects/${projectId}/results/${resultId}/`, {
      value: 12,
      updated_by_email: "someone.else@example.com",
    })
    expect(overridden.status, JSON.stringify(overridden.body)).toBe(200)
    expect(overridden.body.updated_by_email).toBe("Ada@Example.com")
    const reviewed = await call(s, "POST", `/projects/${projectId}/results/${resultId}/review/`, {
      status: "positive",
    })
    expect(reviewed.body.latest_review_by).toBe("Ada@Example.com")
    // An API client names the person itself.
    const byKey = await a.patch(`/projects/${projectId}/results/${resultId}/`, {
      value: 13,
      updated_by_email: "clerk@example.com",
    })
    expect(byKey.body.updated_by_email).toBe("clerk@example.com")
  })

  it("ends at sign-out: the cookie is cleared and the token no longer works", async () => {
    const s = await signIn("ada@example.com")
    const out = await call(s, "POST", "/auth/sign-out/")
    expect(out.status).toBe(204)
    expect(out.headers.get("set-cookie")).toMatch(/^dxs_session=;.*Max-Age=0/)
    const after = await call(s, "GET", "/projects/")
    expectProblem(after, 401)
    expect(after.body.detail).toMatch(/sign in again/)
  })

  it("expires", async () => {
    const s = await signIn("ada@example.com")
    await db
      .updateTable("sessions")
      .set({ expires_at: new Date(Date.now() - 1000) })
      .execute()
    expectProblem(await call(s, "GET", "/projects/"), 401)
  })

  it("without a cookie or key, the answer names both ways in; a bad key alone is the key's problem", async () => {
    const r = await fetch(`${api.base}/projects/`)
    expect(r.status).toBe(401)
    expect(r.headers.get("content-type")).toContain("application/problem+json")
    const detail = ((await r.json()) as any).detail
    expect(detail).toMatch(/X-API-Key/)
    expect(detail).toMatch(/sign in/)
    const bad = await fetch(`${api.base}/projects/`, { headers: { "x-api-key": "nope" } })
    expect(bad.status).toBe(401)
    expect(((await bad.json()) as any).detail).toBe("The API key is malformed")
  })
})

describe("the developer page's API keys", () => {
  const withKey = (key: string) => fetch(`${api.base}/projects/`, { headers: { "x-api-key": key } })

  it("a member creates, lists, rotates and revokes the organisation's keys", async () => {
    const s = await signIn("ada@example.com")
    const created = await call(s, "POST", "/keys/", { name: "ci" })
    expect(created.status, JSON.stringify(created.body)).toBe(201)
    expect(created.body).toMatchObject({ name: "ci", revoked_at: null, last_used_at: null })
    expect(created.body.key).toMatch(/^dxs_live_[0-9A-Za-z]{32}$/)
    expect(created.body.prefix).toBe(created.body.key.slice(0, 13))
    expect((await withKey(created.body.key)).status).toBe(200)

    const listed = await call(s, "GET", "/keys/")
    const row = listed.body.find((k: any) => k.id === created.body.id)
    expect(row).toEqual({ ...created.body, key: undefined, last_used_at: expect.any(String) })
    expect(JSON.stringify(listed.body)).not.toContain(created.body.key)

    const rotated = await call(s, "POST", `/keys/${created.body.id}/rotate/`)
    expect(rotated.status).toBe(201)
    expect(rotated.body.name).toBe("ci")
    expect(rotated.body.key).not.toBe(created.body.key)
    expect((await withKey(created.body.key)).status).toBe(401)
    expect((await withKey(rotated.body.key)).status).toBe(200)

    const revoked = await call(s, "DELETE", `/keys/${rotated.body.id}/`)
    expect(revoked.status).toBe(204)
    expect((await withKey(rotated.body.key)).status).toBe(401)
    expectProblem(await call(s, "DELETE", `/keys/${rotated.body.id}/`), 404)
  })

  it("is the member's organisation's only, and not for API keys", async () => {
    const ada = await signIn("ada@example.com")
    const grace = await signIn("grace@example.com")
    const key = (await call(ada, "POST", "/keys/", { name: "mine" })).body
    expectProblem(await call(grace, "POST", `/keys/${key.id}/rotate/`), 404)
    expectProblem(await call(grace, "DELETE", `/keys/${key.id}/`), 404)
    expect((await call(grace, "GET", "/keys/")).body.map((k: any) => k.id)).not.toContain(key.id)
    const byKey = await a.get("/keys/")
    expectProblem(byKey, 403)
    expectProblem(await a.post("/keys/", { name: "minted" }), 403)
    // Writes need the CSRF token like any other.
    expectProblem(await call(ada, "POST", "/keys/", { name: "no token" }, false), 403)
  })
})
