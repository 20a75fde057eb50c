import { randomUUID } from "node:crypto"
import { useTestDatabase } from "@dxs/testing/TestDatabase"
import { Effect } from "effect"
import { sql } from "kysely"
import { afterAll, describe, expect, it } from "vitest"
import { makeKysely } from "../../src/Db.ts"
import {
  attachmentsOf,
  insertAgent,
  referencesOf,
  replaceReferences,
  saveAttachment,
} from "../../src/repositories/Agents.ts"
import { insertCustomDimension } from "../../src/repositories/Dimensions.ts"
import { type NewPage, replacePages } from "../../src/repositories/Pages.ts"
import * as ProjectReads from "../../src/repositories/ProjectReads.ts"
import { clearResolutionsOfProject } from "../../src/repositories/Results.ts"
import { createQueuedRun, startRun } from "../../src/repositories/Runs.ts"
import { enqueueAgentTasks } from "../../src/repositories/RunTasks.ts"
import { ensureAtomicValues } from "../../src/repositories/results/AtomicValues.ts"
import { enqueue } from "../../src/TaskQueue.ts"
import { customDimension, newOrganizationProject } from "../fixtures.ts"

const url = await useTestDatabase()
const db = makeKysely(url, 4)
afterAll(() => db.destroy())

const run = Effect.runPromise

const newProject = async () => (await newOrganizationProject(db)).projectId

const newDocument = async (projectId: string, fileName: string, status = "Processed", version = 1) =>
  (
    await db
      .insertInto("documents")
      .values({
        project_id: projectId,
        file_name: fileName,
        type: "PDF",
        status,
        version,
        blob_key: randomUUID(),
        content_type: "application/pdf",
        size_bytes: 1,
        sha256: "0",
        failure_reason: null,
        parent_document_id: null,
        uploaded_at: sql<Date>`clock_timestamp()`,
      })
      .returning("id")
      .executeTakeFirstOrThrow()
  ).id

const newDimension = (projectId: string, name: string) =>
  run(insertCustomDimension(db, customDimension(projectId, name))).then((d) => d!.id)

/** The test database, with the statements run through it counted. */
const countingStatements = () => {
  const statements: Array<string> = []
  const counted = db.withPlugin({
    transformQuery: (args) => {
      statements.push(args.node.kind)
      return args.node
    },
    transformResult: async (args) => args.result,
  })
  return { counted, statements }
}

const emptyPage = (documentId: string, number: number): NewPage => ({
  document_id: documentId,
  number,
  text: "",
  layout: "[]",
  width: null,
  height: null,
  unit: null,
})

const newAtomicValue = async (projectId: string, agentId: string) =>
  (
    await db
      .insertInto("atomic_values")
      .values({
        project_id: projectId,
        agent_id: agentId,
        dimension_key: randomUUID(),
        dimension_values: "[]",
      })
      .returning("id")
      .executeTakeFirstOrThrow()
  ).id

