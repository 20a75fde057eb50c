import type { Kysely } from "kysely"

// Frozen: never import application code here.
export async function up(db: Kysely<any>): Promise<void> {
  // The web searches of an agent's resolution, one per atomic value: written (unsearched) when the
  // resolution starts, stamped when the search is done. The agents' web-search progress counts them.
  await db.schema
    .createTable("web_searches")
    .addColumn("atomic_value_id", "uuid", (c) =>
      c.primaryKey().references("atomic_values.id").onDelete("cascade"),
    )
    .addColumn("agent_id", "uuid", (c) => c.notNull().references("agents.id").onDelete("cascade"))
    .addColumn("agent_config_version", "integer", (c) => c.notNull())
    .addColumn("query", "text", (c) => c.notNull())
    .addColumn("result_count", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("searched_at", "timestamptz")
    .execute()
  await db.schema.createIndex("web_searches_agent").on("web_searches").column("agent_id").execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("web_searches").ifExists().execute()
}
