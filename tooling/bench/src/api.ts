/**
 * The read path at scale, as a client meets it: a project with R results (default 100,000: R / A documents
 * × A agents split by the Document dimension, the values extracted and resolved by a real `dxs start all`
 * running the pipeline with its local extractor), then `GET …/results/?limit=100` at several offsets and
 * with each filter, `GET …/agents/status/` and `GET …/status/`, each under a load generator (autocannon)
 * on loopback at a fixed concurrency: requests/s, p50 and p99. The same results page's SQL served by a bare
 * `node:http` + `pg` handler in the same run is the baseline. Targets: the results page ≥ 0.7× the bare
 * handler's requests/s, p99 ≤ 25 ms. It is a report: it exits 0 either way.
 *
 * Usage: pnpm bench:api [--results 100000] [--agents 20] [--connections 10] [--seconds 5]
 * Uses DATABASE_URL's server when set (a fresh database, dropped afterwards), else an embedded server.
 */
import { spawn } from "node:child_process"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { makeKysely } from "@dxs/db"
import autocannon from "autocannon"
import {
  createKey,
  dxsEnv,
  option,
  peakRssMb,
  printRows,
  seedProject,
  startAll,
  startDatabase,
} from "./common/project.ts"

const RESULTS = option("results", 100_000)
const AGENTS = option("agents", 20)
const CONNECTIONS = option("connections", 10)
const SECONDS = option("seconds", 5)
const DOCUMENTS = Math.ceil(RESULTS / AGENTS)
const bareScript = path.join(path.dirname(fileURLToPath(import.meta.url)), "api/bare.ts")

const FIELDS = [
  { name: "Invoice number", valueType: "string" },
  { name: "Total amount", valueType: "number", unit: "EUR" },
  { name: "Invoice date", valueType: "date" },
  { name: "Supplier", valueType: "string" },
  { name: "Region", valueType: "string" },
]
const agents = Array.from({ length: AGENTS }, (_, k) => {
  const field = FIELDS[k % FIELDS.length]!
  return k < FIELDS.length ? field : { ...field, name: `${field.name} ${Math.floor(k / FIELDS.length) + 1}` }
})
const text = (i: number) =>
  [
    `Invoice number: INV-${String(i).padStart(6, "0")}`,
    `Invoice date: 2024-${String((i % 12) + 1).padStart(2, "0")}-${String((i % 28) + 1).padStart(2, "0")}`,
    `Supplier: Supplier ${i % 97} GmbH`,
    `Region: ${["EU", "US", "APAC"][i % 3]}`,
    `Total amount: EUR ${(100 + (i % 5000)).toLocaleString("en-US")}.00`,
  ].join("\n")

interface Figure {
  readonly label: string
  readonly rps: number
  readonly p50: number
  readonly p99: number
  readonly errors: number
}

const load = async (label: string, url: string, headers: Record<string, string>): Promise<Figure> => {
  const result = await autocannon({ url, headers, connections: CONNECTIONS, duration: SECONDS })
  return {
    label,
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.timeouts + result.non2xx,
  }
}

