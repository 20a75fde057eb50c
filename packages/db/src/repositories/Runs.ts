/**
 * Runs and their tasks, as far as the pipeline's stages read and write them. Driver errors are defects.
 */
import { Effect } from "effect"
import { sql } from "kysely"
import type { Conn } from "../Db.ts"

/** A running run, with its project's reference date (for relative dates in documents). */
export interface RunningRun {
  readonly projectId: string
  readonly referenceDate: string
}

/** The run if it is running (else its tasks have nothing to do), with the project's reference date. */
export const findRunningRun = (conn: Conn, runId: string): Effect.Effect<RunningRun | undefined> =>
  Effect.promise(() =>
    conn
      .selectFrom("runs as r")
      .innerJoin("projects as p", "p.id", "r.project_id")
      .select([
        "r.status",
        "r.project_id",
        sql<string>`coalesce(p.reference_date, p.created_at::date)::text`.as("reference_date"),
      ])
      .where("r.id", "=", runId)
      .executeTakeFirst(),
  ).pipe(
    Effect.map((row) =>
      row?.status === "running"
        ? { projectId: row.project_id, referenceDate: row.reference_date }
        : undefined,
    ),
  )

/** The model usage a task cost (calls, cache hits, tokens), recorded on the task. */
export const recordTaskUsage = (
  conn: Conn,
  taskId: string,
  usage: Readonly<Record<string, number>>,
): Effect.Effect<void> =>
  Effect.promise(() =>
    conn
      .updateTable("tasks")
      .set({ usage: JSON.stringify(usage) })
      .where("id", "=", taskId)
      .execute(),
  )