describe("documents", () => {
  it("reads the live documents oldest first with their tags, which are being parsed, and their counts", async () => {
    const p = await newProject()
    const q = await newProject()
    const a = await newDocument(p, "a.pdf")
    const b = await newDocument(p, "b.pdf", "Pending", 2)
    const archived = await newDocument(p, "c.pdf")
    await db
      .updateTable("documents")
      .set({ archive_requested_at: sql`now()` })
      .where("id", "=", archived)
      .execute()
    const failed = await newDocument(q, "d.pdf", "Failed")
    await db.insertInto("document_tags").values({ document_id: a, key: "region", value: "EU" }).execute()
    await enqueue(db, {
      kind: "parse",
      idempotencyKey: `parse:${b}:2`,
      payload: { document_id: b },
      projectId: p,
    })

    const rows = await run(ProjectReads.liveDocumentsOfProjects(db, [p, q]))
    expect(rows.map((r) => [r.id, r.project_id, r.file_name, r.status, r.version, r.tags])).toEqual([
      [a, p, "a.pdf", "Processed", 1, { region: "EU" }],
      [b, p, "b.pdf", "Pending", 2, {}],
      [failed, q, "d.pdf", "Failed", 1, {}],
    ])
    expect((await run(ProjectReads.liveDocumentsOfProjects(db, [p], b))).map((r) => r.id)).toEqual([b])
    expect(await run(ProjectReads.documentsBeingParsed(db, [p, q]))).toEqual(new Set([b]))
    // The live documents counted (by the tallies the writes keep), as an agent's state inputs carry them.
    const [ap, aq] = [
      await run(insertAgent(db, p, { name: "A" })),
      await run(insertAgent(db, q, { name: "B" })),
    ]
    const inputs = await run(ProjectReads.agentStateInputs(db, [p, q]))
    expect(inputs.map((i) => [i.id, i.documents])).toEqual([
      [ap.id, [2, 1, 1]],
      [aq.id, [1, 0, 1]],
    ])
  })
})

describe("agents", () => {
  it("reads the agents oldest first, all of them or only some", async () => {
    const p = await newProject()
    const first = await run(insertAgent(db, p, { name: "First" }))
    const second = await run(insertAgent(db, p, { name: "Second" }))
    const names = async (only?: string | ReadonlyArray<string>) =>
      (await run(ProjectReads.agentsWithPartsOfProjects(db, [p], only))).map((r) => r.name)
    expect(await names()).toEqual(["First", "Second"])
    expect(await names(second.id)).toEqual(["Second"])
    expect(await names([first.id])).toEqual(["First"])
  })

  it("orders tied attachments by attachment for the pipeline, by the older dimension otherwise", async () => {
    const p = await newProject()
    const older = await newDimension(p, "Older")
    const newer = await newDimension(p, "Newer")
    const agent = await run(insertAgent(db, p, { name: "A" }))
    const settings = { are_values_dynamic: false, values: [], order: 0 }
    await run(saveAttachment(db, undefined, agent.id, newer, settings))
    await run(saveAttachment(db, undefined, agent.id, older, settings))
    const ids = await db
      .selectFrom("agent_dimensions")
      .select(["id", "dimension_id"])
      .where("agent_id", "=", agent.id)
      .orderBy("id")
      .execute()
    expect((await run(attachmentsOf(db, { agentIds: [agent.id] }))).map((a) => a.dimension_id)).toEqual([
      older,
      newer,
    ])
    const [read] = await run(ProjectReads.agentsWithPartsOfProjects(db, [p]))
    expect(read!.attachments.map((a) => a.dimension_id)).toEqual(ids.map((r) => r.dimension_id))
    expect(read!.attachments[0]).toMatchObject({ are_values_dynamic: false, values: [], source: "CUSTOM" })
  })

  it("reads each agent's references in their order", async () => {
    const p = await newProject()
    const a = await run(insertAgent(db, p, { name: "A" }))
    const b = await run(insertAgent(db, p, { name: "B" }))
    const derived = await run(insertAgent(db, p, { name: "Derived" }))
    await run(replaceReferences(db, derived.id, [b.id, a.id]))
    const read = await run(ProjectReads.agentsWithPartsOfProjects(db, [p]))
    expect(read.map((r) => [r.name, r.references])).toEqual([
      ["A", []],
      ["B", []],
      ["Derived", [b.id, a.id]],
    ])
  })
})

