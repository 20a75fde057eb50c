/**
 * Pipeline runs (DESIGN §3). A launch creates a queued run, coalescing with a queued one; a `run-start`
 * task starts it once no other run of the project is running and no parsing is in flight; the run then
 * goes through its phases — `extract` (agent/document pairs), `resolve` (extraction agents), `derive:<n>`
 * (derived agents, dependencies first) — each a set of tasks tagged with the run. The task that completes
 * a phase (under the run's row lock, in its own transaction) enqueues the next one; after the last phase
 * the run ends, the agents' statuses are final and the completion event goes to the outbox in the same
 * transaction. Exactly one event per run: `events.run_id` is unique.
 */
import type { RunRow, TaskRow } from "@dxs/db"
import { enqueue, reschedule, TASKS_CHANNEL, type TaskDb, type TaskTrx } from "@dxs/db/TaskQueue"
import {
  type ExtractionPair,
  extractionTaskKey,
  type LaunchDecision,
  planLaunch,
} from "@dxs/domain/LaunchPlanner"
import { sql } from "kysely"
import { PARSE_TASK } from "../parsing/ParseDocument.ts"
import { computeAgentStates } from "./AgentStates.ts"
import { loadProjectState, toSnapshot } from "./ProjectState.ts"

export const RUN_START_TASK = "run-start"
export const EXTRACT_TASK = "extract"
export const RESOLVE_TASK = "resolve"
export const DERIVE_TASK = "derive"

/** How long a run waits before looking again while another run runs or documents are being parsed. */
const WAIT_MS = 500

