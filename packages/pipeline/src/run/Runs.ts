/**
 * Pipeline runs (DESIGN §3). A launch creates a queued run, coalescing with a queued one; a `run-start`
 * task starts it once no other run of the project is running and no parsing is in flight; the run then
 * goes through its phases — `extract` (agent/document pairs), `resolve` (extraction agents), `derive:<n>`
 * (derived agents, dependencies first) — each a set of tasks tagged with the run. The task that completes
 * a phase (under the run's row lock, in its own transaction) enqueues the next one; after the last phase
 * the run ends, the agents' statuses are final and the completion event goes to the outbox in the same
 * transaction. Exactly one event per run: `events.run_id` is unique.
 */

import { type Conn, type RunRow, type TaskRow, transactionOn } from "@dxs/db"
import { logLine } from "@dxs/db/Log"
import { outageInCause } from "@dxs/db/Outage"
import { enqueueParse } from "@dxs/db/repositories/ParseTasks"
import { lockProject } from "@dxs/db/repositories/Projects"
import { clearResolutionsOfProject } from "@dxs/db/repositories/Results"
import * as Runs from "@dxs/db/repositories/Runs"
import * as RunTasks from "@dxs/db/repositories/RunTasks"
import { DERIVE_TASK, RESOLVE_TASK } from "@dxs/db/repositories/TaskKinds"
import {
  type CompletionWrites,
  reschedule,
  type TaskDb,
  type TaskTrx,
  type TaskUsage,
} from "@dxs/db/TaskQueue"
import { type ExtractionPair, type LaunchDecision, planLaunch } from "@dxs/domain/LaunchPlanner"
import { Cause, Effect, Exit } from "effect"
import { enqueueFanout } from "../webhooks/Queue.ts"
import { loadAgentStates } from "./AgentStates.ts"
import { loadAgents, loadProjectState, toSnapshot } from "./ProjectState.ts"
import { wakeQueuedRun } from "./Wake.ts"

export {
  DERIVE_TASK,
  EXTRACT_TASK,
  RESOLVE_TASK,
  RUN_START_TASK,
} from "@dxs/db/repositories/TaskKinds"

/**
 * How long a run waits before looking again while another run runs or documents are being parsed. A
 * safety net only: the commit that ends the running run, or finishes the project's last parse, wakes the
 * queued run at once (wakeQueuedRun).
 */
const WAIT_MS = 500

/**
 * The plan kept on the run's row. The extraction pairs themselves are not kept (a large project has
 * hundreds of thousands; every read of the run would carry them): they become the first phase's tasks in
 * the transaction that starts the run, and only their number stays. Rows written before that kept the
 * list itself in `extract`; nothing reads it any more.
 */
export interface StoredPlan {
  readonly extractPairs: number
  readonly resolve: ReadonlyArray<string>
  /** Derived agents by dependency level: level n reads only agents of lower levels (or extraction agents). */
  readonly deriveLevels: ReadonlyArray<ReadonlyArray<string>>
  readonly upToDate: ReadonlyArray<string>
}

export type LaunchOutcome =
  | {
      readonly _tag: "Rejected"
      readonly failedDocuments: ReadonlyArray<{ id: string; name: string }>
      readonly message: string
    }
  | { readonly _tag: "CyclicReferences"; readonly cycle: ReadonlyArray<string>; readonly message: string }
  | {
      readonly _tag: "Accepted"
      readonly runId: string
      readonly runNumber: number
      /** false: the launch coalesced with an already queued run. */
      readonly created: boolean
      readonly decision: LaunchDecision["_tag"]
    }

/**
 * A launch (launch rules 1–8): rejected while a document has failed; otherwise a queued run exists
 * afterwards (a new one, or the one already queued) and its start task is enqueued.
 */
