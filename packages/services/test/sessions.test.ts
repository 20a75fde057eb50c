/**
 * A session found live is believed for a moment (`CredentialMemory`) without reading the database again
 * (every request of the web application carries one), and never after a sign-out has answered: this process
 * forgets at once, and the sign-out waits until no other process can still believe the session. Two service
 * layers over one database stand for two API processes; a change made behind the services' back (SQL)
 * shows what is answered from memory.
 */
import type { Db } from "@dxs/db"
import { useTestDatabase } from "@dxs/testing/TestDatabase"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit } from "effect"
import { sql } from "kysely"
import { beforeAll } from "vitest"
import { makeCredentialMemory } from "../src/CredentialMemory.ts"
import { Members } from "../src/Members.ts"
import { credentialProcess } from "./credentialProcess.ts"

let dbUrl: string

beforeAll(async () => {
  dbUrl = await useTestDatabase()
})

/** One API process's members (its own service and memory, believing a session `ttlMs`) over its own pool. */
const apiProcess = (ttlMs: number) =>
  Effect.map(credentialProcess(Members, Members.Default, dbUrl, ttlMs), ({ service, db }) => ({
    members: service,
    db,
  }))

const PASSWORD = "correct horse battery"

/** A member of a new organisation, signed in: the session's token and CSRF token. */
const signedIn = (members: Members, org: string) =>
  Effect.gen(function* () {
    yield* members.create(org, `${org.replaceAll(" ", "-")}@example.com`, PASSWORD)
    return yield* members.signIn(`${org.replaceAll(" ", "-")}@example.com`, PASSWORD, undefined)
  })

const refusal = (members: Members, token: string) =>
  Effect.map(Effect.exit(members.authenticate(token)), (exit) =>
    Exit.isFailure(exit) ? String(exit.cause) : "accepted",
  )

/** Ends every session behind the services' back (no process is told). */
const endBehind = (db: Db["Type"]) => Effect.promise(() => sql`delete from sessions`.execute(db.kysely))

describe("sessions believed for a moment", () => {
  it.scopedLive("answers a session it found live from memory, and forgets it when it signs out here", () =>
    Effect.gen(function* () {
      // Believed 3 s: the checks below come within it (and the sign-out waits it out).
      const { members, db } = yield* apiProcess(3_000)
      const grant = yield* signedIn(members, "session one")
      const session = yield* members.authenticate(grant.token)
      expect(session.member.organization.name).toBe("session one")
      expect(session.csrf_token).toBe(grant.csrf_token)
      // Disabled behind the service's back: believed without reading the database, still accepted.
      yield* Effect.promise(() => sql`update members set disabled_at = now()`.execute(db.kysely))
      expect(yield* members.authenticate(grant.token)).toEqual(session)
      yield* Effect.promise(() => sql`update members set disabled_at = null`.execute(db.kysely))
      // A sign-out through the service forgets it: refused at once.
      yield* members.signOut(grant.token, grant.csrf_token)
      expect(yield* refusal(members, grant.token)).toContain("expired or ended")
    }),
  )

  it.scopedLive("reads a session again once its moment has passed", () =>
    Effect.gen(function* () {
      const { members, db } = yield* apiProcess(0)
      const grant = yield* signedIn(members, "session two")
      yield* members.authenticate(grant.token)
      yield* endBehind(db)
      expect(yield* refusal(members, grant.token)).toContain("expired or ended")
    }),
  )

  it.scopedLive("a sign-out answers only once no other process accepts the session", () =>
    Effect.gen(function* () {
      const one = yield* apiProcess(300)
      const other = yield* apiProcess(300)
      const grant = yield* signedIn(one.members, "session three")
      expect((yield* one.members.authenticate(grant.token)).member.organization.name).toBe("session three")
      // The other process signs out; when it answers, the first refuses the session it had just checked.
      yield* other.members.signOut(grant.token, grant.csrf_token)
      expect(yield* refusal(one.members, grant.token)).toContain("expired or ended")
    }),
  )
})

describe("the memory of credentials", () => {
  it("believes a credential no longer than it lasts, nor a read begun before everything was forgotten", () => {
    const memory = makeCredentialMemory<string>(60_000)
    const now = Date.now()
    memory.remember("lasting", "a", memory.generation(), now)
    expect(memory.get("lasting")).toBe("a")
    // A session that ends within the moment is believed until its own end only.
    memory.remember("ended", "b", memory.generation(), now, now - 1)
    expect(memory.get("ended")).toBeUndefined()
    const readIn = memory.generation()
    memory.forgetAll()
    expect(memory.get("lasting")).toBeUndefined()
    memory.remember("stale", "c", readIn, now)
    expect(memory.get("stale")).toBeUndefined()
    // A moment of 0: nothing is believed.
    const never = makeCredentialMemory<string>(0)
    never.remember("lasting", "a", never.generation(), now)
    expect(never.get("lasting")).toBeUndefined()
  })
})
