/**
 * The developer page's API keys: a signed-in member lists, creates, rotates and revokes the keys of the
 * organisation. Keys are managed by people only: a request authenticated with an API key is refused
 * (a key cannot mint or revoke keys).
 */
import { type Conn, query, transaction } from "@dxs/db"
import type { ApiKey, NewApiKey } from "@dxs/domain/contract/Key"
import { Effect } from "effect"
import { sql } from "kysely"
import { generateKey, hashKey, KEY_PREFIX } from "./ApiKeys.ts"
import { CurrentOrganization } from "./CurrentOrganization.ts"
import { BadRequest, Forbidden, NotFound } from "./Errors.ts"
import { iso, isoOrNull } from "./Time.ts"

export type ManagedKey = ApiKey

/** A key just made: `key` is shown this once. */
export type NewKey = NewApiKey

const MAX_NAME_LENGTH = 100

const member = Effect.flatMap(CurrentOrganization, (org) =>
  org.member === undefined
    ? Effect.fail(
        Forbidden.of("API keys are managed by signed-in members (the developer page), not with an API key"),
      )
    : Effect.succeed(org),
)

const columns = ["id", "name", "key_prefix", "created_at", "last_used_at", "revoked_at"] as const

const toManaged = (r: {
  id: string
  name: string
  key_prefix: string
  created_at: Date
  last_used_at: Date | null
  revoked_at: Date | null
}): ManagedKey => ({
  id: r.id,
  name: r.name,
  prefix: r.key_prefix,
  created_at: iso(r.created_at),
  last_used_at: isoOrNull(r.last_used_at),
  revoked_at: isoOrNull(r.revoked_at),
})

const checkName = (name: string) =>
  name.length > MAX_NAME_LENGTH
    ? Effect.fail(
        BadRequest.of(`name must be at most ${MAX_NAME_LENGTH} characters`, [
          { path: "name", message: `must be at most ${MAX_NAME_LENGTH} characters` },
        ]),
      )
    : Effect.void

const insertKey = (db: Conn, organizationId: string, name: string) => {
  const key = generateKey()
  return db
    .insertInto("api_keys")
    .values({
      organization_id: organizationId,
      name,
      key_prefix: key.slice(0, KEY_PREFIX.length + 4),
      key_hash: hashKey(key),
    })
    .returning([...columns])
    .executeTakeFirstOrThrow()
    .then((row): NewKey => ({ ...toManaged(row), key }))
}

export class KeyManagement extends Effect.Service<KeyManagement>()("@dxs/services/KeyManagement", {
  succeed: {
    /** The organisation's keys, revoked ones included, newest first. */
    list: () =>
      Effect.gen(function* () {
        const org = yield* member
        const rows = yield* query((db) =>
          db
            .selectFrom("api_keys")
            .select([...columns])
            .where("organization_id", "=", org.id)
            .orderBy("created_at", "desc")
            .orderBy("id", "desc")
            .execute(),
        )
        return rows.map(toManaged)
      }),

    create: (name: string) =>
      Effect.gen(function* () {
        const org = yield* member
        yield* checkName(name.trim())
        return yield* query((db) => insertKey(db, org.id, name.trim()))
      }),

    /** A new key with the same name replaces an active one, which is revoked in the same transaction. */
    rotate: (id: string) =>
      Effect.gen(function* () {
        const org = yield* member
        return yield* transaction((trx) =>
          Effect.gen(function* () {
            const old = yield* Effect.promise(() =>
              trx
                .updateTable("api_keys")
                .set({ revoked_at: sql`now()` })
                .where("id", "=", id)
                .where("organization_id", "=", org.id)
                .where("revoked_at", "is", null)
                .returning("name")
                .executeTakeFirst(),
            )
            if (old === undefined) return yield* NotFound.of("Active API key", id)
            return yield* Effect.promise(() => insertKey(trx, org.id, old.name))
          }),
        )
      }),

    revoke: (id: string) =>
      Effect.gen(function* () {
        const org = yield* member
        const row = yield* query((db) =>
          db
            .updateTable("api_keys")
            .set({ revoked_at: sql`now()` })
            .where("id", "=", id)
            .where("organization_id", "=", org.id)
            .where("revoked_at", "is", null)
            .returning("id")
            .executeTakeFirst(),
        )
        if (row === undefined) return yield* NotFound.of("Active API key", id)
      }),
  },
}) {}
