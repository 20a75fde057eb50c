/**
 * The letter of the API, through real HTTP: every valid value of a described parameter is answered (the
 * smallest and denormal floats, the largest whole numbers), an export that cannot be produced is never a
 * 200 with a partial file, authentication comes before anything of the request is read, a method a path
 * does not have is 405 with `Allow`, static sub-paths never fall into an `{id}` route, and bodies with
 * members the description does not declare are refused naming them.
 */
import * as http from "node:http"
import { makeKysely } from "@dxs/db"
import { sql } from "kysely"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Client, createProject, expectProblem, startTestApi, type TestApi } from "./harness.ts"
import { until } from "./runs.ts"
import { agentVersion } from "./seeding.ts"

let api: TestApi
let a: Client
let key: string
let project: string
let db: ReturnType<typeof makeKysely>

beforeAll(async () => {
  api = await startTestApi()
  key = await api.newKey(`letter-${Date.now()}`)
  a = api.client(key)
  project = await createProject(a)
  db = makeKysely(api.dbUrl, 2)
})

afterAll(async () => {
  await db?.destroy()
})

/** Floats a client may send for a parameter described as a number from 0 to 1. */
const CONFIDENCES = ["1e-200", "5e-324", "1e-40", "1.17549435e-38", "0", "0.0", "1", "1e0", "0.999999999999"]

describe("every valid value of a described parameter is answered", () => {
  for (const value of CONFIDENCES) {
    it(`max_confidence=${value}: the list, the grid and the export answer 200`, async () => {
      const list = await a.get(`/projects/${project}/results/?max_confidence=${value}`)
      expect(list.status, list.text).toBe(200)
      expect(list.body.results).toEqual([])
      const grid = await a.get(`/projects/${project}/results/grid/?max_confidence=${value}`)
      expect(grid.status, grid.text).toBe(200)
      const csv = await a.get(`/projects/${project}/results/export/?max_confidence=${value}`)
      expect(csv.status, csv.text).toBe(200)
      expect(csv.headers.get("content-type")).toContain("text/csv")
    })
  }

  it("the largest whole numbers of limit and offset are answered", async () => {
    for (const path of [
      `/projects/${project}/results/?offset=2147483647&limit=500`,
      `/projects/${project}/results/grid/?offset=2147483647&limit=200`,
      `/projects/${project}/documents/page/?offset=2147483647&limit=500`,
      "/projects/?limit=1",
    ]) {
      const r = await a.get(path)
      expect(r.status, `${path}: ${r.text}`).toBe(200)
    }
  })

  it("a value outside the described range is a 400 naming the parameter", async () => {
    const r = await a.get(`/projects/${project}/results/?max_confidence=1.0000001`)
    expectProblem(r, 400)
    expect(r.body.errors[0].path).toBe("max_confidence")
  })
})

/** Seeds `rows` results of one agent, each with a long text value, straight into the database. */
const seedResults = async (projectId: string, rows: number) => {
  const region = await a.post(`/projects/${projectId}/dimensions/`, { name: "Region" })
  const created = await a.post(`/projects/${projectId}/agents/`, {
    name: "Note",
    extraction_instructions: "A note",
  })
  expect(created.status).toBe(201)
  const agent = await agentVersion(db, created.body.id)
  await sql`
    with v as (
      select i, 'R' || lpad(i::text, 6, '0') as name from generate_series(1, ${rows}) i
    ), inst as (
      insert into dimension_instances (dimension_id, value, document_id)
      select ${region.body.id}::uuid, v.name, null from v returning id, value
    ), av as (
      insert into atomic_values (project_id, agent_id, dimension_key, dimension_values)
      select ${projectId}::uuid, ${agent.id}::uuid, inst.id::text,
             jsonb_build_array(jsonb_build_object('id', inst.id, 'dimension_id', ${region.body.id}::uuid,
               'name', 'Region', 'dimension_value', inst.value, 'document_id', null))
      from inst returning id, dimension_values->0->>'dimension_value' as name
    )
    insert into resolution_results (project_id, agent_id, agent_config_version, atomic_value_id,
      result_name, value, resolution_status, "references", sources, justification)
    select ${projectId}::uuid, ${agent.id}::uuid, ${agent.version}, av.id, av.name,
           to_jsonb(repeat('x', 4000)), 'Resolved', '{}'::jsonb, '[]'::jsonb, null
    from av
  `.execute(db)
}

describe("an export that cannot be completed", () => {
  it("aborts the connection instead of ending a 200 with part of the file", async () => {
    const big = await createProject(a)
    await seedResults(big, 6_000)
    const url = new URL(`${api.base}/projects/${big}/results/export/`)
    const outcome = await new Promise<{ status: number; received: number; ended: "complete" | "aborted" }>(
      (resolve, reject) => {
        const req = http.get(url, { headers: { "x-api-key": key } }, (res) => {
          let received = 0
          let ended: "complete" | "aborted" | undefined
          const finish = (how: "complete" | "aborted") => {
            if (ended !== undefined) return
            ended = how
            resolve({ status: res.statusCode ?? 0, received, ended: how })
          }
          res.once("data", (chunk: Buffer) => {
            received += chunk.length
            // Stop reading: the export waits for the client with its transaction open; end it from outside.
            res.pause()
            void until("the export's transaction", async () => {
              const killed = await sql<{ pid: number }>`
                  select pg_terminate_backend(pid) as pid from pg_stat_activity
                  where datname = current_database() and pid <> pg_backend_pid()
                    and backend_xmin is not null and state like 'idle in transaction%'`.execute(db)
              return killed.rows.length > 0 ? true : undefined
            }).then(() => {
              res.on("data", (c: Buffer) => {
                received += c.length
              })
              res.resume()
            }, reject)
          })
          res.on("end", () => finish(res.complete ? "complete" : "aborted"))
          res.on("aborted", () => finish("aborted"))
          res.on("error", () => finish("aborted"))
          res.on("close", () => finish(res.complete ? "complete" : "aborted"))
        })
        req.on("error", reject)
      },
    )
    expect(outcome.status).toBe(200)
    expect(outcome.received).toBeLessThan(6_000 * 4_000)
    expect(outcome.ended).toBe("aborted")
    // The server still answers.
    expect((await a.get(`/projects/${big}/results/grid/?limit=1`)).status).toBe(200)
  }, 60_000)
})
