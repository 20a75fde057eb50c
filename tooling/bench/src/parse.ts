/**
 * Parse benchmark, end to end: N text PDFs (default: the 40 Kleister NDAs) uploaded through the REST API to
 * a running `dxs start` (a child process with default settings, over a fresh database), timed from the
 * first upload until every document is `Processed`, against poppler's `pdftotext` on the same files in the
 * same run (one process per file, file after file). Prints pages per second of the first batch after
 * start-up, then of the median of the next batches (each into a new project) against the median pdftotext
 * run, and their ratio (target ≥ 0.5), then: the same with `dxs start api` + two `dxs start worker` over one PostgreSQL, OCR
 * pages per second of scanned pages through the API, the worker's peak resident memory (VmHWM) with its
 * parse pool, and the PDF backend alone in this process (no API, no database, no threads).
 *
 * Usage: pnpm bench:parse [DIR_WITH_PDFS]
 * Environment: BENCH_MAX_FILES (default 40), BENCH_BATCHES (timed batches after the first, and pdftotext
 * runs; default 3), BENCH_DATABASE_URL (a PostgreSQL server where the benchmark may create and drop
 * databases; default postgres://postgres@127.0.0.1:5432/test, else embedded PostgreSQL in a temporary
 * DATA_DIR, and then no two-worker figure).
 */
import { type ChildProcess, execFileSync, spawn, spawnSync } from "node:child_process"
import { randomUUID } from "node:crypto"
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { makeKysely } from "@dxs/db/Db"
import { backendFor, defaultLimits, type ParseInput } from "@dxs/pipeline"
import { sql } from "kysely"
import { buildDxs, compiledDxs } from "./common/compiled.ts"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..")
const pdfDir = path.resolve(
  process.argv[2] ?? path.join(root, "../shared/corpus/labelled/kleister-nda-train/documents"),
)
const ocrDirs = ["ocr", "tiff", "webp"].map((d) =>
  path.join(root, "../shared/corpus/robustness/docling", d, "sources"),
)
const MAX_FILES = Number(process.env.BENCH_MAX_FILES ?? 40)
const ADMIN_URL = process.env.BENCH_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test"
/** Timed batches of the text PDFs through a running dxs (after the first), and pdftotext runs. */
const BATCHES = Math.max(1, Number(process.env.BENCH_BATCHES ?? 3))
/** Uploads sent at once. */
const UPLOADS_AT_ONCE = 4
/** Give up on a phase after this long. */
const PHASE_LIMIT_MS = 15 * 60_000

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const seconds = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e9

// ---------------------------------------------------------------------------------------------------------
// Child processes

/** A `dxs` child process (the compiled CLI, as `./dx start` runs it) with its output captured. */
class Dxs {
  output = ""
  exited = false
  readonly child: ChildProcess
  constructor(args: ReadonlyArray<string>, env: NodeJS.ProcessEnv) {
    buildDxs()
    const nodeArgs = process.env.BENCH_NODE_ARGS?.split(" ").filter((a) => a !== "") ?? []
    this.child = spawn(process.execPath, [...nodeArgs, compiledDxs, ...args], {
      cwd: root,
      env,
      stdio: ["ignore", "pipe", "pipe"],
    })
    const keep = (b: Buffer) => {
      this.output = (this.output + b.toString()).slice(-200_000)
    }
    this.child.stdout!.on("data", keep)
    this.child.stderr!.on("data", keep)
    this.child.on("close", () => {
      this.exited = true
    })
  }
  async waitFor(pattern: RegExp, ms = 180_000): Promise<RegExpMatchArray> {
    const deadline = Date.now() + ms
    for (;;) {
      const m = this.output.match(pattern)
      if (m) return m
      if (this.exited) throw new Error(`dxs exited before ${pattern}:\n${this.output.slice(-4000)}`)
      if (Date.now() > deadline)
        throw new Error(`timed out waiting for ${pattern}:\n${this.output.slice(-4000)}`)
      await sleep(50)
    }
  }
  /** SIGTERM, then SIGKILL after 30 s. */
  async stop(): Promise<void> {
    if (this.exited) return
    this.child.kill("SIGTERM")
    const deadline = Date.now() + 30_000
    while (!this.exited && Date.now() < deadline) await sleep(100)
    if (!this.exited) this.child.kill("SIGKILL")
  }
}

