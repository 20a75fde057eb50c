/**
 * Pipeline benchmark: how close a run comes to the language model's own limit. A fake OpenAI-compatible
 * server with a fixed latency answers every request; with `C` requests in flight per worker the ideal is
 * C / latency model calls per second per worker. A project with D one-page documents and A extraction
 * agents is seeded in Postgres, launched, and run by worker OS processes (the product's handlers and
 * worker loop, the `openai` provider with its response cache in Postgres).
 *
 * Printed: one worker's model calls per second against the ideal (target ≥ 90 %), the database time per
 * extraction (the summed time of the extract task's statements), and two workers' throughput against one
 * worker's, measured in the same run (target ≥ 1.8×). It is a report: it exits 0 either way.
 *
 * One model request extracts every agent from one document, so a run makes D requests (200 by default, as
 * many as 40 documents × 5 agents made when each pair had its own).
 *
 * Usage: pnpm bench:pipeline [--documents 200] [--agents 5] [--latency 500] [--concurrency 8]
 *                            [--worker-concurrency C]   (tasks a worker runs at once; default: C)
 *                            [--document-dimension]     (agents split by document: one atomic value per pair)
 * Uses DATABASE_URL's server when set (a fresh database, dropped afterwards), else an embedded server.
 */
import { spawn } from "node:child_process"
import { randomBytes, randomUUID } from "node:crypto"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { makeKysely } from "@dxs/db"
import { requestLaunch } from "@dxs/pipeline/run/Runs"
import {
  answerDocument,
  type ChatCompletionRequestBody,
  documentRequest,
  type FakeOpenAiServer,
  genericResponder,
  labelledLines,
  startFakeOpenAiServer,
} from "@dxs/testing/FakeOpenAiServer"
import { createTestDatabase, startTestServer } from "@dxs/testing/TestPostgres"
import { Effect } from "effect"
import { sql } from "kysely"
import { sourceConditionFlag } from "../../vitest/src/conditions.ts"
import { cpuSnapshot, cpuUsedSince } from "./pipeline/cpu.ts"
import { type Db, describeRun, type RunFigures, type TaskSpan, type WorkerStats } from "./pipeline/figures.ts"
import { sampleWaits } from "./pipeline/waits.ts"

const benchDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
const workerScript = path.join(benchDir, "src/pipeline/worker.ts")

const option = (name: string, fallback: number): number => {
  const i = process.argv.indexOf(`--${name}`)
  if (i < 0) return fallback
  const n = Number(process.argv[i + 1])
  if (!Number.isFinite(n) || n < 0) throw new Error(`--${name} wants a number, got ${process.argv[i + 1]}`)
  return n
}

const DOCUMENTS = Math.max(1, Math.floor(option("documents", 200)))
const AGENTS = Math.max(1, Math.floor(option("agents", 5)))
const LATENCY_MS = option("latency", 500)
const CONCURRENCY = Math.max(1, Math.floor(option("concurrency", 8)))
// Tasks per worker: more than the model's concurrency, so a task's database work overlaps the others' requests.
const WORKER_CONCURRENCY = Math.max(1, Math.floor(option("worker-concurrency", Math.ceil(CONCURRENCY * 1.5))))
/** Agents split by the Document dimension: one atomic value per pair instead of one per agent. */
const DOCUMENT_DIMENSION = process.argv.includes("--document-dimension")

// ---------------------------------------------------------------------------------------------------------
// The project: documents with "Label: value" lines, one extraction agent per label

const LABELS = [
  ["Total amount", "The total amount due, in euros.", "EUR"],
  ["Payment term", "Days until payment is due.", "days"],
  ["Quantity", "Units delivered.", "units"],
  ["Tax rate", "The VAT rate applied.", "percent"],
  ["Warranty period", "The warranty's length.", "months"],
] as const

const agentLabel = (k: number) => LABELS[k] ?? [`Metric ${k + 1}`, `Reported metric number ${k + 1}.`, ""]

/** The same value in every document, so resolution settles it without asking the model. */
const agentValue = (k: number) => 100 + 7 * k

const WORDS =
  "supplier customer delivery schedule inspection freight insurance invoice order shipment goods carrier warehouse".split(
    " ",
  )

