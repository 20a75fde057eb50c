/**
 * The read path at scale, as a client meets it: a project of R results (default 100,000: R / A documents ×
 * A agents split by the Document dimension), written as the pipeline writes them (its repositories'
 * set-based paths, see `common/results.ts`), served by the compiled `dxs start all`. Each read a user waits
 * for is put under a load generator (autocannon) on loopback at a fixed concurrency: the results page from
 * the start, from the middle and the end (by offset) and by cursor, with each filter; the grid's first page,
 * sorted by an agent, searched and filtered; the documents page; agents/status and status/; and every
 * request the web application makes to open the project's screen (recorded in Chromium when there is one).
 *
 * The baseline is the cheapest SQL that returns the results page (a keyset read through the same index, its
 * JSON built by PostgreSQL) served by a bare `node:http` + `pg` handler in the same run. Targets: p99 ≤ 25 ms
 * for every page, filter, sort and status, ≤ 100 ms for a deep offset, the results page ≥ 500 requests/s
 * and ≥ 0.7× the bare handler, the server's peak resident memory ≤ 600 MB; each read also prints the CPU time
 * per request (ms) of the server that answered and of the local PostgreSQL (the load generator, the server and
 * the database share the machine, so requests/s alone does not say whose work limits it); above 100,000 results, a project
 * of 100,000 is measured in the same run and every p99 must be within 2× of its own (flat cost). Prints
 * PASS or FAIL; it is a report and exits 0 either way.
 *
 * Usage: pnpm bench:api [--results 100000] [--agents 20] [--connections 10] [--seconds 5] [--only <label>]
 *   [--keep] [--reuse <database url>] (BENCH_NODE_ARGS="--cpu-prof --cpu-prof-dir=…" profiles the server)
 * Uses DATABASE_URL's server when set (a fresh database, dropped afterwards), else an embedded server.
 * `--reuse` measures the projects a database kept by `--keep` holds, brought up to this build's schema by
 * `dxs migrate`, without seeding again (a 1,000,000-result database takes about 20 minutes to seed).
 */
import { spawn } from "node:child_process"
import { writeFileSync } from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { makeKysely } from "@dxs/db"
import autocannon from "autocannon"
import { CHROMIUM, projectScreenRequests } from "./api/screen.ts"
import { buildDxs } from "./common/compiled.ts"
import { postgresCpu, postgresCpuSince, processCpuMs } from "./common/cpu.ts"
import {
  createKey,
  dxs,
  dxsEnv,
  option,
  peakRssMb,
  printRows,
  repoRoot,
  startAll,
  startDatabase,
} from "./common/project.ts"
import { seedResults, supplierOf } from "./common/results.ts"

const RESULTS = option("results", 100_000)
const AGENTS = option("agents", 20)
const CONNECTIONS = option("connections", 10)
const SECONDS = option("seconds", 5)
/** `--keep`: the database is left in place (its URL printed) for measuring by hand or `--reuse`. */
const KEEP = process.argv.includes("--keep")
/** The value after `flag` on the command line, if it is there. */
const argument = (flag: string) =>
  process.argv.includes(flag) ? process.argv[process.argv.indexOf(flag) + 1] : undefined
/** `--reuse <url>`: a database `--keep` left, measured again (never dropped). */
const REUSE = argument("--reuse")
/** `--only <text>|<text>…`: measure only the reads whose label contains one of them (e.g. with BENCH_NODE_ARGS's profiler). */
const ONLY = argument("--only")
/** The project measured beside a larger one, whose figures the larger one's must stay within 2× of. */
const REFERENCE = 100_000
const bareScript = path.join(path.dirname(fileURLToPath(import.meta.url)), "api/bare.ts")
const EMAIL = "bench@example.com"
const PASSWORD = "bench-api-password-1"

interface Figure {
  readonly label: string
  /** The p99 target in ms. */
  readonly target: number
  readonly rps: number
  readonly p50: number
  readonly p99: number
  readonly errors: number
  /** Bytes of a response (body and headers), on average. */
  readonly bytes: number
  /** The server's peak resident memory during this read, in MB (NaN where it cannot be told). */
  readonly peakMb: number
  /**
   * CPU time per request, in ms, of the process that answered and of the local PostgreSQL's processes: where
   * a request's work goes, which requests/s on a machine shared by the load generator, the server and the
   * database tell only together (NaN where it cannot be told).
   */
  readonly serverCpu: number
  readonly databaseCpu: number
}

