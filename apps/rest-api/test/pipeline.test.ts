/**
 * The extraction pipeline end to end through the REST API, with a worker loop in this process and the
 * default `local` language model: upload invoices and a contract, create extraction, dimensioned,
 * calculated, derived and evaluation agents, launch, poll, read values with page citations and
 * consistency flags; relaunch (nothing re-extracted); change one agent (only it re-extracted).
 */
import { makeKysely } from "@dxs/db"
import { contract, invoice, textPdf } from "@dxs/testing/Documents"
import { type Client, createProject, expectProblem } from "@dxs/testing/RestClient"
import { createAgent, launchAndWait, resultsOf, until, upload, waitProcessed } from "@dxs/testing/Runs"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startTestApi, type TestApi } from "./harness.ts"

let api: TestApi
let a: Client
let db: ReturnType<typeof makeKysely>

beforeAll(async () => {
  api = await startTestApi({ worker: {} })
  a = api.client(await api.newKey("acme"))
  db = makeKysely(api.dbUrl, 2)
})

afterAll(async () => {
  await db?.destroy()
})

const runs = (projectId: string) =>
  db.selectFrom("runs").selectAll().where("project_id", "=", projectId).orderBy("run_number").execute()

const tasksOf = (runId: string, kind: string) =>
  db.selectFrom("tasks").selectAll().where("run_id", "=", runId).where("kind", "=", kind).execute()

