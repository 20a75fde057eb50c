/**
 * The API keys this process found live, kept in memory for a moment (`ApiKeyMemory`, 1 s) so that the
 * requests of a busy key cost no read of the database each (the key's check was one statement of every
 * request): at most one read per key per second and process. A revocation waits out that moment before it
 * answers, so that once `dxs keys revoke` or the developer page says a key is revoked, no process accepts
 * it any more (this process forgets at once; the others' memories of it have expired). A read that began
 * before a revocation here is not remembered after it.
 *
 * Kept in our own code: a map with an expiry and a bound is all it needs, and the revocation's wait is tied
 * to its expiry.
 */
import { Context } from "effect"

export class ApiKeyMemory extends Context.Reference<ApiKeyMemory>()("@dxs/services/ApiKeyMemory", {
  /** How long a key found live is believed without reading it again (0: never). */
  defaultValue: (): { readonly ttlMs: number } => ({ ttlMs: 1_000 }),
}) {}

export interface KnownKey {
  readonly organization: { readonly id: string; readonly name: string }
  /** When its use was last recorded (`last_used_at`, at most once a minute), epoch ms. */
  readonly usedAt: number
}

/** More keys than this in memory: forget them all and start again (a bound, not a policy). */
const MAX_KEYS = 10_000

export const makeKeyMemory = (ttlMs: number) => {
  const keys = new Map<string, KnownKey & { readonly until: number }>()
  let generation = 0
  return {
    /** The key of hash `keyHash` as read less than `ttlMs` ago, if it was. */
    get: (keyHash: string): KnownKey | undefined => {
      const known = keys.get(keyHash)
      if (known === undefined) return undefined
      if (known.until > Date.now()) return known
      keys.delete(keyHash)
      return undefined
    },
    /** The generation to hand back to `remember` with what a read begun now finds. */
    generation: () => generation,
    remember: (keyHash: string, key: KnownKey, readIn: number, readAt: number) => {
      if (ttlMs <= 0 || readIn !== generation) return
      if (keys.size >= MAX_KEYS) keys.clear()
      keys.set(keyHash, { ...key, until: readAt + ttlMs })
    },
    /** Keys were revoked or changed here: none is believed any more, nor a read begun before. */
    forgetAll: () => {
      generation += 1
      keys.clear()
    },
  }
}
