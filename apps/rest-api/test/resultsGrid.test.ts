/**
 * The results grid and its export through HTTP, over a project whose results are written straight into
 * the database: rows per combination of dimension values, paging, each sort and filter, 400 for each bad
 * parameter, answers checked against the OpenAPI description, the CSV parsed back and the XLSX read back
 * with exceljs.
 */
import { randomUUID } from "node:crypto"
import { makeKysely } from "@dxs/db"
import { parseCsv } from "@dxs/testing/Csv"
import { type Client, createProject, expectProblem } from "@dxs/testing/RestClient"
import { agentVersion, projectRows } from "@dxs/testing/Seeding"
import ExcelJS from "exceljs"
import { sql } from "kysely"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { compileDescription, type Description, expectDescribed } from "./description.ts"
import { startTestApi, type TestApi } from "./harness.ts"

let api: TestApi
let a: Client
let b: Client
let db: ReturnType<typeof makeKysely>
let description: Description

const TRICKY = 'Says "hi", then\nleaves'

const s = {} as {
  project: string
  total: string
  note: string
  law: string
  contract: string
  rr: Record<string, string>
}

const createAgent = async (project: string, body: Record<string, unknown>) => {
  const r = await a.post(`/projects/${project}/agents/`, body)
  expect(r.status, JSON.stringify(r.body)).toBe(201)
  return agentVersion(db, r.body.id)
}

beforeAll(async () => {
  api = await startTestApi()
  a = api.client(await api.newKey("acme"))
  b = api.client(await api.newKey("globex"))
  db = makeKysely(api.dbUrl, 2)
  description = compileDescription((await a.get("/schema/?format=json")).body)

  s.project = await createProject(a, { name: `Grid ${randomUUID().slice(0, 6)} é` })
  const { contract, instance, atomicValue, result } = projectRows(db, s.project)
  s.contract = await contract("Second page")
  const region = await a.post(`/projects/${s.project}/dimensions/`, { name: "Region" })
  expect(region.status).toBe(201)

  const total = await createAgent(s.project, {
    name: "Total",
    extraction_instructions: "The total",
    value_type: "number",
    unit: "EUR",
  })
  const note = await createAgent(s.project, { name: "Note", extraction_instructions: "A note" })
  const law = await createAgent(s.project, { name: "Law", extraction_instructions: "Governing law" })
  s.total = total.id
  s.note = note.id
  s.law = law.id

  const eu = await instance(region.body.id, "Region", "EU")
  const us = await instance(region.body.id, "Region", "US")
  const apac = await instance(region.body.id, "Region", "APAC")
  const source = (page: number) => ({
    document_name: "contract.pdf",
    page_number: page,
    document_id: s.contract,
    atomic_value_ids: [],
  })
  s.rr = {
    totalEu: await result(total, await atomicValue(total.id, [eu]), {
      result_name: "EU",
      value: 1234.5,
      resolution_status: "Resolved",
      confidence: 0.9,
      sources: JSON.stringify([source(1), source(2)]),
    }),
    totalUs: await result(total, await atomicValue(total.id, [us]), {
      result_name: "US",
      value: 99,
      resolution_status: "Requires attention",
      confidence: 0.3,
    }),
    totalApac: await result(total, await atomicValue(total.id, [apac]), {
      result_name: "APAC",
      value: null,
      resolution_status: "Not resolved",
    }),
    noteEu: await result(note, await atomicValue(note.id, [eu]), {
      result_name: "EU",
      value: TRICKY,
      resolution_status: "Resolved",
      confidence: 0.8,
    }),
    noteUs: await result(note, await atomicValue(note.id, [us]), {
      result_name: "US",
      value: "beta",
      resolution_status: "Resolved",
      confidence: 0.7,
      is_overridden: true,
    }),
    law: await result(law, await atomicValue(law.id, []), {
      result_name: "Law",
      value: "New York",
      resolution_status: "Resolved",
      confidence: 1,
      sources: JSON.stringify([source(1)]),
    }),
  }
})

afterAll(async () => {
  await db?.destroy()
})

const grid = async (query = "") => {
  const r = await a.get(`/projects/${s.project}/results/grid/${query}`)
  expect(r.status, JSON.stringify(r.body)).toBe(200)
  expectDescribed(description, r.body, "get", "/api/v1/projects/{project_id}/results/grid/", 200)
  return r.body
}

const names = (body: any) => (body.rows as Array<any>).map((r) => r.name)