/** The server measured, whose peak resident memory is read per read (see `load`). */
let serverPid: number | undefined

/**
 * The server's peak resident memory from now on: Linux resets a process's peak (VmHWM) to its current
 * resident memory when 5 is written to its `clear_refs`. Answers how to read the peak since, and the peak
 * before (so that the run's overall peak is not lost).
 */
const peakFromNow = (): (() => number) => {
  if (serverPid === undefined) return () => Number.NaN
  const pid = serverPid
  overallPeakMb = Math.max(overallPeakMb, peakRssMb(pid))
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, "5")
  } catch {
    return () => Number.NaN
  }
  return () => {
    const peak = peakRssMb(pid)
    overallPeakMb = Math.max(overallPeakMb, peak)
    return peak
  }
}
let overallPeakMb = 0

const load = async (
  label: string,
  url: string,
  headers: Record<string, string>,
  target = 25,
  pid = serverPid,
): Promise<Figure | undefined> => {
  if (
    ONLY !== undefined &&
    label !== "warm-up" &&
    !ONLY.split("|").some((part) => label.includes(part)) &&
    !label.startsWith("bare")
  )
    return undefined
  const peak = peakFromNow()
  const cpu = [pid === undefined ? Number.NaN : processCpuMs(pid), postgresCpu()] as const
  const result = await autocannon({ url, headers, connections: CONNECTIONS, duration: SECONDS })
  const requests = Math.max(1, result.requests.total)
  return {
    peakMb: peak(),
    serverCpu: ((pid === undefined ? Number.NaN : processCpuMs(pid)) - cpu[0]) / requests,
    databaseCpu: postgresCpuSince(cpu[1]) / requests,
    label,
    target,
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.timeouts + result.non2xx,
    bytes: result.requests.total > 0 ? result.throughput.total / result.requests.total : 0,
  }
}

const json = async (url: string, headers: Record<string, string>) => {
  const r = await fetch(url, { headers })
  if (r.status !== 200) throw new Error(`${url} answered ${r.status}: ${await r.text()}`)
  return (await r.json()) as any
}

/** Every read of one project, measured. */
const measure = async (
  api: string,
  projectId: string,
  headers: Record<string, string>,
  screen: { readonly requests: ReadonlyArray<string>; readonly cookie: string },
): Promise<Array<Figure>> => {
  const base = `${api}/projects/${projectId}`
  const first = await json(`${base}/results/?limit=100`, headers)
  const count: number = first.count
  const agentId: string = first.results[0].agent_id
  const middle = Math.floor(count / 2)
  const last = Math.max(0, count - 100)
  const fromMiddle = await json(`${base}/results/?limit=100&offset=${middle}`, headers)
  const page = (query: string) => `${base}/results/?limit=100${query}`
  // Warm the server (JIT, plans, caches) before measuring.
  await load("warm-up", page(""), headers)
  const figures: Array<Figure | undefined> = []
  figures.push(await load("results, offset 0", page(""), headers))
  figures.push(await load(`results, offset ${middle}`, page(`&offset=${middle}`), headers, 100))
  figures.push(await load(`results, offset ${last}`, page(`&offset=${last}`), headers, 100))
  figures.push(
    await load("results, next cursor from the middle", `${base}/results/${fromMiddle.next}`, headers),
  )
  figures.push(await load("results, agent_id=…", page(`&agent_id=${agentId}`), headers))
  figures.push(
    await load(
      "results, resolution_status=Requires attention",
      page("&resolution_status=Requires%20attention"),
      headers,
    ),
  )
  figures.push(
    await load("results, dimension_value=document-77.txt", page("&dimension_value=document-77.txt"), headers),
  )
  figures.push(await load("results, max_confidence=0.55", page("&max_confidence=0.55"), headers))
  const grid = (query: string) => `${base}/results/grid/?limit=25${query}`
  figures.push(await load("grid, page 1", grid(""), headers))
  figures.push(await load("grid, sorted by an agent", grid(`&sort=agent:${agentId}`), headers))
  figures.push(await load("grid, sorted by an agent, descending", grid(`&sort=-agent:${agentId}`), headers))
  figures.push(
    await load(
      `grid, searched "${supplierOf(42)}"`,
      grid(`&search=${encodeURIComponent(supplierOf(42))}`),
      headers,
    ),
  )
  figures.push(
    await load(
      "grid, resolution_status=Requires attention",
      grid("&resolution_status=Requires%20attention"),
      headers,
    ),
  )
  figures.push(await load("documents page", `${base}/documents/page/?limit=25`, headers))
  figures.push(await load("agents/status/", `${base}/agents/status/`, headers))
  figures.push(await load("status/", `${base}/status/`, headers))
  // Read again as the screen reads them: with its session.
  for (const request of screen.requests)
    figures.push(await load(`screen: GET ${request}`, `${api}${request}`, { cookie: screen.cookie }))
  return figures.filter((f) => f !== undefined)
}

