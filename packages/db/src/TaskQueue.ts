// Why a queue of our own rather than pg-boss or graphile-worker: a stage completes its task in the same
// transaction as the results it writes (`complete` takes the caller's transaction), so a crash never leaves
// results without a finished task, nor a finished task without its results. Those libraries do not offer that:
// they mark a job done on their own connection after the handler returns.
import { type Kysely, type RawBuilder, sql, type Transaction } from "kysely"
import type { Conn } from "./Db.ts"
import { listen } from "./Listen.ts"
import type { Database, TaskRow } from "./Schema.ts"

/**
 * The task queue: work items are rows of `tasks`. Workers claim due rows with `FOR UPDATE SKIP LOCKED`,
 * hold a lease (`locked_by`, `locked_until`) that they extend by heartbeats, and complete a task in the
 * same transaction as the work's writes. Every time comes from Postgres `now()`: one clock for all
 * processes. Enqueuing notifies `dxs_tasks` (payload: the task's kind) so idle workers wake at once.
 */

export type TaskStatus = "pending" | "running" | "succeeded" | "failed"
export type TaskDb = Kysely<Database>
export type TaskTrx = Transaction<Database>

export const TASKS_CHANNEL = "dxs_tasks"

const ms = (n: number) => sql`(${Math.max(0, Math.round(n))} * interval '1 millisecond')`

export interface EnqueueInput {
  readonly kind: string
  readonly idempotencyKey: string
  readonly payload: Record<string, unknown>
  readonly projectId?: string | null
  /** Not due before this instant (default: now). */
  readonly runAfter?: Date
  /** Not due before now() + delayMs (database clock); ignored when `runAfter` is given. */
  readonly delayMs?: number
  readonly maxAttempts?: number
  /** The pipeline run the task belongs to. */
  readonly runId?: string | null
}

/**
 * Inserts a task unless one with the same idempotency key exists; returns the (new or existing) id.
 * Inside a transaction the wake-up notification is delivered when the transaction commits.
 */
export const enqueue = async (
  conn: Conn,
  input: EnqueueInput,
): Promise<{ readonly id: string; readonly created: boolean }> => {
  const runAfter =
    input.runAfter !== undefined
      ? sql<Date>`${input.runAfter}::timestamptz`
      : input.delayMs
        ? sql<Date>`now() + ${ms(input.delayMs)}`
        : null
  const inserted = await conn
    .insertInto("tasks")
    .values({
      kind: input.kind,
      idempotency_key: input.idempotencyKey,
      payload: JSON.stringify(input.payload),
      project_id: input.projectId ?? null,
      run_id: input.runId ?? null,
      ...(runAfter ? { run_after: runAfter } : {}),
      ...(input.maxAttempts !== undefined ? { max_attempts: input.maxAttempts } : {}),
    })
    .onConflict((oc) => oc.column("idempotency_key").doNothing())
    .returning("id")
    .executeTakeFirst()
  if (inserted) {
    await sql`select pg_notify(${TASKS_CHANNEL}, ${input.kind})`.execute(conn)
    return { id: inserted.id, created: true }
  }
  const existing = await conn
    .selectFrom("tasks")
    .select("id")
    .where("idempotency_key", "=", input.idempotencyKey)
    .executeTakeFirstOrThrow()
  return { id: existing.id, created: false }
}

/** Tasks per INSERT of `enqueueMany` (one JSON parameter of a few MB). */
const ENQUEUE_BATCH = 10_000

/**
 * New tasks of one `enqueueMany` from which the queue's statistics are taken again at once. A claim reads
 * the due tasks in order through `tasks_claim_order` only while the planner knows how many are pending:
 * with statistics from before a launch's thousands of tasks (autovacuum takes new ones a minute or more
 * later), it reads every pending task of the kind and sorts them to take one, on every claim of the run.
 */
const ANALYZE_AFTER = 1_000

/**
 * Inserts many tasks due now, skipping those whose idempotency key exists, with one wake-up notification
 * per kind; returns how many were new. The rows travel as one JSON parameter per batch expanded by
 * `jsonb_to_recordset`, so what a run's phase enqueues (hundreds of thousands of pairs for a large project)
 * costs a statement per ten thousand tasks instead of two statements per task.
 */
