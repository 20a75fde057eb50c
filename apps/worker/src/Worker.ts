import { makeKysely } from "@dxs/db/Db"
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
   * transaction rolls back (another worker is running the task).
   */
  readonly complete: (trx: TaskQueue.TaskTrx) => Promise<void>
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
      // Slot groups: each kind with a limit of its own, then every other kind under `concurrency`.
      const own = Object.entries(options.kindConcurrency ?? {}).filter(([kind]) => kinds.includes(kind))
      const groups: ReadonlyArray<{ readonly kinds: ReadonlyArray<string>; readonly slots: number }> = [
        ...own.map(([kind, n]) => ({ kinds: [kind], slots: Math.max(1, Math.floor(n)) })),
        { kinds: kinds.filter((k) => !own.some(([kind]) => kind === k)), slots: concurrency },
      ].filter((g) => g.kinds.length > 0)
      const totalSlots = groups.reduce((n, g) => n + g.slots, 0)

      const db =
        options.kysely ??
        (yield* Effect.acquireRelease(
          Effect.sync(() => makeKysely(options.url!, totalSlots * 2 + 2)),
          (db) => Effect.promise(() => db.destroy()),
        ))

      // At most one pending wake-up: a burst of notifications causes one extra claim, not many.
      const wake = yield* Queue.sliding<void>(1)
      if (options.url) {
        yield* Effect.acquireRelease(
          Effect.promise(() =>
            TaskQueue.listenForTasks(options.url!, (kind) => {
              if (kind === "" || kinds.includes(kind)) Queue.unsafeOffer(wake, undefined)
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
      const runTask = (task: TaskRow): Effect.Effect<void> => {
        const handler = handlers[task.kind]!
        let completedByHandler = false
        const started = Date.now()
        const timed = (outcome: string) =>
          Effect.sync(() => {
            tasksDone.inc({ kind: task.kind, outcome })
            taskSeconds.observe({ kind: task.kind }, (Date.now() - started) / 1000)
          })
        const about = { task_kind: task.kind, task_id: task.id, attempt: task.attempts }
        // The handler's log lines (of its Effect code and of the promise code it calls) go to the task's sink.
        const controller = new AbortController()
        const work = Effect.suspend(() =>
          withLogSink(sinkOf(runtime, task), () =>
            inLogContext(
              handler(task, {
                workerId,
                db,
                signal: controller.signal,
                complete: async (trx) => {
                  if (!(await TaskQueue.complete(trx, task.id, workerId)))
                    throw new LeaseLostError({ taskId: task.id })
                  completedByHandler = true
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
        // Never returns normally: fails with LeaseLostError once the lease is gone. A failed heartbeat
        // query is retried on the next beat (the lease outlives two missed beats).
        const heartbeats = Effect.tryPromise(() => TaskQueue.heartbeat(db, task.id, workerId, leaseMs)).pipe(
          Effect.orElseSucceed(() => true),
          Effect.flatMap((held) =>
            held ? Effect.void : Effect.fail(new LeaseLostError({ taskId: task.id })),
          ),
          Effect.delay(Duration.millis(leaseMs / 3)),
          Effect.forever,
        )
        return Effect.raceFirst(work, heartbeats).pipe(
          Effect.matchEffect({
            // Unless the handler completed the task in its own transaction (which then committed).
            onSuccess: () =>
              (completedByHandler
                ? Effect.void
                : Effect.promise(() => TaskQueue.complete(db, task.id, workerId))
              ).pipe(
                Effect.zipRight(timed("succeeded")),
                Effect.zipRight(
                  Effect.logDebug("task done").pipe(
                    Effect.annotateLogs({ ...about, ms: Date.now() - started }),
                  ),
                ),
              ),
            onFailure: (e) =>
              e instanceof LeaseLostError
                ? Effect.zipRight(
                    timed("abandoned"),
                    Effect.logWarning("task abandoned: its lease was lost").pipe(Effect.annotateLogs(about)),
                  )
                : Effect.promise(() =>
                    TaskQueue.fail(db, task.id, workerId, errorMessage(e), {
                      outage: outageOf(e) !== undefined,
                      retryWindowMs,
                    }),
                  ).pipe(
                    Effect.tap((status) =>
                      Effect.zipRight(
                        timed(
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
                            ...about,
                            max_attempts: task.max_attempts,
                            ms: Date.now() - started,
                            error: errorMessage(e),
                          }),
                        ),
                      ),
                    ),
                  ),
          }),
          Effect.catchAllCause((cause) =>
            Cause.isInterruptedOnly(cause)
              ? Effect.failCause(cause)
              : Effect.logError("task bookkeeping failed", cause),
          ),
          // Stopped while running (the worker shuts down): given back for another worker at once. A
          // handler still finishing in the background can no longer complete it (the lease is gone).
          Effect.onInterrupt(() =>
            Effect.tryPromise(() => TaskQueue.release(db, task, workerId)).pipe(
              Effect.flatMap((released) =>
                released
                  ? Effect.zipRight(
                      timed("released"),
                      Effect.logWarning("task released: its worker is stopping").pipe(
                        Effect.annotateLogs(about),
                      ),
                    )
                  : Effect.void,
              ),
              Effect.catchAll((e) =>
                Effect.logWarning(`releasing a task failed: ${errorMessage(e.error)}`).pipe(
                  Effect.annotateLogs(about),
                ),
              ),
            ),
          ),
          Effect.asVoid,
        )
      }

      const inGroup = (i: number, delta: number) =>
        Ref.update(inFlight, (counts) => counts.map((n, j) => (j === i ? n + delta : n)))

      /** Claims due tasks for every group with free slots; true when a group filled them all (there may be more). */
      const claimFree = Effect.gen(function* () {
        let filled = false
        for (const [i, group] of groups.entries()) {
          const free = group.slots - (yield* Ref.get(inFlight))[i]!
          if (free <= 0) continue
          const claimed = yield* Effect.tryPromise(() =>
            TaskQueue.claim(db, { workerId, kinds: group.kinds, leaseMs, limit: free, retryWindowMs }),
          ).pipe(
            Effect.catchAll((e) => Effect.as(Effect.logError(`claim failed: ${errorMessage(e.error)}`), [])),
          )
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
            yield* inGroup(i, 1)
            yield* FiberSet.run(
              tasks,
              runTask(task).pipe(
                Effect.ensuring(inGroup(i, -1).pipe(Effect.zipRight(Queue.offer(wake, undefined)))),
              ),
            )
          }
          if (claimed.length === free) filled = true
        }
        return filled
      })

      // Claim while there is work and room; otherwise wait for a wake-up or the poll interval.
      return yield* claimFree.pipe(
        Effect.flatMap((filledAllSlots) =>
          filledAllSlots ? Effect.void : Effect.timeout(Queue.take(wake), Duration.millis(pollMs)),
        ),
        Effect.ignore,
        Effect.forever,
      )
    }),
  )