const cpuFigure = (ms: number) => (Number.isNaN(ms) ? "-" : ms.toFixed(2))

const row = (f: Figure, against?: Figure): readonly [string, string] => [
  f.label,
  `${f.rps.toFixed(0).padStart(10)} ${`${f.p50} ms`.padStart(8)} ${`${f.p99} ms`.padStart(8)} ${String(f.errors).padStart(7)}${`${(f.bytes / 1024).toFixed(1)} kB`.padStart(10)}${Number.isNaN(f.peakMb) ? "" : `${f.peakMb.toFixed(0)} MB`.padStart(9)}${cpuFigure(f.serverCpu).padStart(11)}${cpuFigure(f.databaseCpu).padStart(9)}${
    against
      ? `   ${(f.p99 / Math.max(1, against.p99)).toFixed(2)}× the ${REFERENCE.toLocaleString("en-US")} figure`
      : ""
  }`,
]

/** The projects a kept database holds, smallest first, with their current results (from the tallies). */
const keptProjects = async (db: ReturnType<typeof makeKysely>) => {
  const rows = await db
    .selectFrom("projects as p")
    .innerJoin("organizations as o", "o.id", "p.organization_id")
    .innerJoin("agents as a", "a.project_id", "p.id")
    .innerJoin("result_tallies as t", "t.agent_id", "a.id")
    .where("o.name", "=", "bench api")
    .groupBy("p.id")
    .select((eb) => ["p.id", eb.fn.sum<string>("t.n").as("n")])
    .execute()
  if (rows.length === 0) throw new Error("--reuse: the database holds no project of bench:api")
  return rows.map((r) => ({ results: Number(r.n), projectId: r.id })).sort((a, b) => a.results - b.results)
}

