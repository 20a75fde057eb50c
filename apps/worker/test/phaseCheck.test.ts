import { makeDialect, makeKysely } from "@dxs/db/Db"
import * as Runs from "@dxs/db/repositories/Runs"
import type { Database } from "@dxs/db/Schema"
import { complete, enqueue } from "@dxs/db/TaskQueue"
import { commitThenAdvance } from "@dxs/pipeline/run/Runs"
import { newOrganizationProject } from "@dxs/testing/Seeding"
import { useTestDatabase } from "@dxs/testing/TestDatabase"
// Brings in the `inject("dxsTemplateUrl")` typing that TestDatabase relies on.
import type {} from "@dxs/testing/TestGlobalSetup"
import { Deferred, Effect, Fiber } from "effect"
import { Kysely } from "kysely"
import { afterAll, describe, expect, it } from "vitest"

const url = await useTestDatabase()
const db = makeKysely(url, 6)
afterAll(() => db.destroy())

const WORKER = "w1"

/** A database whose phase checks (`hasUnfinishedTasks`) are counted. */
const counted = () => {
  const seen = { checks: 0 }
  const counting = new Kysely<Database>({
    dialect: makeDialect(url, 6),
    log: (event) => {
      if (/select 1 as found from tasks where run_id/.test(event.query.sql)) seen.checks += 1
    },
  })
  afterAll(() => counting.destroy())
  return { db: counting, seen }
}

/** A running run in its extract phase with `n` extract tasks held by this test's worker. */
const runningRun = async (n: number) => {
  const { projectId } = await newOrganizationProject(db)
  const queued = await Effect.runPromise(Runs.createQueuedRun(db, projectId))
  await Effect.runPromise(
    Runs.startRun(db, queued.id, { extractPairs: n, resolve: [], deriveLevels: [], upToDate: [] }),
  )
  await Effect.runPromise(Runs.setRunPhase(db, queued.id, "extract"))
  // The start task is done.
  await db.updateTable("tasks").set({ status: "succeeded" }).where("run_id", "=", queued.id).execute()
  const tasks: Array<string> = []
  for (let i = 0; i < n; i++) {
    const { id } = await enqueue(db, {
      kind: "extract",
      idempotencyKey: `extract:${queued.id}:${i}`,
      payload: {},
      projectId,
      runId: queued.id,
    })
    tasks.push(id)
  }
  await db
    .updateTable("tasks")
    .set({ status: "running", locked_by: WORKER, attempts: 1 })
    .where("id", "in", tasks)
    .execute()
  return { runId: queued.id, tasks }
}

const runStatus = async (runId: string) =>
  (await db.selectFrom("runs").select("status").where("id", "=", runId).executeTakeFirstOrThrow()).status

/** A task's commit (its completion by this test's worker), after `gate` when one is given. */
const commitOf = (taskId: string, gate?: Deferred.Deferred<void>) => {
  const completed = Effect.promise(() => complete(db, taskId, WORKER))
  return gate === undefined ? completed : Effect.zipRight(Deferred.await(gate), completed)
}

/** A commit that fails once `gate` opens. */
const failingCommit = (gate: Deferred.Deferred<void>, message: string) =>
  Effect.zipRight(Deferred.await(gate), Effect.die(new Error(message)))

describe("a phase's check after its tasks' commits", () => {
  it("is made once by the last of the tasks committing side by side, after every commit, and moves the run on", async () => {
    const { runId, tasks } = await runningRun(3)
    const { db: checked, seen } = counted()
    const gates = await Effect.runPromise(Effect.all(tasks.map(() => Deferred.make<void>())))
    const fibers = tasks.map((id, i) =>
      Effect.runFork(commitThenAdvance(checked, runId, commitOf(id, gates[i]!))),
    )
    // The first and the third commit while the second is still committing: neither moves the run on.
    await Effect.runPromise(Deferred.succeed(gates[0]!, undefined))
    await Effect.runPromise(Fiber.join(fibers[0]!))
    await Effect.runPromise(Deferred.succeed(gates[2]!, undefined))
    await Effect.runPromise(Fiber.join(fibers[2]!))
    expect(await runStatus(runId)).toBe("running")
    // The last to commit checks, sees every task finished and ends the run (no phase after extraction).
    await Effect.runPromise(Deferred.succeed(gates[1]!, undefined))
    await Effect.runPromise(Fiber.join(fibers[1]!))
    expect(await runStatus(runId)).toBe("succeeded")
    // One look, the last task's (and its look again under the run's lock): not one per task.
    expect(seen.checks).toBe(2)
  })

  it("is made by a task whose commit ends beside one that failed, and by the failed one's next commit", async () => {
    const { runId, tasks } = await runningRun(2)
    const { db: checked, seen } = counted()
    const gate = await Effect.runPromise(Deferred.make<void>())
    // The first task's commit fails (its task stays unfinished) while the second commits.
    const failing = Effect.runFork(commitThenAdvance(checked, runId, failingCommit(gate, "commit failed")))
    await Effect.runPromise(commitThenAdvance(checked, runId, commitOf(tasks[1]!)))
    // The first task is still committing (no exit yet): the second left the check to it.
    expect(await runStatus(runId)).toBe("running")
    await Effect.runPromise(Deferred.succeed(gate, undefined))
    await Effect.runPromise(Fiber.await(failing))
    // The last to leave checks all the same: its own task is unfinished, so the run stays.
    expect(await runStatus(runId)).toBe("running")
    expect(seen.checks).toBe(1)
    // Its next attempt commits alone, checks and ends the run: the failed commit left nothing behind.
    await Effect.runPromise(commitThenAdvance(checked, runId, commitOf(tasks[0]!)))
    expect(await runStatus(runId)).toBe("succeeded")
    expect(seen.checks).toBe(3)
  })

  it("is made by the last to leave when its commit failed after another worker completed its task", async () => {
    const { runId, tasks } = await runningRun(2)
    const gate = await Effect.runPromise(Deferred.make<void>())
    // The first task's lease was lost: another worker completes it while this one's commit is still
    // under way, and this one's commit then fails.
    const failing = Effect.runFork(commitThenAdvance(db, runId, failingCommit(gate, "lease lost")))
    await db.updateTable("tasks").set({ locked_by: "w2" }).where("id", "=", tasks[0]!).execute()
    expect(await complete(db, tasks[0]!, "w2")).toBe(true)
    await Effect.runPromise(commitThenAdvance(db, runId, commitOf(tasks[1]!)))
    expect(await runStatus(runId)).toBe("running")
    await Effect.runPromise(Deferred.succeed(gate, undefined))
    await Effect.runPromise(Fiber.await(failing))
    expect(await runStatus(runId)).toBe("succeeded")
  })
})
