import { randomUUID } from "node:crypto"
import { useTestDatabase } from "@dxs/testing/TestDatabase"
import { Effect } from "effect"
import { sql, type UpdateObject } from "kysely"
import { afterAll, describe, expect, it } from "vitest"
import { makeKysely } from "../../src/Db.ts"
import { projectStatusRows } from "../../src/repositories/Projects.ts"
import * as Runs from "../../src/repositories/Runs.ts"
import * as RunTasks from "../../src/repositories/RunTasks.ts"
import type { Database } from "../../src/Schema.ts"
import { complete, enqueue } from "../../src/TaskQueue.ts"
import { newOrganizationProject, planOfFirstStatement } from "../fixtures.ts"

const url = await useTestDatabase()
const db = makeKysely(url, 4)
afterAll(() => db.destroy())

const run = Effect.runPromise

const newProject = () => newOrganizationProject(db)

const tasksOf = (runId: string) =>
  db
    .selectFrom("tasks")
    .select(["kind", "idempotency_key", "payload", "project_id", "status", "last_error"])
    .where("run_id", "=", runId)
    .orderBy("idempotency_key")
    .execute()

const setTask = (key: string, set: UpdateObject<Database, "tasks">) =>
  db.updateTable("tasks").set(set).where("idempotency_key", "=", key).execute()

describe("launch requests", () => {
  it("number the project's runs and enqueue each run's start task", async () => {
    const { projectId } = await newProject()
    expect(await run(Runs.findQueuedRun(db, projectId))).toBeUndefined()
    const first = await run(Runs.createQueuedRun(db, projectId))
    expect(first.run_number).toBe(1)
    expect(await run(Runs.findQueuedRun(db, projectId))).toEqual(first)
    expect(await tasksOf(first.id)).toEqual([
      {
        kind: "run-start",
        idempotency_key: `run-start:${first.id}`,
        payload: { runId: first.id },
        project_id: projectId,
        status: "pending",
        last_error: null,
      },
    ])
    await db.updateTable("runs").set({ status: "succeeded" }).where("id", "=", first.id).execute()
    expect((await run(Runs.createQueuedRun(db, projectId))).run_number).toBe(2)
  })
})

describe("runs through their phases", () => {
  it("start with their plan, move from phase to phase and tell which projects have a run", async () => {
    const { projectId } = await newProject()
    const other = await newProject()
    const queued = await run(Runs.createQueuedRun(db, projectId))
    expect(await run(Runs.hasRunningRun(db, projectId))).toBe(false)
    expect(await run(Runs.activeRunsOfProjects(db, [projectId, other.projectId]))).toEqual([
      { project_id: projectId, status: "queued" },
    ])
    const started = await run(Runs.startRun(db, queued.id, { resolve: ["a"] }))
    expect([started.status, started.plan, started.started_at !== null]).toEqual([
      "running",
      { resolve: ["a"] },
      true,
    ])
    await run(Runs.setRunPhase(db, queued.id, "resolve"))
    expect((await run(Runs.findRun(db, queued.id, true)))?.phase).toBe("resolve")
    expect(await run(Runs.findRun(db, randomUUID()))).toBeUndefined()
    expect(await run(Runs.hasRunningRun(db, projectId))).toBe(true)
    // A project's status says whether a run of it is queued or running.
    const organizationOf = async (id: string) =>
      (
        await db
          .selectFrom("projects")
          .select("organization_id")
          .where("id", "=", id)
          .executeTakeFirstOrThrow()
      ).organization_id
    for (const [id, running] of [
      [projectId, true],
      [other.projectId, false],
    ] as const)
      expect(await run(projectStatusRows(db, await organizationOf(id), [id]))).toEqual([
        expect.objectContaining({ id, pipeline_running: running }),
      ])
    expect(await run(Runs.activeRunsOfProjects(db, []))).toEqual([])
  })

  it("enqueue a phase's tasks under the catalogue's keys and count what is unfinished or failed", async () => {
    const { projectId } = await newProject()
    const { id: runId } = await run(Runs.createQueuedRun(db, projectId))
    const pair = {
      agentId: "a1",
      agentConfigVersion: 2,
      documentId: "d1",
      documentVersion: 3,
      dimensionsKey: "k",
    }
    const other = { ...pair, agentId: "a2", agentConfigVersion: 1 }
    // One task for the document, holding both its agents.
    expect(await run(RunTasks.enqueueExtractTasks(db, projectId, runId, [pair, other]))).toBe(1)
    expect(await run(RunTasks.enqueueAgentTasks(db, "resolve", projectId, runId, ["a1", "a2"]))).toBe(2)
    expect(await run(RunTasks.enqueueAgentTasks(db, "derive", projectId, runId, []))).toBe(0)
    const tasks = await tasksOf(runId)
    expect(tasks.map((t) => [t.kind, t.idempotency_key, t.payload])).toEqual([
      [
        "extract",
        `extract:d1:3:${runId}`,
        {
          runId,
          documentId: "d1",
          documentVersion: 3,
          agents: [
            { agentId: "a1", agentConfigVersion: 2 },
            { agentId: "a2", agentConfigVersion: 1 },
          ],
        },
      ],
      ["resolve", `resolve:a1:${runId}`, { runId, agentId: "a1" }],
      ["resolve", `resolve:a2:${runId}`, { runId, agentId: "a2" }],
      ["run-start", `run-start:${runId}`, { runId }],
    ])
    // The start task is not a task of a phase.
    expect(await run(RunTasks.hasUnfinishedTasks(db, runId))).toBe(true)
    expect(await run(RunTasks.failedTaskOf(db, runId))).toBeUndefined()

    await run(RunTasks.cancelPendingTasks(db, runId, "succeeded"))
    expect((await tasksOf(runId)).map((t) => [t.status, t.last_error])).toEqual(
      Array(4).fill(["failed", "cancelled: the run ended"]),
    )
    expect(await run(RunTasks.hasUnfinishedTasks(db, runId))).toBe(false)
    // Cancelled tasks are not failures of the run.
    expect(await run(RunTasks.failedTaskOf(db, runId))).toBeUndefined()
    await setTask(`resolve:a2:${runId}`, { last_error: "boom" })
    expect(await run(RunTasks.failedTaskOf(db, runId))).toEqual({ kind: "resolve", last_error: "boom" })
  })
})