const main = async () => {
  const database = REUSE === undefined ? await startDatabase() : { url: REUSE, stop: async () => undefined }
  const db = makeKysely(database.url, 6)
  let server: Awaited<ReturnType<typeof startAll>> | undefined
  let bare: ReturnType<typeof spawn> | undefined
  const log = (line: string) => console.log(line)
  try {
    const sizes = RESULTS > REFERENCE ? [REFERENCE, RESULTS] : [RESULTS]
    const projects: Array<{ readonly results: number; readonly projectId: string }> = []
    if (REUSE !== undefined) {
      const migrated = dxs(["migrate"], dxsEnv(database.url))
      await migrated.exited
      if (migrated.child.exitCode !== 0) throw new Error(`dxs migrate failed:\n${migrated.output()}`)
      projects.push(...(await keptProjects(db)))
      log(`reusing ${projects.map((p) => p.results.toLocaleString("en-US")).join(" and ")} results`)
    }
    for (const size of REUSE === undefined ? sizes : []) {
      const t0 = Date.now()
      log(`seeding ${Math.ceil(size / AGENTS)} documents × ${AGENTS} agents …`)
      const seeded = await seedResults(db, {
        organization: "bench api",
        documents: Math.ceil(size / AGENTS),
        agents: AGENTS,
        log,
      })
      projects.push({ results: size, projectId: seeded.projectId })
      log(`  ${size.toLocaleString("en-US")} results in ${((Date.now() - t0) / 1000).toFixed(0)} s`)
    }
    // The web application is built too: the project screen's requests are recorded in Chromium.
    buildDxs({ web: CHROMIUM !== undefined })
    const env = dxsEnv(database.url)
    const key = await createKey(env, "bench api")
    const member = dxs(["users", "create", "--org", "bench api", "--email", EMAIL], env, `${PASSWORD}\n`)
    await member.exited
    server = await startAll(env)
    serverPid = server.child.pid
    const headers = { "x-api-key": key }
    const origin = new URL(server.api).origin
    bare = spawn(process.execPath, ["--import", "tsx", bareScript], {
      env: {
        ...process.env,
        DATABASE_URL: database.url,
        PROJECT_ID: projects[projects.length - 1]!.projectId,
      },
      stdio: ["ignore", "pipe", "inherit"],
      cwd: path.join(repoRoot, "tooling/bench"),
    })
    const barePort = await new Promise<string>((resolve, reject) => {
      bare?.stdout?.on("data", (b: Buffer) => {
        const m = /listening (\d+)/.exec(b.toString())
        if (m) resolve(m[1]!)
      })
      bare?.once("exit", () => reject(new Error("the bare handler exited")))
    })
    const bareUrl = `http://127.0.0.1:${barePort}/results?limit=100`
    await load("warm-up", bareUrl, {}, 25, bare.pid)
    const baseline = (await load("bare node:http + pg, keyset page of 100", bareUrl, {}, 25, bare.pid))!

    const measured: Array<{
      readonly results: number
      readonly figures: Array<Figure>
      readonly screen: number
    }> = []
    for (const { results, projectId } of projects) {
      const screen = await projectScreenRequests({ origin, email: EMAIL, password: PASSWORD, projectId })
      measured.push({
        results,
        figures: await measure(server.api, projectId, headers, screen),
        screen: screen.requests.length,
      })
    }
    const rss = Math.max(overallPeakMb, peakRssMb(server.child.pid!))

    console.log(`\n${CONNECTIONS} connections, ${SECONDS} s each, on loopback:`)
    const reference = measured.length > 1 ? measured[0]! : undefined
    for (const { results, figures, screen } of measured) {
      console.log(
        `\n${results.toLocaleString("en-US")} results${screen > 0 ? ` (the project screen made ${screen} requests)` : " (no Chromium: the project screen not recorded)"}:`,
      )
      const against = (f: Figure) =>
        reference && reference.results !== results
          ? reference.figures.find((r) => r.label === f.label)
          : undefined
      printRows([
        ["", "requests/s      p50      p99  errors  response     peak  server cpu  db cpu"],
        row(baseline),
        ...figures.map((f) => row(f, against(f))),
      ])
    }

    const failures: Array<string> = []
    for (const { results, figures } of measured) {
      const at = `${results.toLocaleString("en-US")} results`
      for (const f of figures) {
        if (f.errors > 0) failures.push(`${at}: ${f.label} answered ${f.errors} errors`)
        if (f.p99 > f.target) failures.push(`${at}: ${f.label} p99 ${f.p99} ms (target <= ${f.target} ms)`)
        const ref =
          reference && reference.results !== results
            ? reference.figures.find((r) => r.label === f.label)
            : undefined
        // Within 2× of the smaller project's figure (a millisecond or two of noise is not growth).
        if (ref && f.p99 > Math.max(2 * ref.p99, ref.p99 + 2))
          failures.push(
            `${at}: ${f.label} p99 ${f.p99} ms, more than 2× the ${ref.p99} ms at ${REFERENCE.toLocaleString("en-US")}`,
          )
      }
      const page = figures.find((f) => f.label === "results, offset 0")
      if (page === undefined) continue
      if (page.rps < 500)
        failures.push(`${at}: results page ${page.rps.toFixed(0)} requests/s (target >= 500)`)
      const ratio = page.rps / baseline.rps
      if (ratio < 0.7)
        failures.push(`${at}: results page at ${ratio.toFixed(2)}× the bare handler (target >= 0.7)`)
      console.log(`${at}: results page at ${ratio.toFixed(2)}× the bare handler`)
    }
    if (rss > 600) failures.push(`dxs peak resident memory ${rss.toFixed(0)} MB (target <= 600 MB)`)
    console.log(`dxs peak resident memory: ${rss.toFixed(0)} MB`)
    console.log(failures.length === 0 ? "\nPASS: every target met" : `\nFAIL:\n  ${failures.join("\n  ")}`)
  } finally {
    bare?.kill("SIGTERM")
    await server?.stop()
    await db.destroy()
    if (KEEP || REUSE !== undefined) console.log(`kept: DATABASE_URL=${database.url}`)
    else await database.stop()
  }
}

main().catch((e) => {
  console.error(e)
  process.exitCode = 1
})
