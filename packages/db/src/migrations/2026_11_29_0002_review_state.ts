import { type Kysely, sql } from "kysely"

// Frozen: never import application code here.
export async function up(db: Kysely<any>): Promise<void> {
  // The grid's review-state and source filters read a project's current results of one review state, or
  // those set by hand, through these (no review reads as `none`).
  await sql`create index resolution_results_review_state on resolution_results
    (project_id, (coalesce(latest_review_status, 'none')), row_hash) where is_current`.execute(db)
  await sql`create index resolution_results_manual on resolution_results (project_id, row_hash)
    where is_current and is_overridden`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index if exists resolution_results_review_state`.execute(db)
  await sql`drop index if exists resolution_results_manual`.execute(db)
}