describe("a launched run over invoices and a contract", () => {
  let projectId: string
  const ids: Record<string, string> = {}
  const agents: Record<string, { id: string; name: string }> = {}

  beforeAll(async () => {
    projectId = await createProject(a, { reference_date: "2024-06-30" })
    ids.a = await upload(
      a,
      projectId,
      "invoice-a.pdf",
      await invoice({
        number: "INV-1001",
        date: "March 3, 2024",
        seller: "Acme Supplies Inc.",
        currency: "USD",
        subtotal: "$1,000.00",
        tax: "$200.00",
        total: "$1,200.00",
      }),
    )
    ids.b = await upload(
      a,
      projectId,
      "invoice-b.pdf",
      await invoice({
        number: "INV-2002",
        date: "April 9, 2024",
        seller: "Acme Supplies Inc.",
        currency: "EUR",
        subtotal: "2.000,00 EUR",
        tax: "400,00 EUR",
        total: "2.400,00 EUR",
      }),
    )
    ids.nda = await upload(
      a,
      projectId,
      "nda.pdf",
      await contract({
        partyA: "Acme Supplies Inc.",
        partyB: "Globex Corporation",
        state: "Delaware",
        date: "January 15, 2024",
      }),
    )
    await waitProcessed(a, projectId)
    const dimensions = await a.get(`/projects/${projectId}/dimensions/`)
    const documentDimension = dimensions.body.find((d: any) => d.source === "DOCUMENT")
    agents.total = await createAgent(a, projectId, {
      name: "Total Amount",
      extraction_instructions: "The total amount due on the invoice",
      value_type: "number",
      dimensions: [{ dimension_id: documentDimension.id }],
    })
    agents.invoiceNumber = await createAgent(a, projectId, {
      name: "Invoice Number",
      extraction_instructions: "The invoice number",
      dimensions: [{ dimension_id: documentDimension.id }],
    })
    agents.law = await createAgent(a, projectId, {
      name: "Governing Law",
      extraction_instructions: "The state whose laws govern the agreement",
    })
    agents.currency = await createAgent(a, projectId, {
      name: "Currency",
      extraction_instructions: "The currency of the invoice",
    })
    agents.sum = await createAgent(a, projectId, {
      name: "Invoiced Sum",
      extraction_instructions: "The total amount due on the invoice",
      value_type: "number",
      enable_complex_calculations_in_resolution: true,
      resolution_instructions: "Add up the totals of all invoices",
    })
    agents.doubled = await createAgent(a, projectId, {
      name: "Doubled Sum",
      agent_type: "derived",
      value_type: "number",
      derived_prompt: `@"Invoiced Sum" * 2`,
    })
    agents.big = await createAgent(a, projectId, {
      name: "Big Spend",
      agent_type: "derived",
      is_evaluation: true,
      derived_prompt: `@"Invoiced Sum" > 3000`,
    })
    const status = await launchAndWait(a, projectId)
    expect(status.pipeline_running).toBe(false)
  })

  it("reads each invoice's total with the page that states it", async () => {
    const rows = await resultsOf(a, projectId, agents.total!.id)
    expect(rows).toHaveLength(3)
    const byDocument = Object.fromEntries(
      rows.map((row) => [row.dimension_instances[0].dimension_value, row.resolution_result]),
    )
    expect(byDocument["invoice-a.pdf"]).toMatchObject({ value: 1200, resolution_status: "Resolved" })
    expect(byDocument["invoice-b.pdf"]).toMatchObject({ value: 2400, resolution_status: "Resolved" })
    expect(byDocument["nda.pdf"]).toMatchObject({ resolution_status: "No result" })
    expect(Object.values(byDocument["invoice-a.pdf"].references)).toEqual([["invoice-a.pdf", 2]])
    const instance = rows.find((row) => row.dimension_instances[0].dimension_value === "invoice-a.pdf")
    expect(instance.dimension_instances[0].document_id).toBe(ids.a)

    const detail = await a.get(`/projects/${projectId}/results/${byDocument["invoice-a.pdf"].id}/`)
    expect(detail.status).toBe(200)
    expect(detail.body.sources).toEqual([
      {
        document_name: "invoice-a.pdf",
        page_number: 2,
        document_id: ids.a,
        atomic_value_ids: [detail.body.atomic_value_id],
      },
    ])
    const extractions = await a.get(
      `/projects/${projectId}/results/${byDocument["invoice-a.pdf"].id}/extractions/`,
    )
    expect(extractions.body.total_count).toBe(1)
    const [extraction] = extractions.body.data
    expect(extraction).toMatchObject({
      value: "1200",
      page_number: 2,
      document_id: ids.a,
      source_type: "document",
    })
    expect(extraction.relevant_passage).toContain("Total Due")
    expect(extraction.reasoning).not.toBe("")
  })

  it("reads identifiers per document", async () => {
    const rows = await resultsOf(a, projectId, agents.invoiceNumber!.id)
    const values = Object.fromEntries(
      rows.map((row) => [row.dimension_instances[0].dimension_value, row.resolution_result.value]),
    )
    expect(values["invoice-a.pdf"]).toBe("INV-1001")
    expect(values["invoice-b.pdf"]).toBe("INV-2002")
  })

  it("resolves a value found in one document and cites it", async () => {
    const [row] = await resultsOf(a, projectId, agents.law!.id)
    expect(row.resolution_result).toMatchObject({ value: "Delaware", resolution_status: "Resolved" })
    expect(Object.values(row.resolution_result.references)).toEqual([["nda.pdf", 2]])
  })

  it("flags documents that disagree and says why", async () => {
    const [row] = await resultsOf(a, projectId, agents.currency!.id)
    expect(row.resolution_result.resolution_status).toBe("Requires attention")
    const extractions = await a.get(`/projects/${projectId}/results/${row.resolution_result.id}/extractions/`)
    expect(extractions.body.data.map((e: any) => e.consistent)).toEqual([false, false])
    expect(extractions.body.data.every((e: any) => e.justification_for_consistency)).toBe(true)
    const agent = await a.get(`/projects/${projectId}/agents/${agents.currency!.id}/`)
    expect(agent.body.requires_attention).toBe(true)
    expect(agent.body.inconsistency_summary).toMatch(/USD|EUR/)
    const status = await a.get(`/projects/${projectId}/agents/status/`)
    expect(status.body.consistency[agents.currency!.id]).toEqual({
      consistent_count: 0,
      missing_count: 0,
      inconsistent_count: 1,
      ignored_count: 0,
      total_count: 1,
    })
  })

  it("sums across documents when calculations are enabled", async () => {
    const [row] = await resultsOf(a, projectId, agents.sum!.id)
    expect(row.resolution_result).toMatchObject({ value: 3600, resolution_status: "Resolved" })
    expect(Object.keys(row.resolution_result.references)).toHaveLength(2)
  })

  it("derives from resolved values, and evaluates", async () => {
    const [doubled] = await resultsOf(a, projectId, agents.doubled!.id)
    expect(doubled.resolution_result).toMatchObject({
      value: 7200,
      resolution_status: "Resolved",
      source_type: "derived",
    })
    const [big] = await resultsOf(a, projectId, agents.big!.id)
    expect(big.resolution_result.value).toBe(1)
    const evaluations = await a.get(`/projects/${projectId}/agents/?is_evaluation=true`)
    expect(evaluations.body.map((agent: any) => agent.name)).toEqual(["Big Spend"])
    expect(evaluations.body[0]).toMatchObject({ is_evaluation: true, value_type: "number" })
    const others = await a.get(`/projects/${projectId}/agents/?is_evaluation=false`)
    expect(others.body).toHaveLength(6)
    const extractions = await a.get(
      `/projects/${projectId}/results/${doubled.resolution_result.id}/extractions/`,
    )
    expect(extractions.body.data[0]).toMatchObject({
      source_type: "derived",
      document_id: null,
      page_number: null,
      derived_sources: [
        { source_agent_id: agents.sum!.id, source_agent_name: "Invoiced Sum", resolved_value: "3600" },
      ],
    })
  })

  it("reports every agent finished, and the run's completion event", async () => {
    const list = await a.get(`/projects/${projectId}/agents/`)
    for (const agent of list.body) expect(["Processed", "No Result"]).toContain(agent.extraction_status)
    const status = await a.get(`/projects/${projectId}/agents/status/`)
    expect(status.body.pipeline_running).toBe(false)
    expect(status.body.progress[agents.total!.id]).toMatchObject({
      parsing: { total: 3, completed: 3, percentage: 100 },
      extraction: { total: 3, completed: 3, percentage: 100 },
      web_search: { total: 0, completed: 0, percentage: 100 },
      resolution: { percentage: 100 },
      is_running: false,
      is_pending: false,
    })
    const [run] = await runs(projectId)
    expect(run).toMatchObject({ run_number: 1, status: "succeeded" })
    const events = await db.selectFrom("events").selectAll().where("project_id", "=", projectId).execute()
    expect(events).toHaveLength(1)
    expect(events[0]).toMatchObject({ type: "agent.completion.succeeded", run_id: run!.id })
    expect(events[0]!.data).toMatchObject({ project_id: projectId, run_number: 1 })
    expect((events[0]!.data as any).agents).toHaveLength(7)
    expect((events[0]!.data as any).agents).toContainEqual({
      id: agents.law!.id,
      name: "Governing Law",
      extraction_status: "Processed",
    })
  })

  it("relaunching with nothing changed extracts nothing", async () => {
    await launchAndWait(a, projectId)
    const all = await runs(projectId)
    expect(all.map((r) => r.status)).toEqual(["succeeded", "succeeded"])
    expect(await tasksOf(all[1]!.id, "extract")).toHaveLength(0)
    expect(await tasksOf(all[1]!.id, "resolve")).toHaveLength(0)
  })

  it("after an agent changes, only that agent is re-extracted", async () => {
    const patched = await a.patch(`/projects/${projectId}/agents/${agents.law!.id}/`, {
      extraction_instructions: "Which state's law governs this agreement?",
    })
    expect(patched.body.extraction_status).toBe("Pending")
    await launchAndWait(a, projectId)
    const all = await runs(projectId)
    const extract = await tasksOf(all[2]!.id, "extract")
    // One task per document, each holding the changed agent alone.
    expect(extract).toHaveLength(3)
    for (const t of extract)
      expect((t.payload as any).agents.map((x: any) => x.agentId)).toEqual([agents.law!.id])
    const [row] = await resultsOf(a, projectId, agents.law!.id)
    expect(row.resolution_result.value).toBe("Delaware")
    const agent = await a.get(`/projects/${projectId}/agents/${agents.law!.id}/`)
    expect(agent.body.extraction_status).toBe("Processed")
  })

  it("a new document makes the agents pending; the next launch extracts just it", async () => {
    await upload(
      a,
      projectId,
      "invoice-c.pdf",
      await invoice({
        number: "INV-3003",
        date: "May 1, 2024",
        seller: "Acme Supplies Inc.",
        currency: "USD",
        subtotal: "$500.00",
        tax: "$100.00",
        total: "$600.00",
      }),
    )
    const pending = await a.get(`/projects/${projectId}/agents/${agents.total!.id}/`)
    expect(pending.body.extraction_status).toBe("Pending")
    await waitProcessed(a, projectId)
    await launchAndWait(a, projectId)
    const all = await runs(projectId)
    const extract = await tasksOf(all[3]!.id, "extract")
    // One new document: one task, holding the five extraction agents.
    expect(extract).toHaveLength(1)
    expect((extract[0]!.payload as any).agents).toHaveLength(5)
    const [sum] = await resultsOf(a, projectId, agents.sum!.id)
    expect(sum.resolution_result.value).toBe(4200)
    const [doubled] = await resultsOf(a, projectId, agents.doubled!.id)
    expect(doubled.resolution_result.value).toBe(8400)
  })

  it("a deleted document's values leave the results at the next launch", async () => {
    const documents = await a.get(`/projects/${projectId}/documents/`)
    const c = documents.body.find((d: any) => d.file_name === "invoice-c.pdf")
    // A value set by hand survives the re-resolution at the same config version.
    const [law] = await resultsOf(a, projectId, agents.law!.id)
    const overridden = await a.patch(`/projects/${projectId}/results/${law.resolution_result.id}/`, {
      value: "Texas",
      updated_by_email: "reviewer@example.com",
    })
    expect(overridden.status).toBe(200)
    expect((await a.delete(`/projects/${projectId}/documents/${c.id}/`)).status).toBe(204)
    const pending = await a.get(`/projects/${projectId}/agents/${agents.sum!.id}/`)
    expect(pending.body.extraction_status).toBe("Pending")
    await launchAndWait(a, projectId)
    const all = await runs(projectId)
    expect(await tasksOf(all.at(-1)!.id, "extract")).toHaveLength(0)
    const totals = await resultsOf(a, projectId, agents.total!.id)
    expect(totals.map((row) => row.dimension_instances[0].dimension_value).sort()).toEqual([
      "invoice-a.pdf",
      "invoice-b.pdf",
      "nda.pdf",
    ])
    const [sum] = await resultsOf(a, projectId, agents.sum!.id)
    expect(sum.resolution_result.value).toBe(3600)
    const [doubled] = await resultsOf(a, projectId, agents.doubled!.id)
    expect(doubled.resolution_result.value).toBe(7200)
    const [lawAfter] = await resultsOf(a, projectId, agents.law!.id)
    expect(lawAfter.resolution_result).toMatchObject({
      id: law.resolution_result.id,
      value: "Texas",
      updated_by_email: "reviewer@example.com",
    })
  })
})

