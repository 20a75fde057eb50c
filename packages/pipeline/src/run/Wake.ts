/**
 * Waking a project's queued run: its `run-start` task is made due now and the workers are notified (in the
 * caller's transaction, so the wake-up goes out when it commits), instead of the run looking again later.
 */
import { TASKS_CHANNEL, type TaskTrx } from "@dxs/db/TaskQueue"
import { sql } from "kysely"

export const RUN_START_TASK = "run-start"

/** Makes the start task of the project's queued run due now; true when there was one to wake. */
export const wakeQueuedRun = async (trx: TaskTrx, projectId: string): Promise<boolean> => {
  const woken = await trx
    .updateTable("tasks")
    .set({ run_after: sql`now()` })
    .where("kind", "=", RUN_START_TASK)
    .where("status", "=", "pending")
    .where(
      "run_id",
      "in",
      trx.selectFrom("runs").select("id").where("project_id", "=", projectId).where("status", "=", "queued"),
    )
    .executeTakeFirst()
  if (woken.numUpdatedRows === 0n) return false
  await sql`select pg_notify(${TASKS_CHANNEL}, ${RUN_START_TASK})`.execute(trx)
  return true
}

/** True when the project has a run-start task not yet done (a queued run waits, maybe for parsing). */
export const hasQueuedRunStart = async (trx: TaskTrx, projectId: string): Promise<boolean> =>
  (await trx
    .selectFrom("tasks")
    .select("id")
    .where("kind", "=", RUN_START_TASK)
    .where("project_id", "=", projectId)
    .where("status", "in", ["pending", "running"])
    .executeTakeFirst()) !== undefined