export const requestLaunch = (trx: TaskTrx, projectId: string): Effect.Effect<LaunchOutcome> =>
  Effect.gen(function* () {
    yield* lockProject(trx, projectId)
    const state = yield* loadProjectState(trx, projectId)
    const decision = planLaunch(toSnapshot(state))
    if (decision._tag === "Rejected")
      return {
        _tag: "Rejected",
        failedDocuments: decision.failedDocuments,
        message: decision.message,
      } as const
    if (decision._tag === "CyclicReferences")
      return { _tag: "CyclicReferences", cycle: decision.cycle, message: decision.message } as const
    const queued = yield* Runs.findQueuedRun(trx, projectId)
    if (queued)
      return {
        _tag: "Accepted",
        runId: queued.id,
        runNumber: queued.run_number,
        created: false,
        decision: decision._tag,
      } as const
    const created = yield* Runs.createQueuedRun(trx, projectId)
    return {
      _tag: "Accepted",
      runId: created.id,
      runNumber: created.run_number,
      created: true,
      decision: decision._tag,
    } as const
  })

const deriveLevels = (
  derive: ReadonlyArray<string>,
  references: ReadonlyMap<string, ReadonlyArray<string>>,
): ReadonlyArray<ReadonlyArray<string>> => {
  const level = new Map<string, number>()
  // `derive` is in dependency order: an agent's planned dependencies come before it.
  for (const id of derive) {
    const deps = (references.get(id) ?? []).filter((r) => level.has(r))
    level.set(id, deps.length === 0 ? 0 : Math.max(...deps.map((d) => level.get(d)!)) + 1)
  }
  const levels: Array<Array<string>> = []
  for (const id of derive) {
    const n = level.get(id)!
    levels[n] = [...(levels[n] ?? []), id]
  }
  return levels
}

type Phase = "extract" | "resolve" | `derive:${number}`

const phasesOf = (plan: StoredPlan): ReadonlyArray<Phase> => [
  "extract",
  "resolve",
  ...plan.deriveLevels.map((_, i) => `derive:${i}` as const),
]

/** Enqueues the phase's tasks; returns how many. */
const enqueuePhase = (
  trx: TaskTrx,
  runRow: RunRow,
  plan: StoredPlan,
  phase: Phase,
  extract: ReadonlyArray<ExtractionPair>,
): Effect.Effect<number> =>
  phase === "extract"
    ? RunTasks.enqueueExtractTasks(trx, runRow.project_id, runRow.id, extract)
    : phase === "resolve"
      ? RunTasks.enqueueAgentTasks(trx, RESOLVE_TASK, runRow.project_id, runRow.id, plan.resolve)
      : RunTasks.enqueueAgentTasks(
          trx,
          DERIVE_TASK,
          runRow.project_id,
          runRow.id,
          plan.deriveLevels[Number(phase.slice("derive:".length))] ?? [],
        )

/**
 * Enqueues the first phase after `after` that has work, or ends the run when none is left. `extract`: the
 * extraction pairs, given only when the run starts (the first phase).
 */
const advance = (
  trx: TaskTrx,
  runRow: RunRow,
  after: string | null,
  extract: ReadonlyArray<ExtractionPair> = [],
): Effect.Effect<void> =>
  Effect.gen(function* () {
    const plan = runRow.plan as unknown as StoredPlan
    const phases = phasesOf(plan)
    let index = after === null ? 0 : phases.indexOf(after as Phase) + 1
    for (; index < phases.length; index++) {
      const phase = phases[index]!
      if ((yield* enqueuePhase(trx, runRow, plan, phase, extract)) > 0) {
        yield* Runs.setRunPhase(trx, runRow.id, phase)
        return
      }
    }
    yield* endRun(trx, runRow.id, { status: "succeeded" })
  })

/**
 * Under the run's row lock: when no task of the running run is unfinished, the next phase starts (or the
 * run fails, if a task of the phase failed for good). The lock serialises the checks, so a phase is
 * advanced once: whoever advances enqueues the next phase's tasks before releasing it.
 */
