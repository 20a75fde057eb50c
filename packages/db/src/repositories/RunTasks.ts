/**
 * The tasks of runs: each phase's tasks, what they say about their run (unfinished, failed for good,
 * abandoned by their worker), their cancellation when the run ends, and waking a queued run's start task.
 * The task kinds and keys come from the catalogue (`TaskKinds.ts`). Driver errors are defects.
 */
import { byDocument, type ExtractionPair } from "@dxs/domain/LaunchPlanner"
import { Effect } from "effect"
import { sql } from "kysely"
import type { Conn } from "../Db.ts"
import { enqueueMany, hasUnfinishedTask, TASKS_CHANNEL } from "../TaskQueue.ts"
import {
  agentTaskKey,
  type DERIVE_TASK,
  EXTRACT_TASK,
  extractTaskKey,
  type RESOLVE_TASK,
  RUN_START_TASK,
} from "./TaskKinds.ts"

const run = <A>(f: () => Promise<A>): Effect.Effect<A> => Effect.promise(f)

/** A task's error once its run ended and cancelled it (`cancelPendingTasks`): not a failure of the run. */
const CANCELLED = "cancelled: the run %"

// ---------------------------------------------------------------------------------------------------------
// A run's phases

/**
 * Enqueues one `extract` task per document of the run's agent/document pairs, holding all its agents;
 * returns how many tasks.
 */
export const enqueueExtractTasks = (
  conn: Conn,
  projectId: string,
  runId: string,
  pairs: ReadonlyArray<ExtractionPair>,
): Effect.Effect<number> =>
  enqueueRunTasks(
    conn,
    byDocument(pairs).map((work) => ({
      projectId,
      runId,
      kind: EXTRACT_TASK,
      idempotencyKey: extractTaskKey(work, runId),
      payload: { runId, ...work },
    })),
  )

/** Enqueues one `resolve` or `derive` task per agent of the run; returns how many it was given. */
export const enqueueAgentTasks = (
  conn: Conn,
  kind: typeof RESOLVE_TASK | typeof DERIVE_TASK,
  projectId: string,
  runId: string,
  agentIds: ReadonlyArray<string>,
): Effect.Effect<number> =>
  enqueueRunTasks(
    conn,
    agentIds.map((agentId) => ({
      projectId,
      runId,
      kind,
      idempotencyKey: agentTaskKey(kind, agentId, runId),
      payload: { runId, agentId },
    })),
  )

const enqueueRunTasks = (conn: Conn, tasks: Parameters<typeof enqueueMany>[1]): Effect.Effect<number> =>
  run(() => enqueueMany(conn, tasks)).pipe(Effect.as(tasks.length))

/**
 * Whether the run has an unfinished phase task (its start task aside): the first of them in the order they
 * were written, through `tasks_run_unfinished`, however many tasks the run has or has finished (every task
 * of a phase asks after its commit). The order is what keeps the read on the index: without it the planner
 * may scan the table from its start, where the run's finished tasks are.
 */
export const hasUnfinishedTasks = (conn: Conn, runId: string): Effect.Effect<boolean> =>
  run(() =>
    sql<{ found: number }>`select 1 as found from tasks where run_id = ${runId}::uuid
      and status in ('pending', 'running') and kind <> ${RUN_START_TASK} order by created_at limit 1`.execute(
      conn,
    ),
  ).pipe(Effect.map((r) => r.rows.length > 0))

/** A task of the run that failed for good (its last attempt errored or died with its worker), if any. */
export const failedTaskOf = (
  conn: Conn,
  runId: string,
): Effect.Effect<{ readonly kind: string; readonly last_error: string | null } | undefined> =>
  run(() =>
    conn
      .selectFrom("tasks")
      .select(["kind", "last_error"])
      .where("run_id", "=", runId)
      .where("status", "=", "failed")
      .where("last_error", "not like", CANCELLED)
      .executeTakeFirst(),
  )