/** The process ids below `pid` (the processes dxs started). */
const descendants = (pid: number): Array<number> => {
  const children: Array<number> = []
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8")
      const parent = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1])
      if (parent === pid) children.push(Number(entry))
    } catch {
      // The process is gone.
    }
  }
  return children.flatMap((child) => [child, ...descendants(child)])
}

const peakRssMb = (pid: number) => {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8")
    return Number(/^VmHWM:\s+(\d+) kB$/m.exec(status)?.[1] ?? 0) / 1024
  } catch {
    return 0
  }
}

/** The peak RSS of the process tree's largest process (the node process that runs dxs), in MB. */
const peakOf = (p: Dxs) =>
  Math.max(0, ...[p.child.pid!, ...descendants(p.child.pid!)].map((pid) => peakRssMb(pid)))

// ---------------------------------------------------------------------------------------------------------
// Databases

interface Backing {
  /** DATABASE_URL for the dxs processes, or undefined for embedded PostgreSQL in DATA_DIR. */
  readonly url: string | undefined
  readonly drop: () => Promise<void>
}

/** One statement on the administration database (create or drop a database: outside a transaction). */
const admin = async (statement: string): Promise<void> => {
  const db = makeKysely(ADMIN_URL, 1)
  try {
    await sql.raw(statement).execute(db)
  } finally {
    await db.destroy()
  }
}

/** A fresh database on the machine's PostgreSQL, or embedded PostgreSQL when there is none. */
const freshDatabase = async (): Promise<Backing> => {
  const name = `dxs_bench_${randomUUID().replaceAll("-", "")}`
  try {
    await admin(`create database ${name}`)
  } catch {
    return { url: undefined, drop: async () => undefined }
  }
  const url = new URL(ADMIN_URL)
  url.pathname = `/${name}`
  return {
    url: url.href,
    drop: () => admin(`drop database if exists ${name} with (force)`).catch(() => undefined),
  }
}

// ---------------------------------------------------------------------------------------------------------
// The REST API

interface Server {
  readonly origin: string
  readonly key: string
}

const api = async (server: Server, p: string, init: RequestInit = {}) => {
  const res = await fetch(`${server.origin}/api/v1${p}`, {
    ...init,
    headers: { "x-api-key": server.key, ...(init.headers as Record<string, string> | undefined) },
  })
  const body = await res.text()
  if (!res.ok) throw new Error(`${init.method ?? "GET"} ${p}: ${res.status} ${body.slice(0, 500)}`)
  return body === "" ? undefined : JSON.parse(body)
}

interface DocumentRecord {
  readonly id: string
  readonly status: "Pending" | "Processed" | "Failed"
  readonly page_count: number
}

interface Timed {
  readonly files: number
  readonly pages: number
  readonly seconds: number
  readonly failed: number
  /** Seconds until the last upload was answered (through the API only). */
  readonly uploaded?: number
}

/**
 * Uploads the files into a new project and waits until none is Pending: seconds from the first upload
 * until then, and the pages of the Processed documents.
 */
const uploadAndWait = async (server: Server, files: ReadonlyArray<string>): Promise<Timed> => {
  const project = (await api(server, "/projects/", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ name: `bench ${randomUUID()}` }),
  })) as { id: string }
  const blobs = files.map((f) => new Blob([readFileSync(f)]))
  const t0 = process.hrtime.bigint()
  let next = 0
  const uploader = async () => {
    while (next < files.length) {
      const i = next++
      const form = new FormData()
      form.append("file", blobs[i]!, path.basename(files[i]!))
      await api(server, `/projects/${project.id}/documents/`, { method: "POST", body: form })
    }
  }
  await Promise.all(Array.from({ length: UPLOADS_AT_ONCE }, uploader))
  const uploaded = seconds(t0)
  const deadline = Date.now() + PHASE_LIMIT_MS
  for (;;) {
    const docs = (await api(server, `/projects/${project.id}/documents/`)) as Array<DocumentRecord>
    if (docs.length >= files.length && docs.every((d) => d.status !== "Pending")) {
      const s = seconds(t0)
      const processed = docs.filter((d) => d.status === "Processed")
      return {
        files: files.length,
        pages: processed.reduce((n, d) => n + d.page_count, 0),
        seconds: s,
        failed: docs.length - processed.length,
        uploaded,
      }
    }
    if (Date.now() > deadline) throw new Error("documents still Pending after 15 minutes")
    await sleep(50)
  }
}