/** A page of about 1,500 characters, distinct per project and document (no response-cache hits). */
const pageText = (tag: string, i: number): string => {
  const lines = [`Supply agreement ${tag}-${i + 1}`, `Reference: ${tag.toUpperCase()}/${1000 + i}`]
  for (let k = 0; k < AGENTS; k++) {
    const [label, , unit] = agentLabel(k)
    lines.push(`${label}: ${agentValue(k)}${unit === "" ? "" : ` ${unit}`}`)
  }
  for (let s = 0; s < 12; s++) {
    const w = (n: number) => WORDS[(i * 7 + s * 3 + n) % WORDS.length]
    lines.push(
      `Clause ${s + 1}. The ${w(0)} and the ${w(1)} agree on the ${w(2)} of item ${i * 13 + s} before day ${(i + s) % 28}.`,
    )
  }
  return lines.join("\n")
}

const seedProject = async (db: Db, tag: string, documents: number): Promise<string> => {
  const org = await db
    .insertInto("organizations")
    .values({ name: `bench ${tag}` })
    .returning("id")
    .executeTakeFirstOrThrow()
  const project = await db
    .insertInto("projects")
    .values({ organization_id: org.id, name: tag, project_modules: "{}", target_output_schema: null })
    .returning("id")
    .executeTakeFirstOrThrow()
  // Every project has the system Document dimension.
  const documentDimension = await db
    .insertInto("dimensions")
    .values({
      project_id: project.id,
      name: "Document",
      description: "One value per document",
      source: "DOCUMENT",
    })
    .returning("id")
    .executeTakeFirstOrThrow()
  for (let i = 0; i < documents; i++) {
    const text = pageText(tag, i)
    const doc = await db
      .insertInto("documents")
      .values({
        project_id: project.id,
        file_name: `agreement-${i + 1}.pdf`,
        type: "PDF",
        status: "Processed",
        page_count: 1,
        blob_key: `bench/${randomUUID()}`,
        content_type: "application/pdf",
        size_bytes: text.length,
        sha256: "0".repeat(64),
      })
      .returning("id")
      .executeTakeFirstOrThrow()
    await db.insertInto("pages").values({ document_id: doc.id, number: 1, text }).execute()
  }
  for (let k = 0; k < AGENTS; k++) {
    const [name, instructions, unit] = agentLabel(k)
    const agent = await db
      .insertInto("agents")
      .values({
        project_id: project.id,
        name,
        extraction_instructions: instructions,
        value_type: "number",
        unit,
      })
      .returning("id")
      .executeTakeFirstOrThrow()
    if (DOCUMENT_DIMENSION)
      await db
        .insertInto("agent_dimensions")
        .values({
          agent_id: agent.id,
          dimension_id: documentDimension.id,
          are_values_dynamic: false,
          values: JSON.stringify([]),
        })
        .execute()
  }
  return project.id
}

/** Answers like a model that reads the line labelled with each agent's name, quoting it verbatim. */
const respond = (body: ChatCompletionRequestBody): unknown => {
  const asked = documentRequest(body)
  if (asked === undefined) return genericResponder(body)
  return answerDocument(asked, (agent) =>
    labelledLines(asked, agent, { value: (text) => /\d+(?:\.\d+)?/.exec(text)?.[0] }),
  )
}

// ---------------------------------------------------------------------------------------------------------
// Worker processes

interface WorkerProcess {
  readonly id: string
  readonly spans: Array<TaskSpan>
  /** CPU time and query times since the last call. */
  readonly stats: () => Promise<WorkerStats>
  readonly stop: () => Promise<void>
}

const startWorker = async (id: string, databaseUrl: string, modelUrl: string): Promise<WorkerProcess> => {
  const child = spawn(process.execPath, [sourceConditionFlag, "--import", "tsx", workerScript], {
    cwd: benchDir,
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      MODEL_URL: modelUrl,
      MODEL_CONCURRENCY: String(CONCURRENCY),
      WORKER_CONCURRENCY: String(WORKER_CONCURRENCY),
      WORKER_ID: id,
    },
    stdio: ["pipe", "pipe", "inherit"],
  })
  const spans: Array<TaskSpan> = []
  const waiting: Array<(stats: WorkerStats) => void> = []
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
  const ready = new Promise<void>((resolve, reject) => {
    let buffer = ""
    child.stdout.setEncoding("utf8")
    child.stdout.on("data", (chunk: string) => {
      buffer += chunk
      for (let nl = buffer.indexOf("\n"); nl >= 0; nl = buffer.indexOf("\n")) {
        const line = buffer.slice(0, nl).trim()
        buffer = buffer.slice(nl + 1)
        if (line === "ready") resolve()
        else if (line.startsWith("{")) {
          const parsed = JSON.parse(line) as { task?: TaskSpan; stats?: WorkerStats }
          if (parsed.task) spans.push(parsed.task)
          if (parsed.stats) waiting.shift()?.(parsed.stats)
        } else if (line !== "") console.log(`[${id}] ${line}`)
      }
    })
    child.once("exit", (code) => reject(new Error(`worker ${id} exited (${code}) before it was ready`)))
  })
  await ready
  return {
    id,
    spans,
    stats: () =>
      new Promise<WorkerStats>((resolve) => {
        waiting.push(resolve)
        child.stdin.write("stats\n")
      }),
    stop: async () => {
      if (child.exitCode !== null) return
      child.kill("SIGTERM")
      const timer = setTimeout(() => child.kill("SIGKILL"), 10_000)
      await exited
      clearTimeout(timer)
    },
  }
}

