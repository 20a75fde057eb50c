import { useTestDatabase } from "@dxs/testing/TestDatabase"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeKysely } from "../../src/Db.ts"
import { valuesInResults } from "../../src/repositories/Dimensions.ts"
import { pageLayouts } from "../../src/repositories/Pages.ts"
import {
  ensureAtomicValue,
  ensureAtomicValues,
  extractionPassages,
  extractionsOfResult,
  findCurrentResult,
  overrideResult,
  type ResolvedRow,
  recordReview,
  writeResults,
} from "../../src/repositories/Results.ts"
import { listResults, resolvedRow } from "../fixtures.ts"

const url = await useTestDatabase()
const db = makeKysely(url, 4)
afterAll(() => db.destroy())

const run = Effect.runPromise

let orgId = ""
let projectId = ""
let otherProjectId = ""
let dimensionId = ""
const agents = { first: "", second: "", draft: "", reconfigured: "" }
/** Result ids by `<agent>/<year>`. */
const results = new Map<string, string>()
const atomicValues = new Map<string, string>()
let documentA = ""
let documentB = ""

const insertAgent = async (name: string, createdAt: string, isDraft = false) =>
  (
    await db
      .insertInto("agents")
      .values({ project_id: projectId, name, is_draft: isDraft, created_at: new Date(createdAt) })
      .returning("id")
      .executeTakeFirstOrThrow()
  ).id

const insertDocument = async (fileName: string) =>
  (
    await db
      .insertInto("documents")
      .values({
        project_id: projectId,
        file_name: fileName,
        type: "Text",
        blob_key: fileName,
        content_type: "text/plain",
        size_bytes: 1,
        sha256: "0",
      })
      .returning("id")
      .executeTakeFirstOrThrow()
  ).id

/** Resolves `agentId` to one result per year, with the given statuses. */
const resolve = async (key: string, agentId: string, years: Record<string, string>) => {
  const rows: Array<ResolvedRow> = []
  for (const [year, status] of Object.entries(years)) {
    const atomic = await run(
      ensureAtomicValue(db, {
        projectId,
        agentId,
        instances: [{ dimensionId, name: "Year", value: year, documentId: null }],
      }),
    )
    atomicValues.set(`${key}/${year}`, atomic.id)
    rows.push(resolvedRow({ atomicValueId: atomic.id, resultName: year, value: `${key} ${year}`, status }))
  }
  await run(writeResults(db, { projectId, agentId, configVersion: 1, rows }))
  for (const r of await db
    .selectFrom("resolution_results")
    .select(["id", "result_name"])
    .where("agent_id", "=", agentId)
    .execute())
    results.set(`${key}/${r.result_name}`, r.id)
}

beforeAll(async () => {
  orgId = (
    await db.insertInto("organizations").values({ name: "current" }).returning("id").executeTakeFirstOrThrow()
  ).id
  const otherOrg = await db
    .insertInto("organizations")
    .values({ name: "other" })
    .returning("id")
    .executeTakeFirstOrThrow()
  projectId = (
    await db
      .insertInto("projects")
      .values({ organization_id: orgId, name: "P" })
      .returning("id")
      .executeTakeFirstOrThrow()
  ).id
  otherProjectId = (
    await db
      .insertInto("projects")
      .values({ organization_id: otherOrg.id, name: "Q" })
      .returning("id")
      .executeTakeFirstOrThrow()
  ).id
  dimensionId = (
    await db
      .insertInto("dimensions")
      .values({ project_id: projectId, name: "Year" })
      .returning("id")
      .executeTakeFirstOrThrow()
  ).id
  agents.first = await insertAgent("First", "2026-01-01T00:00:00Z")
  agents.second = await insertAgent("Second", "2026-01-02T00:00:00Z")
  agents.draft = await insertAgent("Draft", "2026-01-03T00:00:00Z", true)
  agents.reconfigured = await insertAgent("Reconfigured", "2026-01-04T00:00:00Z")
  await resolve("first", agents.first, { "2026": "Resolved", "2025": "Requires attention" })
  await resolve("second", agents.second, { "2025": "Resolved" })
  await resolve("draft", agents.draft, { "2025": "Resolved" })
  await resolve("reconfigured", agents.reconfigured, { "2025": "Resolved" })
  // A configuration changed since the resolution: its results no longer count.
  await db.updateTable("agents").set({ config_version: 2 }).where("id", "=", agents.reconfigured).execute()
  documentA = await insertDocument("a.pdf")
  documentB = await insertDocument("b.pdf")
})