describe("the agents' list", () => {
  it("reads the organisation's projects' agents newest first with their parts and states, in one statement", async () => {
    const { organizationId, projectId: p } = await newOrganizationProject(db)
    const empty = (
      await db
        .insertInto("projects")
        .values({ organization_id: organizationId, name: "Empty" })
        .returning("id")
        .executeTakeFirstOrThrow()
    ).id
    const elsewhere = await newProject()
    await run(insertAgent(db, elsewhere, { name: "Not theirs" }))
    const dimension = await newDimension(p, "Region")
    const a = await run(insertAgent(db, p, { name: "A" }))
    const b = await run(insertAgent(db, p, { name: "B", is_evaluation: true }))
    const derived = await run(insertAgent(db, p, { name: "Derived", agent_type: "derived" }))
    await run(
      saveAttachment(db, undefined, a.id, dimension, { are_values_dynamic: false, values: ["EU"], order: 0 }),
    )
    await run(replaceReferences(db, derived.id, [b.id, a.id]))
    await newDocument(p, "a.pdf")

    const { counted, statements } = countingStatements()
    const listing = await run(ProjectReads.agentListing(counted, organizationId, [p, elsewhere, empty, p]))
    expect(statements).toHaveLength(1)
    expect(listing.projectIds).toEqual([p, empty])
    expect(listing.agents.map((r) => r.name)).toEqual(["Derived", "B", "A"])
    // Each part as the separate reads give it.
    const ids = listing.agents.map((r) => r.id)
    const rows = await db
      .selectFrom("agents")
      .selectAll()
      .where("project_id", "=", p)
      .orderBy("created_at", "desc")
      .orderBy("id", "desc")
      .execute()
    expect(listing.agents.map(({ attachments: _, references: __, state: ___, ...row }) => row)).toEqual(rows)
    const attachments = await run(attachmentsOf(db, { agentIds: ids }))
    expect(listing.agents.flatMap((r) => r.attachments)).toEqual(attachments)
    expect(attachments).toHaveLength(1)
    const references = await run(referencesOf(db, ids))
    expect(listing.agents.flatMap((r) => r.references)).toEqual(references)
    expect(references.map((r) => r.name)).toEqual(["B", "A"])
    const states = await run(ProjectReads.agentStateInputs(db, [p]))
    expect(listing.agents.map((r) => r.state)).toEqual([...states].reverse())
    expect(states[0]!.documents).toEqual([1, 1, 1])

    const evaluation = await run(ProjectReads.agentListing(db, organizationId, [p], { isEvaluation: true }))
    expect(evaluation.agents.map((r) => r.name)).toEqual(["B"])
    const others = await run(ProjectReads.agentListing(db, organizationId, [empty, elsewhere]))
    expect(others).toEqual({ projectIds: [empty], agents: [] })
  })
})