describe("a phase's check for unfinished tasks", () => {
  it("reads the run's unfinished tasks through an index, not the claimed ones before them", async () => {
    // A run's tasks are claimed in the order they were written, so its claimed and finished tasks come
    // first in the table. With statistics that know most of the run is pending, a check that may scan the
    // table stops at the first unfinished task it meets, after every finished one (0.43 ms at 5,000 tasks,
    // after every task of the run); through an index it reads the run's unfinished tasks alone.
    const { projectId } = await newProject()
    const { id: runId } = await run(Runs.createQueuedRun(db, projectId))
    const pairs = Array.from({ length: 3_000 }, (_, i) => ({
      agentId: "a1",
      agentConfigVersion: 1,
      documentId: `doc-${i}`,
      documentVersion: 1,
      dimensionsKey: "k",
    }))
    await run(RunTasks.enqueueExtractTasks(db, projectId, runId, pairs))
    await sql`update tasks set status = 'running' where id in (
      select id from tasks where run_id = ${runId}::uuid and kind = 'extract' order by run_after, created_at, id limit 2000)`.execute(
      db,
    )
    await sql`update tasks set status = 'succeeded' where run_id = ${runId}::uuid and status = 'running'`.execute(
      db,
    )
    await sql`analyze tasks`.execute(db)
    const { outcome, scans, read } = await planOfFirstStatement(
      url,
      "tasks",
      (recorded) => run(RunTasks.hasUnfinishedTasks(recorded, runId)),
      { seqscan: true },
    )
    expect(outcome).toBe(true)
    expect(scans.filter((s) => s === "Seq Scan")).toEqual([])
    expect(read).toBeLessThan(20)
    // The last unfinished task is found; the start task is not a task of a phase.
    const last = sql`select id from tasks where run_id = ${runId}::uuid and kind = 'extract' and status = 'pending'
      order by created_at desc, id desc limit 1`
    await sql`update tasks set status = 'succeeded' where run_id = ${runId}::uuid and kind = 'extract'
      and status = 'pending' and id not in (${last})`.execute(db)
    expect(await run(RunTasks.hasUnfinishedTasks(db, runId))).toBe(true)
    await sql`update tasks set status = 'succeeded' where run_id = ${runId}::uuid and kind = 'extract'`.execute(
      db,
    )
    expect(await run(RunTasks.hasUnfinishedTasks(db, runId))).toBe(false)
  })
})

