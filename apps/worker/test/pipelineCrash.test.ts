/**
 * Crash and concurrency tests of pipeline runs (DESIGN §3, §6): two worker OS processes run the product's
 * handlers against a fake OpenAI-compatible server in this process, slow enough to kill a worker while a
 * model request is in flight. A run must then still finish with nothing lost or doubled and exactly one
 * completion event.
 */
import { makeKysely } from "@dxs/db/Db"
import { canonicalDecimal } from "@dxs/domain/Values"
import { requestLaunch } from "@dxs/pipeline/run/Runs"
import {
  answerDocument,
  type ChatCompletionRequestBody,
  documentRequest,
  type FakeOpenAiRequest,
  type FakeOpenAiServer,
  genericResponder,
  labelledLines,
  startFakeOpenAiServer,
} from "@dxs/testing/FakeOpenAiServer"
import { useTestDatabase } from "@dxs/testing/TestDatabase"
// Brings in the `inject("dxsTemplateUrl")` typing that TestDatabase relies on.
import type {} from "@dxs/testing/TestGlobalSetup"
import { Effect } from "effect"
import { afterAll, afterEach, describe, expect, it } from "vitest"
import { eventually, killWorker, workerProcesses } from "./support/processes.ts"

const url = await useTestDatabase()
const db = makeKysely(url, 4)
afterAll(() => db.destroy())

// ---------------------------------------------------------------------------------------------------------
// Worker processes

const processes = workerProcesses("pipelineWorkerProcess.ts", url)
const { outputs } = processes
const servers: FakeOpenAiServer[] = []

/** Starts a pipeline worker OS process using the model server at `modelUrl`; resolves once it is ready. */
const startWorker = (id: string, modelUrl: string, env: Record<string, string> = {}) =>
  processes.start(id, {
    MODEL_URL: modelUrl,
    CONCURRENCY: "2",
    MODEL_CONCURRENCY: "2",
    POLL_MS: "100",
    ...env,
  })

afterEach(async () => {
  await processes.stopAll()
  await Promise.all(servers.splice(0).map((s) => s.close()))
})

// ---------------------------------------------------------------------------------------------------------
// The project: invoices and three extraction agents

const DOCUMENTS = 12
const VENDORS = ["Acme Supplies Ltd.", "Northwind Traders", "Globex Corporation"]

interface SeededDocument {
  readonly id: string
  readonly name: string
  readonly invoiceNumber: string
  /** As printed, without the currency sign: `1,123.45`. */
  readonly totalPrinted: string
  readonly total: number
  readonly vendor: string
}

interface Seeded {
  readonly organizationId: string
  readonly projectId: string
  readonly documents: ReadonlyArray<SeededDocument>
  /** Agent name → id. The agents' names are the labels of the lines stating their values. */
  readonly agents: Readonly<Record<"Invoice Number" | "Total Due" | "Vendor", string>>
}

const invoiceText = (d: Omit<SeededDocument, "id">, k: number): ReadonlyArray<string> => {
  const header =
    `${d.vendor}\n42 Harbour Road, Springfield\n\nINVOICE\n` +
    `Vendor: ${d.vendor}\nInvoice Number: ${d.invoiceNumber}\nInvoice Date: 2026-03-${String(k).padStart(2, "0")}\n` +
    "Bill To: Example Customer GmbH, Hauptstrasse 1, Berlin\n"
  const lines =
    "Description                 Qty   Amount\n" +
    `Consulting services          ${k}   $${d.totalPrinted}\n` +
    `Subtotal: $${d.totalPrinted}\nTax (0%): $0.00\nTotal Due: $${d.totalPrinted}\n` +
    "Payment terms: 30 days net. Thank you for your business.\n"
  // Even invoices have two pages: the amounts on the second.
  return k % 2 === 0 ? [header, lines] : [`${header}\n${lines}`]
}

