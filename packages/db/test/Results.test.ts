import { useTestDatabase } from "@dxs/testing/TestDatabase"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeKysely } from "../src/Db.ts"
import {
  documentExtractionsOnCompletion,
  ensureAtomicValue,
  type ResolvedRow,
  recordReview,
  replaceDocumentExtractions,
  replaceDocumentExtractionsOfAgents,
  settleByReview,
  writeResults,
} from "../src/repositories/Results.ts"
import { complete, enqueue } from "../src/TaskQueue.ts"
import { listResults, resolvedRow } from "./fixtures.ts"

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

/** A text document of the project (no file stored). */
const newDocument = (fileName: string) =>
  db
    .insertInto("documents")
    .values({
      project_id: projectId,
      file_name: fileName,
      type: "Text",
      blob_key: "k",
      content_type: "text/plain",
      size_bytes: 1,
      sha256: "0",
    })
    .returning("id")
    .executeTakeFirstOrThrow()

const row = (atomicValueId: string, value: string): ResolvedRow => ({
  ...resolvedRow({ atomicValueId, resultName: "2025", value, status: "Resolved" }),
  justification: "from the invoice",
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
    const document = await newDocument("invoice.txt")
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

  it("writes only the agents still at the version planned, in the write itself", async () => {
    const edited = await db
      .insertInto("agents")
      .values({ project_id: projectId, name: "Edited", config_version: 2 })
      .returning("id")
      .executeTakeFirstOrThrow()
    const a = await atomic("2025")
    const document = await newDocument("planned.txt")
    const extraction = { atomicValueId: a.id, value: "7", relevantPassage: "7", reasoning: "", pageNumber: 1 }
    const written = await Effect.runPromise(
      replaceDocumentExtractionsOfAgents(db, {
        projectId,
        documentId: document.id,
        documentVersion: 1,
        agents: [
          { agentId, agentConfigVersion: 1, dimensionsKey: "k", extractions: [extraction] },
          // Planned at version 1; the agent has been edited to version 2 since.
          { agentId: edited.id, agentConfigVersion: 1, dimensionsKey: "k", extractions: [extraction] },
        ],
      }),
    )
    expect([...written]).toEqual([agentId])
    const stored = await db
      .selectFrom("extractions")
      .select("agent_id")
      .where("document_id", "=", document.id)
      .execute()
    expect(stored.map((e) => e.agent_id)).toEqual([agentId])
    const pairs = await db
      .selectFrom("extraction_pairs")
      .select("agent_id")
      .where("document_id", "=", document.id)
      .execute()
    expect(pairs.map((p) => p.agent_id)).toEqual([agentId])
  })

  it("writes a task's extractions in the statement that completes it, and none once its worker lost it", async () => {
    const a = await atomic("2025")
    const document = await newDocument("completed.txt")
    const { id: taskId } = await enqueue(db, {
      kind: "extract",
      idempotencyKey: `extract:${document.id}`,
      payload: {},
    })
    await db
      .updateTable("tasks")
      .set({ status: "running", locked_by: "w1" })
      .where("id", "=", taskId)
      .execute()
    const writes = documentExtractionsOnCompletion({
      projectId,
      documentId: document.id,
      documentVersion: 1,
      agents: [
        {
          agentId,
          agentConfigVersion: 1,
          dimensionsKey: "k",
          extractions: [
            { atomicValueId: a.id, value: "9", relevantPassage: "9", reasoning: "", pageNumber: 1 },
          ],
        },
      ],
    })
    const stored = () =>
      db.selectFrom("extractions").select("value").where("document_id", "=", document.id).execute()
    // Another worker holds the task now: neither the completion nor the writes happen.
    expect(await complete(db, taskId, "w2", undefined, writes)).toBe(false)
    expect(await stored()).toEqual([])
    expect(await complete(db, taskId, "w1", { calls: 1 }, writes)).toBe(true)
    expect(await stored()).toEqual([{ value: "9" }])
    const task = await db
      .selectFrom("tasks")
      .select(["status", "usage"])
      .where("id", "=", taskId)
      .executeTakeFirst()
    expect(task).toEqual({ status: "succeeded", usage: { calls: 1 } })
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

  it("stores an extraction's grounding and confidence (grounded and unknown by default)", async () => {
    const a = await atomic("2027")
    const document = await newDocument("grounding.txt")
    await Effect.runPromise(
      replaceDocumentExtractions(db, {
        projectId,
        agentId,
        agentConfigVersion: 1,
        documentId: document.id,
        documentVersion: 1,
        dimensionsKey: "k",
        extractions: [
          { atomicValueId: a.id, value: "1", relevantPassage: "1", reasoning: "", pageNumber: 1 },
          {
            atomicValueId: a.id,
            value: "2",
            relevantPassage: "made up",
            reasoning: "",
            pageNumber: 1,
            grounded: false,
            confidence: 0.15,
          },
          {
            atomicValueId: a.id,
            value: "3",
            relevantPassage: "3",
            reasoning: "",
            pageNumber: 1,
            grounded: true,
            confidence: 0.9,
          },
        ],
      }),
    )
    const stored = await db
      .selectFrom("extractions")
      .select(["value", "grounded", "confidence"])
      .where("document_id", "=", document.id)
      .orderBy("value")
      .execute()
    expect(stored).toEqual([
      { value: "1", grounded: true, confidence: null },
      { value: "2", grounded: false, confidence: expect.closeTo(0.15, 6) },
      { value: "3", grounded: true, confidence: expect.closeTo(0.9, 6) },
    ])
  })

  it("stores a result's confidence and lists results at or below a confidence, least confident first", async () => {
    const other = (
      await db
        .insertInto("agents")
        .values({ project_id: projectId, name: "Confidence", is_draft: false })
        .returning("id")
        .executeTakeFirstOrThrow()
    ).id
    const atomicOf = (value: string) =>
      Effect.runPromise(
        ensureAtomicValue(db, {
          projectId,
          agentId: other,
          instances: [{ dimensionId, name: "Year", value, documentId: null }],
        }),
      )
    const [a, b, c, d] = [await atomicOf("a"), await atomicOf("b"), await atomicOf("c"), await atomicOf("d")]
    await Effect.runPromise(
      writeResults(db, {
        projectId,
        agentId: other,
        configVersion: 1,
        rows: [
          { ...row(a.id, "1"), resultName: "a", confidence: 0.9 },
          { ...row(b.id, "2"), resultName: "b", confidence: 0.3 },
          { ...row(c.id, "3"), resultName: "c", confidence: 0.1, status: "Requires attention" },
          { ...row(d.id, ""), value: null, resultName: "d", status: "No result" },
        ],
      }),
    )
    const list = (maxConfidence: number | undefined) =>
      listResults(db, projectId, { agentId: other, maxConfidence }, { limit: 10, offset: 0 })
    const all = await list(undefined)
    expect(all.rows.map((r) => [r.result_name, r.resolution_result.confidence])).toEqual([
      ["a", expect.closeTo(0.9, 6)],
      ["b", expect.closeTo(0.3, 6)],
      ["c", expect.closeTo(0.1, 6)],
      ["d", null],
    ])
    const doubtful = await list(0.3)
    expect(doubtful.count).toBe(2)
    expect(doubtful.rows.map((r) => r.result_name)).toEqual(["c", "b"])
    expect((await list(0)).count).toBe(0)
    expect((await list(1)).rows.map((r) => r.result_name)).toEqual(["c", "b", "a"])
  })

  it("counts the results at or below a confidence exactly, at the edges of the tallies' bands", async () => {
    const agent = (
      await db
        .insertInto("agents")
        .values({ project_id: projectId, name: "Bands", is_draft: false })
        .returning("id")
        .executeTakeFirstOrThrow()
    ).id
    // Confidences on and beside the hundredths the tallies band them by, and none.
    const confidences = [
      0,
      0.004,
      0.005,
      0.0099,
      0.01,
      0.29,
      0.3,
      0.30000001,
      0.55,
      0.5500001,
      0.999,
      1,
      null,
    ]
    const atomics = await Promise.all(
      confidences.map((_, i) =>
        Effect.runPromise(
          ensureAtomicValue(db, {
            projectId,
            agentId: agent,
            instances: [{ dimensionId, name: "Year", value: `band-${i}`, documentId: null }],
          }),
        ),
      ),
    )
    const write = (shift: number) =>
      Effect.runPromise(
        writeResults(db, {
          projectId,
          agentId: agent,
          configVersion: 1,
          rows: confidences.map((confidence, i) => ({
            ...row(atomics[i]!.id, `${i}`),
            resultName: `band-${i}`,
            confidence: confidence === null ? null : Math.min(1, confidence + shift),
          })),
        }),
      )
    /** What the filter means: the project's (or the agent's) current results at or below `x`, as reals. */
    const recount = async (x: number, only?: string) =>
      (
        await db
          .selectFrom("resolution_results")
          .select((eb) => eb.fn.countAll<number>().as("n"))
          .where("project_id", "=", projectId)
          .where("is_current", "=", true)
          .where((eb) => eb("confidence", "<=", Math.fround(x)))
          .$if(only !== undefined, (q) => q.where("agent_id", "=", only!))
          .executeTakeFirstOrThrow()
      ).n
    const thresholds = [
      0, 0.004, 0.0049, 0.005, 0.01, 0.0100001, 0.29, 0.3, 0.3000001, 0.55, 0.5499999, 0.999, 1,
    ]
    for (const shift of [0, 0.001]) {
      await write(shift)
      for (const x of thresholds) {
        const forAgent = await listResults(
          db,
          projectId,
          { agentId: agent, maxConfidence: x },
          { limit: 1, offset: 0 },
        )
        expect([x, shift, forAgent.count]).toEqual([x, shift, Number(await recount(x, agent))])
        const forProject = await listResults(db, projectId, { maxConfidence: x }, { limit: 1, offset: 0 })
        expect([x, shift, forProject.count]).toEqual([x, shift, Number(await recount(x))])
      }
    }
  })
})

describe("a value marked correct", () => {
  it("stays Resolved when resolved again unchanged, and follows a new value", async () => {
    const agent = await db
      .insertInto("agents")
      .values({ project_id: projectId, name: "Reviewed" })
      .returning("id")
      .executeTakeFirstOrThrow()
    const av = await Effect.runPromise(
      ensureAtomicValue(db, {
        projectId,
        agentId: agent.id,
        instances: [{ dimensionId, name: "Year", value: "2031", documentId: null }],
      }),
    )
    const write = (value: string) =>
      Effect.runPromise(
        writeResults(db, {
          projectId,
          agentId: agent.id,
          configVersion: 1,
          rows: [{ ...row(av.id, value), status: "Requires attention" }],
        }),
      )
    const status = async () =>
      (
        await db
          .selectFrom("resolution_results")
          .select("resolution_status")
          .where("atomic_value_id", "=", av.id)
          .executeTakeFirstOrThrow()
      ).resolution_status
    await write("100")
    expect(await status()).toBe("Requires attention")
    const [result] = await db
      .selectFrom("resolution_results")
      .select("id")
      .where("atomic_value_id", "=", av.id)
      .execute()
    await Effect.runPromise(
      recordReview(db, result!.id, { status: "positive", comment: "", reviewedBy: null }),
    )
    await Effect.runPromise(
      settleByReview(db, result!.id, { status: "Resolved", justification: "Marked correct." }),
    )
    expect(await status()).toBe("Resolved")
    await write("100")
    expect(await status()).toBe("Resolved")
    await write("101")
    expect(await status()).toBe("Requires attention")
  })
})