const advanceIfPhaseDone = (trx: TaskTrx, runId: string): Effect.Effect<void> =>
  Effect.gen(function* () {
    const runRow = yield* Runs.findRun(trx, runId, true)
    if (runRow?.status !== "running") return
    if (yield* RunTasks.hasUnfinishedTasks(trx, runId)) return
    // A task of the phase that failed for good fails the run instead of letting it go on without its work.
    const failed = yield* RunTasks.failedTaskOf(trx, runId)
    if (failed) yield* endRun(trx, runId, failureOf(failed))
    else yield* advance(trx, runRow, runRow.phase)
  })

/**
 * Called by every phase task after its transaction committed. Each task checks after its own commit, so
 * the last of a phase to commit sees no unfinished task and advances the run; the others see unfinished
 * tasks without taking any lock. (If the worker dies between the commit and this check, the run watch
 * advances the run.)
 */
export const advanceAfterTask = (db: TaskDb, runId: string): Effect.Effect<void> =>
  Effect.flatMap(RunTasks.hasUnfinishedTasks(db, runId), (unfinished) =>
    unfinished ? Effect.void : transactionOn(db, (trx) => advanceIfPhaseDone(trx, runId)),
  )

/** Per run, the tasks of this process between the start of their commit and their look at the phase. */
const committing = new Map<string, number>()

/**
 * Leaves the run's committing tasks; true when no other task of the run is committing in this process.
 * Synchronous: a task's look and its leaving are one step, which no other task's look comes between.
 */
const leaveCommitting = (runId: string): boolean => {
  const others = (committing.get(runId) ?? 1) - 1
  if (others > 0) committing.set(runId, others)
  else committing.delete(runId)
  return others === 0
}

/**
 * A phase task's commit, then its check of the phase (`advanceAfterTask`), which it leaves to another task
 * of the run committing in this process at the same time: that one looks after its own commit, so after
 * this one's, and the last of them to look checks. The last checks even when its own commit failed (its
 * task is then unfinished, unless another worker took it over and completed it, which those that left the
 * check to it could not know); that check's own failure is not the task's. The check is a statement per
 * task otherwise, and a worker commits many tasks of a run side by side. Uninterruptible, as the commit and
 * its check must be.
 */
export const commitThenAdvance = (
  db: TaskDb,
  runId: string,
  commit: Effect.Effect<void>,
): Effect.Effect<void> =>
  Effect.suspend(() => {
    committing.set(runId, (committing.get(runId) ?? 0) + 1)
    return commit.pipe(
      Effect.onExit((exit) => {
        if (!leaveCommitting(runId)) return Effect.void
        return Exit.isSuccess(exit)
          ? advanceAfterTask(db, runId)
          : advanceAfterTask(db, runId).pipe(Effect.catchAllCause(() => Effect.void))
      }),
    )
  }).pipe(Effect.uninterruptible)

export interface RunEnd {
  readonly status: "succeeded" | "failed"
  readonly failureReason?: string
  readonly error?: string
}

/**
 * Ends a queued or running run (nothing happens if it already ended): final status, unfinished tasks of
 * the run cancelled, the completion event written to the outbox, and a queued run of the project woken.
 */
