/**
 * The credentials this process found live (API keys and the web application's sessions), kept in memory for
 * a moment (`CredentialMemory`, 1 s) so that the requests of a busy key or session cost no read of the
 * database each (the credential's check was one statement of every request): at most one read per
 * credential per second and process. Ending one (a key's revocation, a sign-out) waits out that moment
 * before it answers, so that once it says so, no process accepts the credential any more (this process
 * forgets at once; the others' memories of it have expired). A read that began before it ended here is not
 * remembered after it.
 *
 * Kept in our own code: a map with an expiry and a bound is all it needs, and the ending's wait is tied to
 * its expiry.
 */
import { Context, Effect } from "effect"

export class CredentialMemory extends Context.Reference<CredentialMemory>()(
  "@dxs/services/CredentialMemory",
  {
    /** How long a key or session found live is believed without reading it again (0: never). */
    defaultValue: (): { readonly ttlMs: number } => ({ ttlMs: 1_000 }),
  },
) {}

/** More credentials than this in memory: forget them all and start again (a bound, not a policy). */
const MAX_CREDENTIALS = 10_000

/** What a credential of hash `hash` was found to be, for `ttlMs` (and never past `notAfter`). */
export const makeCredentialMemory = <A>(ttlMs: number) => {
  const entries = new Map<string, { readonly value: A; readonly until: number }>()
  let generation = 0
  const forgetAll = () => {
    generation += 1
    entries.clear()
  }
  return {
    /** The credential of hash `hash` as read less than `ttlMs` ago, if it was. */
    get: (hash: string): A | undefined => {
      const known = entries.get(hash)
      if (known === undefined) return undefined
      if (known.until > Date.now()) return known.value
      entries.delete(hash)
      return undefined
    },
    /** The generation to hand back to `remember` with what a read begun now finds. */
    generation: () => generation,
    /** Remembers what a read begun at `readAt` in generation `readIn` found, until `notAfter` at the latest (epoch ms). */
    remember: (
      hash: string,
      value: A,
      readIn: number,
      readAt: number,
      notAfter = Number.POSITIVE_INFINITY,
    ) => {
      if (ttlMs <= 0 || readIn !== generation) return
      if (entries.size >= MAX_CREDENTIALS) entries.clear()
      entries.set(hash, { value, until: Math.min(readAt + ttlMs, notAfter) })
    },
    /** Credentials were ended or changed here: none is believed any more, nor a read begun before. */
    forgetAll,
    /** Forgets every credential here, then waits until no process can still believe one ended before now. */
    forgetEverywhere: Effect.zipRight(Effect.sync(forgetAll), Effect.sleep(ttlMs)),
  }
}
