/**
 * The results export at scale: a project with R results (default 100,000: R / A documents × A agents split
 * by the Document dimension, the results written straight into the database, nothing run), a real
 * `dxs start all`, then `GET …/results/export/` over HTTP as CSV and as XLSX, the body read as it arrives.
 * Printed: rows and rows/s of each, the server's peak resident memory before the exports and after each
 * (its high-water mark, so "during"), and the CSV's time against writing the same CSV with the same writer
 * from an in-memory array in this process (the baseline). The server runs with its JavaScript heap capped
 * (`--max-old-space-size=192`, unless BENCH_NODE_ARGS sets another cap): an export whose memory grew with
 * the project would not finish under it. Target: both exports complete under the cap and the server's peak
 * grows by at most 256 MB however large the project. It is a report: it exits 0 either way.
 *
 * Usage: pnpm bench:export [--results 100000] [--agents 10]
 * Uses DATABASE_URL's server when set (a fresh database, dropped afterwards), else an embedded server.
 */
import { randomUUID } from "node:crypto"
import { makeKysely } from "@dxs/db"
import { csvBytes, type TableRow } from "@dxs/pipeline/export/Table"
import { Effect, Stream } from "effect"
import { sql } from "kysely"
import {
  createKey,
  type Db,
  dxsEnv,
  option,
  peakRssMb,
  printRows,
  seedProject,
  startAll,
  startDatabase,
} from "./common/project.ts"

/** The server's heap cap: without one, V8 lets garbage pile up to gigabytes before collecting it. */
const HEAP_CAP_MB = 192
if (!(process.env.BENCH_NODE_ARGS ?? "").includes("--max-old-space-size"))
  process.env.BENCH_NODE_ARGS =
    `${process.env.BENCH_NODE_ARGS ?? ""} --max-old-space-size=${HEAP_CAP_MB}`.trim()

const RESULTS = option("results", 100_000)
const AGENTS = option("agents", 10)
const DOCUMENTS = Math.ceil(RESULTS / AGENTS)
const BATCH = 1000
/** How much the server's peak may grow while exporting, whatever the project's size. */
const GROWTH_TARGET_MB = 256

const agentSpecs = Array.from({ length: AGENTS }, (_, k) =>
  k % 2 === 0
    ? { name: `Amount ${k + 1}`, valueType: "number", unit: "EUR" }
    : { name: `Party ${k + 1}`, valueType: "string" },
)

const seededValue = (k: number, i: number): string | number =>
  k % 2 === 0 ? 100 + ((i * 37 + k) % 5000) + 0.5 : `Party "${i % 97}", Inc.`

/** Dimension instances, atomic values and results of every document × agent, written in batches. */
const seedResults = async (db: Db, projectId: string) => {
  const dimension = await db
    .selectFrom("dimensions")
    .select("id")
    .where("project_id", "=", projectId)
    .executeTakeFirstOrThrow()
  const agents = await db
    .selectFrom("agents")
    .select(["id", "config_version", "name"])
    .where("project_id", "=", projectId)
    .orderBy("created_at")
    .orderBy("name")
    .execute()
  const documents = await db
    .selectFrom("documents")
    .select(["id", "file_name"])
    .where("project_id", "=", projectId)
    .orderBy("file_name")
    .execute()
  for (let from = 0; from < documents.length; from += BATCH) {
    const slice = documents.slice(from, from + BATCH)
    const instances = await db
      .insertInto("dimension_instances")
      .values(slice.map((d) => ({ dimension_id: dimension.id, value: d.file_name, document_id: d.id })))
      .returning(["id", "value", "document_id"])
      .execute()
    for (const [k, agent] of agents.entries()) {
      const atomic = await db
        .insertInto("atomic_values")
        .values(
          instances.map((inst) => ({
            project_id: projectId,
            agent_id: agent.id,
            dimension_key: JSON.stringify([inst.id]),
            dimension_values: JSON.stringify([
              {
                id: inst.id,
                dimension_id: dimension.id,
                name: "Document",
                dimension_value: inst.value,
                document_id: inst.document_id,
              },
            ]),
          })),
        )
        .returning(["id", "dimension_values"])
        .execute()
      await db
        .insertInto("resolution_results")
        .values(
          atomic.map((av, j) => {
            const i = from + j + 1
            const doc = slice[j]!
            return {
              project_id: projectId,
              agent_id: agent.id,
              agent_config_version: agent.config_version,
              atomic_value_id: av.id,
              result_name: doc.file_name,
              value: JSON.stringify(seededValue(k, i)),
              resolution_status: i % 11 === 0 ? "Requires attention" : "Resolved",
              justification: null,
              references: "{}",
              sources: JSON.stringify([
                {
                  document_name: doc.file_name,
                  page_number: 1,
                  document_id: doc.id,
                  atomic_value_ids: [av.id],
                },
              ]),
              web_supplement: null,
              confidence: 0.8,
            }
          }),
        )
        .execute()
    }
  }
  return { agents, documents }
}