// ---------------------------------------------------------------------------------------------------------
// A run

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

const launchAndWait = async (db: Db, projectId: string): Promise<string> => {
  const outcome = await db.transaction().execute((trx) => Effect.runPromise(requestLaunch(trx, projectId)))
  if (outcome._tag !== "Accepted") throw new Error(`launch not accepted: ${outcome.message}`)
  const deadline = Date.now() + 10 * 60_000
  for (;;) {
    const run = await db
      .selectFrom("runs")
      .select(["status", "error"])
      .where("id", "=", outcome.runId)
      .executeTakeFirstOrThrow()
    if (run.status === "succeeded") return outcome.runId
    if (run.status === "failed") throw new Error(`run failed: ${run.error}`)
    if (Date.now() > deadline) throw new Error("the run did not finish within 10 minutes")
    await sleep(10)
  }
}

/** The mean time of a trivial query from this process, with the machine as it is now (a baseline). */
const roundTrip = async (db: Db, times = 50): Promise<number> => {
  const t0 = performance.now()
  for (let i = 0; i < times; i++) await sql`select 1`.execute(db)
  return (performance.now() - t0) / times
}

let projects = 0

/** Seeds a fresh project, runs it to the end and gathers its figures. */
const measure = async (
  db: Db,
  fake: FakeOpenAiServer,
  workers: ReadonlyArray<WorkerProcess>,
  documents: number,
): Promise<RunFigures> => {
  const tag = `p${++projects}${randomBytes(3).toString("hex")}`
  const projectId = await seedProject(db, tag, documents)
  const roundTripMs = await roundTrip(db)
  fake.reset()
  await Promise.all(workers.map((w) => w.stats()))
  const cpu = cpuSnapshot()
  const t0 = performance.now()
  const sampler = sampleWaits(db)
  const runId = await launchAndWait(db, projectId)
  const measuredMs = performance.now() - t0
  const waits = await sampler.stop()
  const used = cpuUsedSince(cpu)
  const requests = fake.requests.map((r) => r.body.response_format?.json_schema?.name ?? "?")
  // Each worker's answer brings the spans of the tasks it finished since the last.
  const stats = await Promise.all(workers.map((w) => w.stats()))
  return describeRun(db, {
    runId,
    workers: workers.map((w, i) => ({
      id: w.id,
      spans: w.spans.filter((s) => s.runId === runId),
      stats: stats[i]!,
    })),
    cpu: used,
    roundTripMs,
    measuredMs,
    waits,
    requests,
    maxInFlight: fake.maxInFlight,
    workerConcurrency: WORKER_CONCURRENCY,
  })
}

// ---------------------------------------------------------------------------------------------------------

const withDatabaseName = (url: string, name: string) => {
  const u = new URL(url)
  u.pathname = `/${name}`
  return u.toString()
}

/** A fresh migrated database: on DATABASE_URL's server when set, else on an embedded one. */
const startDatabase = async (): Promise<{ url: string; stop: () => Promise<void> }> => {
  const external = process.env.DATABASE_URL
  if (external) process.env.TEST_DATABASE_URL = withDatabaseName(external, "postgres")
  const server = await startTestServer()
  try {
    const database = await createTestDatabase(server.templateUrl)
    return {
      url: database.url,
      stop: async () => {
        await database.drop().catch(() => undefined)
        await server.stop()
      },
    }
  } catch (e) {
    await server.stop()
    throw e
  }
}

const pct = (x: number) => `${(100 * x).toFixed(1)} %`
const fixed = (x: number, digits = 1) => x.toFixed(digits)

