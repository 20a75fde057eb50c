import { type Kysely, sql } from "kysely"
import {
  changesByEvent,
  type RowsBefore,
  resultTallyBody,
} from "./2026_11_29_0001_result_tallies/Statements.ts"

// Frozen: never import application code here (the result tallies' statement helpers are frozen with them).
//
// The grid's rows and their tallies, kept by the results' writes, at the cost of the rows written. The
// functions of `2026_11_29_0001_result_tallies` found how each grid row changed by joining what their
// upsert returned with the statement's changes: two row sets of the statement itself, which PostgreSQL
// knows nothing of. PL/pgSQL plans a statement once per connection, with the transition table's size at
// its first call: after a write of one result, a write of 2,000 on the same connection compared each
// changed row with every other (four million comparisons, seconds of the database's time; a resolution
// of 50,000 documents, hours). Each changed row's counts before the statement are now read through the
// grid rows' primary key, by a sub-select per row (which PostgreSQL runs per row, never as a join whose
// plan the first call chooses), and how the project's tallies moved follows from those and the changes
// alone (`resultTallyBody`'s `per row`). The statements and what they keep are otherwise the first ones.

const replaceFunctions = async (db: Kysely<any>, before: RowsBefore) => {
  const resultColumns = "project_id, agent_id, row_hash, row_name, dimension_key, resolution_status"
  for (const [event, changes] of changesByEvent(resultColumns, "is_current"))
    await sql`
      create or replace function ${sql.id(`dxs_result_tally_${event}`)}() returns trigger language plpgsql
      as $$${sql.raw(resultTallyBody(event, changes, before))}$$`.execute(db)
}

export async function up(db: Kysely<any>): Promise<void> {
  await replaceFunctions(db, "per row")
}

export async function down(db: Kysely<any>): Promise<void> {
  await replaceFunctions(db, "joined")
}