const seedProject = async (name: string): Promise<Seeded> => {
  const org = await db.insertInto("organizations").values({ name }).returning("id").executeTakeFirstOrThrow()
  const project = await db
    .insertInto("projects")
    .values({
      organization_id: org.id,
      name: "Invoices",
      reference_date: "2026-04-01",
      auto_archive_after_days: null,
      folder_id: null,
      project_modules: JSON.stringify({}),
      target_output_schema: null,
      archive_of_project_id: null,
    })
    .returning("id")
    .executeTakeFirstOrThrow()
  const documentDimension = await db
    .insertInto("dimensions")
    .values({
      project_id: project.id,
      name: "Document",
      description: "One value per document",
      source: "DOCUMENT",
      tag_key: null,
    })
    .returning("id")
    .executeTakeFirstOrThrow()

  const documents: Array<SeededDocument> = []
  for (let k = 1; k <= DOCUMENTS; k++) {
    const cents = 100_000 + 12_345 * k
    const seed = {
      name: `invoice-${String(k).padStart(3, "0")}.pdf`,
      invoiceNumber: `INV-${String(k).padStart(4, "0")}`,
      totalPrinted: `${Math.floor(cents / 100).toLocaleString("en-US")}.${String(cents % 100).padStart(2, "0")}`,
      total: cents / 100,
      vendor: VENDORS[k % VENDORS.length]!,
    }
    const pages = invoiceText(seed, k)
    const row = await db
      .insertInto("documents")
      .values({
        project_id: project.id,
        file_name: seed.name,
        type: "pdf",
        status: "Processed",
        page_count: pages.length,
        version: 1,
        failure_reason: null,
        last_parsed_at: new Date(),
        archive_requested_at: null,
        blob_key: `${project.id}/${seed.name}`,
        content_type: "application/pdf",
        size_bytes: 2048,
        sha256: "0".repeat(64),
        parent_document_id: null,
      })
      .returning("id")
      .executeTakeFirstOrThrow()
    await db
      .insertInto("pages")
      .values(
        pages.map((text, i) => ({
          document_id: row.id,
          number: i + 1,
          text,
          layout: "[]",
          width: 612,
          height: 792,
          unit: "pt",
        })),
      )
      .execute()
    documents.push({ id: row.id, ...seed })
  }

  const agent = async (name: string, instructions: string, valueType: string, perDocument: boolean) => {
    const row = await db
      .insertInto("agents")
      .values({
        project_id: project.id,
        template_id: null,
        name,
        extraction_instructions: instructions,
        value_type: valueType,
        improvement_tip_summary: null,
        inconsistency_summary: null,
      })
      .returning("id")
      .executeTakeFirstOrThrow()
    if (perDocument)
      await db
        .insertInto("agent_dimensions")
        .values({ agent_id: row.id, dimension_id: documentDimension.id, values: JSON.stringify([]) })
        .execute()
    return row.id
  }
  const agents = {
    "Invoice Number": await agent("Invoice Number", "The invoice's number, as printed.", "string", true),
    "Total Due": await agent("Total Due", "The total amount due on the invoice.", "number", true),
    // No dimension: one value for the whole project, resolved across the documents by the model.
    Vendor: await agent("Vendor", "The company that issued the invoice.", "string", false),
  }
  return { organizationId: org.id, projectId: project.id, documents, agents }
}

// ---------------------------------------------------------------------------------------------------------
// The fake model: reads the value off the line its label starts, like a careful model would

const userMessage = (body: ChatCompletionRequestBody) =>
  String(body.messages?.find((m) => m.role === "user")?.content ?? "")

/** All of a request's messages, as one text (a document request's pages and agents are in two). */
const messagesOf = (body: ChatCompletionRequestBody) => JSON.stringify(body.messages ?? [])

const schemaName = (body: ChatCompletionRequestBody) => body.response_format?.json_schema?.name

const enumOf = (schema: unknown, ...path: ReadonlyArray<string>): ReadonlyArray<string> => {
  let node = schema as Record<string, unknown> | undefined
  for (const key of path) node = node?.[key] as Record<string, unknown> | undefined
  return (node?.enum as ReadonlyArray<string> | undefined) ?? []
}

