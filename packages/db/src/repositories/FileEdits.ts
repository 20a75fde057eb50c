/**
 * File-edit jobs: a project's template filled from its results, one job per project. Starting a job replaces
 * the finished one and enqueues its task in the same transaction; cancelling deletes the job and its task.
 * Driver errors are defects.
 */
import { Effect } from "effect"
import { sql } from "kysely"
import type { Conn } from "../Db.ts"
import type { FileEditJobRow } from "../Schema.ts"
import { enqueue } from "../TaskQueue.ts"
import { FILE_EDIT_TASK, fileEditTaskKey } from "./TaskKinds.ts"

export type { FileEditJobRow }

const run = <A>(f: () => Promise<A>): Effect.Effect<A> => Effect.promise(f)

export type FileEditProblemRow = FileEditJobRow["problems"][number]

/** The project's job, if any; `lock` holds its row (and, when there is none, nothing) until the transaction ends. */
export const findJob = (
  conn: Conn,
  projectId: string,
  lock = false,
): Effect.Effect<FileEditJobRow | undefined> =>
  run(() => {
    const q = conn.selectFrom("file_edit_jobs").selectAll().where("project_id", "=", projectId)
    return (lock ? q.forUpdate() : q).executeTakeFirst()
  })

/** Serialises the starts and cancels of one project's jobs (a transaction-scoped advisory lock). */
export const lockProjectJobs = (conn: Conn, projectId: string): Effect.Effect<void> =>
  run(() => sql`select pg_advisory_xact_lock(hashtext('file-edit'), hashtext(${projectId}))`.execute(conn))

export interface NewJob {
  readonly id: string
  readonly projectId: string
  readonly format: "xlsx" | "docx"
  readonly templateName: string
  readonly templateKey: string
}

/** Inserts a running job (after the previous one was removed) and enqueues its task, in `trx`. */
export const insertJob = (trx: Conn, job: NewJob): Effect.Effect<FileEditJobRow> =>
  run(async () => {
    const task = await enqueue(trx, {
      kind: FILE_EDIT_TASK,
      idempotencyKey: fileEditTaskKey(job.id),
      payload: { job_id: job.id, project_id: job.projectId },
      projectId: job.projectId,
      maxAttempts: 3,
    })
    return trx
      .insertInto("file_edit_jobs")
      .values({
        id: job.id,
        project_id: job.projectId,
        state: "running",
        format: job.format,
        template_name: job.templateName,
        template_key: job.templateKey,
        problems: JSON.stringify([]),
        task_id: task.id,
      })
      .returningAll()
      .executeTakeFirstOrThrow()
  })

/** Removes the project's job and its task (a worker filling it loses its lease); returns what was removed. */
export const deleteJob = (trx: Conn, projectId: string): Effect.Effect<FileEditJobRow | undefined> =>
  run(async () => {
    const removed = await trx
      .deleteFrom("file_edit_jobs")
      .where("project_id", "=", projectId)
      .returningAll()
      .executeTakeFirst()
    if (removed?.task_id) await trx.deleteFrom("tasks").where("id", "=", removed.task_id).execute()
    return removed
  })

/** The job if it is still running (a cancelled or replaced job is gone: its task has nothing to do). */
export const runningJob = (conn: Conn, jobId: string): Effect.Effect<FileEditJobRow | undefined> =>
  run(() =>
    conn
      .selectFrom("file_edit_jobs")
      .selectAll()
      .where("id", "=", jobId)
      .where("state", "=", "running")
      .executeTakeFirst(),
  )

/** Records progress; false when the job is no longer running (cancelled): stop. */
export const setProgress = (
  conn: Conn,
  jobId: string,
  completed: number,
  total: number,
): Effect.Effect<boolean> =>
  run(async () => {
    const r = await conn
      .updateTable("file_edit_jobs")
      .set({ progress_completed: completed, progress_total: total })
      .where("id", "=", jobId)
      .where("state", "=", "running")
      .executeTakeFirst()
    return r.numUpdatedRows > 0n
  })

/** The job succeeded with its filled file; false when it is no longer running. */
export const finishJob = (
  trx: Conn,
  jobId: string,
  outcome: { readonly outputKey: string; readonly problems: ReadonlyArray<FileEditProblemRow> },
): Effect.Effect<boolean> =>
  run(async () => {
    const r = await trx
      .updateTable("file_edit_jobs")
      .set({
        state: "succeeded",
        output_key: outcome.outputKey,
        problems: JSON.stringify(outcome.problems),
        progress_completed: sql`progress_total`,
        finished_at: sql`now()`,
      })
      .where("id", "=", jobId)
      .where("state", "=", "running")
      .executeTakeFirst()
    return r.numUpdatedRows > 0n
  })

/** The job failed with `error`; false when it is no longer running. */
export const failJob = (conn: Conn, jobId: string, error: string): Effect.Effect<boolean> =>
  run(async () => {
    const r = await conn
      .updateTable("file_edit_jobs")
      .set({ state: "failed", error, finished_at: sql`now()` })
      .where("id", "=", jobId)
      .where("state", "=", "running")
      .executeTakeFirst()
    return r.numUpdatedRows > 0n
  })

/**
 * Housekeeping: running jobs whose task failed for good without its handler recording it (the worker died on
 * the last attempt) or vanished fail with its last error. Returns how many.
 */
export const failAbandonedJobs = (conn: Conn): Effect.Effect<number> =>
  run(async () => {
    const r = await sql`
      update file_edit_jobs j set
        state = 'failed',
        error = coalesce('the filling stopped: ' || t.last_error, 'the filling stopped: its task is gone'),
        finished_at = now()
      from file_edit_jobs j2 left join tasks t on t.id = j2.task_id
      where j.id = j2.id and j.state = 'running' and (t.id is null or t.status = 'failed')`.execute(conn)
    return Number(r.numAffectedRows ?? 0n)
  })

/** What a template is filled from: the published agents (with their dimensions' names) and current results. */
export const templateSources = (conn: Conn, projectId: string) =>
  run(async () => {
    const [agents, attachments, dimensions, results] = await Promise.all([
      conn
        .selectFrom("agents")
        .select(["id", "name", "value_type", "value_if_not_found"])
        .where("project_id", "=", projectId)
        .where("is_draft", "=", false)
        .orderBy("created_at")
        .orderBy("id")
        .execute(),
      conn
        .selectFrom("agent_dimensions as ad")
        .innerJoin("agents as a", "a.id", "ad.agent_id")
        .innerJoin("dimensions as d", "d.id", "ad.dimension_id")
        .select(["ad.agent_id", "d.name"])
        .where("a.project_id", "=", projectId)
        .orderBy("ad.order")
        .execute(),
      conn.selectFrom("dimensions").select(["id", "name"]).where("project_id", "=", projectId).execute(),
      conn
        .selectFrom("resolution_results as rr")
        .innerJoin("agents as a", (j) =>
          j.onRef("a.id", "=", "rr.agent_id").onRef("a.config_version", "=", "rr.agent_config_version"),
        )
        .innerJoin("atomic_values as av", "av.id", "rr.atomic_value_id")
        .select(["rr.agent_id", "rr.value", "rr.resolution_status", "av.dimension_values"])
        .where("rr.project_id", "=", projectId)
        .where("a.project_id", "=", projectId)
        .where("a.is_draft", "=", false)
        .execute(),
    ])
    return { agents, attachments, dimensions, results }
  })
