/**
 * The letter of the API, through real HTTP: every valid value of a described parameter is answered (the
 * smallest and denormal floats, the largest whole numbers), an export that cannot be produced is never a
 * 200 with a partial file, authentication comes before anything of the request is read, a method a path
 * does not have is 405 with `Allow`, static sub-paths never fall into an `{id}` route, and bodies with
 * members the description does not declare are refused naming them.
 */
import * as http from "node:http"
import { makeKysely } from "@dxs/db"
import { type Client, createProject, expectProblem } from "@dxs/testing/RestClient"
import { until } from "@dxs/testing/Runs"
import { agentVersion } from "@dxs/testing/Seeding"
import { sql } from "kysely"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startTestApi, type TestApi } from "./harness.ts"

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

/** Sends a request as written (no normalisation), with or without a key. */
const send = (
  method: string,
  path: string,
  init: { headers?: Record<string, string>; body?: string | Buffer } = {},
) =>
  new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: any }>((resolve, reject) => {
    const url = new URL(api.origin)
    const req = http.request(
      { host: url.hostname, port: url.port, method, path: `/api/v1${path}`, headers: init.headers ?? {} },
      (res) => {
        const chunks: Array<Buffer> = []
        res.on("data", (c: Buffer) => chunks.push(c))
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8")
          let body: any = text
          try {
            body = JSON.parse(text)
          } catch {}
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body })
        })
      },
    )
    req.on("error", reject)
    req.end(init.body)
  })

const BOUNDARY = "letter-boundary"
const filePart = (field: string, name: string) =>
  `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${field}"; filename="${name}"\r\nContent-Type: application/pdf\r\n\r\n%PDF-1.4\r\n`

describe("authentication comes before anything of the request is read", () => {
  const cases = (): Array<[string, string, string, { headers?: Record<string, string>; body?: string }]> => [
    ["a NUL in a query parameter", "GET", `/projects/${project}/results/?dimension_value=a%00b`, {}],
    ["a malformed percent-escape in a query", "GET", `/projects/?folder_id=%ZZ`, {}],
    ["a path parameter that is not a UUID", "GET", "/projects/not-a-uuid/", {}],
    [
      "a malformed JSON body",
      "POST",
      "/folders/",
      { headers: { "content-type": "application/json" }, body: '{"name":' },
    ],
    [
      "a NUL in a JSON body",
      "POST",
      "/projects/",
      { headers: { "content-type": "application/json" }, body: '{"name":"a\\u0000b"}' },
    ],
    [
      "a body over the size limit",
      "POST",
      "/projects/",
      {
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ name: "x".repeat(1_100_000) }),
      },
    ],
    [
      "a file part where no file is taken",
      "POST",
      "/projects/",
      {
        headers: { "content-type": `multipart/form-data; boundary=${BOUNDARY}` },
        body: `${filePart("name", "a.pdf")}--${BOUNDARY}--\r\n`,
      },
    ],
    [
      "a multipart body without a boundary",
      "POST",
      "/folders/",
      { headers: { "content-type": "multipart/form-data" }, body: "x" },
    ],
    [
      "an upload cut short",
      "POST",
      `/projects/${project}/documents/`,
      {
        headers: { "content-type": `multipart/form-data; boundary=${BOUNDARY}` },
        body: filePart("file", "a.pdf"),
      },
    ],
    [
      "an upload with a NUL in its file name",
      "POST",
      `/projects/${project}/documents/`,
      {
        headers: { "content-type": `multipart/form-data; boundary=${BOUNDARY}` },
        body: `${filePart("file", "a\u0000.pdf")}--${BOUNDARY}--\r\n`,
      },
    ],
    [
      "an unknown body member",
      "POST",
      "/folders/",
      { headers: { "content-type": "application/json" }, body: '{"name":"f","bogus":1}' },
    ],
  ]

  it("without a key: 401 for each", async () => {
    for (const [what, method, path, init] of cases()) {
      const r = await send(method, path, init)
      expect(r.status, `${what}: ${JSON.stringify(r.body)}`).toBe(401)
      expect(r.headers["content-type"]).toContain("application/problem+json")
    }
  })

  it("with an unknown key: 401 for each", async () => {
    for (const [what, method, path, init] of cases()) {
      const r = await send(method, path, {
        ...init,
        headers: { ...init.headers, "x-api-key": "dxs_live_unknown" },
      })
      expect(r.status, `${what}: ${JSON.stringify(r.body)}`).toBe(401)
    }
  })

  it("with a key: the same requests are refused for what they are", async () => {
    for (const [what, method, path, init] of cases()) {
      const r = await send(method, path, { ...init, headers: { ...init.headers, "x-api-key": key } })
      expect([400, 413], `${what}: ${JSON.stringify(r.body)}`).toContain(r.status)
    }
  })

  it("the public description still answers 400 for a bad query, without a key", async () => {
    const r = await send("GET", "/schema/?format=a%00b")
    expect(r.status).toBe(400)
  })
})

