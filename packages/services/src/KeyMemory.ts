/**
 * The API keys this process found live, kept in memory so that a request with a known key costs no read
 * of the database (the key's check was one statement of every request). Sound only while the process hears
 * of every change to keys (`listenForApiKeys`): a key is remembered only while listening, every key is
 * forgotten when the listening connection is lost, and a key revoked here is forgotten at once, before the
 * notification of it comes back. A read that began before a change is not remembered after it (the
 * generation a remembered entry was read in must still be current).
 *
 * Kept in our own code: a map with a bound is all it needs; a caching library's expiry would not make a
 * revoked key stop working sooner than the notification does.
 */
export interface KnownKey {
  readonly organization: { readonly id: string; readonly name: string }
  /** When its use was last recorded (`last_used_at`, at most once a minute), epoch ms. */
  readonly usedAt: number
}

/** More keys than this in memory: forget them all and start again (a bound, not a policy). */
const MAX_KEYS = 10_000

export const makeKeyMemory = () => {
  const keys = new Map<string, KnownKey>()
  let listening = false
  let generation = 0
  const forgetAll = () => {
    generation += 1
    keys.clear()
  }
  return {
    /** The key of hash `keyHash` as last read, if it is known to be unchanged since. */
    get: (keyHash: string): KnownKey | undefined => (listening ? keys.get(keyHash) : undefined),
    /** Whether keys are kept now (every change is heard). */
    keeps: () => listening,
    /** The generation to hand back to `remember` with what a read begun now finds. */
    generation: () => generation,
    remember: (keyHash: string, key: KnownKey, readIn: number) => {
      if (!listening || readIn !== generation) return
      if (keys.size >= MAX_KEYS) keys.clear()
      keys.set(keyHash, key)
    },
    /** A key changed (revoked, moved, deleted); `undefined`: any key may have. */
    forget: (keyHash: string | undefined) => {
      if (keyHash === undefined) return forgetAll()
      generation += 1
      keys.delete(keyHash)
    },
    /** Every change is heard from now on. */
    listening: () => {
      forgetAll()
      listening = true
    },
    /** Changes may go unheard (the connection is lost, or the process stops): nothing is kept. */
    deaf: () => {
      listening = false
      forgetAll()
    },
  }
}

export type KeyMemory = ReturnType<typeof makeKeyMemory>
