import { useTestDatabase } from "@dxs/testing/TestDatabase"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeKysely } from "../src/Db.ts"
import {
  ensureAtomicValue,
  type ResolvedRow,
  replaceDocumentExtractions,
  writeResults,
} from "../src/repositories/Results.ts"

const url = await useTestDatabase()
const db = makeKysely(url, 2)
afterAll(() => db.destroy())

let projectId = ""
let agentId = ""
let dimensionId = ""
beforeAll(async () => {
  const org = await db
    .insertInto("organizations")
    .values({ name: "results-repo" })
    .returning("id")
    .executeTakeFirstOrThrow()
  projectId = (
    await db
      .insertInto("projects")
      .values({ organization_id: org.id, name: "P" })
      .returning("id")
      .executeTakeFirstOrThrow()
  ).id
  agentId = (
    await db
      .insertInto("agents")
      .values({ project_id: projectId, name: "Total" })
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
})

const atomic = (value: string) =>
  Effect.runPromise(
    ensureAtomicValue(db, {
      projectId,
      agentId,
      instances: [{ dimensionId, name: "Year", value, documentId: null }],
    }),
  )

const row = (atomicValueId: string, value: string): ResolvedRow => ({
  atomicValueId,
  resultName: "2025",
  value,
  status: "Resolved",
  justification: "from the invoice",
  references: {},
  sources: [],
  sourceType: "document",
  webSupplement: null,
  verdicts: [],
  summary: null,
})

describe("the results repository", () => {
  it("creates an atomic value once per combination, however often it is asked for", async () => {
    const [a, b] = await Promise.all([atomic("2025"), atomic("2025")])
    expect(b!.id).toBe(a!.id)
    expect(a!.dimensionValues).toEqual([
      expect.objectContaining({
        dimension_id: dimensionId,
        name: "Year",
        dimension_value: "2025",
        document_id: null,
      }),
    ])
    expect((await atomic("2026")).id).not.toBe(a!.id)
  })

  it("replaces a pair's document extractions and counts them on the pair", async () => {
    const a = await atomic("2025")
    const document = await db
      .insertInto("documents")
      .values({
        project_id: projectId,
        file_name: "invoice.txt",
        type: "Text",
        blob_key: "k",
        content_type: "text/plain",
        size_bytes: 1,
        sha256: "0",
      })
      .returning("id")
      .executeTakeFirstOrThrow()
    const write = (values: ReadonlyArray<string>) =>
      Effect.runPromise(
        replaceDocumentExtractions(db, {
          projectId,
          agentId,
          agentConfigVersion: 1,
          documentId: document.id,
          documentVersion: 1,
          dimensionsKey: "k",
          extractions: values.map((value) => ({
            atomicValueId: a.id,
            value,
            relevantPassage: value,
            reasoning: "",
            pageNumber: 1,
          })),
        }),
      )
    await write(["1", "2"])
    await write(["3"])
    const stored = await db
      .selectFrom("extractions")
      .select("value")
      .where("document_id", "=", document.id)
      .execute()
    expect(stored.map((e) => e.value)).toEqual(["3"])
    const pair = await db
      .selectFrom("extraction_pairs")
      .select("value_count")
      .where("document_id", "=", document.id)
      .executeTakeFirstOrThrow()
    expect(pair.value_count).toBe(1)
  })

  it("keeps a value set by hand at the same config version, and drops results of combinations gone", async () => {
    const [a, b] = [await atomic("2025"), await atomic("2026")]
    const write = (rows: ReadonlyArray<ResolvedRow>) =>
      Effect.runPromise(writeResults(db, { projectId, agentId, configVersion: 1, rows }))
    await write([row(a.id, "100"), row(b.id, "200")])
    await db
      .updateTable("resolution_results")
      .set({ value: JSON.stringify("by hand"), is_overridden: true })
      .where("atomic_value_id", "=", a.id)
      .execute()
    await write([row(a.id, "150")])
    const results = await db
      .selectFrom("resolution_results")
      .select(["atomic_value_id", "value", "is_overridden"])
      .where("agent_id", "=", agentId)
      .execute()
    expect(results).toEqual([{ atomic_value_id: a.id, value: "by hand", is_overridden: true }])
    const resolution = await db
      .selectFrom("agent_resolutions")
      .select(["complete", "agent_config_version"])
      .where("agent_id", "=", agentId)
      .executeTakeFirstOrThrow()
    expect(resolution).toEqual({ complete: true, agent_config_version: 1 })
  })
})
