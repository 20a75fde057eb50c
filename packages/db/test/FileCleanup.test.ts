/**
 * What a test file's helpers start inside a `beforeAll` is stopped when the file ends. Vitest runs an
 * `afterAll` only when it is registered while the file is collected, so one registered by a helper called
 * from a `beforeAll` (the test databases, the REST server and its worker) was never run: every test file
 * left its server, worker and database behind in its process. The helpers register with `afterThisFile`,
 * whose cleanups the shared configuration's setup file runs after every file.
 */
import { afterThisFile, runFileCleanups } from "@dxs/testing/FileCleanup"
import { useTestDatabase } from "@dxs/testing/TestDatabase"
import { sql } from "kysely"
import { beforeAll, describe, expect, it } from "vitest"
import { makeKysely } from "../src/Db.ts"

let url: string
const ran: Array<string> = []
beforeAll(async () => {
  url = await useTestDatabase()
  afterThisFile(() => {
    ran.push("registered in beforeAll")
  })
})

const databaseExists = async (name: string) => {
  const admin = makeKysely(url.replace(/\/[^/?]+(\?|$)/, "/postgres$1"), 1)
  try {
    const { rows } = await sql<{
      n: number
    }>`select count(*)::int as n from pg_database where datname = ${name}`.execute(admin)
    return rows[0]?.n === 1
  } finally {
    await admin.destroy()
  }
}

describe("a test file's cleanups", () => {
  it("include what a beforeAll registered: its test database is dropped", async () => {
    const name = new URL(url).pathname.slice(1)
    expect(await databaseExists(name)).toBe(true)
    expect(ran).toEqual([])
    await runFileCleanups()
    expect(ran).toEqual(["registered in beforeAll"])
    expect(await databaseExists(name)).toBe(false)
  })

  it("run in the reverse order of their registration, each despite another's failure, then fail with every failure", async () => {
    const order: Array<number> = []
    afterThisFile(() => order.push(1))
    afterThisFile(() => {
      throw new Error("first failure")
    })
    afterThisFile(() => order.push(3))
    afterThisFile(() => Promise.reject(new Error("second failure")))
    afterThisFile(() => order.push(5))
    const failure = await runFileCleanups().then(
      () => undefined,
      (e: unknown) => e,
    )
    expect(order).toEqual([5, 3, 1])
    expect(failure).toBeInstanceOf(AggregateError)
    expect((failure as AggregateError).errors.map((e: Error) => e.message)).toEqual([
      "second failure",
      "first failure",
    ])
    // Each ran once: the registry is empty again.
    await runFileCleanups()
    expect(order).toEqual([5, 3, 1])
  })
})
