/**
 * Launch rule 6 and DESIGN §3: a launch during a run is queued, a further launch joins the queued run,
 * one run at a time per project, and the queued run starts when the running one ends. The model is the
 * local one, slowed down so a run lasts long enough to launch during it.
 */
import { makeKysely } from "@dxs/db"
import { localModel } from "@dxs/pipeline/llm/Local"
import { invoice } from "@dxs/testing/Documents"
import { type Client, createProject } from "@dxs/testing/RestClient"
import { until } from "@dxs/testing/Runs"
import { Duration, Effect } from "effect"
import { afterAll, beforeAll, expect, it } from "vitest"
import { startTestApi, type TestApi } from "./harness.ts"

let api: TestApi
let a: Client
let db: ReturnType<typeof makeKysely>

beforeAll(async () => {
  api = await startTestApi({
    worker: {
      model: {
        ...localModel,
        // Extraction asks once per document (`extractDocument`); `extract` is slowed as well for any
        // single-agent request.
        extract: (request) => Effect.delay(localModel.extract(request), Duration.millis(400)),
        extractDocument: (request) => Effect.delay(localModel.extractDocument(request), Duration.millis(400)),
      },
    },
  })
  a = api.client(await api.newKey("acme"))
  db = makeKysely(api.dbUrl, 2)
})

afterAll(async () => {
  await db?.destroy()
})

const runs = (projectId: string) =>
  db.selectFrom("runs").selectAll().where("project_id", "=", projectId).orderBy("run_number").execute()

it("launches during a run queue one run behind it, which starts when the first ends", async () => {
  const projectId = await createProject(a)
  for (const n of [1, 2, 3]) {
    const form = new FormData()
    const pdf = await invoice({
      number: `INV-${n}`,
      date: "May 1, 2024",
      seller: "Acme Supplies Inc.",
      currency: "USD",
      subtotal: "$1.00",
      tax: "$0.00",
      total: `$${n}.00`,
    })
    form.append("file", new Blob([pdf as Uint8Array<ArrayBuffer>]), `invoice-${n}.pdf`)
    expect((await a.send("POST", `/projects/${projectId}/documents/`, form)).status).toBe(201)
  }
  await until("the condition", async () => {
    const r = await a.get(`/projects/${projectId}/documents/`)
    return r.body.every((d: any) => d.status === "Processed") ? true : undefined
  })
  const agent = await a.post(`/projects/${projectId}/agents/`, {
    name: "Total",
    extraction_instructions: "Total due",
  })
  expect(agent.status).toBe(201)

  expect((await a.post(`/projects/${projectId}/agents/launch/`)).status).toBe(202)
  await until("the condition", async () =>
    (await runs(projectId))[0]?.status === "running" ? true : undefined,
  )
  // The agent changes during the run: the queued run will re-extract it.
  await a.patch(`/projects/${projectId}/agents/${agent.body.id}/`, {
    extraction_instructions: "The total due",
  })
  expect((await a.post(`/projects/${projectId}/agents/launch/`)).status).toBe(202)
  expect((await a.post(`/projects/${projectId}/agents/launch/`)).status).toBe(202)
  const during = await runs(projectId)
  expect(during.map((r) => [r.run_number, r.status])).toEqual([
    [1, "running"],
    [2, "queued"],
  ])
  expect((await a.get(`/projects/${projectId}/status/`)).body.pipeline_running).toBe(true)
  const status = await a.get(`/projects/${projectId}/agents/status/`)
  expect(status.body.pipeline_running).toBe(true)

  await until("the condition", async () =>
    (await a.get(`/projects/${projectId}/status/`)).body.pipeline_running ? undefined : true,
  )
  const after = await runs(projectId)
  expect(after.map((r) => [r.run_number, r.status])).toEqual([
    [1, "succeeded"],
    [2, "succeeded"],
  ])
  // Never two runs at once: the second started after the first finished.
  expect(new Date(after[1]!.started_at!).getTime()).toBeGreaterThanOrEqual(
    new Date(after[0]!.finished_at!).getTime(),
  )
  const events = await db
    .selectFrom("events")
    .select(["type", "data"])
    .where("project_id", "=", projectId)
    .orderBy("seq")
    .execute()
  expect(events.map((e) => [e.type, (e.data as any).run_number])).toEqual([
    ["agent.completion.succeeded", 1],
    ["agent.completion.succeeded", 2],
  ])
  const final = await a.get(`/projects/${projectId}/agents/${agent.body.id}/`)
  expect(final.body.extraction_status).toBe("Processed")
}, 180_000)