describe("a method a path does not have", () => {
  it("is 405 with Allow, for collections, items and static sub-paths", async () => {
    const cases: Array<[string, string, string]> = [
      ["DELETE", "/projects/", "GET, POST"],
      ["PATCH", "/folders/", "GET, POST"],
      ["POST", `/projects/${project}/`, "GET, PATCH, PUT, DELETE"],
      ["GET", `/projects/${project}/documents/bulk/`, "POST"],
      ["DELETE", `/projects/${project}/results/grid/`, "GET"],
      ["POST", `/projects/${project}/results/export/`, "GET"],
      ["PUT", `/projects/${project}/documents/page/`, "GET"],
      ["GET", `/projects/${project}/agents/launch/`, "POST"],
    ]
    for (const [method, path, allow] of cases) {
      const r = await send(method, path, { headers: { "x-api-key": key } })
      expect(r.status, `${method} ${path}: ${JSON.stringify(r.body)}`).toBe(405)
      expect(r.headers["content-type"]).toContain("application/problem+json")
      expect(r.headers.allow?.split(", ").sort(), `${method} ${path}`).toEqual(allow.split(", ").sort())
    }
  })

  it("static sub-paths are never taken for an id", async () => {
    const page = await a.get(`/projects/${project}/documents/page/`)
    expect(page.status).toBe(200)
    const grid = await a.get(`/projects/${project}/results/grid/`)
    expect(grid.status).toBe(200)
  })

  it("an unknown path is 404", async () => {
    const r = await send("GET", "/nothing-here/", { headers: { "x-api-key": key } })
    expect(r.status).toBe(404)
    expect(r.headers["content-type"]).toContain("application/problem+json")
  })
})

