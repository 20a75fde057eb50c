/**
 * Grounding and confidence through the REST API, with a worker loop in this process and the `local`
 * language model: a run gives every result a confidence and every extraction `grounded` and `confidence`;
 * extractions written as ungrounded or less confident (as the extraction stage records them) are resolved
 * again, a value resting only on ungrounded extractions requires attention, and `max_confidence` lists the
 * doubtful results first.
 */
import { makeKysely } from "@dxs/db"
import { clearResolutionsOfProject } from "@dxs/db/repositories/Results"
import { invoice } from "@dxs/testing/Documents"
import { type Client, createProject, expectProblem } from "@dxs/testing/RestClient"
import { createAgent, launchAndWait, upload, waitProcessed } from "@dxs/testing/Runs"
import { Effect } from "effect"
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

const TOTALS = { "a.pdf": "$1,200.00", "b.pdf": "$2,500.00", "c.pdf": "$3,100.00" } as const

describe("confidence and grounding of results", () => {
  let projectId: string
  let agentId: string
  const documents: Record<string, string> = {}
  /** Result rows of the agent by document name. */
  const rowsByDocument = async (query = "") => {
    const r = await a.get(`/projects/${projectId}/results/?agent_id=${agentId}${query}`)
    expect(r.status).toBe(200)
    return Object.fromEntries<any>(
      (r.body.results as Array<any>).map((row) => [row.dimension_instances[0].dimension_value, row]),
    )
  }
  const extractionsOf = async (resultId: string) => {
    const r = await a.get(`/projects/${projectId}/results/${resultId}/extractions/`)
    expect(r.status).toBe(200)
    return r.body.data as Array<any>
  }

  beforeAll(async () => {
    projectId = await createProject(a, { reference_date: "2024-06-30" })
    for (const [name, total] of Object.entries(TOTALS))
      documents[name] = await upload(
        a,
        projectId,
        name,
        await invoice({
          number: `INV-${name[0]}`,
          date: "March 3, 2024",
          seller: "Acme Supplies Inc.",
          currency: "USD",
          subtotal: total,
          tax: "$0.00",
          total,
        }),
      )
    await waitProcessed(a, projectId)
    const dimensions = await a.get(`/projects/${projectId}/dimensions/`)
    const documentDimension = dimensions.body.find((d: any) => d.source === "DOCUMENT")
    agentId = (
      await createAgent(a, projectId, {
        name: "Total Amount",
        extraction_instructions: "The total amount due on the invoice",
        value_type: "number",
        dimensions: [{ dimension_id: documentDimension.id }],
      })
    ).id
    await launchAndWait(a, projectId)
  })

  it("gives every resolved result a confidence, and every extraction grounded and confidence", async () => {
    const rows = await rowsByDocument()
    expect(Object.keys(rows).sort()).toEqual(["a.pdf", "b.pdf", "c.pdf"])
    for (const row of Object.values(rows)) {
      expect(row.resolution_result.resolution_status).toBe("Resolved")
      expect(row.resolution_result.confidence).toBeGreaterThan(0.5)
      expect(row.resolution_result.confidence).toBeLessThanOrEqual(1)
      const detail = await a.get(`/projects/${projectId}/results/${row.resolution_result.id}/`)
      expect(detail.body.confidence).toBe(row.resolution_result.confidence)
      const [extraction] = await extractionsOf(row.resolution_result.id)
      expect(extraction).toMatchObject({ grounded: true })
      expect(extraction.confidence === null || typeof extraction.confidence === "number").toBe(true)
    }
  })

  describe("after extractions recorded as ungrounded or less confident are resolved again", () => {
    beforeAll(async () => {
      // What the extraction stage records for an answer whose passage is not on its page, and for a
      // less confident one.
      await db
        .updateTable("extractions")
        .set({ grounded: false, confidence: null })
        .where("agent_id", "=", agentId)
        .where("document_id", "=", documents["a.pdf"]!)
        .execute()
      await db
        .updateTable("extractions")
        .set({ confidence: 0.4 })
        .where("agent_id", "=", agentId)
        .where("document_id", "=", documents["b.pdf"]!)
        .execute()
      await db
        .updateTable("extractions")
        .set({ confidence: 0.9 })
        .where("agent_id", "=", agentId)
        .where("document_id", "=", documents["c.pdf"]!)
        .execute()
      await Effect.runPromise(clearResolutionsOfProject(db, projectId))
      await launchAndWait(a, projectId)
    })

    it("requires attention for a value resting only on an ungrounded extraction, with a low confidence", async () => {
      const rows = await rowsByDocument()
      expect(rows["a.pdf"].resolution_result).toMatchObject({
        value: 1200,
        resolution_status: "Requires attention",
      })
      expect(rows["a.pdf"].resolution_result.confidence).toBeLessThanOrEqual(0.2)
      expect(rows["a.pdf"].resolution_result.justification_for_resolution_status).toMatch(/not grounded/)
      const [extraction] = await extractionsOf(rows["a.pdf"].resolution_result.id)
      expect(extraction.grounded).toBe(false)
      expect(rows["b.pdf"].resolution_result).toMatchObject({ resolution_status: "Resolved" })
      expect(rows["b.pdf"].resolution_result.confidence).toBeCloseTo(0.4, 5)
      expect(rows["c.pdf"].resolution_result.confidence).toBeCloseTo(0.9, 5)
      const agent = await a.get(`/projects/${projectId}/agents/${agentId}/`)
      expect(agent.body.requires_attention).toBe(true)
    })

    it("lists the results at or below max_confidence, least confident first", async () => {
      const doubtful = await a.get(`/projects/${projectId}/results/?max_confidence=0.5`)
      expect(doubtful.status).toBe(200)
      expect(doubtful.body.count).toBe(2)
      expect(doubtful.body.results.map((r: any) => r.dimension_instances[0].dimension_value)).toEqual([
        "a.pdf",
        "b.pdf",
      ])
      const all = await a.get(`/projects/${projectId}/results/?max_confidence=1`)
      expect(all.body.results.map((r: any) => r.dimension_instances[0].dimension_value)).toEqual([
        "a.pdf",
        "b.pdf",
        "c.pdf",
      ])
      const atTheBound = await a.get(`/projects/${projectId}/results/?max_confidence=0.4`)
      expect(atTheBound.body.count).toBe(2)
      expect((await a.get(`/projects/${projectId}/results/?max_confidence=0`)).body.count).toBe(0)
      const paged = await a.get(`/projects/${projectId}/results/?max_confidence=0.5&limit=1`)
      expect(paged.body.results).toHaveLength(1)
      expect(paged.body.next).toContain("max_confidence=0.5")
      const second = await a.get(`/projects/${projectId}/results/${paged.body.next}`)
      expect(second.body.results.map((r: any) => r.dimension_instances[0].dimension_value)).toEqual(["b.pdf"])
    })

    it.each(["abc", "1.5", "-0.1", "NaN", "Infinity", ""])(
      "refuses max_confidence=%s with 400",
      async (bad) => {
        const r = await a.get(`/projects/${projectId}/results/?max_confidence=${encodeURIComponent(bad)}`)
        expectProblem(r, 400)
        expect(JSON.stringify(r.body)).toContain("max_confidence")
      },
    )
  })
})
