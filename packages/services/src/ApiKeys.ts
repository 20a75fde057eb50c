import { createHash, randomBytes } from "node:crypto"
import { Db, transaction, withDb } from "@dxs/db"
import * as Access from "@dxs/db/repositories/Access"
import { Context, Effect } from "effect"
import { CredentialMemory, makeCredentialMemory } from "./CredentialMemory.ts"
import { NotFound, Unauthorized } from "./Errors.ts"

/** How often a key's use is recorded (`last_used_at`): at most once a minute, no write on every request. */
const USE_RECORDED_EVERY_MS = 60_000

/** Keys are `dxs_live_` + 32 base62 characters; only their SHA-256 is stored, so a key is shown once. */
export const KEY_PREFIX = "dxs_live_"
const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
const KEY_PATTERN = /^dxs_live_[0-9A-Za-z]{32}$/

export const generateKey = (): string => {
  let out = ""
  // Rejection sampling keeps every character equally likely.
  while (out.length < 32) {
    for (const byte of randomBytes(48)) {
      if (byte < 248 && out.length < 32) out += BASE62[byte % 62]
    }
  }
  return KEY_PREFIX + out
}

export const hashKey = (key: string): string => createHash("sha256").update(key).digest("hex")

export interface ApiKeyInfo {
  readonly id: string
  readonly organization: string
  readonly name: string
  readonly prefix: string
  readonly created_at: string
  readonly last_used_at: string | null
  readonly revoked_at: string | null
}

/** A key found live: its organisation, and when its use was last recorded (`last_used_at`), epoch ms. */
interface KnownKey {
  readonly organization: { readonly id: string; readonly name: string }
  readonly usedAt: number
}

export class ApiKeys extends Effect.Service<ApiKeys>()("@dxs/services/ApiKeys", {
  effect: Effect.gen(function* () {
    const storage = Context.make(Db, yield* Db)
    const provide = Effect.provide(storage)
    // Keys found live are believed for a moment (see CredentialMemory); a revocation waits it out.
    const { ttlMs } = yield* CredentialMemory
    const memory = makeCredentialMemory<KnownKey>(ttlMs)
    const forgetKeys = memory.forgetEverywhere
    return {
      /** Creates the organisation when it does not exist yet, then a key for it. Returns the key in clear, once. */
      create: (orgName: string, name = "") =>
        Effect.gen(function* () {
          const trimmed = orgName.trim()
          if (trimmed === "") return yield* Effect.die(new Error("organisation name must not be empty"))
          const key = generateKey()
          return yield* transaction((trx) =>
            Effect.gen(function* () {
              const org = yield* Access.ensureOrganization(trx, trimmed)
              const row = yield* Access.insertKey(trx, {
                organizationId: org.id,
                name,
                keyPrefix: key.slice(0, KEY_PREFIX.length + 4),
                keyHash: hashKey(key),
              })
              return { id: row.id, organization: org.name, key }
            }),
          )
        }).pipe(provide),

      list: (orgName?: string) =>
        withDb((db) => Access.listKeysWithOrganization(db, orgName))
          .pipe(
            Effect.map((rows) =>
              rows.map(
                (r): ApiKeyInfo => ({
                  ...r,
                  created_at: r.created_at.toISOString(),
                  last_used_at: r.last_used_at?.toISOString() ?? null,
                  revoked_at: r.revoked_at?.toISOString() ?? null,
                }),
              ),
            ),
          )
          .pipe(provide),

      /** Revokes by key id or by the key itself. */
      revoke: (idOrKey: string) =>
        Effect.flatMap(
          withDb((db) => {
            const byKey = idOrKey.startsWith(KEY_PREFIX)
            const isUuid = /^[0-9a-f-]{36}$/i.test(idOrKey)
            if (!byKey && !isUuid) return Effect.succeed(undefined)
            return Access.revokeKey(db, byKey ? { keyHash: hashKey(idOrKey) } : { id: idOrKey })
          }).pipe(Effect.ensuring(forgetKeys)),
          (id) =>
            id !== undefined ? Effect.succeed(id) : Effect.fail(NotFound.of("Active API key", idOrKey)),
        ).pipe(provide),

      /** The organisation of a live key, or Unauthorized. */
      authenticate: (key: string | undefined) =>
        Effect.gen(function* () {
          if (key === undefined || key === "")
            return yield* Unauthorized.of("The X-API-Key header is required")
          if (!KEY_PATTERN.test(key)) return yield* Unauthorized.of("The API key is malformed")
          const keyHash = hashKey(key)
          const known = memory.get(keyHash)
          if (known !== undefined && Date.now() - known.usedAt <= USE_RECORDED_EVERY_MS)
            return known.organization
          const readIn = memory.generation()
          const readAt = Date.now()
          const found = yield* withDb((db) => Access.findKeyByHash(db, keyHash))
          if (!found) return yield* Unauthorized.of("The API key is not known")
          if (found.revoked_at) return yield* Unauthorized.of("The API key has been revoked")
          let usedAt = found.last_used_at?.getTime() ?? 0
          if (Date.now() - usedAt > USE_RECORDED_EVERY_MS) {
            yield* withDb((db) => Access.markKeyUsed(db, found.id))
            usedAt = Date.now()
          }
          const organization = { id: found.org_id, name: found.name }
          memory.remember(keyHash, { organization, usedAt }, readIn, readAt)
          return organization
        }).pipe(provide),

      /**
       * After keys were revoked elsewhere in this process (the developer page): forgets them here, and
       * waits until no process can still believe one of them.
       */
      forgetKeys: () => forgetKeys.pipe(provide),
    }
  }),
}) {}
