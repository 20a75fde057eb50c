import { type Kysely, sql } from "kysely"

// Frozen: never import application code here.
export async function up(db: Kysely<any>): Promise<void> {
  // The output schema lives on its project's row: `target_output_schema` and `output_mapping_status`
  // (foundation) plus the mapping, how it was made, and a version that a background mapping generation
  // compares before it saves (a newer PUT wins).
  await db.schema
    .alterTable("projects")
    .addColumn("output_auto_map", "boolean", (c) => c.notNull().defaultTo(false))
    .addColumn("output_mapping", "jsonb")
    .addColumn("output_mapping_source", "text", (c) => c.notNull().defaultTo("manual"))
    .addColumn("output_mapping_error", "text")
    .addColumn("output_mapping_generated_at", "timestamptz")
    .addColumn("output_schema_in_sync", "boolean", (c) => c.notNull().defaultTo(true))
    .addColumn("output_schema_version", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("output_launch_after_mapping", "boolean", (c) => c.notNull().defaultTo(false))
    .execute()
  await sql`alter table projects add constraint projects_output_mapping_status_check
    check (output_mapping_status in ('pending', 'success', 'failed'))`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table projects drop constraint if exists projects_output_mapping_status_check`.execute(db)
  for (const column of [
    "output_auto_map",
    "output_mapping",
    "output_mapping_source",
    "output_mapping_error",
    "output_mapping_generated_at",
    "output_schema_in_sync",
    "output_schema_version",
    "output_launch_after_mapping",
  ])
    await db.schema.alterTable("projects").dropColumn(column).execute()
}
