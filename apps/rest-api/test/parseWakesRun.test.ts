/**
 * No idle wait between parsing and a queued run: the commit that finishes the last parse of a project makes
 * the start task of its queued run due at once (and notifies the workers), where it would otherwise have
 * waited for its next look. No worker runs here: the parse tasks are claimed and run by hand, so each
 * step's effect on the queue can be seen.
 */
import { fileBlobStore, makeKysely } from "@dxs/db"
import * as TaskQueue from "@dxs/db/TaskQueue"
import { PARSE_TASK, parseTaskHandler } from "@dxs/pipeline/parsing/ParseDocument"
import { RUN_START_TASK } from "@dxs/pipeline/run/Runs"
import { type Client, createProject } from "@dxs/testing/RestClient"
import { sql } from "kysely"
import { afterAll, beforeAll, expect, it } from "vitest"
import { runTaskHandler, startTestApi, type TestApi } from "./harness.ts"

let api: TestApi
let a: Client
let db: ReturnType<typeof makeKysely>

beforeAll(async () => {
  api = await startTestApi()
  a = api.client(await api.newKey("acme"))
  db = makeKysely(api.dbUrl, 2)
})

afterAll(async () => {
  await db?.destroy()
})

const upload = async (projectId: string, name: string, text: string) => {
  const form = new FormData()
  form.append("file", new Blob([text]), name)
  const r = await a.send("POST", `/projects/${projectId}/documents/`, form)
  expect(r.status).toBe(201)
  return r.body.id as string
}

/** Claims the project's next parse task and runs its handler to the end, as a worker would. */
const parseOne = async (projectId: string) => {
  const workerId = "by-hand"
  const [task] = await TaskQueue.claim(db, { workerId, kinds: [PARSE_TASK], leaseMs: 60_000 })
  expect(task?.project_id).toBe(projectId)
  await runTaskHandler(parseTaskHandler({ blobs: fileBlobStore(api.blobDir) }), task!, {
    workerId,
    db,
    signal: new AbortController().signal,
    complete: async (trx) => {
      expect(await TaskQueue.complete(trx, task!.id, workerId)).toBe(true)
    },
  })
}

/** Whether the project's run-start task is due now (database clock), and its status. */
const runStart = async (projectId: string) =>
  db
    .selectFrom("tasks")
    .select(["status", sql<boolean>`run_after <= now()`.as("due")])
    .where("kind", "=", RUN_START_TASK)
    .where("project_id", "=", projectId)
    .executeTakeFirstOrThrow()

it("the commit of a project's last parse makes its queued run's start due at once, not an earlier one", async () => {
  const projectId = await createProject(a)
  const first = await upload(projectId, "first.txt", "Invoice INV-1. Total amount due: EUR 10.00")
  await upload(projectId, "second.txt", "Invoice INV-2. Total amount due: EUR 20.00")
  expect(
    (
      await a.post(`/projects/${projectId}/agents/`, {
        name: "Total",
        extraction_instructions: "Total amount due",
      })
    ).status,
  ).toBe(201)
  expect((await a.post(`/projects/${projectId}/agents/launch/`)).status).toBe(202)
  // As after the run's start looked while parsing was in flight: it is not due for a long while.
  await db
    .updateTable("tasks")
    .set({ run_after: sql`now() + interval '1 hour'` })
    .where("kind", "=", RUN_START_TASK)
    .where("project_id", "=", projectId)
    .execute()

  await parseOne(projectId)
  // One parse is still in flight: the run keeps waiting.
  expect(await runStart(projectId)).toEqual({ status: "pending", due: false })

  await parseOne(projectId)
  expect(await runStart(projectId)).toEqual({ status: "pending", due: true })
  const docs = await a.get(`/projects/${projectId}/documents/`)
  expect(docs.body.map((d: { status: string }) => d.status)).toEqual(["Processed", "Processed"])
  expect(docs.body.some((d: { id: string }) => d.id === first)).toBe(true)
})
