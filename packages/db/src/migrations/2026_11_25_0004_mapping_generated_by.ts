import { type Kysely, sql } from "kysely"

// Frozen: never import application code here.
export async function up(db: Kysely<any>): Promise<void> {
  // Which language model generated a project's mapping (`local` for the offline planner); null when the
  // mapping was written by hand or before this was recorded.
  await sql`alter table projects add column output_mapping_generated_by text`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table projects drop column output_mapping_generated_by`.execute(db)
}
