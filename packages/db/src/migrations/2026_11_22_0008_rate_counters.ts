import type { Kysely } from "kysely"

// Frozen: never import application code here.
export async function up(db: Kysely<any>): Promise<void> {
  // Requests per API key (or member) per minute, shared by every API process: one row per subject and
  // minute, counted up by each request; old minutes are swept by housekeeping.
  await db.schema
    .createTable("rate_counters")
    .addColumn("subject", "text", (c) => c.notNull())
    .addColumn("window_start", "timestamptz", (c) => c.notNull())
    .addColumn("count", "integer", (c) => c.notNull())
    .addPrimaryKeyConstraint("rate_counters_pkey", ["subject", "window_start"])
    .execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("rate_counters").ifExists().execute()
}
