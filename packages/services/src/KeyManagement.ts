/**
 * The developer page's API keys: a signed-in member lists, creates, rotates and revokes the keys of the
 * organisation. Keys are managed by people only: a request authenticated with an API key is refused
 * (a key cannot mint or revoke keys).
 */
import { type Conn, Db, transaction, withDb } from "@dxs/db"
import * as Access from "@dxs/db/repositories/Access"
import type { ApiKey, NewApiKey } from "@dxs/domain/contract/Key"
import { Context, Effect } from "effect"
import { ApiKeys, generateKey, hashKey, KEY_PREFIX } from "./ApiKeys.ts"
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

const toManaged = (r: Access.KeyRow): ManagedKey => ({
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
  return Access.insertKey(db, {
    organizationId,
    name,
    keyPrefix: key.slice(0, KEY_PREFIX.length + 4),
    keyHash: hashKey(key),
  }).pipe(Effect.map((row): NewKey => ({ ...toManaged(row), key })))
}

export class KeyManagement extends Effect.Service<KeyManagement>()("@dxs/services/KeyManagement", {
  effect: Effect.gen(function* () {
    const storage = Context.make(Db, yield* Db)
    const provide = Effect.provide(storage)
    const keys = yield* ApiKeys
    return {
      /** The organisation's keys, revoked ones included, newest first. */
      list: () =>
        Effect.gen(function* () {
          const org = yield* member
          const rows = yield* withDb((db) => Access.listOrganizationKeys(db, org.id))
          return rows.map(toManaged)
        }).pipe(provide),

      create: (name: string) =>
        Effect.gen(function* () {
          const org = yield* member
          yield* checkName(name.trim())
          return yield* withDb((db) => insertKey(db, org.id, name.trim()))
        }).pipe(provide),

      /** A new key with the same name replaces an active one, which is revoked in the same transaction. */
      rotate: (id: string) =>
        Effect.gen(function* () {
          const org = yield* member
          return yield* transaction((trx) =>
            Effect.gen(function* () {
              const old = yield* Access.revokeOrganizationKey(trx, org.id, id)
              if (old === undefined) return yield* NotFound.of("Active API key", id)
              return yield* insertKey(trx, org.id, old.name)
            }),
          ).pipe(Effect.ensuring(keys.forgetKeys()))
        }).pipe(provide),

      revoke: (id: string) =>
        Effect.gen(function* () {
          const org = yield* member
          const row = yield* withDb((db) => Access.revokeOrganizationKey(db, org.id, id)).pipe(
            Effect.ensuring(keys.forgetKeys()),
          )
          if (row === undefined) return yield* NotFound.of("Active API key", id)
        }).pipe(provide),
    }
  }),
  dependencies: [ApiKeys.Default],
}) {}
