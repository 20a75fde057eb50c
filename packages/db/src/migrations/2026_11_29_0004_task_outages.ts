import type { Kysely } from "kysely"

// Frozen: never import application code here.
export async function up(db: Kysely<any>): Promise<void> {
  // When a task first met an outage (storage or the database out of reach, its worker gone) since it last
  // failed for a reason of its own: attempts within the retry window from then do not count.
  await db.schema.alterTable("tasks").addColumn("outage_since", "timestamptz").execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("tasks").dropColumn("outage_since").execute()
}