export const endRun = (trx: TaskTrx, runId: string, end: RunEnd): Effect.Effect<boolean> =>
  Effect.gen(function* () {
    const ended = yield* Runs.finishRun(trx, runId, end)
    if (!ended) return false
    const usage = yield* Runs.totalRunUsage(trx, runId)
    // Written as the run's end is (its transaction commits right after, in every caller).
    yield* logLine(end.status === "succeeded" ? "info" : "warning", "run ended", {
      project_id: ended.project_id,
      run_id: ended.id,
      run_number: ended.run_number,
      status: end.status,
      failure_reason: end.failureReason,
      error: end.error,
      ...usage,
    })
    yield* RunTasks.cancelPendingTasks(trx, runId, end.status)
    const data =
      end.status === "succeeded"
        ? yield* succeededData(trx, ended.project_id, ended.run_number)
        : {
            project_id: ended.project_id,
            run_number: ended.run_number,
            failure_reason: end.failureReason ?? "internal_error",
          }
    const eventId = yield* Runs.insertCompletionEvent(trx, {
      projectId: ended.project_id,
      runId: ended.id,
      type: end.status === "succeeded" ? "agent.completion.succeeded" : "agent.completion.failed",
      data,
    })
    // Its webhook deliveries are created by a task committed with it.
    yield* Effect.promise(() => enqueueFanout(trx, eventId))
    // The project's queued run may start now.
    yield* wakeQueuedRun(trx, ended.project_id)
    return true
  })

const succeededData = (trx: TaskTrx, projectId: string, runNumber: number) =>
  Effect.gen(function* () {
    const [agents, states] = yield* Effect.all([loadAgents(trx, projectId), loadAgentStates(trx, projectId)])
    return {
      project_id: projectId,
      run_number: runNumber,
      agents: agents
        .filter((a) => !a.row.is_draft)
        .map((a) => ({
          id: a.row.id,
          name: a.row.name,
          extraction_status: states.get(a.row.id)!.extractionStatus,
        })),
    }
  })

export interface RunTaskContext {
  readonly workerId: string
  readonly db: TaskDb
  /**
   * Completes the task in `conn`'s transaction, with the model usage it cost when it cost any and the
   * writes made to commit with it (in the completion's statement; see the worker's task context).
   */
  readonly complete: (conn: Conn, usage?: TaskUsage, writes?: CompletionWrites) => Promise<void>
}

const runIdOf = (task: TaskRow): string | undefined => {
  const id = (task.payload as { runId?: unknown }).runId
  return typeof id === "string" ? id : undefined
}

/**
 * The `run-start` task: starts its queued run when the project has no running run and no parsing in
 * flight (else it looks again shortly, without spending an attempt). Documents still `Pending` without a
 * parse in flight get their parse enqueued first. The plan is computed from the state found now.
 */
export const runStart = (task: TaskRow, ctx: RunTaskContext): Effect.Effect<void> => {
  const runId = runIdOf(task)
  if (runId === undefined) return Effect.void
  const complete = (trx: TaskTrx) => Effect.promise(() => ctx.complete(trx))
  const lookAgain = (trx: TaskTrx) =>
    Effect.asVoid(Effect.promise(() => reschedule(trx, task.id, ctx.workerId, WAIT_MS)))
  return transactionOn(ctx.db, (trx) =>
    Effect.gen(function* () {
      const queued = yield* Runs.findRun(trx, runId)
      if (queued?.status !== "queued") return yield* complete(trx)
      yield* lockProject(trx, queued.project_id)
      const locked = yield* Runs.findRun(trx, runId, true)
      if (locked?.status !== "queued") return yield* complete(trx)
      const other = yield* Runs.hasRunningRun(trx, locked.project_id)
      const state = yield* loadProjectState(trx, locked.project_id)
      if (other || state.documents.some((d) => d.parseInFlight)) return yield* lookAgain(trx)
      const decision = planLaunch(toSnapshot({ ...state, run: { running: false, queued: false } }))
      if (decision._tag === "Rejected" || decision._tag === "CyclicReferences") {
        yield* endRun(trx, locked.id, {
          status: "failed",
          failureReason: "validation_failed",
          error: decision.message,
        })
        return yield* complete(trx)
      }
      if (decision._tag !== "Plan") return yield* lookAgain(trx)
      if (decision.parse.length > 0) {
        for (const documentId of decision.parse) {
          const document = state.documents.find((d) => d.id === documentId)!
          yield* enqueueParse(trx, documentId, document.version, locked.project_id, locked.id)
        }
        return yield* lookAgain(trx)
      }
      const references = new Map(state.agents.map((a) => [a.row.id, a.references]))
      const plan: StoredPlan = {
        extractPairs: decision.extract.length,
        resolve: decision.resolve,
        deriveLevels: deriveLevels(decision.derive, references),
        upToDate: decision.upToDate,
      }
      const started = yield* Runs.startRun(trx, locked.id, plan)
      yield* logLine("info", "run started", {
        project_id: locked.project_id,
        run_id: locked.id,
        run_number: locked.run_number,
        extract_pairs: plan.extractPairs,
        resolve_agents: plan.resolve.length,
        derive_levels: plan.deriveLevels.length,
        up_to_date: plan.upToDate.length,
      })
      yield* advance(trx, started, null, decision.extract)
      yield* complete(trx)
    }),
  )
}

