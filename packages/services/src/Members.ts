/**
 * People of an organisation who use the web application: e-mail and password (scrypt), and their
 * sessions. A session is a random token (the HttpOnly cookie's value; stored as SHA-256 only) with a CSRF
 * token that cookie-authenticated writes must echo, and an expiry.
 */
import { createHash, randomBytes, scrypt, timingSafeEqual } from "node:crypto"
import { type Conn, Db, transaction, withDb } from "@dxs/db"
import * as Access from "@dxs/db/repositories/Access"
import { isEmail } from "@dxs/domain/contract/Fields"
import type { Member as MemberRecord, Session } from "@dxs/domain/contract/Member"
import { Context, Effect } from "effect"
import { CredentialMemory, makeCredentialMemory } from "./CredentialMemory.ts"
import { BadRequest, Conflict, Forbidden, Unauthorized } from "./Errors.ts"
import { AuthThrottleSettings, consumeSignInAttempt } from "./RateLimits.ts"
import { iso } from "./Time.ts"

/** How long a session lasts after sign-in (config `SESSION_TTL_HOURS`). */
export class SessionSettings extends Context.Reference<SessionSettings>()("@dxs/services/SessionSettings", {
  defaultValue: (): { readonly ttlSeconds: number } => ({ ttlSeconds: 12 * 3600 }),
}) {}

export const MIN_PASSWORD_LENGTH = 12

export type Member = MemberRecord

/** A signed-in session: `token` goes into the cookie, `csrf_token` into the `X-CSRF-Token` header of writes. */
export interface SessionGrant {
  readonly token: string
  readonly csrf_token: string
  readonly expires_at: string
  readonly member: Member
}

export type SessionInfo = Session

/**
 * scrypt's cost (N) of new password hashes: a hash keeps its own, so hashes of any cost still verify. N = 2^15
 * needs 32 MB, Node's default limit, so `derive` raises maxmem a little.
 */
export const PASSWORD_HASH_COST = 32768
const R = 8
const P = 1
const KEY_LENGTH = 64

/**
 * The cost of new password hashes (and of the stand-in hash an unknown e-mail is checked against). Not a
 * deployment setting: only a test suite lowers it, whose sign-ins would otherwise each take a fifth of a
 * second of a core (one scrypt at N = 2^15) while it checks something else.
 */
export class PasswordHashing extends Context.Reference<PasswordHashing>()("@dxs/services/PasswordHashing", {
  defaultValue: (): { readonly cost: number } => ({ cost: PASSWORD_HASH_COST }),
}) {}

const derive = (password: string, salt: Buffer, n: number, r: number, p: number) =>
  new Promise<Buffer>((resolve, reject) =>
    scrypt(
      password.normalize("NFKC"),
      salt,
      KEY_LENGTH,
      { N: n, r, p, maxmem: 64 * 1024 * 1024 },
      (e, key) => (e ? reject(e) : resolve(key)),
    ),
  )

/** `scrypt$N$r$p$salt$hash`, with a fresh 16-byte salt (N: `cost`). */
export const hashPassword = async (password: string, cost: number): Promise<string> => {
  const salt = randomBytes(16)
  const hash = await derive(password, salt, cost, R, P)
  return `scrypt$${cost}$${R}$${P}$${salt.toString("base64")}$${hash.toString("base64")}`
}

/** Whether `password` matches a stored hash (constant-time comparison). */
export const verifyPassword = async (password: string, stored: string): Promise<boolean> => {
  const [scheme, n, r, p, salt, hash] = stored.split("$")
  if (scheme !== "scrypt" || !n || !r || !p || !salt || !hash) return false
  const expected = Buffer.from(hash, "base64")
  const actual = await derive(password, Buffer.from(salt, "base64"), Number(n), Number(r), Number(p))
  return actual.length === expected.length && timingSafeEqual(actual, expected)
}

/**
 * Checked against when the e-mail is unknown, so both failures take the same work: one scrypt with the
 * parameters of a real hash. Random bytes stand in for the hash; no password matches them.
 */
const dummyHash = (cost: number) =>
  `scrypt$${cost}$${R}$${P}$${randomBytes(16).toString("base64")}$${randomBytes(KEY_LENGTH).toString("base64")}`

/** Whether two secrets (tokens) are equal, in time that does not depend on where they differ. */
export const sameSecret = (given: string, expected: string): boolean => {
  const a = Buffer.from(given)
  const b = Buffer.from(expected)
  return a.length === b.length && timingSafeEqual(a, b)
}

const hashToken = (token: string) => createHash("sha256").update(token).digest("hex")
const newToken = () => randomBytes(32).toString("base64url")

const wrongCredentials = () => Unauthorized.of("The e-mail address or the password is wrong")

/** How often a session's use is recorded (`last_seen_at`), at most. */
const SEEN_RECORDED_EVERY_MS = 60_000

/** A session found live: what `authenticate` answers, and when its use was last recorded, epoch ms. */
interface KnownSession {
  readonly session: SessionInfo
  readonly seenAt: number
}

const toMember = (r: Access.MemberRow): Member => ({
  id: r.id,
  email: r.email,
  organization: { id: r.org_id, name: r.org_name },
  created_at: iso(r.created_at),
})

