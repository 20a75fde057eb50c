import { useTestDatabase } from "@dxs/testing/TestDatabase"
import { Effect } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { makeKysely } from "../../src/Db.ts"
import * as Access from "../../src/repositories/Access.ts"

const url = await useTestDatabase()
const db = makeKysely(url, 4)
afterAll(() => db.destroy())

const run = Effect.runPromise

describe("the access repository", () => {
  it("creates an organisation once, whoever asks", async () => {
    const [a, b] = await Promise.all([
      run(Access.ensureOrganization(db, "org-once")),
      run(Access.ensureOrganization(db, "org-once")),
    ])
    expect(a).toEqual(b)
    expect(a.name).toBe("org-once")
  })

  it("finds a key by its hash, revokes it once, and lists it with its organisation", async () => {
    const org = await run(Access.ensureOrganization(db, "org-keys"))
    const key = await run(
      Access.insertKey(db, {
        organizationId: org.id,
        name: "first",
        keyPrefix: "dxs_live_abcd",
        keyHash: "h1",
      }),
    )
    expect(key).toMatchObject({
      name: "first",
      key_prefix: "dxs_live_abcd",
      last_used_at: null,
      revoked_at: null,
    })
    expect(await run(Access.findKeyByHash(db, "h1"))).toMatchObject({
      id: key.id,
      org_id: org.id,
      name: "org-keys",
    })
    expect(await run(Access.findKeyByHash(db, "unknown"))).toBeUndefined()

    await run(Access.markKeyUsed(db, key.id))
    expect((await run(Access.findKeyByHash(db, "h1")))?.last_used_at).toBeInstanceOf(Date)

    expect(await run(Access.revokeKey(db, { keyHash: "h1" }))).toBe(key.id)
    expect(await run(Access.revokeKey(db, { id: key.id }))).toBeUndefined()
    const [listed] = await run(Access.listKeysWithOrganization(db, "org-keys"))
    expect(listed).toMatchObject({ id: key.id, organization: "org-keys", prefix: "dxs_live_abcd" })
    expect(listed?.revoked_at).toBeInstanceOf(Date)
  })

  it("revokes an organisation's key only for that organisation", async () => {
    const mine = await run(Access.ensureOrganization(db, "org-mine"))
    const other = await run(Access.ensureOrganization(db, "org-other"))
    const key = await run(
      Access.insertKey(db, { organizationId: mine.id, name: "k", keyPrefix: "dxs_live_wxyz", keyHash: "h2" }),
    )
    expect(await run(Access.revokeOrganizationKey(db, other.id, key.id))).toBeUndefined()
    expect(await run(Access.revokeOrganizationKey(db, mine.id, key.id))).toEqual({ id: key.id, name: "k" })
    expect(await run(Access.revokeOrganizationKey(db, mine.id, key.id))).toBeUndefined()
    expect((await run(Access.listOrganizationKeys(db, mine.id))).map((k) => k.id)).toEqual([key.id])
  })

  it("refuses a member's e-mail in any case, and finds it in any case", async () => {
    const org = await run(Access.ensureOrganization(db, "org-members"))
    const member = await run(Access.insertMember(db, org, { email: "Ada@Example.org", passwordHash: "x" }))
    expect(member).toMatchObject({ email: "Ada@Example.org", org_id: org.id, org_name: "org-members" })
    expect(
      await run(Access.insertMember(db, org, { email: "ada@example.ORG", passwordHash: "y" })),
    ).toBeUndefined()
    expect(await run(Access.findMemberByEmail(db, "ADA@example.org"))).toMatchObject({
      id: member?.id,
      password_hash: "x",
      disabled_at: null,
    })
    expect((await run(Access.listMembers(db, "org-members"))).map((m) => m.id)).toEqual([member?.id])
  })

  it("keeps a session until it expires or is deleted", async () => {
    const org = await run(Access.ensureOrganization(db, "org-sessions"))
    const member = (await run(Access.insertMember(db, org, { email: "s@example.org", passwordHash: "x" })))!
    const expires = await run(
      Access.insertSession(db, { tokenHash: "t1", memberId: member.id, csrfToken: "c1", ttlSeconds: 3600 }),
    )
    expect(expires.getTime()).toBeGreaterThan(Date.now())
    const live = await run(Access.findLiveSession(db, "t1"))
    expect(live).toMatchObject({ id: member.id, csrf_token: "c1", org_name: "org-sessions" })
    await run(Access.markSessionSeen(db, live!.session_id))

    await run(
      Access.insertSession(db, { tokenHash: "t2", memberId: member.id, csrfToken: "c2", ttlSeconds: -1 }),
    )
    expect(await run(Access.findLiveSession(db, "t2"))).toBeUndefined()
    expect(await run(Access.findSession(db, "t2"))).toMatchObject({ csrf_token: "c2" })
    expect(await run(Access.deleteExpiredSessions(db))).toBe(1)
    expect(await run(Access.findSession(db, "t2"))).toBeUndefined()

    await run(Access.deleteSession(db, live!.session_id))
    expect(await run(Access.findSession(db, "t1"))).toBeUndefined()
  })
})