/**
 * Wraps a phase task's stage: on its last attempt a failure (or defect) ends the run as failed
 * (`internal_error`) before it propagates to the task's own record.
 */
export const phaseTask =
  <C extends RunTaskContext & { readonly signal: AbortSignal }, E>(
    body: (task: TaskRow, ctx: C) => Effect.Effect<void, E>,
  ) =>
  (task: TaskRow, ctx: C): Effect.Effect<void, E> =>
    Effect.tapErrorCause(body(task, ctx), (cause) => {
      const runId = runIdOf(task)
      if (
        runId === undefined ||
        ctx.signal.aborted ||
        Cause.isInterruptedOnly(cause) ||
        task.attempts < task.max_attempts ||
        // An outage (storage, the database) is retried for the retry window without ending the run.
        outageInCause(cause) !== undefined
      )
        return Effect.void
      const e = Cause.squash(cause)
      const message = e instanceof Error ? e.message : String(e)
      return transactionOn(ctx.db, (trx) =>
        endRun(trx, runId, {
          status: "failed",
          failureReason: "internal_error",
          error: `${task.kind}: ${message}`,
        }),
      ).pipe(Effect.catchAllCause(() => Effect.void))
    })

const failureOf = (task: { kind: string; last_error: string | null }): RunEnd => ({
  status: "failed",
  failureReason: "internal_error",
  error: `${task.kind}: ${task.last_error ?? "failed"}`,
})

/**
 * Watches runs for tasks that failed for good outside a handler — the claim that finds a task whose last
 * attempt died with its worker marks it failed — and for such tasks still marked running: their runs end
 * as failed (`internal_error`). Workers call it every few seconds. Returns how many runs ended.
 */
export const failAbandonedRuns = (db: TaskDb): Effect.Effect<number> =>
  Effect.gen(function* () {
    yield* RunTasks.failAbandonedRunTasks(db)
    const failing = yield* RunTasks.runsWithFailedTasks(db)
    // Runs whose last task committed but whose worker died before moving the run on.
    const stalled = yield* RunTasks.stalledRuns(db)
    for (const runId of stalled) yield* transactionOn(db, (trx) => advanceIfPhaseDone(trx, runId))
    let ended = 0
    for (const runId of failing) {
      const done = yield* transactionOn(db, (trx) =>
        Effect.gen(function* () {
          const locked = yield* Runs.findRun(trx, runId, true)
          if (locked?.status !== "running" && locked?.status !== "queued") return false
          const failed = yield* RunTasks.failedTaskOf(trx, runId)
          return failed ? yield* endRun(trx, runId, failureOf(failed)) : false
        }),
      )
      if (done) ended += 1
    }
    return ended
  })

/**
 * After documents leave a project (deleted, archived, replaced attachments): every agent's resolution is
 * outstanding again, so the next launch resolves it without the departed documents' values.
 */
export const documentsLeftProject = (conn: TaskDb | TaskTrx, projectId: string): Effect.Effect<void> =>
  clearResolutionsOfProject(conn, projectId)