export const enqueueMany = async (
  conn: Conn,
  inputs: ReadonlyArray<Omit<EnqueueInput, "runAfter" | "delayMs">>,
): Promise<number> => {
  let created = 0
  const kinds = new Set<string>()
  // Rows without `maxAttempts` keep the column's default: they go in a statement that does not name it.
  for (const withMax of [false, true]) {
    const rows = inputs.filter((input) => (input.maxAttempts !== undefined) === withMax)
    for (let from = 0; from < rows.length; from += ENQUEUE_BATCH) {
      const batch = rows.slice(from, from + ENQUEUE_BATCH).map((input) => ({
        kind: input.kind,
        idempotency_key: input.idempotencyKey,
        payload: input.payload,
        project_id: input.projectId ?? null,
        run_id: input.runId ?? null,
        max_attempts: input.maxAttempts ?? null,
      }))
      const columns = withMax
        ? sql`kind, idempotency_key, payload, project_id, run_id, max_attempts`
        : sql`kind, idempotency_key, payload, project_id, run_id`
      const inserted = await sql<{ kind: string }>`
        insert into tasks (${columns})
        select ${columns} from jsonb_to_recordset(${JSON.stringify(batch)}::jsonb) as t(
          kind text, idempotency_key text, payload jsonb, project_id uuid, run_id uuid, max_attempts integer)
        on conflict (idempotency_key) do nothing
        returning kind`.execute(conn)
      created += inserted.rows.length
      for (const row of inserted.rows) kinds.add(row.kind)
    }
  }
  // In the caller's transaction, if any, the statistics count its new tasks (ANALYZE counts its own
  // transaction's rows) and are seen by others when it commits, with the tasks.
  if (created >= ANALYZE_AFTER) await sql`analyze tasks`.execute(conn)
  for (const kind of kinds) await sql`select pg_notify(${TASKS_CHANNEL}, ${kind})`.execute(conn)
  return created
}

export interface ClaimInput {
  readonly workerId: string
  /** Only these kinds (default: any kind). */
  readonly kinds?: ReadonlyArray<string>
  readonly leaseMs: number
  /** At most this many tasks (default 1). */
  readonly limit?: number
  /**
   * How long tasks meeting outages are retried without counting (default `DEFAULT_RETRY_WINDOW_MS`): an
   * expired lease (the worker gone) is such an outage, so the attempt it held is not counted until then.
   */
  readonly retryWindowMs?: number
}

/** A claimed task; taken over from another worker whose lease expired when `previous_owner` is set. */
export type ClaimedTask = TaskRow & { readonly previous_owner: string | null }

/** The retry window of outages (`TASK_RETRY_WINDOW_SECONDS`): 15 minutes. */
export const DEFAULT_RETRY_WINDOW_MS = 15 * 60_000

/**
 * Claims up to `limit` due tasks: pending ones whose `run_after` has come, and running ones whose lease
 * has expired (their worker died or stalled; `lease_expirations` counts these). A claim sets the
 * lease and counts an attempt, except the claim of an expired task within the retry window of its first
 * outage (`outage_since`, set then): a worker killed from outside does not use up the task's attempts. An
 * expired task that already used its last attempt, past that window, is not claimed but failed, so a task
 * that keeps killing its worker ends instead of looping forever.
 */
