import { type Conn, makeKysely } from "@dxs/db/Db"
import { inLogContext, type LogLevel as LineLevel, type LogSink, withLogSink } from "@dxs/db/Log"
import { taskSeconds, tasksDone } from "@dxs/db/Metrics"
import { outageOf } from "@dxs/db/Outage"
import type { TaskRow } from "@dxs/db/Schema"
import * as TaskQueue from "@dxs/db/TaskQueue"
import { Cause, Data, Duration, Effect, FiberSet, LogLevel, Option, Queue, Ref, Runtime } from "effect"

/** What a handler gets besides its task. */
export interface TaskContext {
  readonly workerId: string
  readonly db: TaskQueue.TaskDb
  /**
   * Aborted when the handler is interrupted (its lease is lost or the worker stops): for the promise code
   * a handler calls; nothing will be kept.
   */
  readonly signal: AbortSignal
  /**
   * Completes the task inside the handler's transaction, so its writes and the completion commit
   * together. Throws `LeaseLostError` if this worker no longer holds the task: let it propagate so the
   * transaction rolls back (another worker is running the task). `usage`, the model usage the work cost,
   * and `writes`, work a repository made to commit with the completion, go in the completion's statement:
   * with them, `conn` need not be a transaction.
   */
  readonly complete: (
    conn: Conn,
    usage?: TaskQueue.TaskUsage,
    writes?: TaskQueue.CompletionWrites,
  ) => Promise<void>
}

/**
 * Runs one task. A failure (or defect) records a failed attempt (retried with backoff); success completes
 * it. The worker interrupts it when the lease is lost or the worker stops.
 */
export type TaskHandler = (task: TaskRow, ctx: TaskContext) => Effect.Effect<void, unknown>

export class LeaseLostError extends Data.TaggedError("LeaseLostError")<{ readonly taskId: string }> {
  override get message() {
    return `lease lost on task ${this.taskId}`
  }
}

export type WorkerOptions = (
  | { readonly url: string; readonly kysely?: TaskQueue.TaskDb }
  | { readonly url?: string; readonly kysely: TaskQueue.TaskDb }
) & {
  readonly workerId: string
  readonly handlers: Readonly<Record<string, TaskHandler>>
  /**
   * Lease per claim; heartbeats renew it every leaseMs / 3. Default 9 s: a killed worker's tasks are taken
   * over by another within about that long (a poll later).
   */
  readonly leaseMs?: number
  /**
   * How long a task failing for a cause outside it (storage or the database out of reach, its worker gone)
   * is retried without counting its attempts (`TASK_RETRY_WINDOW_SECONDS`). Default 15 min.
   */
  readonly retryWindowMs?: number
  /** Poll for due tasks this often even without a notification (retries, expired leases). Default 1 s. */
  readonly pollMs?: number
  /** Tasks run at once (of the kinds without a limit of their own in `kindConcurrency`). Default 4. */
  readonly concurrency?: number
  /**
   * Kinds with slots of their own: at most this many tasks of the kind run at once, apart from
   * `concurrency` (for example `{ parse: PARSE_THREADS }`, one parse per parsing thread).
   */
  readonly kindConcurrency?: Readonly<Record<string, number>>
  /**
   * On interruption, let in-flight tasks finish for up to this long; those still running are then
   * interrupted and released (back to pending at once, the attempt not counted). Default 0.
   */
  readonly graceMs?: number
}

/** The default lease: short, renewed by heartbeats every 3 s, so that a dead worker's tasks wait little. */
export const DEFAULT_LEASE_MS = 9_000

const errorMessage = (e: unknown) => (e instanceof Error ? e.message : String(e)) || "error"

const lineLevels: Record<LineLevel, LogLevel.LogLevel> = {
  debug: LogLevel.Debug,
  info: LogLevel.Info,
  warning: LogLevel.Warning,
  error: LogLevel.Error,
}

/** The handlers' log lines (Promise code) into this fiber's logger, with the task's kind and id. */
const sinkOf =
  (runtime: Runtime.Runtime<never>, task: TaskRow): LogSink =>
  (level, message, fields) =>
    Runtime.runSync(runtime)(
      Effect.logWithLevel(lineLevels[level], message).pipe(
        Effect.annotateLogs({ task_kind: task.kind, task_id: task.id, ...definedOnly(fields) }),
      ),
    )

const definedOnly = (fields: Readonly<Record<string, unknown>>) =>
  Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined))

