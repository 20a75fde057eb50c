/**
 * Start-up benchmark of the compiled `dxs` (apps/cli/dist, built first by the build script without the web
 * application): `dxs --help`, and a warm `dxs start all` to its first 200 on GET /api/v1/schema/?format=json
 * (embedded PostgreSQL in a temp DATA_DIR; a first start creates the cluster and is not measured). Times
 * run from the spawn of `node` (no install check, no build) to the exit, or to the first 200 answer.
 * Prints the median of the runs against the targets (≤ 0.3 s and ≤ 3 s), and the server process's CPU
 * time at the first answer where /proc shows it (on a busy machine, wall time is mostly waiting for a core).
 * Usage: pnpm bench:startup [--runs N]   (default 5 runs of each)
 */
import { execFileSync, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..")
const main = path.join(root, "apps/cli/dist/main.js")
const runsArg = process.argv.indexOf("--runs")
const RUNS = runsArg > 0 ? Number(process.argv[runsArg + 1]) : 5
const HELP_TARGET_MS = 300
const START_TARGET_MS = 3000

const median = (xs: ReadonlyArray<number>) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length % 2 === 1 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2
}

/** User + system CPU time of a process so far, in ms (Linux /proc), else undefined. */
const cpuMs = (pid: number): number | undefined => {
  try {
    const fields = fs.readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100
  } catch {
    return undefined
  }
}

const env = (dataDir: string): NodeJS.ProcessEnv => {
  const e: NodeJS.ProcessEnv = {
    ...process.env,
    DATA_DIR: dataDir,
    PORT: "0",
    GRAPHQL_PORT: "0",
    HOST: "127.0.0.1",
    LOG_LEVEL: "info",
  }
  for (const name of ["DATABASE_URL", "BLOB_DIR", "PUBLIC_URL", "INIT_CWD", "NODE_OPTIONS"]) delete e[name]
  return e
}

const helpOnce = (dataDir: string) =>
  new Promise<number>((resolve, reject) => {
    const started = performance.now()
    const child = spawn(process.execPath, [main, "--help"], { env: env(dataDir), stdio: "ignore" })
    child.on("error", reject)
    child.on("exit", (code) =>
      code === 0 ? resolve(performance.now() - started) : reject(new Error(`dxs --help exited ${code}`)),
    )
  })

interface Started {
  readonly ms: number
  readonly cpuMs: number | undefined
}

/** Starts `dxs start all`, times it to the first 200, then stops it (SIGTERM) and waits for its exit. */
const startOnce = (dataDir: string) =>
  new Promise<Started>((resolve, reject) => {
    const started = performance.now()
    const child = spawn(process.execPath, [main, "start", "all"], {
      env: env(dataDir),
      stdio: ["ignore", "pipe", "pipe"],
    })
    let output = ""
    let result: Started | undefined
    let probing = false
    const probe = async (base: string) => {
      for (;;) {
        const ok = await fetch(`${base}/schema/?format=json`).then(
          (r) => r.status === 200,
          () => false,
        )
        if (ok) break
        await new Promise((r) => setTimeout(r, 10))
      }
      result = { ms: performance.now() - started, cpuMs: cpuMs(child.pid!) }
      child.kill("SIGTERM")
    }
    const onData = (b: Buffer) => {
      output += b.toString()
      const m = /REST API listening on (http:\/\/127\.0\.0\.1:\d+\/api\/v1)/.exec(output)
      if (m && !probing) {
        probing = true
        probe(m[1]!).catch(reject)
      }
    }
    child.stdout!.on("data", onData)
    child.stderr!.on("data", onData)
    child.on("close", (code) =>
      result !== undefined && code === 0
        ? resolve(result)
        : reject(new Error(`dxs start all exited ${code} before its first answer\n${output}`)),
    )
  })

const verdict = (ms: number, target: number) => (ms <= target ? "within target" : "OVER target")

const run = async () => {
  console.log("building (tsc -b) …")
  execFileSync(process.execPath, [path.join(root, "tooling/build/build.mjs"), "--no-web"], {
    stdio: ["ignore", "inherit", "inherit"],
  })
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "dxs-bench-startup-"))
  // As root the cluster runs as the `postgres` user, which must be able to enter this directory.
  fs.chmodSync(tmp, 0o755)
  const dataDir = path.join(tmp, "data")
  try {
    const help: Array<number> = []
    for (let i = 0; i < RUNS; i++) help.push(await helpOnce(dataDir))
    console.log("first start (creates the PostgreSQL cluster; not measured) …")
    await startOnce(dataDir)
    const starts: Array<Started> = []
    for (let i = 0; i < RUNS; i++) starts.push(await startOnce(dataDir))
    const helpMs = median(help)
    const startMs = median(starts.map((s) => s.ms))
    const cpu = starts.flatMap((s) => (s.cpuMs === undefined ? [] : [s.cpuMs]))
    const load = os.loadavg()[0]!.toFixed(1)
    console.log(
      `\nNode ${process.version}, ${os.cpus().length} cores, load average ${load}; ${RUNS} runs each`,
    )
    console.log(
      `dxs --help:                ${Math.round(helpMs)} ms (median; target ≤ ${HELP_TARGET_MS} ms: ${verdict(helpMs, HELP_TARGET_MS)})`,
    )
    console.log(
      `warm start to first 200:   ${Math.round(startMs)} ms (median; target ≤ ${START_TARGET_MS} ms: ${verdict(startMs, START_TARGET_MS)})` +
        (cpu.length > 0 ? `; server CPU time ${Math.round(median(cpu))} ms` : ""),
    )
    console.log(`  runs: ${starts.map((s) => Math.round(s.ms)).join(", ")} ms`)
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true })
  }
}

await run()
