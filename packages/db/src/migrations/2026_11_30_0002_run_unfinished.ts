import { type Kysely, sql } from "kysely"

// Frozen: never import application code here.
//
// Whether a run has an unfinished task is asked after every task of the run. Its tasks are claimed in the
// order they were written, so the claimed and finished ones come first in the table; with statistics that
// know most of a run is pending, the planner scanned the table from the start and stopped at the first
// unfinished task, after every finished one (0.43 ms at 5,000 tasks, growing with the run). The run's
// unfinished tasks in the order they were written, read one through this index, cost the same at any
// point of the run (an entry of a task finished since is skipped, and marked so, once).

export async function up(db: Kysely<any>): Promise<void> {
  await sql`create index tasks_run_unfinished on tasks (run_id, created_at)
    where status in ('pending', 'running') and run_id is not null`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index tasks_run_unfinished`.execute(db)
}
