/**
 * Who may act for an organisation: organisations, their API keys, their members and the members'
 * sessions. One module because every credential resolves to an organisation and the joins cross these
 * tables. Keys and session tokens arrive here already hashed: no secret in clear reaches the database.
 */
import { Effect } from "effect"
import { sql } from "kysely"
import type { Conn } from "../Db.ts"

export interface OrganizationRow {
  readonly id: string
  readonly name: string
}

/** The organisation named `name`, created when it does not exist yet (safe against concurrent creators). */
export const ensureOrganization = (db: Conn, name: string): Effect.Effect<OrganizationRow> =>
  Effect.promise(async () => {
    await db
      .insertInto("organizations")
      .values({ name })
      .onConflict((oc) => oc.column("name").doNothing())
      .execute()
    return db
      .selectFrom("organizations")
      .select(["id", "name"])
      .where("name", "=", name)
      .executeTakeFirstOrThrow()
  })

// ---------------------------------------------------------------------------------------------------
// API keys

export interface KeyRow {
  readonly id: string
  readonly name: string
  /** The first characters of the key, to recognise it. */
  readonly key_prefix: string
  readonly created_at: Date
  readonly last_used_at: Date | null
  readonly revoked_at: Date | null
}

export interface NewKeyRow {
  readonly organizationId: string
  readonly name: string
  readonly keyPrefix: string
  readonly keyHash: string
}

const keyColumns = ["id", "name", "key_prefix", "created_at", "last_used_at", "revoked_at"] as const

export const insertKey = (db: Conn, key: NewKeyRow): Effect.Effect<KeyRow> =>
  Effect.promise(() =>
    db
      .insertInto("api_keys")
      .values({
        organization_id: key.organizationId,
        name: key.name,
        key_prefix: key.keyPrefix,
        key_hash: key.keyHash,
      })
      .returning([...keyColumns])
      .executeTakeFirstOrThrow(),
  )

/** An organisation's keys, revoked ones included, newest first. */
export const listOrganizationKeys = (
  db: Conn,
  organizationId: string,
): Effect.Effect<ReadonlyArray<KeyRow>> =>
  Effect.promise(() =>
    db
      .selectFrom("api_keys")
      .select([...keyColumns])
      .where("organization_id", "=", organizationId)
      .orderBy("created_at", "desc")
      .orderBy("id", "desc")
      .execute(),
  )

export interface KeyWithOrganizationRow {
  readonly id: string
  readonly organization: string
  readonly name: string
  readonly prefix: string
  readonly created_at: Date
  readonly last_used_at: Date | null
  readonly revoked_at: Date | null
}

/** Every key with its organisation's name (of one organisation when `orgName` is given), by organisation. */
export const listKeysWithOrganization = (
  db: Conn,
  orgName?: string,
): Effect.Effect<ReadonlyArray<KeyWithOrganizationRow>> =>
  Effect.promise(() => {
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
  })

/**
 * Revokes the active key matched by its id or its hash, whatever its organisation (the operator's
 * command line); the key's id, or undefined when no active key matches.
 */
export const revokeKey = (
  db: Conn,
  match: { readonly id: string } | { readonly keyHash: string },
): Effect.Effect<string | undefined> =>
  Effect.promise(() =>
    db
      .updateTable("api_keys")
      .set({ revoked_at: new Date() })
      .where("id" in match ? "id" : "key_hash", "=", "id" in match ? match.id : match.keyHash)
      .where("revoked_at", "is", null)
      .returning("id")
      .executeTakeFirst(),
  ).pipe(Effect.map((row) => row?.id))

/** Revokes an active key of the organisation; its id and name, or undefined when none matches. */
export const revokeOrganizationKey = (
  db: Conn,
  organizationId: string,
  id: string,
): Effect.Effect<{ readonly id: string; readonly name: string } | undefined> =>
  Effect.promise(() =>
    db
      .updateTable("api_keys")
      .set({ revoked_at: sql`now()` })
      .where("id", "=", id)
      .where("organization_id", "=", organizationId)
      .where("revoked_at", "is", null)
      .returning(["id", "name"])
      .executeTakeFirst(),
  )

export interface KeyCredentialRow {
  readonly id: string
  readonly revoked_at: Date | null
  readonly last_used_at: Date | null
  readonly org_id: string
  readonly name: string
}

/** The key with this hash and its organisation (`name` is the organisation's), revoked or not. */
export const findKeyByHash = (db: Conn, keyHash: string): Effect.Effect<KeyCredentialRow | undefined> =>
  Effect.promise(() =>
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
      .where("key_hash", "=", keyHash)
      .executeTakeFirst(),
  )

export const markKeyUsed = (db: Conn, id: string): Effect.Effect<void> =>
  Effect.promise(() =>
    db.updateTable("api_keys").set({ last_used_at: new Date() }).where("id", "=", id).execute(),
  ).pipe(Effect.asVoid)

// ---------------------------------------------------------------------------------------------------
// Members

export interface MemberRow {
  readonly id: string
  readonly email: string
  readonly created_at: Date
  readonly org_id: string
  readonly org_name: string
}

/**
 * Adds a member to the organisation; undefined when the e-mail is taken (e-mails are unique
 * case-insensitively).
 */