/** What running and claiming tasks needs of the worker. */
interface WorkerEnv {
  readonly workerId: string
  readonly handlers: Readonly<Record<string, TaskHandler>>
  readonly db: TaskQueue.TaskDb
  readonly leaseMs: number
  readonly retryWindowMs: number
  /** The worker's runtime, for the handlers' log lines from promise code. */
  readonly runtime: Runtime.Runtime<never>
}

/** A group of kinds sharing slots. */
interface SlotGroup {
  readonly kinds: ReadonlyArray<string>
  readonly slots: number
}

/**
 * The worker's slots: its groups, the tasks running per group, their fibers, the pending wake-up, and per
 * group whether tasks of its kinds may be due (see `claimFree`).
 */
interface Slots {
  readonly groups: ReadonlyArray<SlotGroup>
  readonly inFlight: Ref.Ref<ReadonlyArray<number>>
  readonly tasks: FiberSet.FiberSet
  readonly wake: Queue.Queue<void>
  readonly due: Array<boolean>
}

/** Marks the groups for which `which` holds as possibly having due tasks. */
const markDue = (slots: Pick<Slots, "groups" | "due">, which: (group: SlotGroup) => boolean) => {
  slots.groups.forEach((group, i) => {
    if (which(group)) slots.due[i] = true
  })
}

/** Slot groups: each kind with a limit of its own, then every other kind under `concurrency`. */
const slotGroups = (
  kinds: ReadonlyArray<string>,
  kindConcurrency: Readonly<Record<string, number>>,
  concurrency: number,
): ReadonlyArray<SlotGroup> => {
  const own = Object.entries(kindConcurrency).filter(([kind]) => kinds.includes(kind))
  return [
    ...own.map(([kind, n]) => ({ kinds: [kind], slots: Math.max(1, Math.floor(n)) })),
    { kinds: kinds.filter((k) => !own.some(([kind]) => kind === k)), slots: concurrency },
  ].filter((g) => g.kinds.length > 0)
}

/** What a task's log lines say about it. */
const aboutTask = (task: TaskRow) => ({ task_kind: task.kind, task_id: task.id, attempt: task.attempts })

/** Counts the task's outcome and its duration since `started` in the metrics. */
const timed = (task: TaskRow, started: number, outcome: string) =>
  Effect.sync(() => {
    tasksDone.inc({ kind: task.kind, outcome })
    taskSeconds.observe({ kind: task.kind }, (Date.now() - started) / 1000)
  })

/**
 * The handler's run of the task. Its log lines (of its Effect code and of the promise code it calls) go to
 * the task's sink; its signal is aborted when it is interrupted; `completed` is called once it completed the
 * task in its own transaction.
 */
const handlerWork = (env: WorkerEnv, task: TaskRow, completed: () => void): Effect.Effect<void, unknown> => {
  const { workerId, db } = env
  const handler = env.handlers[task.kind]!
  const controller = new AbortController()
  return Effect.suspend(() =>
    withLogSink(sinkOf(env.runtime, task), () =>
      inLogContext(
        handler(task, {
          workerId,
          db,
          signal: controller.signal,
          complete: async (conn, usage, writes) => {
            if (!(await TaskQueue.complete(conn, task.id, workerId, usage, writes)))
              throw new LeaseLostError({ taskId: task.id })
            completed()
          },
        }),
      ),
    ),
  ).pipe(
    Effect.onInterrupt(() => Effect.sync(() => controller.abort())),
    // A failure or a defect alike is a failed attempt, recorded with what went wrong.
    Effect.catchAllCause((cause) =>
      Cause.isInterruptedOnly(cause)
        ? Effect.failCause(cause)
        : Effect.fail(Option.getOrElse(Cause.failureOption(cause), () => Cause.squash(cause))),
    ),
  )
}

/**
 * Renews the task's lease every leaseMs / 3. Never returns normally: fails with LeaseLostError once the
 * lease is gone. A failed heartbeat query is retried on the next beat (the lease outlives two missed beats).
 */
const heartbeats = (env: WorkerEnv, task: TaskRow): Effect.Effect<never, LeaseLostError> =>
  Effect.tryPromise(() => TaskQueue.heartbeat(env.db, task.id, env.workerId, env.leaseMs)).pipe(
    Effect.orElseSucceed(() => true),
    Effect.flatMap((held) => (held ? Effect.void : Effect.fail(new LeaseLostError({ taskId: task.id })))),
    Effect.delay(Duration.millis(env.leaseMs / 3)),
    Effect.forever,
  )