const baseEnv = (dataDir: string, url: string | undefined): NodeJS.ProcessEnv => {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATA_DIR: dataDir,
    HOST: "127.0.0.1",
    PORT: "0",
    LOG_LEVEL: "info",
    ...(url === undefined ? {} : { DATABASE_URL: url }),
  }
  for (const name of ["BLOB_DIR", "PUBLIC_URL", "APP_URL", "INIT_CWD", "NODE_OPTIONS"]) delete env[name]
  if (url === undefined) delete env.DATABASE_URL
  return env
}

const createKey = (env: NodeJS.ProcessEnv) => {
  buildDxs()
  const out = execFileSync(process.execPath, [compiledDxs, "keys", "create", "--org", "bench"], {
    cwd: root,
    env,
    encoding: "utf8",
  })
  return out.trim().split("\n").pop()!.trim()
}

const listening = /REST API listening on http:\/\/127\.0\.0\.1:(\d+)\/api\/v1/

/**
 * Runs `measure` against dxs processes over a fresh database: `dxs start` (all in one), or with `workers`
 * `dxs start api` and that many `dxs start worker`. Stops them and drops the database afterwards.
 */
const withDxs = async <A>(
  workers: number,
  measure: (server: Server, workerProcesses: ReadonlyArray<Dxs>) => Promise<A>,
): Promise<A | undefined> => {
  const backing = await freshDatabase()
  if (workers > 0 && backing.url === undefined) return undefined
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "dxs-bench-"))
  // Embedded PostgreSQL runs as the `postgres` user when this runs as root: it must enter the folder.
  chmodSync(dataDir, 0o755)
  const env = baseEnv(dataDir, backing.url)
  const processes: Array<Dxs> = []
  try {
    const front = new Dxs(["start", workers > 0 ? "api" : "all"], env)
    processes.push(front)
    const [, port] = await front.waitFor(listening)
    const workerProcesses =
      workers > 0
        ? Array.from({ length: workers }, () => new Dxs(["start", "worker"], { ...env, PORT: "0" }))
        : [front]
    if (workers > 0) processes.push(...workerProcesses)
    await Promise.all(workerProcesses.map((w) => w.waitFor(/worker \S+ started/)))
    const server = { origin: `http://127.0.0.1:${port}`, key: createKey(env) }
    return await measure(server, workerProcesses)
  } finally {
    await Promise.all(processes.map((p) => p.stop()))
    await backing.drop()
    rmSync(dataDir, { recursive: true, force: true })
  }
}

// ---------------------------------------------------------------------------------------------------------
// Baselines

const popplerRun = (files: ReadonlyArray<string>): Timed => {
  let pages = 0
  const t0 = process.hrtime.bigint()
  for (const f of files) {
    const text = execFileSync("pdftotext", [f, "-"], { maxBuffer: 256 * 1024 * 1024, encoding: "utf8" })
    pages += text.split("\f").length - 1
  }
  return { files: files.length, pages, seconds: seconds(t0), failed: 0 }
}

const input = (file: string): ParseInput => ({
  bytes: readFileSync(file),
  fileName: path.basename(file),
  contentType: "application/octet-stream",
  limits: defaultLimits,
  tools: { libreOffice: undefined, tempDir: os.tmpdir() },
})

/** Today's in-process figure: the PDF backend alone, file after file, in this thread. */
const backendOnly = async (files: ReadonlyArray<string>): Promise<Timed> => {
  const pdf = backendFor("x.pdf")
  if (!pdf) throw new Error("no PDF backend registered")
  await pdf.parse(input(files[0]!))
  let pages = 0
  let failed = 0
  const t0 = process.hrtime.bigint()
  for (const f of files) {
    try {
      pages += (await pdf.parse(input(f))).pages.length
    } catch {
      failed += 1
    }
  }
  return { files: files.length, pages, seconds: seconds(t0), failed }
}

const rate = (t: Timed) => t.pages / t.seconds
/** The run of median speed (of an odd number of runs, the middle one). */
const median = (runs: ReadonlyArray<Timed>): Timed =>
  [...runs].sort((a, b) => rate(a) - rate(b))[Math.floor(runs.length / 2)]!