// ---------------------------------------------------------------------------------------------------------
// Ending runs

/** Fails the ended run's pending tasks as cancelled (`status`: how the run ended). */
export const cancelPendingTasks = (
  conn: Conn,
  runId: string,
  status: "succeeded" | "failed",
): Effect.Effect<void> =>
  run(() =>
    conn
      .updateTable("tasks")
      .set({
        status: "failed",
        last_error: `cancelled: the run ${status === "failed" ? "failed" : "ended"}`,
        locked_until: null,
        completed_at: sql`now()`,
      })
      .where("run_id", "=", runId)
      .where("status", "=", "pending")
      .execute(),
  )

// ---------------------------------------------------------------------------------------------------------
// Runs abandoned by their workers

/** Marks failed the run tasks whose last attempt's lease ran out (their worker died). */
export const failAbandonedRunTasks = (conn: Conn): Effect.Effect<void> =>
  run(() =>
    conn
      .updateTable("tasks")
      .set({
        status: "failed",
        last_error: "abandoned by its worker on the last attempt",
        completed_at: sql`now()`,
      })
      .where("run_id", "is not", null)
      .where("status", "=", "running")
      .where("locked_until", "<", sql<Date>`now()`)
      .whereRef("attempts", ">=", "max_attempts")
      .execute(),
  )

/** The queued or running runs with a task that failed for good. */
export const runsWithFailedTasks = (conn: Conn): Effect.Effect<ReadonlyArray<string>> =>
  run(() =>
    conn
      .selectFrom("runs as r")
      .select("r.id")
      .where("r.status", "in", ["queued", "running"])
      .where((eb) =>
        eb.exists(
          eb
            .selectFrom("tasks as t")
            .select("t.id")
            .whereRef("t.run_id", "=", "r.id")
            .where("t.status", "=", "failed")
            .where("t.last_error", "not like", CANCELLED),
        ),
      )
      .execute(),
  ).pipe(Effect.map((rows) => rows.map((r) => r.id)))

/** The running runs without an unfinished task of their phases: nothing moves them on. */
export const stalledRuns = (conn: Conn): Effect.Effect<ReadonlyArray<string>> =>
  run(() =>
    conn
      .selectFrom("runs as r")
      .select("r.id")
      .where("r.status", "=", "running")
      .where((eb) =>
        eb.not(
          eb.exists(
            eb
              .selectFrom("tasks as t")
              .select("t.id")
              .whereRef("t.run_id", "=", "r.id")
              .where("t.status", "in", ["pending", "running"])
              .where("t.kind", "!=", RUN_START_TASK),
          ),
        ),
      )
      .execute(),
  ).pipe(Effect.map((rows) => rows.map((r) => r.id)))

// ---------------------------------------------------------------------------------------------------------
// Waking a queued run

/**
 * Makes the start task of the project's queued run due now and notifies the workers (in the caller's
 * transaction, so the wake-up goes out when it commits); true when there was one to wake.
 */
export const wakeQueuedRun = (conn: Conn, projectId: string): Effect.Effect<boolean> =>
  run(async () => {
    const woken = await conn
      .updateTable("tasks")
      .set({ run_after: sql`now()` })
      .where("kind", "=", RUN_START_TASK)
      .where("status", "=", "pending")
      .where(
        "run_id",
        "in",
        conn
          .selectFrom("runs")
          .select("id")
          .where("project_id", "=", projectId)
          .where("status", "=", "queued"),
      )
      .executeTakeFirst()
    if (woken.numUpdatedRows === 0n) return false
    await sql`select pg_notify(${TASKS_CHANNEL}, ${RUN_START_TASK})`.execute(conn)
    return true
  })

/** True when the project has a run-start task not yet done (a queued run waits, maybe for parsing). */
export const hasQueuedRunStart = (conn: Conn, projectId: string): Effect.Effect<boolean> =>
  run(() => hasUnfinishedTask(conn, projectId, RUN_START_TASK))