export const insertMember = (
  db: Conn,
  organization: OrganizationRow,
  member: { readonly email: string; readonly passwordHash: string },
): Effect.Effect<MemberRow | undefined> =>
  Effect.promise(() =>
    db
      .insertInto("members")
      .values({ organization_id: organization.id, email: member.email, password_hash: member.passwordHash })
      .onConflict((oc) => oc.expression(sql`lower(email)`).doNothing())
      .returning(["id", "email", "created_at"])
      .executeTakeFirst(),
  ).pipe(
    Effect.map((inserted) =>
      inserted === undefined
        ? undefined
        : { ...inserted, org_id: organization.id, org_name: organization.name },
    ),
  )

export interface MemberCredentialRow extends MemberRow {
  readonly password_hash: string
  readonly disabled_at: Date | null
}

/** The member with this e-mail address, compared case-insensitively. */
export const findMemberByEmail = (db: Conn, email: string): Effect.Effect<MemberCredentialRow | undefined> =>
  Effect.promise(() =>
    db
      .selectFrom("members as m")
      .innerJoin("organizations as o", "o.id", "m.organization_id")
      .select([
        "m.id",
        "m.email",
        "m.created_at",
        "m.password_hash",
        "m.disabled_at",
        "o.id as org_id",
        "o.name as org_name",
      ])
      .where(sql`lower(m.email)`, "=", email.toLowerCase())
      .executeTakeFirst(),
  )

/** Members of the organisation named `orgName` (of all when undefined), oldest first. */
export const listMembers = (db: Conn, orgName?: string): Effect.Effect<ReadonlyArray<MemberRow>> =>
  Effect.promise(() => {
    let q = db
      .selectFrom("members as m")
      .innerJoin("organizations as o", "o.id", "m.organization_id")
      .select(["m.id", "m.email", "m.created_at", "o.id as org_id", "o.name as org_name"])
    if (orgName !== undefined) q = q.where("o.name", "=", orgName)
    return q.orderBy("m.created_at").orderBy("m.id").execute()
  })

// ---------------------------------------------------------------------------------------------------
// Sessions

/** Starts a session that expires `ttlSeconds` from now (the database's clock); its expiry. */
export const insertSession = (
  db: Conn,
  session: {
    readonly tokenHash: string
    readonly memberId: string
    readonly csrfToken: string
    readonly ttlSeconds: number
  },
): Effect.Effect<Date> =>
  Effect.promise(() =>
    db
      .insertInto("sessions")
      .values({
        token_hash: session.tokenHash,
        member_id: session.memberId,
        csrf_token: session.csrfToken,
        expires_at: sql<Date>`now() + make_interval(secs => ${session.ttlSeconds})`,
      })
      .returning("expires_at")
      .executeTakeFirstOrThrow(),
  ).pipe(Effect.map((row) => row.expires_at))

/** The session of this token hash, expired or not. */
export const findSession = (
  db: Conn,
  tokenHash: string,
): Effect.Effect<{ readonly id: string; readonly csrf_token: string } | undefined> =>
  Effect.promise(() =>
    db
      .selectFrom("sessions")
      .select(["id", "csrf_token"])
      .where("token_hash", "=", tokenHash)
      .executeTakeFirst(),
  )

export const deleteSession = (db: Conn, id: string): Effect.Effect<void> =>
  Effect.promise(() => db.deleteFrom("sessions").where("id", "=", id).execute()).pipe(Effect.asVoid)

export interface LiveSessionRow extends MemberRow {
  readonly session_id: string
  readonly csrf_token: string
  readonly expires_at: Date
  readonly last_seen_at: Date
  readonly disabled_at: Date | null
}

/** The unexpired session of this token hash with its member (disabled or not) and organisation. */
export const findLiveSession = (db: Conn, tokenHash: string): Effect.Effect<LiveSessionRow | undefined> =>
  Effect.promise(() =>
    db
      .selectFrom("sessions as s")
      .innerJoin("members as m", "m.id", "s.member_id")
      .innerJoin("organizations as o", "o.id", "m.organization_id")
      .select([
        "s.id as session_id",
        "s.csrf_token",
        "s.expires_at",
        "s.last_seen_at",
        "m.id",
        "m.email",
        "m.created_at",
        "m.disabled_at",
        "o.id as org_id",
        "o.name as org_name",
      ])
      .where("s.token_hash", "=", tokenHash)
      .where("s.expires_at", ">", sql<Date>`now()`)
      .executeTakeFirst(),
  )

export const markSessionSeen = (db: Conn, id: string): Effect.Effect<void> =>
  Effect.promise(() =>
    db.updateTable("sessions").set({ last_seen_at: sql`now()` }).where("id", "=", id).execute(),
  ).pipe(Effect.asVoid)

/** Deletes sessions past their expiry; how many. */
export const deleteExpiredSessions = (db: Conn): Effect.Effect<number> =>
  Effect.promise(() =>
    db.deleteFrom("sessions").where("expires_at", "<", sql<Date>`now()`).executeTakeFirst(),
  ).pipe(Effect.map((result) => Number(result.numDeletedRows)))