export class Members extends Effect.Service<Members>()("@dxs/services/Members", {
  accessors: true,
  effect: Effect.gen(function* () {
    const storage = Context.make(Db, yield* Db).pipe(
      Context.add(SessionSettings, yield* SessionSettings),
      Context.add(AuthThrottleSettings, yield* AuthThrottleSettings),
    )
    const provide = Effect.provide(storage)
    const { cost } = yield* PasswordHashing
    const unknownMemberHash = dummyHash(cost)
    // Sessions found live are believed for a moment (see CredentialMemory); a sign-out waits it out.
    const { ttlMs } = yield* CredentialMemory
    const memory = makeCredentialMemory<KnownSession>(ttlMs)
    return {
      /**
       * Creates a member of the organisation `orgName` (created if new). 400 for a malformed e-mail or a
       * password shorter than MIN_PASSWORD_LENGTH; 409 when the e-mail (case-insensitively) is taken.
       */
      create: (orgName: string, email: string, password: string) =>
        Effect.gen(function* () {
          const org = orgName.trim()
          const address = email.trim()
          if (org === "") return yield* BadRequest.of("organisation name must not be empty")
          if (!isEmail(address))
            return yield* BadRequest.of(`"${address}" is not an e-mail address`, [
              { path: "email", message: "must be an e-mail address" },
            ])
          if (password.length < MIN_PASSWORD_LENGTH)
            return yield* BadRequest.of(`the password must have at least ${MIN_PASSWORD_LENGTH} characters`, [
              { path: "password", message: `must have at least ${MIN_PASSWORD_LENGTH} characters` },
            ])
          const passwordHash = yield* Effect.promise(() => hashPassword(password, cost))
          // A taken e-mail rolls the whole transaction back: no organisation is left behind either.
          return yield* transaction((trx) =>
            Effect.gen(function* () {
              const o = yield* Access.ensureOrganization(trx, org)
              const row = yield* Access.insertMember(trx, o, { email: address, passwordHash })
              if (row === undefined)
                return yield* Conflict.of(`a member with the e-mail address ${address} already exists`, [
                  { path: "email", message: "is taken" },
                ])
              return toMember(row)
            }),
          )
        }).pipe(provide),

      /**
       * Signs a member in: a new session. The same 401, after the same work, for an unknown e-mail and a wrong
       * password. Attempts are counted per e-mail and per `clientAddress` first: over the limit, 429 whatever
       * the password.
       */
      signIn: (email: string, password: string, clientAddress: string | undefined) =>
        Effect.gen(function* () {
          const { ttlSeconds } = yield* SessionSettings
          yield* consumeSignInAttempt(email, clientAddress)
          const found = yield* withDb((db) => Access.findMemberByEmail(db, email.trim()))
          const ok = yield* Effect.promise(() =>
            verifyPassword(password, found?.password_hash ?? unknownMemberHash),
          )
          if (found === undefined || !ok || found.disabled_at !== null) return yield* wrongCredentials()
          const token = newToken()
          const csrf = newToken()
          const expiresAt = yield* withDb((db) =>
            Access.insertSession(db, {
              tokenHash: hashToken(token),
              memberId: found.id,
              csrfToken: csrf,
              ttlSeconds,
            }),
          )
          return {
            token,
            csrf_token: csrf,
            expires_at: iso(expiresAt),
            member: toMember(found),
          } satisfies SessionGrant
        }).pipe(provide),

      /**
       * Ends the session of this token, which like any write with a session needs the session's CSRF token
       * (403 without it or with another). Nothing happens for an unknown or expired session. It answers once
       * no process can still believe the session (see CredentialMemory).
       */
      signOut: (token: string, csrfToken: string | undefined) =>
        Effect.gen(function* () {
          const session = yield* withDb((db) => Access.findSession(db, hashToken(token)))
          if (session === undefined) return
          if (!sameSecret(csrfToken ?? "", session.csrf_token))
            return yield* Forbidden.of(
              "Signing out needs the session's CSRF token in the X-CSRF-Token header (GET /api/v1/auth/session/ gives it)",
            )
          yield* withDb((db) => Access.deleteSession(db, session.id)).pipe(
            Effect.ensuring(memory.forgetEverywhere),
          )
        }).pipe(provide),

      /**
       * The member and CSRF token of a live session; 401 for an unknown, expired or disabled one. A session
       * found live is believed for a moment without reading it again (CredentialMemory).
       */
      authenticate: (token: string) =>
        Effect.gen(function* () {
          if (token === "")
            return yield* Unauthorized.of("Sign in, or send an API key in the X-API-Key header")
          const tokenHash = hashToken(token)
          const known = memory.get(tokenHash)
          if (known !== undefined && Date.now() - known.seenAt <= SEEN_RECORDED_EVERY_MS) return known.session
          const readIn = memory.generation()
          const readAt = Date.now()
          const found = yield* withDb((db) => Access.findLiveSession(db, tokenHash))
          if (found === undefined || found.disabled_at !== null)
            return yield* Unauthorized.of("The session has expired or ended; sign in again")
          let seenAt = found.last_seen_at.getTime()
          if (Date.now() - seenAt > SEEN_RECORDED_EVERY_MS) {
            yield* withDb((db) => Access.markSessionSeen(db, found.session_id))
            seenAt = Date.now()
          }
          const session = {
            member: toMember(found),
            csrf_token: found.csrf_token,
            expires_at: iso(found.expires_at),
          } satisfies SessionInfo
          memory.remember(tokenHash, { session, seenAt }, readIn, readAt, found.expires_at.getTime())
          return session
        }).pipe(provide),

      /** The organisation's members (all organisations when `orgName` is undefined), oldest first. */
      list: (orgName?: string) =>
        withDb((db) => Access.listMembers(db, orgName))
          .pipe(Effect.map((rows) => rows.map(toMember)))
          .pipe(provide),
    }
  }),
}) {}

/** Housekeeping: sessions past their expiry are deleted. */
export const deleteExpiredSessions = (db: Conn): Effect.Effect<number> => Access.deleteExpiredSessions(db)