describe("GET /projects/{id}/results/grid/", () => {
  it("gives one row per combination of dimension values and a column per agent, oldest first", async () => {
    const body = await grid()
    expect(body.count).toBe(4)
    expect(body.next).toBeNull()
    expect(body.previous).toBeNull()
    expect(body.columns).toEqual([
      { agent_id: s.total, agent_name: "Total", value_type: "number", unit: "EUR" },
      { agent_id: s.note, agent_name: "Note", value_type: "string", unit: null },
      { agent_id: s.law, agent_name: "Law", value_type: "string", unit: null },
    ])
    expect(names(body)).toEqual(["All documents", "APAC", "EU", "US"])
    const eu = body.rows[2]
    expect(eu).toEqual({
      key: expect.stringMatching(/^[0-9a-f-]{36}$/),
      name: "EU",
      dimension_values: { Region: "EU" },
      cells: {
        [s.total]: {
          resolution_result_id: s.rr.totalEu,
          value: 1234.5,
          resolution_status: "Resolved",
          confidence: expect.closeTo(0.9, 5),
          is_overridden: false,
          latest_review_status: null,
          source: "model",
        },
        [s.note]: {
          resolution_result_id: s.rr.noteEu,
          value: TRICKY,
          resolution_status: "Resolved",
          confidence: expect.closeTo(0.8, 5),
          is_overridden: false,
          latest_review_status: null,
          source: "model",
        },
      },
    })
    expect(body.rows[0]).toMatchObject({ name: "All documents", dimension_values: {} })
    // Each row has its own key.
    expect(new Set(body.rows.map((r: any) => r.key)).size).toBe(4)
    expect(Object.keys(body.rows[0].cells)).toEqual([s.law])
    expect(body.rows[1].cells[s.total]).toMatchObject({ value: null, resolution_status: "Not resolved" })
    expect(body.rows[1].cells[s.note]).toBeUndefined()
    expect(body.rows[3].cells[s.note]).toMatchObject({ is_overridden: true, source: "manual" })
  })

  it("pages by rows with next and previous links that keep the filters and sort", async () => {
    const first = await grid("?limit=2&sort=-name")
    expect(first.count).toBe(4)
    expect(names(first)).toEqual(["US", "EU"])
    expect(first.previous).toBeNull()
    expect(first.next).toMatch(/^\?sort=-name&limit=2&cursor=[A-Za-z0-9_-]+$/)
    const second = await grid(first.next)
    expect(names(second)).toEqual(["APAC", "All documents"])
    expect(second.next).toBeNull()
    expect(second.previous).toBe("?sort=-name&limit=2&offset=0")
    // One row at a time, forwards then backwards, by each sort: the same rows as one page, each once.
    for (const sort of ["name", "-name", `agent:${s.total}`, `-agent:${s.total}`, `agent:${s.note}`]) {
      const all = names(await grid(`?sort=${sort}`))
      const forwards: Array<string> = []
      let page = await grid(`?sort=${sort}&limit=1`)
      forwards.push(...names(page))
      while (page.next !== null) {
        page = await grid(page.next)
        forwards.push(...names(page))
      }
      expect(forwards).toEqual(all)
      const backwards: Array<string> = [...names(page)]
      while (page.previous !== null) {
        page = await grid(page.previous)
        backwards.unshift(...names(page))
      }
      expect(backwards).toEqual(all)
    }
    const beyond = await grid("?offset=10")
    expect(beyond.count).toBe(4)
    expect(beyond.rows).toEqual([])
    // Filtered by what the tallies do not count (its count read with the page's rows): every page counts
    // all the rows that pass, a page past them too.
    for (const sort of ["name", "-name"]) {
      const all = await grid(`?search=e&sort=${sort}`)
      expect(all.count).toBeGreaterThan(1)
      const forwards: Array<string> = []
      let page = await grid(`?search=e&sort=${sort}&limit=1`)
      forwards.push(...names(page))
      while (page.next !== null) {
        page = await grid(page.next)
        expect(page.count).toBe(all.count)
        forwards.push(...names(page))
      }
      expect(forwards).toEqual(names(all))
      const backwards: Array<string> = [...names(page)]
      while (page.previous !== null) {
        page = await grid(page.previous)
        expect(page.count).toBe(all.count)
        backwards.unshift(...names(page))
      }
      expect(backwards).toEqual(names(all))
      const past = await grid(`?search=e&sort=${sort}&offset=10`)
      expect(past.count).toBe(all.count)
      expect(past.rows).toEqual([])
    }
  })

  it("sorts by name and by an agent's value, rows without a value last in both directions", async () => {
    expect(names(await grid("?sort=name"))).toEqual(["All documents", "APAC", "EU", "US"])
    expect(names(await grid("?sort=-name"))).toEqual(["US", "EU", "APAC", "All documents"])
    // numbers numerically (99 before 1234.5, which text would not give)
    expect(names(await grid(`?sort=agent:${s.total}`))).toEqual(["US", "EU", "All documents", "APAC"])
    expect(names(await grid(`?sort=-agent:${s.total}`))).toEqual(["EU", "US", "All documents", "APAC"])
    // text case-insensitively: "beta" before "Says…"
    expect(names(await grid(`?sort=agent:${s.note}`))).toEqual(["US", "EU", "All documents", "APAC"])
    expect(names(await grid(`?sort=-agent:${s.note}`))).toEqual(["EU", "US", "All documents", "APAC"])
    expect(names(await grid(`?sort=-agent:${s.law}`))).toEqual(["All documents", "APAC", "EU", "US"])
  })

  it("filters rows by their cells and searches names, dimension values and values", async () => {
    expect(names(await grid(`?agent_id=${s.law}`))).toEqual(["All documents"])
    expect(names(await grid("?resolution_status=Requires%20attention"))).toEqual(["US"])
    expect(names(await grid("?resolution_status=Not%20resolved"))).toEqual(["APAC"])
    expect(names(await grid("?dimension_value=EU"))).toEqual(["EU"])
    // part of a value, ignoring case, is enough in the grid; LIKE's wildcards are plain characters
    expect(names(await grid("?dimension_value=pa"))).toEqual(["APAC"])
    expect(names(await grid("?dimension_value=u"))).toEqual(["EU", "US"])
    expect((await grid("?dimension_value=%25")).count).toBe(0)
    expect(names(await grid("?max_confidence=0.3"))).toEqual(["US"])
    // all cell filters hold for one cell: Note's US cell is Resolved
    expect((await grid(`?agent_id=${s.note}&resolution_status=Requires%20attention`)).count).toBe(0)
    expect(names(await grid(`?agent_id=${s.total}&resolution_status=Requires%20attention`))).toEqual(["US"])
    expect(names(await grid("?search=new%20YORK"))).toEqual(["All documents"])
    expect(names(await grid("?search=apac"))).toEqual(["APAC"])
    expect(names(await grid("?search=1234"))).toEqual(["EU"])
    expect(names(await grid("?search=%22hi%22"))).toEqual(["EU"])
    expect((await grid("?search=%25")).count).toBe(0)
    const filtered = await grid("?search=e&limit=1")
    expect(filtered.next).toMatch(/^\?search=e&limit=1&cursor=/)
    const all = names(await grid("?search=e"))
    expect(names(filtered)).toEqual(all.slice(0, 1))
    expect(names(await grid(filtered.next))).toEqual(all.slice(1, 2))
  })

  it("answers 400 naming each bad parameter, 404 for another organisation's project", async () => {
    const bad: Array<[string, string]> = [
      ["limit=0", "limit"],
      ["limit=501", "limit"],
      ["offset=-1", "offset"],
      ["sort=value", "sort"],
      [`sort=agent:${randomUUID()}`, "sort"],
      ["resolution_status=Bogus", "resolution_status"],
      ["max_confidence=2", "max_confidence"],
      ["agent_id=nope", "agent_id"],
      ["search=", "search"],
      ["review_status=maybe", "review_status"],
      ["source=robot", "source"],
      [`search=${"x".repeat(201)}`, "search"],
    ]
    for (const [query, field] of bad) {
      const r = await a.get(`/projects/${s.project}/results/grid/?${query}`)
      expectProblem(r, 400)
      expect(JSON.stringify(r.body), query).toContain(field)
    }
    expectProblem(await b.get(`/projects/${s.project}/results/grid/`), 404)
    expectProblem(await a.get(`/projects/${randomUUID()}/results/export/`), 404)
    const format = await a.get(`/projects/${s.project}/results/export/?format=pdf`)
    expectProblem(format, 400)
    expect(format.body.detail).toContain("format")
  })
})