describe("dimensions", () => {
  let projectId: string
  let regionId: string

  beforeAll(async () => {
    projectId = await createProject(a)
    const report = await textPdf([
      ["Quarterly report", "", "Revenue EU: 1,200", "Revenue US: 3,400", "Revenue APAC: 560"].join("\n"),
    ])
    const memo = await textPdf([["Board memo", "", "Revenue EU: 1,200", "Revenue US: 3,100"].join("\n")])
    const r = await upload(a, projectId, "report.pdf", report)
    const m = await upload(a, projectId, "memo.pdf", memo)
    const p1 = await a.put(`/projects/${projectId}/documents/${r}/tags/`, {
      tags: [{ key: "source", value: "finance" }],
    })
    const p2 = await a.put(`/projects/${projectId}/documents/${m}/tags/`, {
      tags: [{ key: "source", value: "board" }],
    })
    // Set while the documents may still be parsing: both answered (a parse finishing at that moment once
    // deadlocked with the tag change, which answered 500 and lost its tag).
    expect([p1.status, p2.status]).toEqual([200, 200])
    const region = await a.post(`/projects/${projectId}/dimensions/`, {
      name: "Region",
      example_values: "EU, US",
    })
    regionId = region.body.id
    await waitProcessed(a, projectId)
  })

  /**
   * Launches and waits for the run's end as the contract defines it: `pipeline_running` false alone is not
   * sufficient; the agent's `extraction_status` must have left `Pending`.
   */
  const launchAndSettle = async (agentId: string) => {
    await launchAndWait(a, projectId)
    await until("the agent's extraction to settle", async () => {
      const r = await a.get(`/projects/${projectId}/agents/${agentId}/`)
      return r.body.extraction_status === "Pending" ? undefined : r.body
    })
  }

  const valuesBy = (rows: Array<any>, dimension: string) =>
    Object.fromEntries(
      rows.map((row) => [
        row.dimension_instances.find((i: any) => i.name === dimension).dimension_value,
        row.resolution_result,
      ]),
    )

  it("splits an agent by static values: one atomic value each, checked across documents", async () => {
    const agent = await createAgent(a, projectId, {
      name: "Revenue",
      extraction_instructions: "Revenue of the region",
      value_type: "number",
      dimensions: [{ dimension_id: regionId, values: ["EU", "US"] }],
    })
    await launchAndSettle(agent.id)
    const rows = await resultsOf(a, projectId, agent.id)
    expect(rows.map((row) => row.result_name).sort()).toEqual(["EU", "US"])
    expect(new Set(rows.map((row) => row.atomic_value_id)).size).toBe(2)
    const byRegion = valuesBy(rows, "Region")
    expect(byRegion.EU).toMatchObject({ value: 1200, resolution_status: "Resolved" })
    expect(Object.keys(byRegion.EU.references)).toHaveLength(2)
    expect(byRegion.US.resolution_status).toBe("Requires attention")
  })

  it("discovers dynamic values from the documents", async () => {
    const agent = await createAgent(a, projectId, {
      name: "Regional revenue",
      extraction_instructions: "Revenue of the region",
      value_type: "number",
      dimensions: [{ dimension_id: regionId, are_values_dynamic: true }],
    })
    await launchAndSettle(agent.id)
    const byRegion = valuesBy(await resultsOf(a, projectId, agent.id), "Region")
    expect(Object.keys(byRegion).sort()).toEqual(["APAC", "EU", "US"])
    expect(byRegion.APAC).toMatchObject({ value: 560, resolution_status: "Resolved" })
  })

  it("gives one value per tag value with a TAG dimension", async () => {
    const dimensions = await a.get(`/projects/${projectId}/dimensions/`)
    const tag = dimensions.body.find((d: any) => d.source === "TAG" && d.name === "source")
    const agent = await createAgent(a, projectId, {
      name: "US revenue",
      extraction_instructions: "Revenue US",
      value_type: "number",
      dimensions: [{ dimension_id: tag.id }],
    })
    await launchAndSettle(agent.id)
    const bySource = valuesBy(await resultsOf(a, projectId, agent.id), "source")
    expect(bySource.finance).toMatchObject({ value: 3400 })
    expect(bySource.board).toMatchObject({ value: 3100 })
  })
})