/** A task that succeeded: completed (unless the handler did so in its own transaction), counted, logged. */
const finishTask = (env: WorkerEnv, task: TaskRow, started: number, completedByHandler: boolean) =>
  (completedByHandler
    ? Effect.void
    : Effect.promise(() => TaskQueue.complete(env.db, task.id, env.workerId))
  ).pipe(
    Effect.zipRight(timed(task, started, "succeeded")),
    Effect.zipRight(
      Effect.logDebug("task done").pipe(
        Effect.annotateLogs({ ...aboutTask(task), ms: Date.now() - started }),
      ),
    ),
  )

/** A failed task: its attempt recorded (to retry, failed for good, or no longer ours), counted, logged. */
const recordFailure = (env: WorkerEnv, task: TaskRow, started: number, e: unknown) =>
  Effect.promise(() =>
    TaskQueue.fail(env.db, task.id, env.workerId, errorMessage(e), {
      outage: outageOf(e) !== undefined,
      retryWindowMs: env.retryWindowMs,
    }),
  ).pipe(
    Effect.tap((status) =>
      Effect.zipRight(
        timed(
          task,
          started,
          status === "pending" ? "retrying" : status === "failed" ? "failed" : "abandoned",
        ),
        Effect.logWarning(
          status === "pending"
            ? outageOf(e) !== undefined
              ? "task met an outage, will be retried"
              : "task failed, will be retried"
            : status === "failed"
              ? "task failed for good"
              : "task failed after its lease was lost",
        ).pipe(
          Effect.annotateLogs({
            ...aboutTask(task),
            max_attempts: task.max_attempts,
            ms: Date.now() - started,
            error: errorMessage(e),
          }),
        ),
      ),
    ),
  )

/**
 * Stopped while running (the worker shuts down): given back for another worker at once. A handler still
 * finishing in the background can no longer complete it (the lease is gone).
 */
const releaseTask = (env: WorkerEnv, task: TaskRow, started: number) =>
  Effect.tryPromise(() => TaskQueue.release(env.db, task, env.workerId)).pipe(
    Effect.flatMap((released) =>
      released
        ? Effect.zipRight(
            timed(task, started, "released"),
            Effect.logWarning("task released: its worker is stopping").pipe(
              Effect.annotateLogs(aboutTask(task)),
            ),
          )
        : Effect.void,
    ),
    Effect.catchAll((e) =>
      Effect.logWarning(`releasing a task failed: ${errorMessage(e.error)}`).pipe(
        Effect.annotateLogs(aboutTask(task)),
      ),
    ),
  )

/** Runs one claimed task while heartbeats hold its lease, then records how it ended. */
const runTask = (env: WorkerEnv, task: TaskRow): Effect.Effect<void> => {
  let completedByHandler = false
  const started = Date.now()
  const work = handlerWork(env, task, () => {
    completedByHandler = true
  })
  return Effect.raceFirst(work, heartbeats(env, task)).pipe(
    Effect.matchEffect({
      onSuccess: () => finishTask(env, task, started, completedByHandler),
      onFailure: (e) =>
        e instanceof LeaseLostError
          ? Effect.zipRight(
              timed(task, started, "abandoned"),
              Effect.logWarning("task abandoned: its lease was lost").pipe(
                Effect.annotateLogs(aboutTask(task)),
              ),
            )
          : recordFailure(env, task, started, e),
    }),
    Effect.catchAllCause((cause) =>
      Cause.isInterruptedOnly(cause)
        ? Effect.failCause(cause)
        : Effect.logError("task bookkeeping failed", cause),
    ),
    Effect.onInterrupt(() => releaseTask(env, task, started)),
    Effect.asVoid,
  )
}

const inGroup = (inFlight: Ref.Ref<ReadonlyArray<number>>, i: number, delta: number) =>
  Ref.update(inFlight, (counts) => counts.map((n, j) => (j === i ? n + delta : n)))

/**
 * Claims due tasks for every group with free slots whose kinds may have due tasks; true when a group filled
 * them all (there may be more). A group that found fewer than it had room for is not asked again until its
 * kinds are notified, one of its own tasks ends or the poll comes round: the claim of a group with nothing
 * due reads past every other kind's due task, and it came after each task of the other groups (during a run,
 * two of every three claims found nothing).
 */