export const claim = async (db: Conn, input: ClaimInput): Promise<ReadonlyArray<ClaimedTask>> => {
  const limit = input.limit ?? 1
  if (limit < 1 || (input.kinds && input.kinds.length === 0)) return []
  const kindFilter = input.kinds ? sql`and kind = any(${[...input.kinds]}::text[])` : sql``
  const window = ms(input.retryWindowMs ?? DEFAULT_RETRY_WINDOW_MS)
  const result = await sql<ClaimedTask>`
    with due as (
      select id, status, attempts, max_attempts, locked_by,
        (status = 'running' and coalesce(outage_since, now()) > now() - ${window}) as forgiven
      from tasks
      where ((status = 'pending' and run_after <= now()) or (status = 'running' and locked_until < now()))
        ${kindFilter}
      order by run_after, created_at
      limit ${limit}
      for update skip locked
    ),
    exhausted as (
      update tasks t set
        status = 'failed',
        lease_expirations = t.lease_expirations + 1,
        last_error = 'lease expired during the last attempt (' || t.attempts || ' of ' || t.max_attempts
          || ', worker ' || coalesce(due.locked_by, '?') || ')',
        locked_until = null,
        completed_at = now(),
        updated_at = now()
      from due
      where t.id = due.id and due.status = 'running' and due.attempts >= due.max_attempts and not due.forgiven
      returning t.id
    )
    update tasks t set
      status = 'running',
      locked_by = ${input.workerId},
      locked_until = now() + ${ms(input.leaseMs)},
      attempts = t.attempts + (case when due.forgiven then 0 else 1 end),
      lease_expirations = t.lease_expirations + (case when due.status = 'running' then 1 else 0 end),
      outage_since = case when due.status = 'running' then coalesce(t.outage_since, now()) else t.outage_since end,
      updated_at = now()
    from due
    where t.id = due.id and not (due.status = 'running' and due.attempts >= due.max_attempts and not due.forgiven)
    returning t.*, case when due.status = 'running' then coalesce(due.locked_by, '?') end as previous_owner
  `.execute(db)
  return result.rows
}

/** Extends the lease if this worker still holds the task. `false` means the lease is lost: stop working. */
export const heartbeat = async (
  db: Conn,
  taskId: string,
  workerId: string,
  leaseMs: number,
): Promise<boolean> => {
  const r = await db
    .updateTable("tasks")
    .set({ locked_until: sql`now() + ${ms(leaseMs)}`, updated_at: sql`now()` })
    .where("id", "=", taskId)
    .where("status", "=", "running")
    .where("locked_by", "=", workerId)
    .executeTakeFirst()
  return r.numUpdatedRows > 0n
}

/** A task's model usage (requests, cache hits, tokens), stored on the task and added to its run's tallies. */
export type TaskUsage = Readonly<Record<string, number>>

const USAGE_COLUMNS = [
  ["calls", "requests"],
  ["cacheHits", "cache_hits"],
  ["promptTokens", "input_tokens"],
  ["cachedTokens", "cached_input_tokens"],
  ["completionTokens", "output_tokens"],
] as const

/**
 * Writes that commit with a task's completion, in the completion's own statement (`complete`): a list of
 * data-modifying common table expressions (`name as (…), …`, none named `done` or `added`) made by a
 * repository, each guarded by `whenCompleted` so that nothing is written when the lease was lost.
 */
export type CompletionWrites = RawBuilder<unknown>

/** True in a `CompletionWrites` expression when the task was completed (its worker still held it). */
export const whenCompleted = sql<boolean>`exists (select from done)`

/**
 * One statement that marks the task succeeded if this worker still holds it, stores its usage on it and adds
 * that to its run's usage tallies (`run_usage`, one row per run and connection slot, so that tasks of a run
 * committing side by side do not queue on one row), with the work's own writes. Answers how many tasks it
 * completed (0 or 1).
 */
const completeInOne = async (
  conn: Conn,
  taskId: string,
  workerId: string,
  usage: TaskUsage | undefined,
  writes: CompletionWrites | undefined,
): Promise<number> => {
  const added =
    usage === undefined
      ? sql``
      : sql`, added as (
      insert into run_usage as u (run_id, slot, ${sql.join(USAGE_COLUMNS.map(([, c]) => sql.ref(c)))})
        select d.run_id, pg_backend_pid() % 64,
               ${sql.join(USAGE_COLUMNS.map(([k]) => sql`${Math.max(0, Math.round(usage[k] ?? 0))}::bigint`))}
        from done d where d.run_id is not null
        on conflict (run_id, slot) do update set
          ${sql.join(USAGE_COLUMNS.map(([, c]) => sql`${sql.ref(c)} = ${sql.ref(`u.${c}`)} + ${sql.ref(`excluded.${c}`)}`))}
    )`
  const r = await sql<{ changed: number }>`
    with done as (
      update tasks set ${usage === undefined ? sql`` : sql`usage = ${JSON.stringify(usage)}::jsonb,`}
                       status = 'succeeded', locked_until = null, last_error = null, completed_at = now(),
                       updated_at = now()
      where id = ${taskId}::uuid and status = 'running' and locked_by = ${workerId}
      returning run_id
    )${added}${writes === undefined ? sql`` : sql`, ${writes}`}
    select count(*)::int as changed from done`.execute(conn)
  return r.rows[0]?.changed ?? 0
}

