/**
 * The task queue's claim reads what it takes: run under `EXPLAIN ANALYZE` on a queue of its own (no task
 * of another test before it in the queue's order).
 */
import { useTestDatabase } from "@dxs/testing/TestDatabase"
import { sql } from "kysely"
import { afterAll, describe, expect, it } from "vitest"
import { makeKysely } from "../src/Db.ts"
import { claim, enqueueMany } from "../src/TaskQueue.ts"
import { planOfFirstStatement } from "./fixtures.ts"

const url = await useTestDatabase()
const db = makeKysely(url, 2)
afterAll(() => db.destroy())

describe("claims", () => {
  it("take a run's first tasks without reading its other due tasks (no sort of the queue)", async () => {
    // A launch enqueues its tasks in one statement: every one due at the same moment, made at the same
    // moment, into a queue whose statistics were taken when it was nearly empty. A claim must take the
    // first of them in the queue's order through its index, not read and sort them all (5,000 tasks:
    // 2.5 ms a claim, on every task of the run).
    await sql`analyze tasks`.execute(db)
    await enqueueMany(
      db,
      Array.from({ length: 3_000 }, (_, i) => ({
        kind: "burst",
        idempotencyKey: `burst:${i}`,
        payload: { i },
      })),
    )
    const { outcome, sorts, read } = await planOfFirstStatement(url, "tasks", (recorded) =>
      claim(recorded, { workerId: "w1", kinds: ["burst"], leaseMs: 60_000, limit: 2 }),
    )
    expect(outcome).toHaveLength(2)
    expect(sorts).toEqual([])
    expect(read).toBeLessThan(20)
  })
})