describe("records of finished work", () => {
  it("reads the extraction pairs and resolutions, and counts them per agent", async () => {
    const p = await newProject()
    const doc = await newDocument(p, "a.pdf")
    const stale = await newDocument(p, "b.pdf", "Processed", 2)
    const agent = await run(insertAgent(db, p, { name: "A", enable_web_search: true }))
    const other = await run(insertAgent(db, p, { name: "B" }))
    await db
      .insertInto("extraction_pairs")
      .values([
        {
          agent_id: agent.id,
          document_id: doc,
          agent_config_version: 1,
          document_version: 1,
          dimensions_key: "k",
        },
        // An older version of the document: not done.
        {
          agent_id: agent.id,
          document_id: stale,
          agent_config_version: 1,
          document_version: 1,
          dimensions_key: "k",
        },
      ])
      .execute()
    await db.insertInto("agent_resolutions").values({ agent_id: agent.id, agent_config_version: 1 }).execute()
    await db
      .insertInto("agent_resolutions")
      .values({ agent_id: other.id, agent_config_version: 1, complete: false })
      .execute()
    const [v1, v2] = [await newAtomicValue(p, agent.id), await newAtomicValue(p, agent.id)]
    const result = (atomicValueId: string, status: string) => ({
      project_id: p,
      agent_id: agent.id,
      agent_config_version: 1,
      atomic_value_id: atomicValueId,
      result_name: "r",
      value: JSON.stringify("x"),
      resolution_status: status,
      justification: null,
      references: "{}",
      sources: "[]",
      web_supplement: null,
      updated_by_email: null,
      latest_review_status: null,
      latest_review_by: null,
    })
    await db
      .insertInto("resolution_results")
      .values([result(v1, "Resolved"), result(v2, "No result")])
      .execute()
    await db
      .insertInto("web_searches")
      .values([
        {
          atomic_value_id: v1,
          agent_id: agent.id,
          agent_config_version: 1,
          query: "q1",
          searched_at: new Date(),
        },
        { atomic_value_id: v2, agent_id: agent.id, agent_config_version: 1, query: "q2", searched_at: null },
      ])
      .execute()

    const pairs = await run(ProjectReads.extractionPairsOfProjects(db, [p]))
    expect(pairs.map((r) => [r.project_id, r.agent_id, r.document_id, r.dimensions_key]).sort()).toEqual(
      [
        [p, agent.id, doc, "k"],
        [p, agent.id, stale, "k"],
      ].sort(),
    )
    const resolved = async (agentIds?: ReadonlyArray<string>) =>
      (await run(ProjectReads.resolutionsOfProjects(db, [p], agentIds)))
        .map((r) => [r.agent_id, r.complete])
        .sort()
    expect(await resolved()).toEqual(
      [
        [agent.id, true],
        [other.id, false],
      ].sort(),
    )
    expect(await resolved([other.id])).toEqual([[other.id, false]])

    // The agents' state inputs: pairs that count (the current document version, by key), results by
    // status, web searches, the resolution record and the latest extraction, from tallies and records.
    const [mine] = await run(ProjectReads.agentStateInputs(db, [p], [agent.id]))
    expect(mine).toMatchObject({
      id: agent.id,
      done: { k: 1 },
      results: { Resolved: 1, "No result": 1 },
      searches: [2, 1],
      resolution: { config: 1, complete: true },
      active: false,
    })
    expect(mine!.latest).not.toBeNull()
    const [others] = await run(ProjectReads.agentStateInputs(db, [p], [other.id]))
    expect(others).toMatchObject({ done: {}, results: {}, searches: null, latest: null })

    await run(clearResolutionsOfProject(db, p))
    expect(await resolved()).toEqual([])
  })

  it("finds the agents with unfinished tasks in their project's running run", async () => {
    const p = await newProject()
    const queued = await run(createQueuedRun(db, p))
    const agent = await run(insertAgent(db, p, { name: "Resolved by a task" }))
    await run(enqueueAgentTasks(db, "resolve", p, queued.id, [agent.id]))
    const active = async () => (await run(ProjectReads.agentStateInputs(db, [p]))).map((i) => i.active)
    expect(await active()).toEqual([false])
    await run(startRun(db, queued.id, {}))
    expect(await active()).toEqual([true])
  })
})

