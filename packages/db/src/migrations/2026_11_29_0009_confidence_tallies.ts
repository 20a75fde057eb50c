import { type Kysely, sql } from "kysely"
import { changesByEvent, REFERENCING } from "./2026_11_29_0001_result_tallies/Statements.ts"

// Frozen: never import application code here (the result tallies' statement helpers are frozen with them).
//
// The results list's `max_confidence` count from tallies: current results per agent and band of confidence
// (the hundredth it falls in: `floor(confidence * 100)`, 0 to 100), kept by the results' writes as the
// other result tallies are. A count of the results at or below a confidence is the tallies of the bands
// below the confidence's own, and the rows of its own band read through the confidence index: about a
// hundredth of the project's results at most, where the whole range below the confidence was read.
// Confidences are continuous (they come from the model's log-probabilities), so a tally by value would not
// bound the count; a band does. The band is monotonic in the confidence, so a result in a lower band is
// always at or below it, one in a higher band always above.

/** A result's band, as the tallies and the count compute it (the confidence is a `real`). */
const BAND = "floor(confidence::float8 * 100)::smallint"

/** What a statement changed, per event, as rows of (project, agent, band) with `d` (see `changesByEvent`). */
const CHANGES = changesByEvent(
  `project_id, agent_id, ${BAND} as band`,
  "is_current and confidence is not null",
)

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table result_confidence_tallies (
      agent_id uuid not null references agents(id) on delete cascade,
      band smallint not null,
      n integer not null default 0,
      primary key (agent_id, band)
    )`.execute(db)
  for (const [event, changes] of CHANGES) {
    await sql`
      create function ${sql.id(`dxs_confidence_tally_${event}`)}() returns trigger language plpgsql as $$
      begin
        if not exists (
          select 1 from (${sql.raw(changes)}) c group by agent_id, band having sum(d) <> 0
        ) then
          return null;
        end if;
        -- As the other result tallies: the project's row tally first, then the tallies in their keys' order.
        perform 1 from result_row_tallies t
          where t.project_id in (select project_id from (${sql.raw(changes)}) c) order by t.project_id for update;
        insert into result_confidence_tallies as t (agent_id, band, n)
          select agent_id, band, sum(d) from (${sql.raw(changes)}) c
          group by agent_id, band having sum(d) <> 0 order by agent_id, band
          on conflict (agent_id, band) do update set n = t.n + excluded.n;
        return null;
      end $$`.execute(db)
    // After the result tallies' own trigger of the event (triggers fire in their names' order).
    await sql`create trigger ${sql.id(`resolution_results_tally_${event}_confidence`)} after ${sql.raw(event)}
      on resolution_results referencing ${sql.raw(REFERENCING[event])}
      for each statement execute function ${sql.id(`dxs_confidence_tally_${event}`)}()`.execute(db)
  }
  await sql`
    insert into result_confidence_tallies (agent_id, band, n)
      select agent_id, ${sql.raw(BAND)}, count(*) from resolution_results
      where is_current and confidence is not null group by 1, 2`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const [event] of CHANGES) {
    await sql`drop trigger ${sql.id(`resolution_results_tally_${event}_confidence`)} on resolution_results`.execute(
      db,
    )
    await sql`drop function ${sql.id(`dxs_confidence_tally_${event}`)}()`.execute(db)
  }
  await sql`drop table result_confidence_tallies`.execute(db)
}