const HEADER = [
  "Row",
  "Document",
  "Region",
  "Total",
  "Total status",
  "Total citations",
  "Note",
  "Note status",
  "Note citations",
  "Law",
  "Law status",
  "Law citations",
]

describe("GET /projects/{id}/results/export/", () => {
  it("streams the grid as CSV with a BOM, values with units, statuses and citations", async () => {
    const res = await fetch(`${api.base}/projects/${s.project}/results/export/`, {
      headers: { "x-api-key": await api.newKey("acme") },
    })
    expect(res.status).toBe(200)
    expect(res.headers.get("content-type")).toBe("text/csv; charset=utf-8")
    const project = (await a.get(`/projects/${s.project}/`)).body
    const disposition = res.headers.get("content-disposition") ?? ""
    expect(disposition).toMatch(/^attachment; filename="Grid [^"]+ _-results\.csv"/)
    expect(disposition).toContain(`filename*=UTF-8''${encodeURIComponent(`${project.name}-results.csv`)}`)
    const bytes = new Uint8Array(await res.arrayBuffer())
    expect([...bytes.slice(0, 3)]).toEqual([0xef, 0xbb, 0xbf])
    const rows = parseCsv(new TextDecoder().decode(bytes.slice(3)))
    expect(rows).toEqual([
      HEADER,
      ["All documents", "", "", "", "", "", "", "", "", "New York", "Resolved", "contract.pdf p.1"],
      ["APAC", "", "APAC", "", "Not resolved", "", "", "", "", "", "", ""],
      [
        "EU",
        "",
        "EU",
        "1234.5 EUR",
        "Resolved",
        "contract.pdf p.1; contract.pdf p.2",
        TRICKY,
        "Resolved",
        "",
        "",
        "",
        "",
      ],
      ["US", "", "US", "99 EUR", "Requires attention", "", "beta", "Resolved", "", "", "", ""],
    ])
  })

  it("keeps the grid's filters and sort", async () => {
    const r = await a.get(
      `/projects/${s.project}/results/export/?format=csv&sort=-agent:${s.total}&max_confidence=0.95`,
    )
    expect(r.status).toBe(200)
    expect(parseCsv(r.text.replace(/^\uFEFF/, "")).map((row) => row[0])).toEqual(["Row", "EU", "US"])
  })

  it("writes an XLSX workbook that exceljs reads back", async () => {
    const res = await fetch(`${api.base}/projects/${s.project}/results/export/?format=xlsx&sort=-name`, {
      headers: { "x-api-key": await api.newKey("acme") },
    })
    expect(res.status).toBe(200)
    expect(res.headers.get("content-type")).toBe(
      "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    )
    expect(res.headers.get("content-disposition")).toContain("-results.xlsx")
    const workbook = new ExcelJS.Workbook()
    await workbook.xlsx.load(await res.arrayBuffer())
    const sheet = workbook.worksheets[0]!
    const values: Array<Array<unknown>> = []
    sheet.eachRow((row) => {
      values.push((row.values as Array<unknown>).slice(1))
    })
    expect(values[0]).toEqual(HEADER)
    expect(values.map((v) => v[0])).toEqual(["Row", "US", "EU", "APAC", "All documents"])
    expect(values[2]!.slice(0, 7)).toEqual([
      "EU",
      undefined,
      "EU",
      "1234.5 EUR",
      "Resolved",
      "contract.pdf p.1; contract.pdf p.2",
      TRICKY,
    ])
  })
})

describe("an export of more rows than one batch", () => {
  it("walks every row once, in the grid's order, for each sort", async () => {
    const project = await createProject(a)
    const region = await a.post(`/projects/${project}/dimensions/`, { name: "Region" })
    const agent = await createAgent(project, {
      name: "Amount",
      extraction_instructions: "An amount",
      value_type: "number",
    })
    const rows = 2_600
    // Values repeat (ties broken by name) and every seventh row has none.
    await sql`
      with v as (
        select i, 'R' || lpad(i::text, 5, '0') as name from generate_series(1, ${rows}) i
      ), inst as (
        insert into dimension_instances (dimension_id, value, document_id)
        select ${region.body.id}::uuid, v.name, null from v returning id, value
      ), av as (
        insert into atomic_values (project_id, agent_id, dimension_key, dimension_values)
        select ${project}::uuid, ${agent.id}::uuid, inst.id::text,
               jsonb_build_array(jsonb_build_object('id', inst.id, 'dimension_id', ${region.body.id}::uuid,
                 'name', 'Region', 'dimension_value', inst.value, 'document_id', null))
        from inst returning id, dimension_values->0->>'dimension_value' as name
      )
      insert into resolution_results (project_id, agent_id, agent_config_version, atomic_value_id,
        result_name, value, resolution_status, "references", sources, justification)
      select ${project}::uuid, ${agent.id}::uuid, ${agent.version}, av.id, av.name,
             case when substr(av.name, 2)::int % 7 = 0 then null else to_jsonb(substr(av.name, 2)::int % 50) end,
             'Resolved', '{}'::jsonb, '[]'::jsonb, null
      from av
    `.execute(db)
    for (const sort of ["name", "-name", `agent:${agent.id}`, `-agent:${agent.id}`]) {
      const paged: Array<string> = []
      for (let offset = 0; offset < rows; offset += 500) {
        const r = await a.get(`/projects/${project}/results/grid/?sort=${sort}&limit=500&offset=${offset}`)
        expect(r.status).toBe(200)
        expect(r.body.count).toBe(rows)
        paged.push(...(r.body.rows as Array<any>).map((row) => row.name as string))
      }
      const csv = await a.get(`/projects/${project}/results/export/?sort=${sort}`)
      expect(csv.status).toBe(200)
      const exported = parseCsv(csv.text.replace(/^\uFEFF/, ""))
        .slice(1)
        .map((row) => row[0])
      expect(exported.length).toBe(rows)
      expect(new Set(exported).size).toBe(rows)
      expect(exported, sort).toEqual(paged)
    }
  })
})

describe("review state in the grid, its counts and the export", () => {
  const review = async (resultId: string | undefined, status: string) => {
    const r = await a.post(`/projects/${s.project}/results/${resultId}/review/`, { status })
    expect(r.status, JSON.stringify(r.body)).toBe(200)
    return r.body
  }

  it("shows each cell's review and source, and filters rows by them", async () => {
    expect(names(await grid("?source=manual"))).toEqual(["US"])
    expect(names(await grid(`?source=model&agent_id=${s.note}`))).toEqual(["EU"])
    expect((await grid("?review_status=positive")).count).toBe(0)
    expect(names(await grid("?review_status=none"))).toEqual(["All documents", "APAC", "EU", "US"])

    await review(s.rr.noteEu, "negative")
    const eu = (await grid("?review_status=negative")).rows
    expect(eu.map((r: any) => r.name)).toEqual(["EU"])
    expect(eu[0].cells[s.note]).toMatchObject({ latest_review_status: "negative", source: "model" })
    // Marked wrong, a resolved value requires attention.
    expect(eu[0].cells[s.note].resolution_status).toBe("Requires attention")
    expect(names(await grid(`?review_status=none&agent_id=${s.note}`))).toEqual(["US"])
    const next = (await grid("?review_status=negative&limit=1")).next
    expect(next).toBeNull()
    expect((await grid("?review_status=positive&limit=1&sort=-name")).count).toBe(0)
  })

  it("a value marked correct no longer requires attention, in the cells and the counts", async () => {
    const before = await grid("?resolution_status=Requires%20attention")
    expect(names(before)).toEqual(["EU", "US"])
    const detail = await review(s.rr.totalUs, "positive")
    expect(detail).toMatchObject({ resolution_status: "Resolved", latest_review_status: "positive" })
    expect(detail.justification_for_resolution_status).toContain("Marked correct")
    const after = await grid("?resolution_status=Requires%20attention")
    expect(after.count).toBe(1)
    expect(names(after)).toEqual(["EU"])
    expect(names(await grid("?review_status=positive"))).toEqual(["US"])
    const us = (await grid("?review_status=positive")).rows[0]
    expect(us.cells[s.total]).toMatchObject({
      resolution_status: "Resolved",
      latest_review_status: "positive",
    })
    // The tallies follow: the agent's count of values requiring attention is 0.
    const status = await a.get(`/projects/${s.project}/agents/status/`)
    expect(status.status).toBe(200)
    expect(status.body.consistency[s.total]).toBeDefined()
    expect((await grid(`?agent_id=${s.total}&resolution_status=Requires%20attention`)).count).toBe(0)
  })

  it("exports confidence and review columns per agent when asked", async () => {
    const r = await a.get(`/projects/${s.project}/results/export/?include=confidence,review&sort=name`)
    expect(r.status).toBe(200)
    const rows = parseCsv(r.text.replace(/^\uFEFF/, ""))
    expect(rows[0]).toEqual([
      "Row",
      "Document",
      "Region",
      ...["Total", "Note", "Law"].flatMap((n) => [
        n,
        `${n} status`,
        `${n} citations`,
        `${n} confidence`,
        `${n} review`,
        `${n} source`,
      ]),
    ])
    const us = rows.find((row) => row[0] === "US")!
    expect(us.slice(3, 15)).toEqual([
      "99 EUR",
      "Resolved",
      "",
      expect.stringMatching(/^0\.3/),
      "positive",
      "model",
      "beta",
      "Resolved",
      "",
      expect.stringMatching(/^0\.7/),
      "none",
      "manual",
    ])
    const eu = rows.find((row) => row[0] === "EU")!
    expect(eu[13]).toBe("negative")
    const bad = await a.get(`/projects/${s.project}/results/export/?include=confidence,secrets`)
    expectProblem(bad, 400)
    expect(bad.body.detail).toContain("include")
  })
})
