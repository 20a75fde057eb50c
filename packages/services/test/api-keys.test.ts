/**
 * An API key found live is believed for a moment (`CredentialMemory`) without reading the database again, and
 * never after a revocation has answered: this process forgets at once, and the revocation waits until no
 * other process can still believe the key. Two service layers over one database stand for two API
 * processes; a change made behind the services' back (SQL) shows what is answered from memory.
 */
import type { Db } from "@dxs/db"
import { useTestDatabase } from "@dxs/testing/TestDatabase"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit } from "effect"
import { sql } from "kysely"
import { beforeAll } from "vitest"
import { ApiKeys } from "../src/ApiKeys.ts"
import { credentialProcess } from "./credentialProcess.ts"

let dbUrl: string

beforeAll(async () => {
  dbUrl = await useTestDatabase()
})

/** One API process's keys (its own service and memory, believing a key `ttlMs`) over its own pool. */
const apiProcess = (ttlMs: number) =>
  Effect.map(credentialProcess(ApiKeys, ApiKeys.Default, dbUrl, ttlMs), ({ service, db }) => ({
    keys: service,
    db,
  }))

const refusal = (keys: ApiKeys, key: string) =>
  Effect.map(Effect.exit(keys.authenticate(key)), (exit) =>
    Exit.isFailure(exit) ? String(exit.cause) : "accepted",
  )

/** Revokes every key behind the services' back (no process is told). */
const revokeBehind = (db: Db["Type"]) =>
  Effect.promise(() =>
    sql`update api_keys set revoked_at = now() where revoked_at is null`.execute(db.kysely),
  )

describe("API keys believed for a moment", () => {
  it.scopedLive("answers a key it found live from memory, and forgets it when it is revoked here", () =>
    Effect.gen(function* () {
      // Believed 3 s: the checks below come within it (and the revocation waits it out).
      const { keys, db } = yield* apiProcess(3_000)
      const { key } = yield* keys.create("memory one")
      expect((yield* keys.authenticate(key)).name).toBe("memory one")
      yield* revokeBehind(db)
      // Believed without reading the database: still accepted.
      expect(yield* refusal(keys, key)).toBe("accepted")
      // A revocation through the service forgets it (the database says it was revoked already).
      yield* keys.revoke(key).pipe(Effect.ignore)
      expect(yield* refusal(keys, key)).toContain("revoked")
    }),
  )

  it.scopedLive("reads a key again once its moment has passed", () =>
    Effect.gen(function* () {
      const { keys, db } = yield* apiProcess(0)
      const { key } = yield* keys.create("memory two")
      yield* keys.authenticate(key)
      yield* revokeBehind(db)
      expect(yield* refusal(keys, key)).toContain("revoked")
    }),
  )

  it.scopedLive("a revocation answers only once no other process accepts the key", () =>
    Effect.gen(function* () {
      const one = yield* apiProcess(300)
      const other = yield* apiProcess(300)
      const { key } = yield* one.keys.create("memory three")
      expect((yield* one.keys.authenticate(key)).name).toBe("memory three")
      // The other process revokes; when it answers, the first refuses the key it had just checked.
      yield* other.keys.revoke(key)
      expect(yield* refusal(one.keys, key)).toContain("revoked")
    }),
  )
})