/** Reads a response body as it comes, counting bytes and CSV line ends, keeping nothing. */
const drain = async (res: Response) => {
  let bytes = 0
  let newlines = 0
  const reader = res.body!.getReader()
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    bytes += value.byteLength
    for (const b of value) if (b === 10) newlines++
  }
  return { bytes, newlines }
}

const main = async () => {
  const database = await startDatabase()
  const db = makeKysely(database.url, 4)
  let server: Awaited<ReturnType<typeof startAll>> | undefined
  try {
    const t0 = Date.now()
    const organization = `bench export ${randomUUID().slice(0, 8)}`
    const { projectId } = await seedProject(db, {
      organization,
      documents: DOCUMENTS,
      agents: agentSpecs,
      text: (i) => `Document ${i}`,
    })
    const { agents, documents } = await seedResults(db, projectId)
    const { n } = await db
      .selectFrom("resolution_results")
      .select(sql<number>`count(*)::int`.as("n"))
      .where("project_id", "=", projectId)
      .executeTakeFirstOrThrow()
    console.log(
      `seeded ${n} results (${documents.length} documents × ${agents.length} agents) in ${((Date.now() - t0) / 1000).toFixed(1)} s`,
    )
    await sql`analyze`.execute(db)

    const env = dxsEnv(database.url)
    const key = await createKey(env, organization)
    server = await startAll(env)
    const pid = server.child.pid!
    const before = peakRssMb(pid)

    const exportAs = async (format: "csv" | "xlsx") => {
      const start = Date.now()
      const res = await fetch(`${server!.api}/projects/${projectId}/results/export/?format=${format}`, {
        headers: { "x-api-key": key },
      })
      if (res.status !== 200) throw new Error(`export answered ${res.status}: ${await res.text()}`)
      const { bytes, newlines } = await drain(res)
      return { ms: Date.now() - start, bytes, newlines, peak: peakRssMb(pid) }
    }
    const csv = await exportAs("csv")
    const xlsx = await exportAs("xlsx")

    // The baseline: the same rows (header, then one per document) from an array, through the same writer.
    const header: TableRow = [
      "Row",
      "Document",
      ...agents.flatMap((a) => [a.name, `${a.name} status`, `${a.name} citations`]),
    ]
    const lines: Array<TableRow> = documents.map((d, j) => [
      d.file_name,
      d.file_name,
      ...agentSpecs.flatMap((spec, k) => {
        const v = seededValue(k, j + 1)
        return [
          spec.unit ? `${v} ${spec.unit}` : String(v),
          (j + 1) % 11 === 0 ? "Requires attention" : "Resolved",
          `${d.file_name} p.1`,
        ]
      }),
    ])
    const baselineStart = Date.now()
    const batches: Array<ReadonlyArray<TableRow>> = []
    for (let i = 0; i < lines.length; i += BATCH) batches.push(lines.slice(i, i + BATCH))
    let baselineBytes = 0
    await Effect.runPromise(
      Stream.runForEach(csvBytes(header, Stream.fromIterable(batches)), (chunk) =>
        Effect.sync(() => {
          baselineBytes += chunk.byteLength
        }),
      ),
    )
    const baselineMs = Math.max(1, Date.now() - baselineStart)

    const rowsPerSecond = (ms: number) => ((documents.length / Math.max(1, ms)) * 1000).toFixed(0)
    const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(1)
    const growth = Math.max(csv.peak, xlsx.peak) - before
    printRows([
      ["results (documents × agents)", `${n} (${documents.length} rows × ${agents.length} agents)`],
      [
        "CSV export over HTTP",
        `${csv.ms} ms, ${csv.newlines - 1} rows, ${mb(csv.bytes)} MB, ${rowsPerSecond(csv.ms)} rows/s`,
      ],
      ["XLSX export over HTTP", `${xlsx.ms} ms, ${mb(xlsx.bytes)} MB, ${rowsPerSecond(xlsx.ms)} rows/s`],
      [
        "baseline: same CSV from an array",
        `${baselineMs} ms, ${mb(baselineBytes)} MB, ${rowsPerSecond(baselineMs)} rows/s`,
      ],
      ["CSV export / baseline (time)", `${(csv.ms / baselineMs).toFixed(1)}×`],
      [
        "dxs peak resident memory",
        `${before.toFixed(0)} MB before, ${csv.peak.toFixed(0)} MB after the CSV, ${xlsx.peak.toFixed(0)} MB after the XLSX`,
      ],
    ])
    const pass = csv.newlines - 1 === documents.length && growth <= GROWTH_TARGET_MB
    console.log(
      `\n${pass ? "PASS" : "FAIL"}: every row exported (${csv.newlines - 1} of ${documents.length}), peak grew ${growth.toFixed(0)} MB (<= ${GROWTH_TARGET_MB} MB)`,
    )
  } finally {
    await server?.stop()
    await db.destroy()
    await database.stop()
  }
}

main().catch((e) => {
  console.error(e)
  process.exitCode = 1
})