describe("bodies: one rule for members the description does not declare, and errors in words", () => {
  it("refuses unknown members with 400 naming them, in JSON, form and multipart bodies", async () => {
    const json = await a.post("/folders/", { name: "f3", bogus: 1 })
    expectProblem(json, 400)
    expect(json.body.errors).toEqual([{ path: "bogus", message: expect.stringContaining("not a member") }])
    const form = await a.send("POST", "/folders/", new URLSearchParams({ name: "f4", bogus: "1" }))
    expectProblem(form, 400)
    expect(form.body.errors[0].path).toBe("bogus")
    const fd = new FormData()
    fd.set("name", "f5")
    fd.set("other", "x")
    const multipart = await a.send("POST", "/folders/", fd)
    expectProblem(multipart, 400)
    expect(multipart.body.errors[0].path).toBe("other")
    const nested = await a.post(`/projects/${project}/agents/`, {
      name: "Nested",
      derived_agent_references: [{ agent_name: "x", extra: true }],
    })
    expectProblem(nested, 400)
    expect(nested.body.errors[0].path).toBe("derived_agent_references/0/extra")
    const folders = await a.get("/folders/")
    expect((folders.body as Array<any>).map((f) => f.name)).not.toContain("f3")
  })

  it("an empty folder_id in JSON is refused, not stored as null; in a form it is the form's null", async () => {
    const json = await a.post("/projects/", { name: "Empty folder", folder_id: "" })
    expectProblem(json, 400)
    expect(json.body.errors[0].path).toBe("folder_id")
    const form = await a.send(
      "POST",
      "/projects/",
      new URLSearchParams({ name: "Form folder", folder_id: "" }),
    )
    expect(form.status).toBe(201)
    expect(form.body.folder_id).toBeNull()
  })

  it("messages speak of the field and the rule, not of internal types", async () => {
    const description = await a.post("/projects/", { name: "Typed", description: 5 })
    expectProblem(description, 400)
    expect(description.body.errors).toEqual([{ path: "description", message: "must be a string (got 5)" }])
    const folder = await a.post("/projects/", { name: "Typed", folder_id: 5 })
    expectProblem(folder, 400)
    expect(folder.body.errors).toEqual([{ path: "folder_id", message: "must be a string or null (got 5)" }])
    const days = await a.patch(`/projects/${project}/`, { auto_archive_after_days: "x" })
    expectProblem(days, 400)
    expect(days.body.errors).toEqual([
      {
        path: "auto_archive_after_days",
        message: 'must be a number or null (got "x")',
      },
    ])
    const name = await a.post("/folders/", { name: null })
    expect(name.body.errors).toEqual([{ path: "name", message: "must be a string (got null)" }])
    for (const r of [description, folder, days, name]) {
      expect(r.text).not.toMatch(/ReadonlyArray|undefined|readonly/)
    }
  })

  it("a date that does not exist is a 400 naming the field", async () => {
    const r = await a.post("/projects/", { name: "Leap", reference_date: "2023-02-29" })
    expectProblem(r, 400)
    expect(r.body.errors[0]).toEqual({
      path: "reference_date",
      message: expect.stringContaining("real calendar date"),
    })
  })
})

describe("the description states the rules the server enforces", () => {
  const resolve = (doc: any, schema: any): any =>
    schema?.$ref === undefined ? schema : resolve(doc, doc.components.schemas[schema.$ref.split("/").pop()])
  const property = (doc: any, component: string, name: string) => {
    const s = resolve(doc, doc.components.schemas[component].properties[name])
    return s.anyOf
      ? resolve(
          doc,
          s.anyOf.find((v: any) => v.type !== "null"),
        )
      : s
  }
  const parameter = (doc: any, path: string, name: string) =>
    doc.paths[path].get.parameters.find((p: any) => p.name === name)

  it("names, dates, URLs, events, tags, search, export format and the tag filter", async () => {
    const doc = (await a.get("/schema/?format=json")).body
    for (const [component, name] of [
      ["V1FolderCreate", "name"],
      ["V1ProjectCreate", "name"],
      ["V1AgentCreate", "name"],
      ["V1DimensionCreate", "name"],
    ] as const) {
      const s = property(doc, component, name)
      expect(s, `${component}.${name}`).toMatchObject({
        minLength: 1,
        maxLength: 200,
        pattern: expect.any(String),
      })
      const pattern = new RegExp(s.pattern, "u")
      expect(pattern.test("   ")).toBe(false)
      expect(pattern.test("a\u0000b")).toBe(false)
      expect(pattern.test("Invoice total")).toBe(true)
    }
    expect(property(doc, "V1ProjectCreate", "reference_date")).toMatchObject({ format: "date" })
    expect(property(doc, "V1WebhookSubscriptionCreate", "url")).toMatchObject({
      pattern: "^[Hh][Tt][Tt][Pp][Ss]://",
    })
    expect(property(doc, "V1WebhookSubscriptionCreate", "subscribed_events")).toMatchObject({ minItems: 1 })
    const grid = "/api/v1/projects/{project_id}/results/grid/"
    expect(parameter(doc, grid, "search").schema).toMatchObject({ minLength: 1, maxLength: 200 })
    const exported = "/api/v1/projects/{project_id}/results/export/"
    expect(parameter(doc, exported, "format").schema).toMatchObject({ enum: ["csv", "xlsx"] })
    const list = "/api/v1/projects/{project_id}/documents/"
    expect(parameter(doc, list, "tag_key").description).toContain("Both or neither")
    expect(doc.info.description).toContain("any other member is refused with 400")
  })
})
