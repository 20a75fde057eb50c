import { type Kysely, sql } from "kysely"

// Frozen: never import application code here.
export async function up(db: Kysely<any>): Promise<void> {
  // Whether an extraction's passage is on its cited page and its value in that passage (earlier ones were
  // never checked and count as grounded), and its confidence (0 to 1; null when not computed).
  await sql`alter table extractions add column grounded boolean not null default true`.execute(db)
  await sql`alter table extractions add column confidence real`.execute(db)
  // A resolved result's confidence (0 to 1); null when there is no value or it was never computed.
  await sql`alter table resolution_results add column confidence real`.execute(db)
  // Reviewers list a project's least certain results first.
  await sql`create index resolution_results_confidence on resolution_results (project_id, confidence)`.execute(
    db,
  )
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index resolution_results_confidence`.execute(db)
  await sql`alter table resolution_results drop column confidence`.execute(db)
  await sql`alter table extractions drop column confidence`.execute(db)
  await sql`alter table extractions drop column grounded`.execute(db)
}