describe("current results", () => {
  it("are those of published agents at their config version, by agent age then result name", async () => {
    const all = await listResults(db, projectId, {}, { limit: 10, offset: 0 })
    expect(all.count).toBe(3)
    expect(all.rows.map((r) => [r.agent_name, r.result_name, r.resolution_result.value])).toEqual([
      ["First", "2025", "first 2025"],
      ["First", "2026", "first 2026"],
      ["Second", "2025", "second 2025"],
    ])
    expect(all.rows[0]!.dimension_instances).toEqual([
      expect.objectContaining({
        dimension_id: dimensionId,
        name: "Year",
        dimension_value: "2025",
        document_id: null,
      }),
    ])
    const window = await listResults(db, projectId, {}, { limit: 1, offset: 1 })
    expect(window.count).toBe(3)
    expect(window.rows.map((r) => r.resolution_result.id)).toEqual([results.get("first/2026")])
  })

  it("are filtered by agent, resolution status and dimension value, the count with them", async () => {
    const ids = async (filter: Parameters<typeof listResults>[2]) => {
      const page = await listResults(db, projectId, filter, { limit: 10, offset: 0 })
      expect(page.count).toBe(page.rows.length)
      return page.rows.map((r) => r.resolution_result.id)
    }
    expect(await ids({ agentId: agents.second })).toEqual([results.get("second/2025")])
    expect(await ids({ resolutionStatus: "Requires attention" })).toEqual([results.get("first/2025")])
    expect(await ids({ dimensionValue: "2026" })).toEqual([results.get("first/2026")])
    expect(await ids({ agentId: agents.draft })).toEqual([])
    expect(await ids({ agentId: agents.first, dimensionValue: "2024" })).toEqual([])
  })

  it("are found one by one only in their project and while current", async () => {
    const found = await run(findCurrentResult(db, projectId, results.get("second/2025")!))
    expect(found).toMatchObject({ agent_id: agents.second, agent_name: "Second", value_type: "string" })
    expect(await run(findCurrentResult(db, otherProjectId, results.get("second/2025")!))).toBeUndefined()
    expect(await run(findCurrentResult(db, projectId, results.get("draft/2025")!))).toBeUndefined()
    expect(await run(findCurrentResult(db, projectId, results.get("reconfigured/2025")!))).toBeUndefined()
  })

  it("take a value set by hand and a review", async () => {
    const id = results.get("first/2026")!
    await run(
      overrideResult(db, id, {
        value: 42,
        resolutionStatus: "Resolved",
        justification: "checked",
        updatedByEmail: "a@example.com",
      }),
    )
    await run(recordReview(db, id, { status: "positive", comment: "fine", reviewedBy: "b@example.com" }))
    const row = await run(findCurrentResult(db, projectId, id))
    expect(row).toMatchObject({
      value: 42,
      resolution_status: "Resolved",
      justification: "checked",
      is_overridden: true,
      updated_by_email: "a@example.com",
      latest_review_status: "positive",
      latest_review_comment: "fine",
      latest_review_by: "b@example.com",
    })
    expect(row!.latest_review_at).toBeInstanceOf(Date)
    await run(
      overrideResult(db, id, {
        value: null,
        resolutionStatus: "Not resolved",
        justification: null,
        updatedByEmail: null,
      }),
    )
    expect(await run(findCurrentResult(db, projectId, id))).toMatchObject({
      value: null,
      is_overridden: true,
    })
  })
})

