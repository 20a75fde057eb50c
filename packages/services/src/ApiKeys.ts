import { createHash, randomBytes } from "node:crypto"
import { query } from "@dxs/db"
import { Effect } from "effect"
import { NotFound, Unauthorized } from "./Errors.ts"

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

export class ApiKeys extends Effect.Service<ApiKeys>()("@dxs/services/ApiKeys", {
  succeed: {
    /** Creates the organisation when it does not exist yet, then a key for it. Returns the key in clear, once. */
    create: (orgName: string, name = "") =>
      query(async (db) => {
        const trimmed = orgName.trim()
        if (trimmed === "") throw new Error("organisation name must not be empty")
        const key = generateKey()
        return db.transaction().execute(async (trx) => {
          await trx
            .insertInto("organizations")
            .values({ name: trimmed })
            .onConflict((oc) => oc.column("name").doNothing())
            .execute()
          const org = await trx
            .selectFrom("organizations")
            .select(["id", "name"])
            .where("name", "=", trimmed)
            .executeTakeFirstOrThrow()
          const row = await trx
            .insertInto("api_keys")
            .values({
              organization_id: org.id,
              name,
              key_prefix: key.slice(0, KEY_PREFIX.length + 4),
              key_hash: hashKey(key),
            })
            .returning(["id"])
            .executeTakeFirstOrThrow()
          return { id: row.id, organization: org.name, key }
        })
      }),

    list: (orgName?: string) =>
      query((db) => {
        let q = db
          .selectFrom("api_keys")
          .innerJoin("organizations", "organizations.id", "api_keys.organization_id")
          .select([
            "api_keys.id",
            "organizations.name as organization",
            "api_keys.name",
            "api_keys.key_prefix as prefix",
            "api_keys.created_at",
            "api_keys.last_used_at",
            "api_keys.revoked_at",
          ])
          .orderBy("organizations.name")
          .orderBy("api_keys.created_at")
        if (orgName !== undefined) q = q.where("organizations.name", "=", orgName)
        return q.execute()
      }).pipe(
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
      ),

    /** Revokes by key id or by the key itself. */
    revoke: (idOrKey: string) =>
      Effect.flatMap(
        query((db) => {
          const byKey = idOrKey.startsWith(KEY_PREFIX)
          const isUuid = /^[0-9a-f-]{36}$/i.test(idOrKey)
          if (!byKey && !isUuid) return Promise.resolve(undefined)
          return db
            .updateTable("api_keys")
            .set({ revoked_at: new Date() })
            .where(byKey ? "key_hash" : "id", "=", byKey ? hashKey(idOrKey) : idOrKey)
            .where("revoked_at", "is", null)
            .returning("id")
            .executeTakeFirst()
        }),
        (row) => (row ? Effect.succeed(row.id) : Effect.fail(NotFound.of("Active API key", idOrKey))),
      ),

    /** The organisation of a live key, or Unauthorized. */
    authenticate: (key: string | undefined) =>
      Effect.gen(function* () {
        if (key === undefined || key === "") return yield* Unauthorized.of("The X-API-Key header is required")
        if (!KEY_PATTERN.test(key)) return yield* Unauthorized.of("The API key is malformed")
        const found = yield* query((db) =>
          db
            .selectFrom("api_keys")
            .innerJoin("organizations", "organizations.id", "api_keys.organization_id")
            .select([
              "api_keys.id",
              "api_keys.revoked_at",
              "api_keys.last_used_at",
              "organizations.id as org_id",
              "organizations.name",
            ])
            .where("key_hash", "=", hashKey(key))
            .executeTakeFirst(),
        )
        if (!found) return yield* Unauthorized.of("The API key is not known")
        if (found.revoked_at) return yield* Unauthorized.of("The API key has been revoked")
        // Record use at most once a minute per key: no write on every request.
        if (!found.last_used_at || Date.now() - found.last_used_at.getTime() > 60_000) {
          yield* query((db) =>
            db.updateTable("api_keys").set({ last_used_at: new Date() }).where("id", "=", found.id).execute(),
          )
        }
        return { id: found.org_id, name: found.name }
      }),
  },
}) {}