const main = async () => {
  const cleanups: Array<() => Promise<void>> = []
  const cleanup = async () => {
    for (const f of cleanups.reverse()) await f().catch((e) => console.error(e))
    cleanups.length = 0
  }
  process.once("SIGINT", () => {
    void cleanup().finally(() => process.exit(130))
  })
  try {
    const t0 = Date.now()
    const database = await startDatabase()
    cleanups.push(database.stop)
    const db = makeKysely(database.url, 4)
    cleanups.push(() => db.destroy())
    const fake = await startFakeOpenAiServer({ latencyMs: LATENCY_MS, respond })
    cleanups.push(() => fake.close())
    const warmDocuments = Math.min(DOCUMENTS, Math.max(2, 2 * WORKER_CONCURRENCY))

    const first = await startWorker("w1", database.url, fake.baseUrl)
    cleanups.push(first.stop)
    console.log(
      `database, fake model server and worker w1 ready in ${((Date.now() - t0) / 1000).toFixed(1)} s`,
    )
    await measure(db, fake, [first], warmDocuments)
    const one = await measure(db, fake, [first], DOCUMENTS)
    fake.latencyMs = 0
    const zero = await measure(db, fake, [first], DOCUMENTS)
    fake.latencyMs = LATENCY_MS

    const second = await startWorker("w2", database.url, fake.baseUrl)
    cleanups.push(second.stop)
    await measure(db, fake, [first, second], warmDocuments)
    const two = await measure(db, fake, [first, second], DOCUMENTS)

    const idealOne = CONCURRENCY / (LATENCY_MS / 1000)
    const ofIdeal = one.callsPerSecond / idealOne
    const ratio = two.callsPerSecond / one.callsPerSecond
    const pairs = DOCUMENTS * AGENTS

    for (const [label, f] of [
      ["one worker", one],
      ["one worker, 0 ms model latency", zero],
      ["two workers", two],
    ] as const) {
      console.log(`\n${label}:`)
      for (const line of f.details) console.log(`  ${line}`)
    }

    const rows: ReadonlyArray<readonly [string, string]> = [
      ["documents", String(DOCUMENTS)],
      ["agents", String(AGENTS)],
      ["pairs", String(pairs)],
      ["model calls (one run)", `${one.calls} (${one.extractCalls} extraction)`],
      ["latency", `${LATENCY_MS} ms`],
      ["model concurrency per worker", String(CONCURRENCY)],
      ["tasks per worker", String(WORKER_CONCURRENCY)],
      ["agents' dimensions", DOCUMENT_DIMENSION ? "Document" : "none"],
      ["one worker", `${fixed(one.callsPerSecond)} calls/s (run ${fixed(one.wallMs / 1000, 2)} s)`],
      ["ideal (C / latency)", `${fixed(idealOne)} calls/s`],
      ["one worker / ideal", `${pct(ofIdeal)} (target >= 90 %)`],
      [
        "db ms per extract task",
        `${fixed(one.dbMsPerExtraction)} ms (0 ms latency: ${fixed(zero.dbMsPerExtraction)} ms) (target <= 15 ms)`,
      ],
      ["0 ms latency, one worker", `${fixed(zero.pairsPerSecond)} pairs/s (target >= 450)`],
      ["two workers", `${fixed(two.callsPerSecond)} calls/s (run ${fixed(two.wallMs / 1000, 2)} s)`],
      ["two / one worker", `${fixed(ratio, 2)}x (target >= 1.80x)`],
    ]
    const width = Math.max(...rows.map(([k]) => k.length))
    console.log("")
    for (const [k, v] of rows) console.log(`${k.padEnd(width)}  ${v}`)
    const busiest = Math.max(one.machineBusy, zero.machineBusy, two.machineBusy)
    if (busiest >= 0.9)
      console.log(
        `\nnote: the machine's CPUs were up to ${pct(busiest)} busy during the runs (see the CPU lines above): ` +
          "queries queue for CPU and every lock is held longer, so times here are longer than on a quiet machine",
      )
    const targets: ReadonlyArray<readonly [boolean, string]> = [
      [ofIdeal >= 0.9, `one worker at ${pct(ofIdeal)} of ideal (>= 90 %)`],
      [ratio >= 1.8, `two workers ${fixed(ratio, 2)}x one (>= 1.80x)`],
      [
        one.dbMsPerExtraction <= 15,
        `${fixed(one.dbMsPerExtraction)} ms of database time per extract task (<= 15)`,
      ],
      [zero.pairsPerSecond >= 450, `${fixed(zero.pairsPerSecond)} pairs/s at 0 ms model latency (>= 450)`],
    ]
    console.log("")
    for (const [met, text] of targets) console.log(`${met ? "PASS" : "FAIL"}: ${text}`)
  } finally {
    await cleanup()
  }
}

main().catch((e) => {
  console.error(e)
  process.exitCode = 1
})