describe("dimension values found by extraction", () => {
  it("keep the order they were found in when one task writes them together", async () => {
    const regions = await db
      .insertInto("dimensions")
      .values({ project_id: otherProjectId, name: "Region" })
      .returning("id")
      .executeTakeFirstOrThrow()
    const agent = (
      await db
        .insertInto("agents")
        .values({ project_id: otherProjectId, name: "Revenue" })
        .returning("id")
        .executeTakeFirstOrThrow()
    ).id
    const found = ["EU", "US", "APAC", "Africa"]
    await run(
      ensureAtomicValues(
        db,
        otherProjectId,
        found.map((value) => ({
          agentId: agent,
          instances: [{ dimensionId: regions.id, name: "Region", value, documentId: null }],
        })),
      ),
    )
    const values = await run(valuesInResults(db, otherProjectId))
    expect(values.map((v) => v.value)).toEqual(found)
  })
})

describe("the extractions of a result", () => {
  const extraction = (
    values: Partial<{
      document_id: string | null
      page_number: number | null
      consistent: boolean | null
      source_type: "document" | "web" | "derived"
      agent_config_version: number
    }>,
  ) =>
    db
      .insertInto("extractions")
      .values({
        project_id: projectId,
        agent_id: agents.first,
        agent_config_version: 1,
        atomic_value_id: atomicValues.get("first/2025")!,
        value: "v",
        relevant_passage: "Total 100",
        source_type: "document",
        ...values,
      })
      .returning("id")
      .executeTakeFirstOrThrow()
      .then((r) => r.id)

  let ids: Record<string, string> = {}
  beforeAll(async () => {
    ids = {
      unevaluated: await extraction({ document_id: documentA, page_number: 1, consistent: null }),
      inconsistent: await extraction({ document_id: documentA, page_number: 3, consistent: false }),
      consistent: await extraction({ document_id: documentB, page_number: 2, consistent: true }),
      web: await extraction({ document_id: null, page_number: null, source_type: "web" }),
      earlier: await extraction({ document_id: documentA, page_number: 1, agent_config_version: 0 }),
    }
  })

  const of = (window: { limit: number; offset: number }) =>
    run(
      extractionsOfResult(
        db,
        { atomicValueId: atomicValues.get("first/2025")!, agentId: agents.first, agentConfigVersion: 1 },
        window,
      ),
    )

  it("come web first, then consistent, inconsistent and unevaluated, with their document's name", async () => {
    const all = await of({ limit: 10, offset: 0 })
    expect(all.total).toBe(4)
    expect(all.rows.map((e) => e.id)).toEqual([ids.web, ids.consistent, ids.inconsistent, ids.unevaluated])
    expect(all.rows.map((e) => e.document_name)).toEqual([null, "b.pdf", "a.pdf", "a.pdf"])
    const window = await of({ limit: 2, offset: 1 })
    expect(window.total).toBe(4)
    expect(window.rows.map((e) => e.id)).toEqual([ids.consistent, ids.inconsistent])
  })

  it("are located by project or organisation, with the layouts of the pages they cite", async () => {
    const wanted = [ids.unevaluated!, ids.web!, "00000000-0000-0000-0000-000000000000"]
    const inProject = await run(extractionPassages(db, wanted, { projectId }))
    expect(new Set(inProject.map((e) => e.id))).toEqual(new Set([ids.unevaluated, ids.web]))
    expect(inProject.find((e) => e.id === ids.unevaluated)).toEqual({
      id: ids.unevaluated,
      document_id: documentA,
      page_number: 1,
      relevant_passage: "Total 100",
      value: "v",
    })
    expect(await run(extractionPassages(db, wanted, { projectId: otherProjectId }))).toEqual([])
    expect((await run(extractionPassages(db, wanted, { organizationId: orgId }))).length).toBe(2)
    expect(await run(extractionPassages(db, [], { organizationId: orgId }))).toEqual([])

    const layout = [{ text: "Total 100", x: 1, y: 2, width: 3, height: 4 }]
    await db
      .insertInto("pages")
      .values({
        document_id: documentA,
        number: 1,
        text: "Total 100",
        layout: JSON.stringify(layout),
        width: 10,
        height: 20,
        unit: "pt",
      })
      .execute()
    const pages = await run(
      pageLayouts(db, [
        { documentId: documentA, pageNumber: 1 },
        { documentId: documentA, pageNumber: 9 },
      ]),
    )
    expect(pages).toEqual([
      { document_id: documentA, number: 1, layout, tables: [], width: 10, height: 20, unit: "pt" },
    ])
    expect(await run(pageLayouts(db, []))).toEqual([])
  })
})
