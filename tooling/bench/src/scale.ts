/**
 * Launch planning at scale: a project of D processed documents × A agents split by the Document dimension
 * (state seeded, nothing run yet) and a real `dxs start all` process over that database. Timed as a user
 * meets it: `POST …/agents/launch/` until its 202, then until the run is `running` with its first phase's
 * tasks queued (the plan made and written). Printed with the process's peak resident memory, against the
 * targets (≤ 10 s, ≤ 1 GB). It is a report: it exits 0 either way.
 *
 * With `--complete` the run is followed to its end with the default (`local`) extractor, as a user who
 * launches a project without a model meets it: the time from the launch until the run has succeeded, the
 * pairs per second and the results written (5,000 documents × 20 agents is the 100,000-pair run).
 *
 * Usage: pnpm bench:scale [--documents 10000] [--agents 50] [--complete]
 * Uses DATABASE_URL's server when set (a fresh database, dropped afterwards), else an embedded server.
 */

import { makeKysely } from "@dxs/db"
import { sql } from "kysely"
import {
  createKey,
  type Db,
  dxsEnv,
  option,
  peakRssMb,
  printRows,
  seedProject,
  startAll,
  startDatabase,
} from "./common/project.ts"

const DOCUMENTS = option("documents", 10_000)
const AGENTS = option("agents", 50)
/** `--complete`: the run is followed until it ends (see above). */
const COMPLETE = process.argv.includes("--complete")

const seed = (db: Db) =>
  seedProject(db, {
    organization: "bench scale",
    documents: DOCUMENTS,
    agents: Array.from({ length: AGENTS }, (_, k) => ({ name: `Field ${k + 1}`, valueType: "string" })),
    text: (i) => `Agreement ${i}. Total: EUR 1,000.`,
  })

const main = async () => {
  const database = await startDatabase()
  const db = makeKysely(database.url, 4)
  let server: Awaited<ReturnType<typeof startAll>> | undefined
  try {
    const t0 = Date.now()
    const { projectId } = await seed(db)
    console.log(
      `seeded ${DOCUMENTS} documents × ${AGENTS} agents (split by Document) in ${((Date.now() - t0) / 1000).toFixed(1)} s`,
    )
    const env = dxsEnv(database.url)
    const key = await createKey(env, "bench scale")
    server = await startAll(env)
    const api = server.api
    const before = peakRssMb(server.child.pid!)

    const launchStart = Date.now()
    const launch = await fetch(`${api}/projects/${projectId}/agents/launch/`, {
      method: "POST",
      headers: { "x-api-key": key },
    })
    const launchMs = Date.now() - launchStart
    if (launch.status !== 202) throw new Error(`launch answered ${launch.status}: ${await launch.text()}`)
    // The run is started when it is running with its first phase's tasks queued.
    let startMs = Number.NaN
    let queued = 0
    for (const deadline = Date.now() + 10 * 60_000; Date.now() < deadline; ) {
      const run = await projectRun(db, projectId)
      if (run?.status === "running" || run?.status === "succeeded" || run?.status === "failed") {
        startMs = Date.now() - launchStart
        const { n } = await db
          .selectFrom("tasks")
          .select(sql<number>`count(*)::int`.as("n"))
          .where("run_id", "=", run.id)
          .where("kind", "!=", "run-start")
          .executeTakeFirstOrThrow()
        queued = n
        if (run.status === "failed") console.log(`the run failed: ${server.output().slice(-2000)}`)
        break
      }
      await new Promise((r) => setTimeout(r, 20))
    }
    const done = COMPLETE ? await untilEnded(db, projectId, launchStart) : undefined
    const peak = peakRssMb(server.child.pid!)
    const rows: Array<readonly [string, string]> = [
      ["documents × agents", `${DOCUMENTS} × ${AGENTS} = ${DOCUMENTS * AGENTS} pairs`],
      ["launch (POST …/agents/launch/ → 202)", `${launchMs} ms`],
      [
        "run started (running, tasks queued)",
        `${(startMs / 1000).toFixed(2)} s, ${queued} tasks (target <= 10 s)`,
      ],
      [
        "dxs peak resident memory",
        `${peak.toFixed(0)} MB (${before.toFixed(0)} MB before the launch; target <= 1024 MB)`,
      ],
    ]
    if (done !== undefined)
      rows.push(
        [
          `run ${done.status} (launch → end)`,
          `${(done.ms / 1000).toFixed(1)} s, ${((DOCUMENTS * AGENTS) / (done.ms / 1000)).toFixed(0)} pairs/s`,
        ],
        ["results written", `${done.results}`],
      )
    printRows(rows)
    const pass = startMs <= 10_000 && peak <= 1024
    console.log(
      `\n${pass ? "PASS" : "FAIL"}: run started in ${(startMs / 1000).toFixed(2)} s (<= 10 s), peak ${peak.toFixed(0)} MB (<= 1024 MB)`,
    )
  } finally {
    await server?.stop()
    await db.destroy()
    await database.stop()
  }
}

/** The project's run (a seeded project has one launch, so one run), if there is one yet. */
const projectRun = (db: Db, projectId: string) =>
  db.selectFrom("runs").select(["id", "status"]).where("project_id", "=", projectId).executeTakeFirst()

/** Waits until the project's run has ended, printing its tasks' progress now and then. */
const untilEnded = async (db: Db, projectId: string, launchStart: number) => {
  let shown = Date.now()
  for (;;) {
    const run = await projectRun(db, projectId)
    if (run === undefined) throw new Error("the launch made no run")
    if (run.status === "succeeded" || run.status === "failed") {
      const ms = Date.now() - launchStart
      const { n } = await db
        .selectFrom("resolution_results")
        .select(sql<number>`count(*)::int`.as("n"))
        .where("project_id", "=", projectId)
        .executeTakeFirstOrThrow()
      return { status: run.status, ms, results: n }
    }
    if (Date.now() - shown > 15_000) {
      shown = Date.now()
      const tasks = await db
        .selectFrom("tasks")
        .select(["kind", "status", sql<number>`count(*)::int`.as("n")])
        .where("run_id", "=", run.id)
        .groupBy(["kind", "status"])
        .orderBy("kind")
        .execute()
      console.log(
        `  ${((Date.now() - launchStart) / 1000).toFixed(0)} s: ${tasks.map((t) => `${t.kind} ${t.status} ${t.n}`).join(", ")}`,
      )
    }
    await new Promise((r) => setTimeout(r, 200))
  }
}

main().catch((e) => {
  console.error(e)
  process.exitCode = 1
})
