import { type Kysely, sql } from "kysely"

// Frozen: never import application code here.
export async function up(db: Kysely<any>): Promise<void> {
  // The results grid groups a project's results by row (their result name) and reads a page's cells by it.
  await sql`create index resolution_results_row on resolution_results (project_id, result_name)`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index resolution_results_row`.execute(db)
}