const claimFree = (env: WorkerEnv, slots: Slots): Effect.Effect<boolean> =>
  Effect.gen(function* () {
    const { workerId, leaseMs, retryWindowMs } = env
    const { inFlight, tasks, wake } = slots
    let filled = false
    for (const [i, group] of slots.groups.entries()) {
      const free = group.slots - (yield* Ref.get(inFlight))[i]!
      if (free <= 0 || !slots.due[i]) continue
      // Cleared before the claim: a notification that comes during it marks the group again.
      slots.due[i] = false
      const claimed = yield* Effect.tryPromise(() =>
        TaskQueue.claim(env.db, { workerId, kinds: group.kinds, leaseMs, limit: free, retryWindowMs }),
      ).pipe(Effect.catchAll((e) => Effect.as(Effect.logError(`claim failed: ${errorMessage(e.error)}`), [])))
      for (const task of claimed) {
        if (task.previous_owner !== null)
          yield* Effect.logWarning("task taken over: the lease of its worker expired").pipe(
            Effect.annotateLogs({
              task_id: task.id,
              task_kind: task.kind,
              attempt: task.attempts,
              previous_owner: task.previous_owner,
            }),
          )
        yield* inGroup(inFlight, i, 1)
        yield* FiberSet.run(
          tasks,
          runTask(env, task).pipe(
            Effect.ensuring(
              inGroup(inFlight, i, -1).pipe(
                Effect.zipRight(
                  Effect.sync(() => {
                    slots.due[i] = true
                  }),
                ),
                Effect.zipRight(Queue.offer(wake, undefined)),
              ),
            ),
          ),
        )
      }
      if (claimed.length === free) {
        filled = true
        slots.due[i] = true
      }
    }
    return filled
  })

/**
 * Claims and runs tasks until interrupted. Wakes on NOTIFY (when `url` is given), when a slot frees up,
 * or every `pollMs`. Abandoned tasks (interruption, crash) are retried by whichever worker claims them
 * after their lease expires. With `url` and no `kysely` it opens (and closes) its own pool.
 */
export const runWorker = (options: WorkerOptions): Effect.Effect<never> =>
  Effect.scoped(
    Effect.gen(function* () {
      const { workerId, handlers } = options
      const leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS
      const retryWindowMs = options.retryWindowMs ?? TaskQueue.DEFAULT_RETRY_WINDOW_MS
      const pollMs = options.pollMs ?? 1_000
      const concurrency = Math.max(1, options.concurrency ?? 4)
      const kinds = Object.keys(handlers)
      const groups = slotGroups(kinds, options.kindConcurrency ?? {}, concurrency)
      const totalSlots = groups.reduce((n, g) => n + g.slots, 0)

      const db =
        options.kysely ??
        (yield* Effect.acquireRelease(
          Effect.sync(() => makeKysely(options.url!, totalSlots * 2 + 2)),
          (db) => Effect.promise(() => db.destroy()),
        ))

      // At most one pending wake-up: a burst of notifications causes one extra claim, not many.
      const wake = yield* Queue.sliding<void>(1)
      // Per group, whether tasks of its kinds may be due: at first, all of them.
      const due = groups.map(() => true)
      if (options.url) {
        yield* Effect.acquireRelease(
          Effect.promise(() =>
            TaskQueue.listenForTasks(options.url!, (kind) => {
              if (kind !== "" && !kinds.includes(kind)) return
              markDue({ groups, due }, (g) => kind === "" || g.kinds.includes(kind))
              Queue.unsafeOffer(wake, undefined)
            }),
          ),
          (unlisten) => Effect.promise(unlisten),
        )
      }

      // Tasks running, per slot group.
      const inFlight = yield* Ref.make<ReadonlyArray<number>>(groups.map(() => 0))
      const tasks = yield* FiberSet.make()
      // Runs before the set interrupts its fibers (finalizers run in reverse order). A finalizer runs
      // uninterruptibly: the wait is made interruptible, or the time limit could not cut it short.
      yield* Effect.addFinalizer(() =>
        FiberSet.awaitEmpty(tasks).pipe(
          Effect.interruptible,
          Effect.timeout(Duration.millis(options.graceMs ?? 0)),
          Effect.ignore,
        ),
      )

      const runtime = yield* Effect.runtime<never>()
      const env: WorkerEnv = { workerId, handlers, db, leaseMs, retryWindowMs, runtime }
      const slots: Slots = { groups, inFlight, tasks, wake, due }
      // Without notifications, nothing says which kinds have new tasks: every wake-up asks every group.
      const everyGroup = () => markDue(slots, () => true)

      // Claim while there is work and room; otherwise wait for a wake-up or the poll interval (which asks
      // every group again: retries come due and leases expire without a notification).
      return yield* Effect.suspend(() => {
        if (!options.url) everyGroup()
        return claimFree(env, slots)
      }).pipe(
        Effect.flatMap((filledAllSlots) =>
          filledAllSlots
            ? Effect.void
            : Queue.take(wake).pipe(
                Effect.timeoutTo({
                  duration: Duration.millis(pollMs),
                  onSuccess: () => {},
                  onTimeout: everyGroup,
                }),
              ),
        ),
        Effect.ignore,
        Effect.forever,
      )
    }),
  )