describe("ending runs", () => {
  it("end a run once, with its tasks' usage, and write its completion event", async () => {
    const { organizationId, projectId } = await newProject()
    const { id: runId, run_number } = await run(Runs.createQueuedRun(db, projectId))
    await run(Runs.startRun(db, runId, {}))
    await run(RunTasks.enqueueAgentTasks(db, "resolve", projectId, runId, ["a1", "a2"]))
    const [t1, t2] = await db
      .selectFrom("tasks")
      .select("id")
      .where("run_id", "=", runId)
      .where("kind", "=", "resolve")
      .orderBy("idempotency_key")
      .execute()
    // Both held by worker w1; each completed with the usage it cost, in the completion's statement.
    await sql`update tasks set status = 'running', locked_by = 'w1', attempts = 1
      where run_id = ${runId}::uuid and kind = 'resolve'`.execute(db)
    const first = { calls: 2, cacheHits: 1, promptTokens: 100, cachedTokens: 0, completionTokens: 10 }
    const second = { calls: 1, cacheHits: 0, promptTokens: 50, cachedTokens: 0, completionTokens: 5 }
    expect(await complete(db, t1!.id, "w1", first)).toBe(true)
    // A worker that does not hold the task completes nothing and records none of its usage.
    expect(await complete(db, t2!.id, "w2", { ...second, calls: 40 })).toBe(false)
    expect(await complete(db, t2!.id, "w1", second)).toBe(true)
    // Completed once: a second completion is refused and adds nothing.
    expect(await complete(db, t2!.id, "w1", second)).toBe(false)
    const stored = await db.selectFrom("tasks").select(["status", "usage"]).where("id", "=", t1!.id).execute()
    expect(stored).toEqual([{ status: "succeeded", usage: first }])

    const end = { status: "failed", failureReason: "internal_error", error: "resolve: boom" } as const
    expect(await run(Runs.finishRun(db, runId, end))).toEqual({
      id: runId,
      project_id: projectId,
      run_number,
    })
    expect(await run(Runs.finishRun(db, runId, end))).toBeUndefined()
    const usage = await run(Runs.totalRunUsage(db, runId))
    expect({ ...usage, ms: usage.ms >= 0 }).toEqual({
      ms: true,
      model_calls: 3,
      cache_hits: 1,
      prompt_tokens: 150,
      completion_tokens: 15,
    })
    const row = await run(Runs.findRun(db, runId))
    expect([row?.status, row?.phase, row?.failure_reason, row?.error, row?.finished_at !== null]).toEqual([
      "failed",
      null,
      "internal_error",
      "resolve: boom",
      true,
    ])

    const eventId = await run(
      Runs.insertCompletionEvent(db, {
        projectId,
        runId,
        type: "agent.completion.failed",
        data: { project_id: projectId, run_number },
      }),
    )
    expect(
      await db
        .selectFrom("events")
        .select(["organization_id", "project_id", "run_id", "type", "data"])
        .where("id", "=", eventId)
        .executeTakeFirst(),
    ).toEqual({
      organization_id: organizationId,
      project_id: projectId,
      run_id: runId,
      type: "agent.completion.failed",
      data: { project_id: projectId, run_number },
    })
  })
})

describe("runs abandoned by their workers", () => {
  it("fail the tasks whose worker died on their last attempt, and find the runs to end or move on", async () => {
    const { projectId } = await newProject()
    const failing = await run(Runs.createQueuedRun(db, projectId))
    await run(Runs.startRun(db, failing.id, {}))
    await run(RunTasks.enqueueAgentTasks(db, "resolve", projectId, failing.id, ["a1", "a2"]))
    const expired = { status: "running" as const, locked_until: sql<Date>`now() - interval '1 minute'` }
    await setTask(`resolve:a1:${failing.id}`, { ...expired, attempts: 3, max_attempts: 3 })
    // Not its last attempt: the claim retries it.
    await setTask(`resolve:a2:${failing.id}`, { ...expired, attempts: 1, max_attempts: 3 })

    const other = await newProject()
    const stalled = await run(Runs.createQueuedRun(db, other.projectId))
    await run(Runs.startRun(db, stalled.id, {}))

    await run(RunTasks.failAbandonedRunTasks(db))
    expect((await tasksOf(failing.id)).map((t) => [t.idempotency_key, t.status, t.last_error])).toEqual([
      [`resolve:a1:${failing.id}`, "failed", "abandoned by its worker on the last attempt"],
      [`resolve:a2:${failing.id}`, "running", null],
      [`run-start:${failing.id}`, "pending", null],
    ])
    const withFailed = await run(RunTasks.runsWithFailedTasks(db))
    expect(withFailed).toContain(failing.id)
    expect(withFailed).not.toContain(stalled.id)
    const idle = await run(RunTasks.stalledRuns(db))
    expect(idle).toContain(stalled.id)
    expect(idle).not.toContain(failing.id)
  })
})

describe("waking a queued run", () => {
  it("makes the queued run's start task due now, and tells whether one waits", async () => {
    const { projectId } = await newProject()
    expect(await run(RunTasks.hasQueuedRunStart(db, projectId))).toBe(false)
    expect(await run(RunTasks.wakeQueuedRun(db, projectId))).toBe(false)
    const queued = await run(Runs.createQueuedRun(db, projectId))
    await setTask(`run-start:${queued.id}`, { run_after: sql<Date>`now() + interval '1 hour'` })
    expect(await run(RunTasks.hasQueuedRunStart(db, projectId))).toBe(true)
    expect(await run(RunTasks.wakeQueuedRun(db, projectId))).toBe(true)
    const task = await db
      .selectFrom("tasks")
      .select(sql<boolean>`run_after <= now()`.as("due"))
      .where("idempotency_key", "=", `run-start:${queued.id}`)
      .executeTakeFirstOrThrow()
    expect(task.due).toBe(true)
    // A task that is not a run's start is left alone.
    await enqueue(db, { kind: "parse", idempotencyKey: `parse:${randomUUID()}:1`, payload: {}, projectId })
    await setTask(`run-start:${queued.id}`, { status: "succeeded" })
    expect(await run(RunTasks.hasQueuedRunStart(db, projectId))).toBe(false)
    expect(await run(RunTasks.wakeQueuedRun(db, projectId))).toBe(false)
  })
})