/**
 * Marks the task succeeded if this worker still holds it, with the model usage the work cost when it cost
 * any and the work's `writes` when they can go in the same statement (`completeInOne`). Call it inside
 * the transaction that writes the rest of the work's results: they commit together, and a `false` (lease
 * lost) should roll that transaction back; with the writes, no transaction is needed.
 */
export const complete = async (
  conn: Conn,
  taskId: string,
  workerId: string,
  usage?: TaskUsage,
  writes?: CompletionWrites,
): Promise<boolean> => (await completeInOne(conn, taskId, workerId, usage, writes)) > 0

/**
 * Puts a task this worker holds back to `pending`, due after `delayMs`, without counting the attempt: for a
 * task that cannot proceed yet (a run waiting for parsing or for the project's running run). Returns false
 * when this worker no longer holds the task.
 */
export const reschedule = async (conn: Conn, taskId: string, workerId: string, delayMs: number) => {
  const r = await conn
    .updateTable("tasks")
    .set({
      status: "pending",
      attempts: sql`greatest(attempts - 1, 0)`,
      locked_by: null,
      locked_until: null,
      run_after: sql`now() + ${ms(delayMs)}`,
      updated_at: sql`now()`,
    })
    .where("id", "=", taskId)
    .where("status", "=", "running")
    .where("locked_by", "=", workerId)
    .executeTakeFirst()
  return r.numUpdatedRows > 0n
}

/**
 * Gives a task this worker holds back at once, the attempt not counted, and wakes the workers of its kind:
 * for a task still running when its worker stops (SIGTERM after the grace period), so that another worker
 * takes it now rather than when its lease would have expired. False when this worker no longer holds it.
 */
export const release = async (conn: Conn, task: Pick<TaskRow, "id" | "kind">, workerId: string) => {
  const released = await reschedule(conn, task.id, workerId, 0)
  if (released) await sql`select pg_notify(${TASKS_CHANNEL}, ${task.kind})`.execute(conn)
  return released
}

const BASE_DELAY_MS = 1_000
const MAX_DELAY_MS = 5 * 60_000

/**
 * Delay before retrying after failed attempt number `attempt` (1-based): 1 s × 2^(attempt−1), capped at
 * 5 min, then ±20 % jitter from `random` (a number in [0, 1)).
 */
export const retryDelayMs = (attempt: number, random: () => number): number => {
  const exponential = Math.min(MAX_DELAY_MS, BASE_DELAY_MS * 2 ** Math.max(0, attempt - 1))
  return Math.round(exponential * (0.8 + 0.4 * random()))
}

/** The longest wait between retries of a task meeting an outage: it resumes soon after the outage ends. */
export const OUTAGE_MAX_DELAY_MS = 30_000

export interface FailOptions {
  /** Retry at once instead of after the backoff (the attempt still counts). */
  readonly now?: boolean
  /**
   * The failure is an outage (storage or the database out of reach), not the task's own: within
   * `retryWindowMs` of the first one the attempt does not count, and the task is retried after a backoff
   * of half the time since that first one (at least 1 s, at most `OUTAGE_MAX_DELAY_MS`).
   */
  readonly outage?: boolean
  /** Default `DEFAULT_RETRY_WINDOW_MS`. */
  readonly retryWindowMs?: number
  /** Jitter source for the backoff (default Math.random). */
  readonly random?: () => number
}

/**
 * Records a failed attempt by this worker: back to `pending` after a backoff while attempts remain,
 * otherwise `failed`; `error` becomes `last_error` either way. Returns the new status, or `null` when
 * this worker no longer holds the task (nothing changed).
 */