describe("launch rules", () => {
  it("a launch with a failed document is refused with 409 listing it", async () => {
    const projectId = await createProject(a)
    const broken = await upload(
      a,
      projectId,
      "broken.pdf",
      new TextEncoder().encode("%PDF-1.4 this is not a pdf"),
    )
    await waitProcessed(a, projectId)
    const r = await a.post(`/projects/${projectId}/agents/launch/`)
    expectProblem(r, 409)
    expect(r.body.failed_documents).toEqual([{ id: broken, name: "broken.pdf" }])
    expect(await runs(projectId)).toEqual([])
  })

  it("a launch of an unknown project is 404", async () => {
    const r = await a.post("/projects/00000000-0000-4000-8000-000000000000/agents/launch/")
    expectProblem(r, 404)
  })

  it("another organisation cannot launch or watch the project", async () => {
    const projectId = await createProject(a)
    const other = api.client(await api.newKey("other"))
    expectProblem(await other.post(`/projects/${projectId}/agents/launch/`), 404)
    expectProblem(await other.get(`/projects/${projectId}/agents/status/`), 404)
  })

  it("a project with no documents and no agents runs and succeeds at once", async () => {
    const projectId = await createProject(a)
    await launchAndWait(a, projectId)
    expect((await runs(projectId)).map((r) => r.status)).toEqual(["succeeded"])
  })
})
