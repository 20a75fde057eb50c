import { type Kysely, sql } from "kysely"

// Frozen: never import application code here.
//
// A claim takes the due tasks in the queue's order (`run_after`, then `created_at`). The claimable index
// held `run_after` alone, and a launch enqueues its tasks in one statement, so thousands of them share one
// `run_after`: every claim read and sorted all of them to take the first one or two (2.6 ms a claim at
// 5,000 tasks, on every task of the run). The index now holds the whole order, and a claim reads only the
// tasks it takes (and any it skips: locked, not yet due again, or of another kind).

export async function up(db: Kysely<any>): Promise<void> {
  await sql`create index tasks_claim_order on tasks (run_after, created_at) where status in ('pending', 'running')`.execute(
    db,
  )
  await sql`drop index tasks_claimable`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`create index tasks_claimable on tasks (run_after) where status in ('pending', 'running')`.execute(
    db,
  )
  await sql`drop index tasks_claim_order`.execute(db)
}
