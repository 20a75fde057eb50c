import { type Kysely, sql } from "kysely"

// Frozen: never import application code here.
export async function up(db: Kysely<any>): Promise<void> {
  // A project's target schema and its mapping are documents their author reads back: `json` keeps the text
  // as written (key order included), where `jsonb` sorts object keys. Nothing queries inside them, so
  // nothing needs jsonb's operators or indexes. Rows stored before this keep jsonb's order: the order they
  // were written in is already lost.
  await sql`alter table projects
    alter column target_output_schema type json using target_output_schema::json,
    alter column output_mapping type json using output_mapping::json`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table projects
    alter column target_output_schema type jsonb using target_output_schema::jsonb,
    alter column output_mapping type jsonb using output_mapping::jsonb`.execute(db)
}