const main = async () => {
  const database = await startDatabase()
  const db = makeKysely(database.url, 2)
  let server: Awaited<ReturnType<typeof startAll>> | undefined
  let bare: ReturnType<typeof spawn> | undefined
  try {
    const t0 = Date.now()
    const { projectId } = await seedProject(db, {
      organization: "bench api",
      documents: DOCUMENTS,
      agents,
      text,
    })
    const env = dxsEnv(database.url)
    const key = await createKey(env, "bench api")
    server = await startAll(env)
    const base = `${server.api}/projects/${projectId}`
    const headers = { "x-api-key": key }
    const launch = await fetch(`${base}/agents/launch/`, { method: "POST", headers })
    if (launch.status !== 202) throw new Error(`launch answered ${launch.status}: ${await launch.text()}`)
    for (;;) {
      await new Promise((r) => setTimeout(r, 2000))
      const status = (await (await fetch(`${base}/status/`, { headers })).json()) as {
        pipeline_running: boolean
      }
      if (!status.pipeline_running) break
    }
    const first = (await (await fetch(`${base}/results/?limit=1`, { headers })).json()) as {
      count: number
      results: ReadonlyArray<{ agent_id: string; resolution_status: string }>
    }
    console.log(
      `seeded ${DOCUMENTS} documents × ${AGENTS} agents and ran the pipeline: ${first.count} results in ${((Date.now() - t0) / 1000).toFixed(0)} s`,
    )
    const agentId = first.results[0]?.agent_id ?? ""
    const status = first.results[0]?.resolution_status ?? "Resolved"

    bare = spawn(process.execPath, ["--import", "tsx", bareScript], {
      env: { ...process.env, DATABASE_URL: database.url, PROJECT_ID: projectId },
      stdio: ["ignore", "pipe", "inherit"],
    })
    const barePort = await new Promise<string>((resolve, reject) => {
      bare?.stdout?.on("data", (b: Buffer) => {
        const m = /listening (\d+)/.exec(b.toString())
        if (m) resolve(m[1]!)
      })
      bare?.once("exit", () => reject(new Error("the bare handler exited")))
    })

    const page = (query: string) => `${base}/results/?limit=100${query}`
    const middle = Math.floor(first.count / 2)
    const last = Math.max(0, first.count - 100)
    // Warm both servers (JIT, plans, caches) before measuring.
    await load("warm-up", page(""), headers)
    await load("warm-up", `http://127.0.0.1:${barePort}/results?limit=100&offset=0`, {})
    const figures: Array<Figure> = []
    figures.push(
      await load(
        "bare node:http + pg, offset 0",
        `http://127.0.0.1:${barePort}/results?limit=100&offset=0`,
        {},
      ),
    )
    figures.push(await load("results, offset 0", page(""), headers))
    figures.push(await load(`results, offset ${middle}`, page(`&offset=${middle}`), headers))
    figures.push(await load(`results, offset ${last}`, page(`&offset=${last}`), headers))
    figures.push(await load("results, agent_id=…", page(`&agent_id=${agentId}`), headers))
    figures.push(
      await load(
        `results, resolution_status=${status}`,
        page(`&resolution_status=${encodeURIComponent(status)}`),
        headers,
      ),
    )
    figures.push(
      await load(
        "results, dimension_value=document-77.txt",
        page("&dimension_value=document-77.txt"),
        headers,
      ),
    )
    figures.push(await load("agents/status/", `${base}/agents/status/`, headers))
    figures.push(await load("status/", `${base}/status/`, headers))

    console.log(`\n${CONNECTIONS} connections, ${SECONDS} s each, on loopback:`)
    printRows([
      ["", "requests/s      p50      p99   errors"],
      ...figures.map((f): readonly [string, string] => [
        f.label,
        `${f.rps.toFixed(0).padStart(10)} ${`${f.p50} ms`.padStart(8)} ${`${f.p99} ms`.padStart(8)} ${String(f.errors).padStart(8)}`,
      ]),
    ])
    const baseline = figures[0]!
    const results = figures[1]!
    const ratio = results.rps / baseline.rps
    const worstP99 = Math.max(...figures.slice(1, 7).map((f) => f.p99))
    console.log(`\ndxs peak resident memory: ${peakRssMb(server.child.pid!).toFixed(0)} MB`)
    console.log(
      `${ratio >= 0.7 && worstP99 <= 25 ? "PASS" : "FAIL"}: results page at ${ratio.toFixed(2)}× the bare handler (target >= 0.7), worst results p99 ${worstP99} ms (target <= 25 ms)`,
    )
  } finally {
    bare?.kill("SIGTERM")
    await server?.stop()
    await db.destroy()
    await database.stop()
  }
}

main().catch((e) => {
  console.error(e)
  process.exitCode = 1
})
