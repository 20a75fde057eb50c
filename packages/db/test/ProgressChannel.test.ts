/**
 * The progress channel: committed changes to what a project's progress is read from notify the
 * project's id, once per project per transaction; changes that cannot move the progress notify nothing;
 * a dropped listening connection comes back and says so.
 */
import { randomUUID } from "node:crypto"
import { useTestDatabase } from "@dxs/testing/TestDatabase"
import { sql } from "kysely"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeKysely } from "../src/Db.ts"
import { listenForProgress } from "../src/ProgressChannel.ts"
import { enqueue, heartbeat } from "../src/TaskQueue.ts"

const url = await useTestDatabase()
const db = makeKysely(url, 4)

const received: Array<string> = []
let reconnects = 0
let stop: () => Promise<void>
let org: string

beforeAll(async () => {
  stop = await listenForProgress(
    url,
    (id) => received.push(id),
    () => {
      reconnects++
    },
  )
  org = (
    await db.insertInto("organizations").values({ name: "acme" }).returning("id").executeTakeFirstOrThrow()
  ).id
})

afterAll(async () => {
  await stop?.()
  await db.destroy()
})

const newProject = async () =>
  (
    await db
      .insertInto("projects")
      .values({ organization_id: org, name: randomUUID(), project_modules: "{}" })
      .returning("id")
      .executeTakeFirstOrThrow()
  ).id

const documentRow = (projectId: string) => ({
  project_id: projectId,
  file_name: `${randomUUID()}.pdf`,
  type: "PDF",
  page_count: 1,
  blob_key: randomUUID(),
  content_type: "application/pdf",
  size_bytes: 1,
  sha256: "0",
})

const until = async (what: string, f: () => boolean, timeoutMs = 10_000) => {
  const deadline = Date.now() + timeoutMs
  while (!f()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 20))
  }
}

/**
 * The notifications `change` causes: after it, a marker project is changed and awaited, so everything
 * `change` notified has arrived by then (notifications come in commit order).
 */
const notifiedBy = async (change: () => Promise<unknown>): Promise<Array<string>> => {
  const marker = await newProject()
  await until("the marker's creation", () => received.includes(marker))
  received.length = 0
  await change()
  await db
    .updateTable("projects")
    .set({ output_mapping_status: "success" })
    .where("id", "=", marker)
    .execute()
  await until("the marker", () => received.includes(marker))
  return received.slice(0, received.indexOf(marker))
}

describe("the progress channel", () => {
  it("notifies the project of a document that is added, changes status, or goes", async () => {
    const p = await newProject()
    let doc = ""
    expect(
      await notifiedBy(async () => {
        doc = (
          await db.insertInto("documents").values(documentRow(p)).returning("id").executeTakeFirstOrThrow()
        ).id
      }),
    ).toEqual([p])
    expect(
      await notifiedBy(() =>
        db.updateTable("documents").set({ status: "Processed" }).where("id", "=", doc).execute(),
      ),
    ).toEqual([p])
    expect(await notifiedBy(() => db.deleteFrom("documents").where("id", "=", doc).execute())).toEqual([p])
  })

  it("stays quiet on changes that cannot move the progress", async () => {
    const p = await newProject()
    const doc = (
      await db.insertInto("documents").values(documentRow(p)).returning("id").executeTakeFirstOrThrow()
    ).id
    const task = await enqueue(db, {
      kind: "parse",
      idempotencyKey: `parse:${doc}`,
      payload: { document_id: doc },
      projectId: p,
    })
    await db
      .updateTable("tasks")
      .set({ status: "running", locked_by: "w1", locked_until: sql`now() + interval '1 minute'` })
      .where("id", "=", task.id)
      .execute()
    expect(
      await notifiedBy(async () => {
        await heartbeat(db, task.id, "w1", 60_000)
        await db.updateTable("documents").set({ summary: "a summary" }).where("id", "=", doc).execute()
        await db.updateTable("projects").set({ last_visited_at: sql`now()` }).where("id", "=", p).execute()
      }),
    ).toEqual([])
  })

  it("notifies through agents for the tables keyed by agent, and for tasks, runs and results", async () => {
    const p = await newProject()
    const agent = (
      await db
        .insertInto("agents")
        .values({ project_id: p, name: "Total" })
        .returning("id")
        .executeTakeFirstOrThrow()
    ).id
    const doc = (
      await db.insertInto("documents").values(documentRow(p)).returning("id").executeTakeFirstOrThrow()
    ).id
    expect(
      await notifiedBy(() =>
        db
          .insertInto("extraction_pairs")
          .values({
            agent_id: agent,
            document_id: doc,
            agent_config_version: 1,
            document_version: 1,
            dimensions_key: "[]",
          })
          .execute(),
      ),
    ).toEqual([p])
    expect(
      await notifiedBy(() =>
        db.insertInto("agent_resolutions").values({ agent_id: agent, agent_config_version: 1 }).execute(),
      ),
    ).toEqual([p])
    expect(
      await notifiedBy(() =>
        db
          .insertInto("runs")
          .values({ project_id: p, run_number: 1, status: "queued", plan: "{}" })
          .execute(),
      ),
    ).toEqual([p])
    expect(
      await notifiedBy(() =>
        enqueue(db, { kind: "extract", idempotencyKey: randomUUID(), payload: {}, projectId: p }),
      ),
    ).toEqual([p])
    expect(
      await notifiedBy(() =>
        db.updateTable("agents").set({ config_version: 2 }).where("id", "=", agent).execute(),
      ),
    ).toEqual([p])
  })

  it("notifies each project once per transaction, and nothing for a rolled-back one", async () => {
    const p = await newProject()
    const q = await newProject()
    expect(
      await notifiedBy(() =>
        db.transaction().execute(async (trx) => {
          await trx.insertInto("documents").values(documentRow(p)).execute()
          await trx
            .insertInto("documents")
            .values([documentRow(p), documentRow(q), documentRow(p)])
            .execute()
          await trx
            .insertInto("runs")
            .values({ project_id: q, run_number: 1, status: "queued", plan: "{}" })
            .execute()
        }),
      ).then((ids) => ids.sort()),
    ).toEqual([p, q].sort())
    expect(
      await notifiedBy(async () => {
        await db
          .transaction()
          .execute(async (trx) => {
            await trx.insertInto("documents").values(documentRow(p)).execute()
            throw new Error("rollback")
          })
          .catch(() => undefined)
      }),
    ).toEqual([])
  })

  it("comes back after its connection is cut, and says so", async () => {
    const cut = await sql<{
      n: number
    }>`select count(pg_terminate_backend(pid))::int as n from pg_stat_activity
      where datname = current_database() and application_name = 'dxs listen dxs_progress'`.execute(db)
    expect(cut.rows[0]!.n).toBe(1)
    await until("the reconnection", () => reconnects === 1, 15_000)
    const p = await newProject()
    expect(
      await notifiedBy(() =>
        db.updateTable("projects").set({ output_mapping_status: "failed" }).where("id", "=", p).execute(),
      ),
    ).toEqual([p])
  })
})
