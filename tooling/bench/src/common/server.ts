/**
 * The benchmarks that measure through the REST API of a real server: `dxs` child processes (the compiled
 * CLI, as `./dx start` runs them) over a fresh database (a new database on BENCH_DATABASE_URL's server,
 * default postgres://postgres@127.0.0.1:5432/test, dropped afterwards; else embedded PostgreSQL in a
 * temporary DATA_DIR), an API key, and uploads timed until every document is parsed.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { randomUUID } from "node:crypto"
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { makeKysely } from "@dxs/db/Db"
import { sql } from "kysely"
import { buildDxs, compiledDxs, dxsNodeFlags } from "./compiled.ts"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../..")
const ADMIN_URL = process.env.BENCH_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test"
/** Uploads sent at once. */
const UPLOADS_AT_ONCE = 4
/** Give up on a phase after this long. */
const PHASE_LIMIT_MS = 15 * 60_000

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
export const seconds = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e9

// ---------------------------------------------------------------------------------------------------------
// Child processes

/** A `dxs` child process (the compiled CLI, as `./dx start` runs it) with its output captured. */
export class Dxs {
  output = ""
  exited = false
  readonly child: ChildProcess
  constructor(args: ReadonlyArray<string>, env: NodeJS.ProcessEnv) {
    buildDxs()
    const nodeArgs = process.env.BENCH_NODE_ARGS?.split(" ").filter((a) => a !== "") ?? []
    this.child = spawn(process.execPath, [...dxsNodeFlags, ...nodeArgs, compiledDxs, ...args], {
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
export const peakOf = (p: Dxs) =>
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

export interface Server {
  readonly origin: string
  readonly key: string
}

export const api = async (server: Server, p: string, init: RequestInit = {}) => {
  const res = await fetch(`${server.origin}/api/v1${p}`, {
    ...init,
    headers: { "x-api-key": server.key, ...(init.headers as Record<string, string> | undefined) },
  })
  const body = await res.text()
  if (!res.ok) throw new Error(`${init.method ?? "GET"} ${p}: ${res.status} ${body.slice(0, 500)}`)
  return body === "" ? undefined : JSON.parse(body)
}

export interface DocumentRecord {
  readonly id: string
  readonly status: "Pending" | "Processed" | "Failed"
  readonly page_count: number
}

export interface Timed {
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
export const uploadAndWait = async (
  server: Server,
  files: ReadonlyArray<string>,
): Promise<
  Timed & {
    readonly projectId: string
    readonly documents: ReadonlyArray<DocumentRecord & { readonly file_name: string }>
  }
> => {
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
        projectId: project.id,
        documents: docs as Array<DocumentRecord & { readonly file_name: string }>,
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
    // The benchmarks poll the documents they wait for: no request limit gets in their way.
    RATE_LIMIT_PER_MINUTE: "0",
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
export const withDxs = async <A>(
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
