import { type Kysely, sql } from "kysely"

// Frozen: never import application code here.
export async function up(db: Kysely<any>): Promise<void> {
  // People of an organisation who sign in to the web application with an e-mail and a password
  // (scrypt), and their sessions (the cookie's token is stored as SHA-256 only).
  await db.schema
    .createTable("members")
    .addColumn("id", "uuid", (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn("organization_id", "uuid", (c) =>
      c.notNull().references("organizations.id").onDelete("cascade"),
    )
    .addColumn("email", "text", (c) => c.notNull())
    .addColumn("password_hash", "text", (c) => c.notNull())
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("disabled_at", "timestamptz")
    .execute()
  await sql`create unique index members_email on members (lower(email))`.execute(db)
  await db.schema
    .createTable("sessions")
    .addColumn("id", "uuid", (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn("token_hash", "text", (c) => c.notNull().unique())
    .addColumn("member_id", "uuid", (c) => c.notNull().references("members.id").onDelete("cascade"))
    .addColumn("csrf_token", "text", (c) => c.notNull())
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("expires_at", "timestamptz", (c) => c.notNull())
    .addColumn("last_seen_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .execute()
  await db.schema.createIndex("sessions_member").on("sessions").column("member_id").execute()
  await db.schema.createIndex("sessions_expires").on("sessions").column("expires_at").execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("sessions").ifExists().execute()
  await db.schema.dropTable("members").ifExists().execute()
}
