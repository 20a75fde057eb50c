import { type Kysely, sql } from "kysely"
import { changesByEvent, REFERENCING } from "./2026_11_29_0001_result_tallies/Statements.ts"
import { reviewTallyPerRow } from "./2026_11_29_0005_review_queue.ts"

// Frozen: never import application code here (the tallies' statement helpers are frozen with them).
//
// The review queue's tally (documents with results per project, and those whose every value is reviewed)
// kept per statement, as the other tallies are: a resolution of 5,000 documents updated the queue's 5,000
// rows in one statement, and a trigger per row added each one to the tally by an upsert of its own (5,000
// upserts of the same counter, each a new version of its row). One upsert per project and statement now
// adds what the statement's transition tables changed; a row counts as it is after the statement (+1) and
// as it was before (-1), under its own project.

/** What a statement changed in the queue, per event: its rows' projects and whether every value is reviewed. */
const CHANGES = changesByEvent(`project_id, (reviewed = "values")::int as done`, "true")

export async function up(db: Kysely<any>): Promise<void> {
  await sql`drop trigger review_documents_tally on review_documents`.execute(db)
  await sql`drop function dxs_review_tally()`.execute(db)
  for (const [event, changes] of CHANGES) {
    await sql`
      create function ${sql.id(`dxs_review_tally_${event}`)}() returns trigger language plpgsql as $$
      begin
        insert into review_tallies as t (project_id, slot, documents, reviewed)
          select c.project_id, pg_backend_pid() % 64, sum(c.d)::int, sum(c.d * c.done)::int
          from (${sql.raw(changes)}) c
          group by c.project_id
          -- Nothing to count, or the project is being removed (its tallies go with it).
          having (sum(c.d) <> 0 or sum(c.d * c.done) <> 0)
             and exists (select 1 from projects p where p.id = c.project_id)
          order by c.project_id
          on conflict (project_id, slot) do update
            set documents = t.documents + excluded.documents, reviewed = t.reviewed + excluded.reviewed;
        return null;
      end $$`.execute(db)
    await sql`create trigger ${sql.id(`review_documents_tally_${event}`)} after ${sql.raw(event)}
      on review_documents referencing ${sql.raw(REFERENCING[event])}
      for each statement execute function ${sql.id(`dxs_review_tally_${event}`)}()`.execute(db)
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const [event] of CHANGES) {
    await sql`drop trigger ${sql.id(`review_documents_tally_${event}`)} on review_documents`.execute(db)
    await sql`drop function ${sql.id(`dxs_review_tally_${event}`)}()`.execute(db)
  }
  await reviewTallyPerRow(db)
}
