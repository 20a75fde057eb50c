import { type Kysely, sql } from "kysely"

// Frozen: never import application code here.
export async function up(db: Kysely<any>): Promise<void> {
  // What a run changed: per combination of an agent's dimension values (its atomic value), the value
  // before the run and the value it resolved, each with its citations; written with the results.
  await sql`
    create table run_value_changes (
      id uuid primary key default gen_random_uuid(),
      run_id uuid not null references runs(id) on delete cascade,
      agent_id uuid not null references agents(id) on delete cascade,
      atomic_value_id uuid not null references atomic_values(id) on delete cascade,
      result_name text not null,
      previous_value jsonb,
      previous_status text not null,
      previous_sources jsonb not null default '[]'::jsonb,
      previous_references jsonb not null default '{}'::jsonb,
      value jsonb,
      status text not null,
      sources jsonb not null default '[]'::jsonb,
      "references" jsonb not null default '{}'::jsonb,
      changed_at timestamptz not null default now(),
      unique (run_id, atomic_value_id)
    )`.execute(db)
  // A run's changes are read by agent (oldest first) and result name, page by page.
  await sql`create index run_value_changes_page on run_value_changes (run_id, agent_id, result_name, id)`.execute(
    db,
  )
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table if exists run_value_changes`.execute(db)
}