const respond = (body: ChatCompletionRequestBody): unknown => {
  const user = userMessage(body)
  const schema = body.response_format?.json_schema?.schema
  switch (schemaName(body)) {
    case "extract_document": {
      const asked = documentRequest(body)!
      return answerDocument(asked, (agent) =>
        labelledLines(asked, agent, { firstOnly: true, value: (text) => text.replace(/^\$/, "") }),
      )
    }
    case "check_consistency":
      return {
        verdicts: enumOf(schema, "properties", "verdicts", "items", "properties", "id").map((id) => ({
          id,
          justification: "Each invoice states its own issuer.",
          consistent: true,
        })),
        summary: null,
      }
    case "resolve_value":
      return {
        justification: "The invoices name different issuers; the first is reported.",
        used_extraction_ids: enumOf(schema, "properties", "used_extraction_ids", "items").slice(0, 1),
        status: "Requires attention",
        value: /^E1: value "(.*)" \(source/m.exec(user)?.[1] ?? null,
      }
    default:
      return genericResponder(body)
  }
}

const startModel = async (options: Parameters<typeof startFakeOpenAiServer>[0] = {}) => {
  const server = await startFakeOpenAiServer({ latencyMs: 150, respond, ...options })
  servers.push(server)
  return server
}

const sentBy = (r: FakeOpenAiRequest, workerId: string) => r.headers.authorization === `Bearer ${workerId}`

// ---------------------------------------------------------------------------------------------------------
// Runs

const launch = async (projectId: string) => {
  const outcome = await db.transaction().execute((trx) => Effect.runPromise(requestLaunch(trx, projectId)))
  if (outcome._tag !== "Accepted") throw new Error(`launch not accepted: ${outcome.message}`)
  expect(outcome).toMatchObject({ created: true, runNumber: 1, decision: "Plan" })
  return outcome.runId
}

const runRow = (runId: string) =>
  db.selectFrom("runs").selectAll().where("id", "=", runId).executeTakeFirstOrThrow()

const runTasks = (runId: string) => db.selectFrom("tasks").selectAll().where("run_id", "=", runId).execute()

const countTasks = async (runId: string, kind: string, status: string) => {
  const { n } = await db
    .selectFrom("tasks")
    .select((eb) => eb.fn.countAll<string>().as("n"))
    .where("run_id", "=", runId)
    .where("kind", "=", kind)
    .where("status", "=", status as "succeeded")
    .executeTakeFirstOrThrow()
  return Number(n)
}

/** Waits for the run to end (succeeded or failed) and returns its row. */
const runEnded = (runId: string) =>
  eventually(async () => {
    const run = await runRow(runId)
    return run.status === "succeeded" || run.status === "failed" ? run : undefined
  }).catch((e) => {
    throw new Error(`${e}\nworker output:\n${outputs()}`)
  })

/**
 * Everything a succeeded run must leave behind: one extraction record and one extraction per agent/document
 * pair at the current versions with the value the document states, the resolved values, every task done
 * once by key, and exactly one completion event.
 */
const expectCompleteRun = async (seeded: Seeded, runId: string, server: FakeOpenAiServer) => {
  const run = await runRow(runId)
  expect(run, outputs()).toMatchObject({
    status: "succeeded",
    phase: null,
    failure_reason: null,
    error: null,
  })
  const agentIds = Object.values(seeded.agents)

  const pairs = await db
    .selectFrom("extraction_pairs")
    .selectAll()
    .where("agent_id", "in", agentIds)
    .execute()
  expect(pairs).toHaveLength(agentIds.length * DOCUMENTS)
  for (const agentId of agentIds)
    for (const d of seeded.documents) {
      const mine = pairs.filter((p) => p.agent_id === agentId && p.document_id === d.id)
      expect(mine, `pair ${agentId}/${d.name}`).toHaveLength(1)
      expect(mine[0]).toMatchObject({ agent_config_version: 1, document_version: 1, value_count: 1 })
    }

  // No duplicates: one extraction per agent, document and atomic value.
  const groups = await db
    .selectFrom("extractions")
    .select((eb) => ["agent_id", "document_id", "atomic_value_id", eb.fn.countAll<string>().as("n")])
    .where("project_id", "=", seeded.projectId)
    .groupBy(["agent_id", "document_id", "atomic_value_id"])
    .execute()
  expect(groups.filter((g) => Number(g.n) !== 1)).toEqual([])
  const extractions = await db
    .selectFrom("extractions")
    .selectAll()
    .where("project_id", "=", seeded.projectId)
    .execute()
  expect(extractions).toHaveLength(agentIds.length * DOCUMENTS)
  for (const d of seeded.documents) {
    const of = (agentId: string) =>
      extractions.filter((e) => e.agent_id === agentId && e.document_id === d.id).map((e) => e.value)
    expect(of(seeded.agents["Invoice Number"]), d.name).toEqual([d.invoiceNumber])
    expect(of(seeded.agents["Total Due"]), d.name).toEqual([canonicalDecimal(d.total)])
    expect(of(seeded.agents.Vendor), d.name).toEqual([d.vendor])
  }
  for (const e of extractions) expect(e).toMatchObject({ agent_config_version: 1, source_type: "document" })

  // Per-document agents: one result per document; the project-wide Vendor: one result.
  const results = await db
    .selectFrom("resolution_results")
    .selectAll()
    .where("project_id", "=", seeded.projectId)
    .execute()
  const resultsOf = (agentId: string) => results.filter((r) => r.agent_id === agentId)
  expect(
    resultsOf(seeded.agents["Invoice Number"])
      .map((r) => r.value)
      .sort(),
  ).toEqual(seeded.documents.map((d) => d.invoiceNumber).sort())
  expect(
    resultsOf(seeded.agents["Total Due"])
      .map((r) => r.value as number)
      .sort((a, b) => a - b),
  ).toEqual(seeded.documents.map((d) => d.total).sort((a, b) => a - b))
  expect(resultsOf(seeded.agents.Vendor)).toHaveLength(1)
  expect(resultsOf(seeded.agents.Vendor)[0]).toMatchObject({ resolution_status: "Requires attention" })
  const resolutions = await db
    .selectFrom("agent_resolutions")
    .selectAll()
    .where("agent_id", "in", agentIds)
    .execute()
  expect(resolutions.map((r) => [r.agent_id, r.agent_config_version, r.complete]).sort()).toEqual(
    agentIds.map((id) => [id, 1, true]).sort(),
  )

  // Every task once by key, all done.
  const tasks = await runTasks(runId)
  const byKind = (kind: string) => tasks.filter((t) => t.kind === kind)
  expect(byKind("run-start")).toHaveLength(1)
  // One extraction task per document, holding every agent.
  expect(byKind("extract")).toHaveLength(DOCUMENTS)
  expect(byKind("resolve")).toHaveLength(agentIds.length)
  expect(tasks).toHaveLength(1 + DOCUMENTS + agentIds.length)
  expect(tasks.filter((t) => t.status !== "succeeded")).toEqual([])
  expect(new Set(byKind("extract").map((t) => t.payload.documentId)).size).toBe(DOCUMENTS)
  for (const t of byKind("extract"))
    expect((t.payload.agents as Array<{ agentId: string }>).map((a) => a.agentId).sort()).toEqual(
      [...agentIds].sort(),
    )

  // Usage is counted once per committed task: never more than the completions the server sent; at least
  // one call per document plus the Vendor's consistency check and resolution.
  expect(run.model_calls).toBeGreaterThanOrEqual(DOCUMENTS + 2)
  expect(run.model_calls).toBeLessThanOrEqual(server.completions)

  // Exactly one completion event.
  const events = await db
    .selectFrom("events")
    .selectAll()
    .where("project_id", "=", seeded.projectId)
    .execute()
  expect(events).toHaveLength(1)
  expect(events[0]).toMatchObject({
    run_id: runId,
    organization_id: seeded.organizationId,
    type: "agent.completion.succeeded",
    data: { project_id: seeded.projectId, run_number: 1 },
  })
  const reported = (events[0]!.data.agents as ReadonlyArray<{ id: string }>).map((a) => a.id).sort()
  expect(reported).toEqual([...agentIds].sort())
  return tasks
}

// ---------------------------------------------------------------------------------------------------------

describe("pipeline runs across worker processes", () => {
  it("a worker killed in the middle of a run: another finishes it, nothing lost or duplicated, one completion event", async () => {
    const seeded = await seedProject("crash-mid-run")
    const server = await startModel()
    const [a, b] = await Promise.all([
      startWorker("proc-a", server.baseUrl, { LEASE_MS: "1500" }),
      startWorker("proc-b", server.baseUrl, { LEASE_MS: "1500" }),
    ])
    const runId = await launch(seeded.projectId)
    const total = DOCUMENTS

    // Some extractions are done, and worker A is waiting for the model on others: kill it there.
    const unanswered = () =>
      server.requests.filter(
        (r) => sentBy(r, "proc-a") && r.status === 0 && schemaName(r.body) === "extract_document",
      )
    await eventually(
      async () => {
        const done = await countTasks(runId, "extract", "succeeded")
        return done >= 1 && done < total && unanswered().length > 0 ? true : undefined
      },
      120_000,
      10,
    ).catch((e) => {
      throw new Error(`${e}\nworker output:\n${outputs()}`)
    })
    // Taken in the same tick as the kill: the server cannot have answered these, so their tasks were
    // mid-flight in A and cannot have been completed by it.
    const victims = unanswered()
    process.kill(-a.child.pid!, "SIGKILL")
    expect(victims.length).toBeGreaterThan(0)
    await killWorker(a)

    const run = await runEnded(runId)
    expect(run.status, outputs()).toBe("succeeded")
    const tasks = await expectCompleteRun(seeded, runId, server)

    // The interrupted tasks were claimed again after their lease expired and completed by B.
    for (const victim of victims) {
      const user = userMessage(victim.body)
      const documentId = seeded.documents.find((d) => d.name === /^Document: (.+)$/m.exec(user)?.[1])?.id
      const task = tasks.find((t) => t.kind === "extract" && t.payload.documentId === documentId)
      expect(task, user).toBeDefined()
      // A lease that expired within the retry window is no attempt of the task's own: B's claim is its first.
      expect(task!.attempts).toBe(1)
      expect(task!.lease_expirations).toBeGreaterThanOrEqual(1)
      expect(task).toMatchObject({ status: "succeeded", locked_by: "proc-b", last_error: null })
      // B asked the model again for the same document and agents.
      const again = server.requests.filter(
        (r) =>
          sentBy(r, "proc-b") &&
          r.status === 200 &&
          schemaName(r.body) === "extract_document" &&
          messagesOf(r.body) === messagesOf(victim.body),
      )
      expect(again.length).toBeGreaterThanOrEqual(1)
    }
    expect(tasks.some((t) => t.attempts >= 2 || t.lease_expirations >= 1)).toBe(true)
    expect(b.child.exitCode).toBeNull()
  })

  it("two workers share one run", async () => {
    const seeded = await seedProject("shared-run")
    const server = await startModel()
    // A long lease: nothing expires while both are alive, so every task runs once.
    await Promise.all([
      startWorker("proc-a", server.baseUrl, { LEASE_MS: "10000" }),
      startWorker("proc-b", server.baseUrl, { LEASE_MS: "10000" }),
    ])
    const runId = await launch(seeded.projectId)
    const run = await runEnded(runId)
    expect(run.status, outputs()).toBe("succeeded")
    const tasks = await expectCompleteRun(seeded, runId, server)

    for (const t of tasks) expect(t, t.kind).toMatchObject({ attempts: 1, lease_expirations: 0 })
    // The worker that completed a task stays recorded in `locked_by`.
    const extractedBy = new Set(tasks.filter((t) => t.kind === "extract").map((t) => t.locked_by))
    expect([...extractedBy].sort()).toEqual(["proc-a", "proc-b"])
    // Both asked the model, once per document for all its agents, and nothing was asked twice.
    expect(server.requests.some((r) => sentBy(r, "proc-a"))).toBe(true)
    expect(server.requests.some((r) => sentBy(r, "proc-b"))).toBe(true)
    const extractRequests = server.requests.filter((r) => schemaName(r.body) === "extract_document")
    expect(extractRequests).toHaveLength(DOCUMENTS)
    expect(new Set(extractRequests.map((r) => messagesOf(r.body))).size).toBe(extractRequests.length)
  })

  it("a stage that fails on every attempt ends the run as failed with one agent.completion.failed event", async () => {
    const seeded = await seedProject("failing-stage")
    // Every request is refused with 400: a model error that is not worth retrying within the call.
    const server = await startModel({
      latencyMs: 20,
      failures: Array.from({ length: 10_000 }, () => ({ status: 400 })),
    })
    await Promise.all([
      startWorker("proc-a", server.baseUrl, { LEASE_MS: "10000" }),
      startWorker("proc-b", server.baseUrl, { LEASE_MS: "10000" }),
    ])
    const runId = await launch(seeded.projectId)
    // Two attempts per task keep the test short (the queue's backoff starts at 1 s). A task claimed before
    // this update still reads its limit from the row when its attempt fails, so it gets one more.
    await eventually(async () => ((await runRow(runId)).status !== "queued" ? true : undefined))
    await db
      .updateTable("tasks")
      .set({ max_attempts: 2 })
      .where("run_id", "=", runId)
      .where("kind", "=", "extract")
      .execute()

    const run = await runEnded(runId)
    expect(run, outputs()).toMatchObject({ status: "failed", failure_reason: "internal_error", phase: null })
    expect(run.error).toMatch(/^extract: /)
    expect(run.error).toContain("400")
    // Wait for the tasks still in hand when the run ended to settle, so a late one could still show up
    // as a second event below.
    await eventually(async () => {
      const open = (await runTasks(runId)).filter((t) => t.status === "pending" || t.status === "running")
      return open.length === 0 ? true : undefined
    }).catch((e) => {
      throw new Error(`${e}\nworker output:\n${outputs()}`)
    })

    const events = await db
      .selectFrom("events")
      .selectAll()
      .where("project_id", "=", seeded.projectId)
      .execute()
    expect(events).toHaveLength(1)
    expect(events[0]).toMatchObject({
      run_id: runId,
      organization_id: seeded.organizationId,
      type: "agent.completion.failed",
      data: { project_id: seeded.projectId, run_number: 1, failure_reason: "internal_error" },
    })
    // Nothing was extracted or resolved, and the run never got past extraction.
    const agentIds = Object.values(seeded.agents)
    const counts = await Promise.all(
      (["extractions", "extraction_pairs", "resolution_results"] as const).map((table) =>
        db
          .selectFrom(table)
          .select((eb) => eb.fn.countAll<string>().as("n"))
          .where("agent_id", "in", agentIds)
          .executeTakeFirstOrThrow()
          .then((r) => Number(r.n)),
      ),
    )
    expect(counts).toEqual([0, 0, 0])
    const tasks = await runTasks(runId)
    expect(tasks.filter((t) => t.kind === "resolve")).toEqual([])
    expect(tasks.filter((t) => t.kind === "extract" && t.status === "failed").length).toBeGreaterThan(0)
    expect(server.requests.every((r) => r.status === 400)).toBe(true)
  })

  // KNOWN BUG, skipped until fixed in the pipeline: a task whose lease expires on its last attempt is failed
  // by the next claim (TaskQueue.claim, `exhausted`) without ending its run, and `failAbandonedRuns` only
  // looks at tasks still `running`, so it never sees it. The run then either stays `running` forever (the
  // expiry came after the phase's other tasks) or, since `advanceIfPhaseDone` counts a failed task as done,
  // goes on and succeeds without the lost pairs. Both were observed with this test unskipped.
  // After the outages' retry window (here none), a lease that expires counts as the task's attempt.
  it("a task whose last attempt dies with its worker after the retry window ends the run as failed", async () => {
    const seeded = await seedProject("exhausted-by-crash")
    const server = await startModel()
    const [a] = await Promise.all([
      startWorker("proc-a", server.baseUrl, { LEASE_MS: "1500", RETRY_WINDOW_MS: "0" }),
      startWorker("proc-b", server.baseUrl, { LEASE_MS: "1500", RETRY_WINDOW_MS: "0" }),
    ])
    const runId = await launch(seeded.projectId)
    await eventually(async () => ((await runRow(runId)).status !== "queued" ? true : undefined), 60_000, 5)
    // One attempt per extraction: a task A holds when it dies has none left.
    await db
      .updateTable("tasks")
      .set({ max_attempts: 1 })
      .where("run_id", "=", runId)
      .where("kind", "=", "extract")
      .execute()
    const unanswered = () =>
      server.requests.filter(
        (r) => sentBy(r, "proc-a") && r.status === 0 && schemaName(r.body) === "extract_document",
      )
    await eventually(async () => (unanswered().length > 0 ? true : undefined), 60_000, 5)
    process.kill(-a.child.pid!, "SIGKILL")
    await killWorker(a)

    // Bounded: today the run may never end.
    const run = await eventually(async () => {
      const r = await runRow(runId)
      return r.status === "succeeded" || r.status === "failed" ? r : undefined
    }, 30_000).catch(async (e) => {
      const r = await runRow(runId)
      throw new Error(`${e}: the run is still ${r.status} (phase ${r.phase})\n${outputs()}`)
    })
    expect(run).toMatchObject({ status: "failed", failure_reason: "internal_error" })
    const events = await db.selectFrom("events").selectAll().where("run_id", "=", runId).execute()
    expect(events.map((e) => [e.type, e.data.failure_reason, e.data.run_number])).toEqual([
      ["agent.completion.failed", "internal_error", 1],
    ])
  })
})
