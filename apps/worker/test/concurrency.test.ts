import { makeKysely } from "@dxs/db/Db"
import { enqueue } from "@dxs/db/TaskQueue"
import { useTestDatabase } from "@dxs/testing/TestDatabase"
// Brings in the `inject("dxsTemplateUrl")` typing that TestDatabase relies on.
import type {} from "@dxs/testing/TestGlobalSetup"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import type { ExecutionsTable } from "./fixtures/workerProcess.ts"
import { eventually, killWorker, workerProcesses } from "./support/processes.ts"

const url = await useTestDatabase()
const base = makeKysely(url, 4)
const db = base.withTables<{ executions: ExecutionsTable }>()
afterAll(() => base.destroy())

const processes = workerProcesses("workerProcess.ts", url)

afterEach(async () => {
  await processes.stopAll()
})

const taskRow = (id: string) =>
  db.selectFrom("tasks").selectAll().where("id", "=", id).executeTakeFirstOrThrow()

beforeAll(async () => {
  await db.schema
    .createTable("executions")
    .addColumn("id", "uuid", (c) => c.primaryKey())
    .addColumn("task_id", "uuid", (c) => c.notNull())
    .addColumn("worker_id", "text", (c) => c.notNull())
    .addColumn("started_at", "timestamptz", (c) => c.notNull())
    .addColumn("ended_at", "timestamptz")
    .execute()
})

describe("worker processes", () => {
  it("two processes run 200 tasks: each exactly once to completion, never overlapping, both working", async () => {
    const workers = await Promise.all(
      ["proc-a", "proc-b"].map((id) => processes.start(id, { CONCURRENCY: "4", LEASE_MS: "30000" })),
    )
    const TOTAL = 200
    await base.transaction().execute(async (trx) => {
      for (let i = 0; i < TOTAL; i++) {
        await enqueue(trx, {
          kind: "record",
          idempotencyKey: `many:${i}`,
          payload: { sleepMs: 5 + (i % 4) * 5 },
        })
      }
    })
    const output = () => workers.map((w) => w.output()).join("\n")
    await eventually(async () => {
      const r = await db
        .selectFrom("tasks")
        .select((eb) => eb.fn.countAll<string>().as("n"))
        .where("kind", "=", "record")
        .where("status", "=", "succeeded")
        .executeTakeFirstOrThrow()
      return Number(r.n) === TOTAL ? true : undefined
    }).catch((e) => {
      throw new Error(`${e}\nworker output:\n${output()}`)
    })

    const tasks = await db.selectFrom("tasks").selectAll().where("kind", "=", "record").execute()
    expect(tasks).toHaveLength(TOTAL)
    const executions = await db.selectFrom("executions").selectAll().orderBy("started_at").execute()
    for (const t of tasks) {
      const runs = executions.filter((e) => e.task_id === t.id)
      // Exactly one execution ran to completion, and it is the one the task records.
      const finished = runs.filter((e) => e.ended_at !== null)
      expect(finished, `task ${t.id}`).toHaveLength(1)
      expect(finished[0]?.worker_id).toBe(t.locked_by)
      // No two executions of the task overlapped (an unfinished one counts as never ending).
      for (let i = 1; i < runs.length; i++) {
        const previousEnd = runs[i - 1]?.ended_at?.getTime() ?? Number.POSITIVE_INFINITY
        expect(runs[i]!.started_at.getTime(), `task ${t.id}`).toBeGreaterThanOrEqual(previousEnd)
      }
      expect(t).toMatchObject({ status: "succeeded", attempts: 1, lease_expirations: 0 })
    }
    expect(executions).toHaveLength(TOTAL)
    const perWorker = new Map<string, number>()
    for (const e of executions) perWorker.set(e.worker_id, (perWorker.get(e.worker_id) ?? 0) + 1)
    expect([...perWorker.keys()].sort()).toEqual(["proc-a", "proc-b"])
  })

  it("a task whose worker is killed mid-task is re-claimed after its lease expires and completed once", async () => {
    const LEASE_MS = 4_000
    const hanging = await processes.start("doomed", { HANG: "1", LEASE_MS: String(LEASE_MS) })
    const { id } = await enqueue(base, { kind: "record", idempotencyKey: "crash:1", payload: {} })
    await eventually(async () => {
      const e = await db.selectFrom("executions").select("id").where("task_id", "=", id).executeTakeFirst()
      return e
    })
    const claimed = await taskRow(id)
    expect(claimed).toMatchObject({ status: "running", locked_by: "doomed", attempts: 1 })

    // The survivor runs alongside; heartbeats keep the lease alive past its first expiry, so it waits.
    const survivor = await processes.start("survivor", { LEASE_MS: String(LEASE_MS), POLL_MS: "200" })
    await eventually(async () => {
      const t = await taskRow(id)
      expect(t).toMatchObject({ status: "running", locked_by: "doomed", attempts: 1 })
      return t.locked_until!.getTime() > claimed.locked_until!.getTime() + LEASE_MS ? true : undefined
    }, 60_000)

    await killWorker(hanging)
    const done = await eventually(async () => {
      const t = await taskRow(id)
      return t.status === "succeeded" ? t : undefined
    }).catch((e) => {
      throw new Error(`${e}\nsurvivor output:\n${survivor.output()}`)
    })
    // The killed worker's attempt is not counted (a worker gone is an outage, not the task's failure), and
    // the takeover is logged with the task, its kind, the attempt and the previous owner.
    expect(done).toMatchObject({ attempts: 1, lease_expirations: 1, locked_by: "survivor", last_error: null })
    const takeover = survivor
      .output()
      .split("\n")
      .find((line) => line.includes("task taken over"))
    expect(takeover).toBeDefined()
    expect(takeover).toContain(`task_id=${id}`)
    expect(takeover).toContain("task_kind=record")
    expect(takeover).toContain("attempt=1")
    expect(takeover).toContain("previous_owner=doomed")
    const runs = await db
      .selectFrom("executions")
      .selectAll()
      .where("task_id", "=", id)
      .orderBy("started_at")
      .execute()
    expect(runs.map((r) => [r.worker_id, r.ended_at !== null])).toEqual([
      ["doomed", false],
      ["survivor", true],
    ])
  })
})
