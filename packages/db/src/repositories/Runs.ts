/**
 * Runs: launch requests, the run rows through their phases, and ending a run (its usage, its completion
 * event). The tasks of runs are in `RunTasks.ts`. Driver errors are defects.
 */
import { Effect } from "effect"
import { sql } from "kysely"
import type { Conn } from "../Db.ts"
import type { RunRow } from "../Schema.ts"
import { enqueue } from "../TaskQueue.ts"
import { RUN_START_TASK, runStartTaskKey } from "./TaskKinds.ts"

export type { RunRow }

const run = <A>(f: () => Promise<A>): Effect.Effect<A> => Effect.promise(f)

// ---------------------------------------------------------------------------------------------------------
// What the stages read and write

/** A running run, with its project's reference date (for relative dates in documents). */
export interface RunningRun {
  readonly projectId: string
  readonly referenceDate: string
}

/** The run if it is running (else its tasks have nothing to do), with the project's reference date. */
export const findRunningRun = (conn: Conn, runId: string): Effect.Effect<RunningRun | undefined> =>
  run(() =>
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

// ---------------------------------------------------------------------------------------------------------
// Launch requests

/** The project's queued run, if any (a launch coalesces with it). */
export const findQueuedRun = (
  conn: Conn,
  projectId: string,
): Effect.Effect<Pick<RunRow, "id" | "run_number"> | undefined> =>
  run(() =>
    conn
      .selectFrom("runs")
      .select(["id", "run_number"])
      .where("project_id", "=", projectId)
      .where("status", "=", "queued")
      .executeTakeFirst(),
  )

/**
 * Creates a queued run with the project's next run number and enqueues its `run-start` task. The caller
 * holds the project's row lock, so two launches cannot take the same number.
 */
export const createQueuedRun = (
  conn: Conn,
  projectId: string,
): Effect.Effect<Pick<RunRow, "id" | "run_number">> =>
  run(async () => {
    const { next } = await conn
      .selectFrom("runs")
      .select(sql<number>`coalesce(max(run_number), 0)::int + 1`.as("next"))
      .where("project_id", "=", projectId)
      .executeTakeFirstOrThrow()
    const created = await conn
      .insertInto("runs")
      .values({ project_id: projectId, run_number: next, status: "queued", plan: JSON.stringify({}) })
      .returning(["id", "run_number"])
      .executeTakeFirstOrThrow()
    await enqueue(conn, {
      kind: RUN_START_TASK,
      idempotencyKey: runStartTaskKey(created.id),
      payload: { runId: created.id },
      projectId,
      runId: created.id,
    })
    return created
  })

// ---------------------------------------------------------------------------------------------------------
// Runs and their phases

/** The run; `lock` holds its row until the transaction ends (what serialises a run's phase changes). */
export const findRun = (conn: Conn, runId: string, lock = false): Effect.Effect<RunRow | undefined> =>
  run(() => {
    const q = conn.selectFrom("runs").selectAll().where("id", "=", runId)
    return (lock ? q.forUpdate() : q).executeTakeFirst()
  })

/** True while a run of the project is running. */
export const hasRunningRun = (conn: Conn, projectId: string): Effect.Effect<boolean> =>
  run(
    async () =>
      (await conn
        .selectFrom("runs")
        .select("id")
        .where("project_id", "=", projectId)
        .where("status", "=", "running")
        .executeTakeFirst()) !== undefined,
  )

/** The runs of the projects that are queued or running. */
export const activeRunsOfProjects = (
  conn: Conn,
  projectIds: ReadonlyArray<string>,
): Effect.Effect<ReadonlyArray<Pick<RunRow, "project_id" | "status">>> =>
  projectIds.length === 0
    ? Effect.succeed([])
    : run(() =>
        conn
          .selectFrom("runs")
          .select(["project_id", "status"])
          .where("project_id", "in", projectIds)
          .where("status", "in", ["queued", "running"])
          .execute(),
      )

/** Sets the queued run running with its plan. */
export const startRun = (conn: Conn, runId: string, plan: object): Effect.Effect<RunRow> =>
  run(() =>
    conn
      .updateTable("runs")
      .set({ status: "running", started_at: sql`now()`, plan: JSON.stringify(plan) })
      .where("id", "=", runId)
      .returningAll()
      .executeTakeFirstOrThrow(),
  )

export const setRunPhase = (conn: Conn, runId: string, phase: string): Effect.Effect<void> =>
  run(() => conn.updateTable("runs").set({ phase }).where("id", "=", runId).execute())

// ---------------------------------------------------------------------------------------------------------
// Ending runs

export interface RunEndRow {
  readonly status: "succeeded" | "failed"
  readonly failureReason?: string | undefined
  readonly error?: string | undefined
}

/** Ends a queued or running run; undefined when it had already ended. */
export const finishRun = (
  conn: Conn,
  runId: string,
  end: RunEndRow,
): Effect.Effect<Pick<RunRow, "id" | "project_id" | "run_number"> | undefined> =>
  run(() =>
    conn
      .updateTable("runs")
      .set({
        status: end.status,
        phase: null,
        finished_at: sql`now()`,
        failure_reason: end.failureReason ?? null,
        error: end.error ?? null,
      })
      .where("id", "=", runId)
      .where("status", "in", ["queued", "running"])
      .returning(["id", "project_id", "run_number"])
      .executeTakeFirst(),
  )

/** What an ended run cost: its duration and the model usage its tasks recorded. */
export interface RunUsage {
  readonly ms: number
  readonly model_calls: number
  readonly cache_hits: number
  readonly prompt_tokens: number
  readonly completion_tokens: number
}

/** Writes on the ended run the sum of its tasks' usage (its tallies); returns it with the run's duration. */
export const totalRunUsage = (conn: Conn, runId: string): Effect.Effect<RunUsage> =>
  run(() =>
    conn
      .updateTable("runs")
      .set({
        model_calls: sql`(select coalesce(sum(requests), 0) from run_usage where run_id = ${runId})`,
        cache_hits: sql`(select coalesce(sum(cache_hits), 0) from run_usage where run_id = ${runId})`,
        prompt_tokens: sql`(select coalesce(sum(input_tokens), 0) from run_usage where run_id = ${runId})`,
        completion_tokens: sql`(select coalesce(sum(output_tokens), 0) from run_usage where run_id = ${runId})`,
      })
      .where("id", "=", runId)
      .returning([
        "model_calls",
        "cache_hits",
        "prompt_tokens",
        "completion_tokens",
        sql<number>`round(extract(epoch from (finished_at - coalesce(started_at, created_at))) * 1000)::bigint`.as(
          "ms",
        ),
      ])
      .executeTakeFirstOrThrow(),
  ).pipe(
    Effect.map((u) => ({
      ms: Number(u.ms),
      model_calls: Number(u.model_calls),
      cache_hits: Number(u.cache_hits),
      prompt_tokens: Number(u.prompt_tokens),
      completion_tokens: Number(u.completion_tokens),
    })),
  )

/** Writes the run's completion event to the outbox (one per run: `events.run_id` is unique); returns its id. */
export const insertCompletionEvent = (
  conn: Conn,
  event: {
    readonly projectId: string
    readonly runId: string
    readonly type: string
    readonly data: Record<string, unknown>
  },
): Effect.Effect<string> =>
  run(async () => {
    const project = await conn
      .selectFrom("projects")
      .select("organization_id")
      .where("id", "=", event.projectId)
      .executeTakeFirstOrThrow()
    const inserted = await conn
      .insertInto("events")
      .values({
        organization_id: project.organization_id,
        project_id: event.projectId,
        run_id: event.runId,
        type: event.type,
        data: JSON.stringify(event.data),
      })
      .returning("id")
      .executeTakeFirstOrThrow()
    return inserted.id
  })

// ---------------------------------------------------------------------------------------------------------
// Reading runs back

/** A run as the runs list reads it, with the model usage its tasks recorded so far. */
export interface RunWithUsage {
  readonly id: string
  readonly run_number: number
  readonly status: RunRow["status"]
  readonly failure_reason: string | null
  readonly plan: Record<string, unknown>
  readonly created_at: Date
  readonly started_at: Date | null
  readonly finished_at: Date | null
  readonly requests: number
  readonly cache_hits: number
  readonly input_tokens: number
  readonly cached_input_tokens: number
  readonly output_tokens: number
}

export const countRunsOfProject = (conn: Conn, projectId: string): Effect.Effect<number> =>
  run(() =>
    conn
      .selectFrom("runs")
      .select(sql<number>`count(*)::int`.as("n"))
      .where("project_id", "=", projectId)
      .executeTakeFirstOrThrow(),
  ).pipe(Effect.map((r) => Number(r.n)))

/** A page of runs: from an offset, or after (before) a run number, newest first. */
export type RunsWindow =
  | { readonly limit: number; readonly offset: number }
  | { readonly limit: number; readonly after?: number | undefined; readonly before?: number | undefined }

/**
 * The project's runs, newest first, each with the model usage its tasks recorded (requests, cache hits,
 * prompt, cached prompt and completion tokens), live while it runs: summed from the run's usage tallies.
 */
export const listRunsOfProject = (
  conn: Conn,
  projectId: string,
  page: RunsWindow,
): Effect.Effect<ReadonlyArray<RunWithUsage>> =>
  run(async () => {
    const backwards = "before" in page && page.before !== undefined
    let q = conn
      .selectFrom("runs as r")
      .leftJoinLateral(
        (eb) =>
          eb
            .selectFrom("run_usage as t")
            .select([
              sql<string>`coalesce(sum(t.requests), 0)`.as("requests"),
              sql<string>`coalesce(sum(t.cache_hits), 0)`.as("cache_hits"),
              sql<string>`coalesce(sum(t.input_tokens), 0)`.as("input_tokens"),
              sql<string>`coalesce(sum(t.cached_input_tokens), 0)`.as("cached_input_tokens"),
              sql<string>`coalesce(sum(t.output_tokens), 0)`.as("output_tokens"),
            ])
            .whereRef("t.run_id", "=", "r.id")
            .as("u"),
        (join) => join.onTrue(),
      )
      .select([
        "r.id",
        "r.run_number",
        "r.status",
        "r.failure_reason",
        "r.plan",
        "r.created_at",
        "r.started_at",
        "r.finished_at",
        "u.requests",
        "u.cache_hits",
        "u.input_tokens",
        "u.cached_input_tokens",
        "u.output_tokens",
      ])
      .where("r.project_id", "=", projectId)
      .orderBy("r.run_number", backwards ? "asc" : "desc")
      .limit(page.limit)
    if ("offset" in page) q = q.offset(page.offset)
    else if (page.after !== undefined) q = q.where("r.run_number", "<", page.after)
    else if (page.before !== undefined) q = q.where("r.run_number", ">", page.before)
    const rows = await q.execute()
    if (backwards) rows.reverse()
    return rows.map((r) => ({
      ...r,
      plan: (r.plan ?? {}) as Record<string, unknown>,
      requests: Number(r.requests ?? 0),
      cache_hits: Number(r.cache_hits ?? 0),
      input_tokens: Number(r.input_tokens ?? 0),
      cached_input_tokens: Number(r.cached_input_tokens ?? 0),
      output_tokens: Number(r.output_tokens ?? 0),
    }))
  })
