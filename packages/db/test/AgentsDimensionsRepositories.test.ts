import { useTestDatabase } from "@dxs/testing/TestDatabase"
import { Effect } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { makeKysely } from "../src/Db.ts"
import {
  attachmentsOf,
  attachToOtherAgents,
  insertAgent,
  saveAttachment,
} from "../src/repositories/Agents.ts"
import { insertCustomDimension, updateDimension } from "../src/repositories/Dimensions.ts"
import {
  failAbandonedMappings,
  mappingTaskKey,
  OUTPUT_MAPPING_TASK,
  outputSchemaOf,
  requestAutoMapping,
} from "../src/repositories/OutputSchemas.ts"
import { customDimension, newOrganizationProject } from "./fixtures.ts"

const url = await useTestDatabase()
const db = makeKysely(url, 2)
afterAll(() => db.destroy())

const run = Effect.runPromise

const newProject = async () => (await newOrganizationProject(db)).projectId

describe("agent and dimension repositories", () => {
  it("reads attachments alike by agent and by project: each agent's in order", async () => {
    const projectId = await newProject()
    const region = (await run(insertCustomDimension(db, customDimension(projectId, "Region"))))!
    const year = (await run(insertCustomDimension(db, customDimension(projectId, "Year"))))!
    const a = await run(insertAgent(db, projectId, { name: "A" }))
    const b = await run(insertAgent(db, projectId, { name: "B" }))
    await run(
      saveAttachment(db, undefined, a.id, year.id, { are_values_dynamic: true, values: [], order: 1 }),
    )
    await run(
      saveAttachment(db, undefined, a.id, region.id, { are_values_dynamic: false, values: ["EU"], order: 0 }),
    )
    await run(
      saveAttachment(db, undefined, b.id, year.id, { are_values_dynamic: false, values: ["2024"], order: 0 }),
    )

    const byAgents = await run(attachmentsOf(db, { agentIds: [a.id, b.id] }))
    const byProject = await run(attachmentsOf(db, { projectId }))
    expect(byProject).toEqual(byAgents)
    expect(byAgents.filter((x) => x.agent_id === a.id).map((x) => [x.name, x.values])).toEqual([
      ["Region", ["EU"]],
      ["Year", []],
    ])
    expect(await run(attachmentsOf(db, { agentIds: [] }))).toEqual([])
  })

  it("attaches a dimension last to the other agents, keeping the attachments they have", async () => {
    const projectId = await newProject()
    const region = (await run(insertCustomDimension(db, customDimension(projectId, "Region"))))!
    const year = (await run(insertCustomDimension(db, customDimension(projectId, "Year"))))!
    const a = await run(insertAgent(db, projectId, { name: "A" }))
    const b = await run(insertAgent(db, projectId, { name: "B" }))
    const c = await run(insertAgent(db, projectId, { name: "C" }))
    await run(
      saveAttachment(db, undefined, b.id, region.id, { are_values_dynamic: false, values: ["EU"], order: 0 }),
    )
    await run(
      saveAttachment(db, undefined, c.id, year.id, { are_values_dynamic: true, values: [], order: 0 }),
    )

    await run(attachToOtherAgents(db, projectId, a.id, year.id, false, ["2024"]))

    const rows = await run(attachmentsOf(db, { projectId }))
    const of = (id: string) => rows.filter((r) => r.agent_id === id).map((r) => [r.name, r.order, r.values])
    expect(of(a.id)).toEqual([])
    expect(of(b.id)).toEqual([
      ["Region", 0, ["EU"]],
      ["Year", 1, ["2024"]],
    ])
    expect(of(c.id)).toEqual([["Year", 0, []]])
  })

  it("answers undefined, not a failure, for a dimension name the project has in any case", async () => {
    const projectId = await newProject()
    const region = (await run(insertCustomDimension(db, customDimension(projectId, "Region"))))!
    expect(await run(insertCustomDimension(db, customDimension(projectId, "REGION")))).toBeUndefined()
    const year = (await run(insertCustomDimension(db, customDimension(projectId, "Year"))))!
    expect(await run(updateDimension(db, year.id, { name: "region" }))).toBeUndefined()
    expect((await run(updateDimension(db, region.id, { name: "Area" })))?.name).toBe("Area")
  })
})

describe("output schema repository", () => {
  it("queues one generation per schema version, and fails a pending one whose task failed", async () => {
    const projectId = await newProject()
    await run(requestAutoMapping(db, projectId, { type: "object" }, false))
    const row = await run(outputSchemaOf(db, projectId))
    expect([row.output_mapping_status, row.output_auto_map, row.output_schema_version]).toEqual([
      "pending",
      true,
      1,
    ])
    const task = await db
      .selectFrom("tasks")
      .select(["kind", "idempotency_key"])
      .where("project_id", "=", projectId)
      .executeTakeFirstOrThrow()
    expect(task).toEqual({ kind: OUTPUT_MAPPING_TASK, idempotency_key: mappingTaskKey(projectId, 1) })

    expect(await run(failAbandonedMappings(db))).toBe(0)
    await db
      .updateTable("tasks")
      .set({ status: "failed", last_error: "boom" })
      .where("project_id", "=", projectId)
      .execute()
    expect(await run(failAbandonedMappings(db))).toBe(1)
    const failed = await run(outputSchemaOf(db, projectId))
    expect([failed.output_mapping_status, failed.output_mapping_error]).toEqual([
      "failed",
      "automatic mapping failed: boom",
    ])
  })
})