const line = (label: string, t: Timed) =>
  `  ${label.padEnd(46)} ${String(t.pages).padStart(4)} pages in ${t.seconds.toFixed(2).padStart(6)} s = ${rate(t).toFixed(1).padStart(6)} pages/s${t.failed > 0 ? ` (${t.failed} failed)` : ""}`

// ---------------------------------------------------------------------------------------------------------

const main = async () => {
  if (!existsSync(pdfDir)) {
    console.log(`no PDF folder at ${pdfDir}: nothing to measure`)
    return
  }
  if (spawnSync("pdftotext", ["-v"]).error) {
    console.log(
      "pdftotext is not installed: install poppler-utils (Debian/Ubuntu: apt-get update && apt-get install -y poppler-utils); no baseline to compare with, nothing measured",
    )
    return
  }
  const files = readdirSync(pdfDir)
    .filter((f) => f.toLowerCase().endsWith(".pdf"))
    .sort()
    .slice(0, MAX_FILES)
    .map((f) => path.join(pdfDir, f))
  const images = ocrDirs
    .filter((d) => existsSync(d))
    .flatMap((d) =>
      readdirSync(d)
        .filter((f) => /\.(pdf|png|jpe?g|tiff?|webp)$/i.test(f))
        .sort()
        .map((f) => path.join(d, f)),
    )
  console.log(`text PDFs: ${files.length} files from ${pdfDir}`)

  // Warm up the page cache and pdftotext.
  execFileSync("pdftotext", ["-layout", files[0]!, "-"], { stdio: ["ignore", "ignore", "ignore"] })
  const poppler = median(Array.from({ length: BATCHES }, () => popplerRun(files)))
  console.log(line(`pdftotext (one process per file, median of ${BATCHES}):`, poppler))

  await withDxs(0, async (server, [worker]) => {
    // The first batch after start-up also pays for compiling the server's code paths (JIT); a running
    // service is past that, so the ratio is taken on the batches after it (each into a new project).
    const cold = await uploadAndWait(server, files)
    console.log(line("dxs start, first batch after start:", cold))
    console.log(
      `  (the last upload was answered after ${(cold.uploaded ?? 0).toFixed(2)} s; ratio ${(rate(cold) / rate(poppler)).toFixed(2)})`,
    )
    const batches: Array<Timed> = []
    for (let i = 0; i < BATCHES; i++) batches.push(await uploadAndWait(server, files))
    const text = median(batches)
    console.log(line(`dxs start, next batches (median of ${BATCHES}):`, text))
    console.log(`  (the last upload was answered after ${(text.uploaded ?? 0).toFixed(2)} s)`)
    console.log(`  ratio dxs/pdftotext: ${(rate(text) / rate(poppler)).toFixed(2)} (target >= 0.50)`)
    const textPeak = peakOf(worker!)
    if (images.length > 0)
      console.log(line(`OCR through the API (${images.length} files):`, await uploadAndWait(server, images)))
    console.log(
      `  peak RSS (VmHWM) of the dxs process: ${textPeak.toFixed(0)} MB after the text PDFs, ${peakOf(worker!).toFixed(0)} MB after OCR`,
    )
  })
  const scaled = await withDxs(2, async (server, workers) => {
    const text = await uploadAndWait(server, files)
    console.log(
      `${line("api + 2 workers, first batch after start:", text)}  ratio ${(rate(text) / rate(poppler)).toFixed(2)}`,
    )
    console.log(
      `  peak RSS (VmHWM) of the workers: ${workers.map((w) => peakOf(w).toFixed(0)).join(" MB, ")} MB`,
    )
    return true
  })
  if (!scaled) console.log("  api + 2 workers: skipped (no PostgreSQL server at BENCH_DATABASE_URL)")
  console.log(line("PDF backend alone, in-process:", await backendOnly(files)))
}

main()
  .catch((e) => {
    console.error(e)
    process.exitCode = 1
  })
  .finally(async () => {
    const ocr = await import("@dxs/pipeline/parsing/Ocr").catch(() => undefined)
    await (ocr as { terminateOcr?: () => Promise<void> } | undefined)?.terminateOcr?.()
  })