describe("an extract task's inputs", () => {
  it("are its running run, its live document of the run's project and the pages that fit, in one read", async () => {
    const projectId = await newProject()
    const other = await newProject()
    const document = await newDocument(projectId, "contract.pdf")
    await db
      .insertInto("document_tags")
      .values({ document_id: document, key: "year", value: "2025" })
      .execute()
    const elsewhere = await newDocument(other, "elsewhere.pdf")
    const archived = await newDocument(projectId, "archived.pdf")
    await db
      .updateTable("documents")
      .set({ archive_requested_at: new Date() })
      .where("id", "=", archived)
      .execute()
    await run(
      replacePages(
        db,
        document,
        [1, 2].map((number) => ({ ...emptyPage(document, number), text: `page ${number}` })),
      ),
    )
    const queued = await run(createQueuedRun(db, projectId))
    const inputs = (documentId: string, maxChars = 100) =>
      run(ProjectReads.extractionInputs(db, { runId: queued.id, documentId, maxChars }))

    // Not running yet: no run (the task does nothing).
    expect((await inputs(document)).run).toBeUndefined()
    await run(startRun(db, queued.id, {}))
    const read = await inputs(document)
    expect(read.run).toEqual({ projectId, referenceDate: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/) })
    expect(read.document).toEqual({
      id: document,
      project_id: projectId,
      file_name: "contract.pdf",
      status: "Processed",
      version: 1,
      tags: { year: "2025" },
    })
    expect(read.size).toEqual({ pages: 2, chars: "12", last: 2 })
    expect(read.pages?.map((p) => [p.number, p.text])).toEqual([
      [1, "page 1"],
      [2, "page 2"],
    ])
    // Larger than allowed: the size alone.
    expect(await inputs(document, 11)).toMatchObject({ size: { pages: 2, last: 2 }, pages: undefined })
    // Another project's document, or an archived one, is none of the task's.
    expect((await inputs(elsewhere)).document).toBeUndefined()
    expect((await inputs(archived)).document).toBeUndefined()
    expect(await inputs(randomUUID())).toMatchObject({ document: undefined, size: { pages: 0, last: null } })
    expect(read.agents).toBeUndefined()
  })

  it("carry the task's agents of the run's project with their parts, as the agents' own read has them", async () => {
    const projectId = await newProject()
    const document = await newDocument(projectId, "contract.pdf")
    const dimension = await newDimension(projectId, "Region")
    const first = await run(insertAgent(db, projectId, { name: "First" }))
    const second = await run(insertAgent(db, projectId, { name: "Second" }))
    await run(insertAgent(db, projectId, { name: "Unasked" }))
    const elsewhere = await run(insertAgent(db, await newProject(), { name: "Elsewhere" }))
    await run(
      saveAttachment(db, undefined, second.id, dimension, {
        are_values_dynamic: true,
        values: ["EU"],
        order: 0,
      }),
    )
    await run(replaceReferences(db, second.id, [first.id]))
    const queued = await run(createQueuedRun(db, projectId))
    await run(startRun(db, queued.id, {}))
    const asked = [second.id, first.id, elsewhere.id]
    const read = await run(
      ProjectReads.extractionInputs(db, {
        runId: queued.id,
        documentId: document,
        maxChars: 100,
        agentIds: asked,
      }),
    )
    const own = await run(ProjectReads.agentsWithPartsOfProjects(db, [projectId], asked))
    expect(read.agents?.map(({ plain_atomic_value_id: _, ...agent }) => agent)).toEqual(own)
    // An agent's atomic value of no dimension instances, once made.
    expect(read.agents?.map((a) => a.plain_atomic_value_id)).toEqual([null, null])
    const [made] = await run(ensureAtomicValues(db, projectId, [{ agentId: first.id, instances: [] }]))
    const again = await run(
      ProjectReads.extractionInputs(db, {
        runId: queued.id,
        documentId: document,
        maxChars: 100,
        agentIds: asked,
      }),
    )
    expect(again.agents?.map((a) => a.plain_atomic_value_id)).toEqual([made!.id, null])
    // Given those values, making the agents' atomic values of no instances runs no statement.
    const { counted, statements } = countingStatements()
    const plain = new Map(again.agents!.map((a) => [a.id, a.plain_atomic_value_id]))
    const request = [{ agentId: first.id, instances: [] }]
    expect(await run(ensureAtomicValues(counted, projectId, request, plain))).toEqual([made])
    expect(statements).toEqual([])
    // Without the value of one of them, they are made (and read) as before.
    const both = [...request, { agentId: second.id, instances: [] }]
    const [, secondMade] = await run(ensureAtomicValues(counted, projectId, both, plain))
    expect(statements.length).toBeGreaterThan(0)
    expect(secondMade!.id).not.toBe(made!.id)
    expect(read.agents?.map((a) => a.name)).toEqual(["First", "Second"])
    expect(read.agents?.[1]?.attachments).toMatchObject([{ dimension_id: dimension, values: ["EU"] }])
    expect(read.agents?.[0]?.created_at).toBeInstanceOf(Date)
  })
})