export interface StoredPlan {
  readonly extract: ReadonlyArray<ExtractionPair>
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

const lockProject = (trx: TaskTrx, projectId: string) =>
  trx.selectFrom("projects").select("id").where("id", "=", projectId).forUpdate().executeTakeFirst()

const startTaskKey = (runId: string) => `${RUN_START_TASK}:${runId}`

/**
 * A launch (launch rules 1–8): rejected while a document has failed; otherwise a queued run exists
 * afterwards (a new one, or the one already queued) and its start task is enqueued.
 */
export const requestLaunch = async (trx: TaskTrx, projectId: string): Promise<LaunchOutcome> => {
  await lockProject(trx, projectId)
  const state = await loadProjectState(trx, projectId)
  const decision = planLaunch(toSnapshot(state))
  if (decision._tag === "Rejected")
    return { _tag: "Rejected", failedDocuments: decision.failedDocuments, message: decision.message }
  if (decision._tag === "CyclicReferences")
    return { _tag: "CyclicReferences", cycle: decision.cycle, message: decision.message }
  const queued = await trx
    .selectFrom("runs")
    .select(["id", "run_number"])
    .where("project_id", "=", projectId)
    .where("status", "=", "queued")
    .executeTakeFirst()
  if (queued)
    return {
      _tag: "Accepted",
      runId: queued.id,
      runNumber: queued.run_number,
      created: false,
      decision: decision._tag,
    }
  const { next } = await trx
    .selectFrom("runs")
    .select(sql<number>`coalesce(max(run_number), 0)::int + 1`.as("next"))
    .where("project_id", "=", projectId)
    .executeTakeFirstOrThrow()
  const run = await trx
    .insertInto("runs")
    .values({ project_id: projectId, run_number: next, status: "queued", plan: JSON.stringify({}) })
    .returning(["id", "run_number"])
    .executeTakeFirstOrThrow()
  await enqueue(trx, {
    kind: RUN_START_TASK,
    idempotencyKey: startTaskKey(run.id),
    payload: { runId: run.id },
    projectId,
    runId: run.id,
  })
  return {
    _tag: "Accepted",
    runId: run.id,
    runNumber: run.run_number,
    created: true,
    decision: decision._tag,
  }
}

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

const enqueuePhase = async (trx: TaskTrx, run: RunRow, plan: StoredPlan, phase: Phase): Promise<number> => {
  const base = { projectId: run.project_id, runId: run.id }
  if (phase === "extract") {
    for (const pair of plan.extract)
      await enqueue(trx, {
        ...base,
        kind: EXTRACT_TASK,
        idempotencyKey: `${extractionTaskKey(pair)}:${run.id}`,
        payload: { runId: run.id, ...pair },
      })
    return plan.extract.length
  }
  if (phase === "resolve") {
    for (const agentId of plan.resolve)
      await enqueue(trx, {
        ...base,
        kind: RESOLVE_TASK,
        idempotencyKey: `${RESOLVE_TASK}:${agentId}:${run.id}`,
        payload: { runId: run.id, agentId },
      })
    return plan.resolve.length
  }
  const level = plan.deriveLevels[Number(phase.slice("derive:".length))] ?? []
  for (const agentId of level)
    await enqueue(trx, {
      ...base,
      kind: DERIVE_TASK,
      idempotencyKey: `${DERIVE_TASK}:${agentId}:${run.id}`,
      payload: { runId: run.id, agentId },
    })
  return level.length
}

/** Enqueues the first phase after `after` that has work, or ends the run when none is left. */
const advance = async (trx: TaskTrx, run: RunRow, after: string | null): Promise<void> => {
  const plan = run.plan as unknown as StoredPlan
  const phases = phasesOf(plan)
  let index = after === null ? 0 : phases.indexOf(after as Phase) + 1
  for (; index < phases.length; index++) {
    const phase = phases[index]!
    if ((await enqueuePhase(trx, run, plan, phase)) > 0) {
      await trx.updateTable("runs").set({ phase }).where("id", "=", run.id).execute()
      return
    }
  }
  await endRun(trx, run.id, { status: "succeeded" })
}

/**
 * Called by every phase task in the transaction that completes it (after `ctx.complete`): under the run's
 * row lock, when no task of the run is left unfinished, the next phase starts. The lock serialises the
 * tasks' final transactions, so exactly one of them sees the phase finished.
 */
export const advanceIfPhaseDone = async (trx: TaskTrx, runId: string): Promise<void> => {
  const run = await trx.selectFrom("runs").selectAll().where("id", "=", runId).forUpdate().executeTakeFirst()
  if (run?.status !== "running") return
  const { n } = await trx
    .selectFrom("tasks")
    .select(sql<number>`count(*)::int`.as("n"))
    .where("run_id", "=", runId)
    .where("status", "in", ["pending", "running"])
    .where("kind", "!=", RUN_START_TASK)
    .executeTakeFirstOrThrow()
  if (n === 0) await advance(trx, run, run.phase)
}

export interface RunEnd {
  readonly status: "succeeded" | "failed"
  readonly failureReason?: string
  readonly error?: string
}

/**
 * Ends a queued or running run (nothing happens if it already ended): final status, unfinished tasks of
 * the run cancelled, the completion event written to the outbox, and a queued run of the project woken.
 */
export const endRun = async (trx: TaskTrx, runId: string, end: RunEnd): Promise<boolean> => {
  const run = await trx
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
    .executeTakeFirst()
  if (!run) return false
  await trx
    .updateTable("tasks")
    .set({ status: "failed", last_error: `run ${end.status}`, locked_until: null, completed_at: sql`now()` })
    .where("run_id", "=", runId)
    .where("status", "=", "pending")
    .execute()
  const project = await trx
    .selectFrom("projects")
    .select("organization_id")
    .where("id", "=", run.project_id)
    .executeTakeFirstOrThrow()
  const data =
    end.status === "succeeded"
      ? await succeededData(trx, run.project_id, run.run_number)
      : {
          project_id: run.project_id,
          run_number: run.run_number,
          failure_reason: end.failureReason ?? "internal_error",
        }
  await trx
    .insertInto("events")
    .values({
      organization_id: project.organization_id,
      project_id: run.project_id,
      run_id: run.id,
      type: end.status === "succeeded" ? "agent.completion.succeeded" : "agent.completion.failed",
      data: JSON.stringify(data),
    })
    .execute()
  // The project's queued run may start now.
  const woken = await trx
    .updateTable("tasks")
    .set({ run_after: sql`now()` })
    .where("kind", "=", RUN_START_TASK)
    .where("status", "=", "pending")
    .where(
      "run_id",
      "in",
      trx
        .selectFrom("runs")
        .select("id")
        .where("project_id", "=", run.project_id)
        .where("status", "=", "queued"),
    )
    .executeTakeFirst()
  if (woken.numUpdatedRows > 0n) await sql`select pg_notify(${TASKS_CHANNEL}, ${RUN_START_TASK})`.execute(trx)
  return true
}

const succeededData = async (trx: TaskTrx, projectId: string, runNumber: number) => {
  const state = await loadProjectState(trx, projectId)
  const states = await computeAgentStates(trx, projectId, state)
  return {
    project_id: projectId,
    run_number: runNumber,
    agents: state.agents
      .filter((a) => !a.row.is_draft)
      .map((a) => ({
        id: a.row.id,
        name: a.row.name,
        extraction_status: states.get(a.row.id)!.extractionStatus,
      })),
  }
}

export interface RunTaskContext {
  readonly workerId: string
  readonly db: TaskDb
  readonly complete: (trx: TaskTrx) => Promise<void>
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
export const runStartHandler = async (task: TaskRow, ctx: RunTaskContext): Promise<void> => {
  const runId = runIdOf(task)
  if (runId === undefined) return
  await ctx.db.transaction().execute(async (trx) => {
    const queued = await trx.selectFrom("runs").selectAll().where("id", "=", runId).executeTakeFirst()
    if (queued?.status !== "queued") return ctx.complete(trx)
    await lockProject(trx, queued.project_id)
    const run = await trx
      .selectFrom("runs")
      .selectAll()
      .where("id", "=", runId)
      .forUpdate()
      .executeTakeFirst()
    if (run?.status !== "queued") return ctx.complete(trx)
    const other = await trx
      .selectFrom("runs")
      .select("id")
      .where("project_id", "=", run.project_id)
      .where("status", "=", "running")
      .executeTakeFirst()
    const state = await loadProjectState(trx, run.project_id)
    if (other || state.documents.some((d) => d.parseInFlight)) {
      await reschedule(trx, task.id, ctx.workerId, WAIT_MS)
      return
    }
    const decision = planLaunch(toSnapshot({ ...state, run: { running: false, queued: false } }))
    if (decision._tag === "Rejected" || decision._tag === "CyclicReferences") {
      await endRun(trx, run.id, {
        status: "failed",
        failureReason: "validation_failed",
        error: decision.message,
      })
      return ctx.complete(trx)
    }
    if (decision._tag !== "Plan") {
      await reschedule(trx, task.id, ctx.workerId, WAIT_MS)
      return
    }
    if (decision.parse.length > 0) {
      for (const documentId of decision.parse) {
        const document = state.documents.find((d) => d.id === documentId)!
        await enqueue(trx, {
          kind: PARSE_TASK,
          idempotencyKey: `parse:${documentId}:${document.version}:${run.id}`,
          payload: { document_id: documentId, version: document.version },
          projectId: run.project_id,
        })
      }
      await reschedule(trx, task.id, ctx.workerId, WAIT_MS)
      return
    }
    const references = new Map(state.agents.map((a) => [a.row.id, a.references]))
    const plan: StoredPlan = {
      extract: decision.extract,
      resolve: decision.resolve,
      deriveLevels: deriveLevels(decision.derive, references),
      upToDate: decision.upToDate,
    }
    const started = await trx
      .updateTable("runs")
      .set({ status: "running", started_at: sql`now()`, plan: JSON.stringify(plan) })
      .where("id", "=", run.id)
      .returningAll()
      .executeTakeFirstOrThrow()
    await advance(trx, started, null)
    await ctx.complete(trx)
  })
}

/**
 * Wraps a phase task's handler: on its last attempt an error ends the run as failed (`internal_error`)
 * before the error propagates to the task's own record.
 */
export const phaseTaskHandler =
  <C extends RunTaskContext & { readonly signal: AbortSignal }>(
    body: (task: TaskRow, ctx: C) => Promise<void>,
  ) =>
  async (task: TaskRow, ctx: C): Promise<void> => {
    try {
      await body(task, ctx)
    } catch (e) {
      const runId = runIdOf(task)
      if (runId !== undefined && !ctx.signal.aborted && task.attempts >= task.max_attempts) {
        const message = e instanceof Error ? e.message : String(e)
        await ctx.db
          .transaction()
          .execute((trx) =>
            endRun(trx, runId, {
              status: "failed",
              failureReason: "internal_error",
              error: `${task.kind}: ${message}`,
            }),
          )
          .catch(() => false)
      }
      throw e
    }
  }

/**
 * Housekeeping: a run whose task died with its worker on the last attempt (a lease that expired with no
 * attempts left is never claimed again) ends as failed. Returns how many runs ended.
 */
export const failAbandonedRuns = async (db: TaskDb) => {
  const stuck = await db
    .selectFrom("tasks")
    .select(["id", "run_id", "kind"])
    .where("run_id", "is not", null)
    .where("status", "=", "running")
    .where("locked_until", "<", sql<Date>`now()`)
    .whereRef("attempts", ">=", "max_attempts")
    .execute()
  let ended = 0
  for (const task of stuck) {
    const done = await db.transaction().execute(async (trx) => {
      await trx
        .updateTable("tasks")
        .set({
          status: "failed",
          last_error: "abandoned by its worker on the last attempt",
          completed_at: sql`now()`,
        })
        .where("id", "=", task.id)
        .execute()
      return endRun(trx, task.run_id!, {
        status: "failed",
        failureReason: "internal_error",
        error: `${task.kind}: abandoned by its worker on the last attempt`,
      })
    })
    if (done) ended += 1
  }
  return ended
}