export const fail = async (
  conn: Conn,
  taskId: string,
  workerId: string,
  error: string,
  options: FailOptions = {},
): Promise<"pending" | "failed" | null> => {
  const run = async (trx: Conn) => {
    const window = ms(options.retryWindowMs ?? DEFAULT_RETRY_WINDOW_MS)
    const task = await trx
      .selectFrom("tasks")
      .select([
        "attempts",
        "max_attempts",
        sql<number>`extract(epoch from now() - coalesce(outage_since, now())) * 1000`.as("outage_ms"),
        sql<boolean>`coalesce(outage_since, now()) > now() - ${window}`.as("within_window"),
      ])
      .where("id", "=", taskId)
      .where("status", "=", "running")
      .where("locked_by", "=", workerId)
      .forUpdate()
      .executeTakeFirst()
    if (!task) return null
    if (options.outage && task.within_window) {
      const delay = Math.min(OUTAGE_MAX_DELAY_MS, Math.max(1_000, Number(task.outage_ms) / 2))
      await trx
        .updateTable("tasks")
        .set({
          status: "pending",
          attempts: sql`greatest(attempts - 1, 0)`,
          last_error: error,
          locked_by: null,
          locked_until: null,
          outage_since: sql`coalesce(outage_since, now())`,
          run_after: sql`now() + ${ms(delay * (0.8 + 0.4 * (options.random ?? Math.random)()))}`,
          updated_at: sql`now()`,
        })
        .where("id", "=", taskId)
        .execute()
      return "pending" as const
    }
    const retry = task.attempts < task.max_attempts
    const delay = options.now ? 0 : retryDelayMs(task.attempts, options.random ?? Math.random)
    await trx
      .updateTable("tasks")
      .set({
        status: retry ? "pending" : "failed",
        last_error: error,
        locked_until: null,
        // A failure of the task's own ends the outage it met; a later one starts a window of its own.
        ...(options.outage ? {} : { outage_since: null }),
        updated_at: sql`now()`,
        ...(retry ? { run_after: sql`now() + ${ms(delay)}` } : { completed_at: sql`now()` }),
      })
      .where("id", "=", taskId)
      .execute()
    return retry ? ("pending" as const) : ("failed" as const)
  }
  return conn.isTransaction ? run(conn) : (conn as Kysely<Database>).transaction().execute(run)
}

export interface TaskCounts {
  readonly pending: number
  readonly running: number
  readonly succeeded: number
  readonly failed: number
  /** Unfinished (pending or running) tasks whose lease has expired at least once: their worker died or stalled. */
  readonly expiredLeases: number
}

export interface TaskStats extends TaskCounts {
  readonly byKind: Readonly<Record<string, TaskCounts>>
}

const emptyCounts = (): { -readonly [K in keyof TaskCounts]: number } => ({
  pending: 0,
  running: 0,
  succeeded: 0,
  failed: 0,
  expiredLeases: 0,
})

/** True when the project has a task of `kind` still pending or running (other than `except`, when given). */
export const hasUnfinishedTask = async (
  conn: Conn,
  projectId: string,
  kind: string,
  except?: string,
): Promise<boolean> => {
  let query = conn
    .selectFrom("tasks")
    .select("id")
    .where("kind", "=", kind)
    .where("project_id", "=", projectId)
    .where("status", "in", ["pending", "running"])
  if (except !== undefined) query = query.where("id", "<>", except)
  return (await query.executeTakeFirst()) !== undefined
}

/** Counts of a project's tasks by status, in total and per kind. */
export const taskStats = async (db: Conn, projectId: string): Promise<TaskStats> => {
  const rows = await db
    .selectFrom("tasks")
    .select([
      "kind",
      "status",
      sql<number>`count(*)::int`.as("n"),
      sql<number>`(count(*) filter (where lease_expirations > 0))::int`.as("expired"),
    ])
    .where("project_id", "=", projectId)
    .groupBy(["kind", "status"])
    .execute()
  const total = emptyCounts()
  const byKind: Record<string, ReturnType<typeof emptyCounts>> = {}
  for (const row of rows) {
    const kind = byKind[row.kind] ?? emptyCounts()
    byKind[row.kind] = kind
    for (const counts of [total, kind]) {
      counts[row.status] += row.n
      if (row.status === "pending" || row.status === "running") counts.expiredLeases += row.expired
    }
  }
  return { ...total, byKind }
}

/**
 * Calls `onNotify(kind)` whenever a task is enqueued (any process), on a connection of its own (see
 * `listen`); after a lost connection is back, calls `onNotify("")` once, since notifications may have been
 * missed meanwhile. Resolves once listening; the returned function stops it.
 */
export const listenForTasks = (url: string, onNotify: (kind: string) => void): Promise<() => Promise<void>> =>
  listen(url, TASKS_CHANNEL, { onNotify, onReconnect: () => onNotify("") })
