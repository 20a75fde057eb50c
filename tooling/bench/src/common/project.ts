/**
 * What the launch-scale and read-path benchmarks share: a database (DATABASE_URL's server with a fresh
 * database, else an embedded server), a seeded project of processed documents and agents split by the
 * Document dimension, and `dxs` run as a child process over that database.
 */
import { spawn } from "node:child_process"
import { randomUUID } from "node:crypto"
import { readFileSync } from "node:fs"
import * as net from "node:net"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import type { makeKysely } from "@dxs/db"
import { createTestDatabase, startTestServer } from "@dxs/testing/TestPostgres"
import { buildDxs, compiledDxs, dxsNodeFlags } from "./compiled.ts"

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../..")

/** `--name N` from the command line, or the fallback. */
export const option = (name: string, fallback: number): number => {
  const i = process.argv.indexOf(`--${name}`)
  if (i < 0) return fallback
  const n = Number(process.argv[i + 1])
  if (!Number.isFinite(n) || n < 1) throw new Error(`--${name} wants a positive number`)
  return Math.floor(n)
}

const withDatabaseName = (url: string, name: string) => {
  const u = new URL(url)
  u.pathname = `/${name}`
  return u.toString()
}

export const startDatabase = async () => {
  const external = process.env.DATABASE_URL
  if (external) process.env.TEST_DATABASE_URL = withDatabaseName(external, "postgres")
  const server = await startTestServer()
  const database = await createTestDatabase(server.templateUrl)
  return {
    url: database.url,
    stop: async () => {
      await database.drop().catch(() => undefined)
      await server.stop()
    },
  }
}

export type Db = ReturnType<typeof makeKysely>

export interface SeedOptions {
  readonly organization: string
  readonly documents: number
  /** The agents' names and value types, all split by the Document dimension. */
  readonly agents: ReadonlyArray<{
    readonly name: string
    readonly valueType: string
    readonly unit?: string
  }>
  /** The one page's text of document `i` (1-based). */
  readonly text: (i: number) => string
}

/**
 * The state a project has after its documents were uploaded and parsed and its agents defined: the
 * Document dimension, D processed one-page documents, A agents split by Document. Written in batches, as
 * the point is the state, not the upload path (which `pnpm bench:parse` measures).
 */
export const seedProject = async (db: Db, options: SeedOptions) => {
  // The organisation is made once: several projects of one size each may be seeded into it.
  const org = await db
    .insertInto("organizations")
    .values({ name: options.organization })
    .onConflict((oc) => oc.column("name").doUpdateSet({ name: options.organization }))
    .returning("id")
    .executeTakeFirstOrThrow()
  const project = await db
    .insertInto("projects")
    .values({ organization_id: org.id, name: "Bench", project_modules: "{}", target_output_schema: null })
    .returning("id")
    .executeTakeFirstOrThrow()
  const dimension = await db
    .insertInto("dimensions")
    .values({
      project_id: project.id,
      name: "Document",
      description: "One value per document",
      source: "DOCUMENT",
    })
    .returning("id")
    .executeTakeFirstOrThrow()
  const BATCH = 1000
  for (let from = 0; from < options.documents; from += BATCH) {
    const ids = Array.from({ length: Math.min(BATCH, options.documents - from) }, () => randomUUID())
    await db
      .insertInto("documents")
      .values(
        ids.map((id, i) => ({
          id,
          project_id: project.id,
          file_name: `document-${from + i + 1}.txt`,
          type: "Text",
          status: "Processed",
          page_count: 1,
          blob_key: `bench/${id}`,
          content_type: "text/plain",
          size_bytes: 100,
          sha256: "0".repeat(64),
          last_parsed_at: new Date(),
        })),
      )
      .execute()
    await db
      .insertInto("pages")
      .values(ids.map((id, i) => ({ document_id: id, number: 1, text: options.text(from + i + 1) })))
      .execute()
  }
  for (const spec of options.agents) {
    const agent = await db
      .insertInto("agents")
      .values({
        project_id: project.id,
        name: spec.name,
        extraction_instructions: `The ${spec.name.toLowerCase()} stated in the document`,
        value_type: spec.valueType,
        ...(spec.unit === undefined ? {} : { unit: spec.unit }),
      })
      .returning("id")
      .executeTakeFirstOrThrow()
    await db
      .insertInto("agent_dimensions")
      .values({ agent_id: agent.id, dimension_id: dimension.id, are_values_dynamic: false, values: "[]" })
      .execute()
  }
  return { organizationId: org.id, projectId: project.id }
}

/** The compiled `dxs` over the database, as `./dx start` runs it; `waitFor` resolves once its output matches. */
export const dxs = (args: ReadonlyArray<string>, env: NodeJS.ProcessEnv, input?: string) => {
  buildDxs()
  const child = spawn(
    process.execPath,
    [
      // BENCH_NODE_ARGS: extra Node options for dxs, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof" to see
      // where its time goes.
      ...dxsNodeFlags,
      ...(process.env.BENCH_NODE_ARGS?.split(" ").filter((a) => a !== "") ?? []),
      compiledDxs,
      ...args,
    ],
    {
      cwd: path.join(repoRoot, "apps/cli"),
      env,
      stdio: [input === undefined ? "ignore" : "pipe", "pipe", "pipe"],
    },
  )
  if (input !== undefined) child.stdin?.end(input)
  let output = ""
  const keep = (b: Buffer) => {
    output = (output + b.toString()).slice(-200_000)
  }
  child.stdout?.on("data", keep)
  child.stderr?.on("data", keep)
  const waitFor = async (pattern: RegExp, ms = 120_000) => {
    const deadline = Date.now() + ms
    for (;;) {
      const m = output.match(pattern)
      if (m) return m
      if (child.exitCode !== null || Date.now() > deadline)
        throw new Error(`dxs ${args.join(" ")}: no ${pattern}\n${output.slice(-3000)}`)
      await new Promise((r) => setTimeout(r, 50))
    }
  }
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
  const stop = async () => {
    if (child.exitCode !== null) return
    child.kill("SIGTERM")
    const timer = setTimeout(() => child.kill("SIGKILL"), 20_000)
    await exited
    clearTimeout(timer)
  }
  return { child, waitFor, exited, stop, output: () => output }
}

/** The environment `dxs` runs with over the database: loopback, any port, quiet logs. */
export const dxsEnv = (databaseUrl: string): NodeJS.ProcessEnv => {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: databaseUrl,
    PORT: "0",
    HOST: "127.0.0.1",
    LOG_FORMAT: "json",
    LOG_LEVEL: "warning",
    // A load generator from one address is not what the request limit is for.
    RATE_LIMIT_PER_MINUTE: "0",
  }
  delete env.INIT_CWD
  return env
}

/** A new API key of the organisation, made by `dxs keys create`. */
export const createKey = async (env: NodeJS.ProcessEnv, organization: string) => {
  const created = dxs(["keys", "create", "--org", organization], env)
  await created.exited
  const key = /dxs_live_[0-9A-Za-z]{32}/.exec(created.output())?.[0]
  if (key === undefined) throw new Error(`keys create printed no key:\n${created.output()}`)
  return key
}

/** A TCP port free on loopback now. */
const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const probe = net.createServer()
    probe.once("error", reject)
    probe.listen(0, "127.0.0.1", () => {
      const address = probe.address()
      probe.close(() => resolve(typeof address === "object" && address ? address.port : 0))
    })
  })

/**
 * `dxs start all` on a free port, resolved once its REST API answers, with the API's base URL. Its log
 * stays at `warning`: a line per request written into a pipe the benchmark reads would be measured too.
 */
export const startAll = async (env: NodeJS.ProcessEnv) => {
  const port = await freePort()
  const server = dxs(["start", "all"], { ...env, PORT: String(port) })
  const api = `http://127.0.0.1:${port}/api/v1`
  for (const deadline = Date.now() + 120_000; ; ) {
    if (server.child.exitCode !== null || Date.now() > deadline)
      throw new Error(`dxs start all did not answer on ${api}:\n${server.output().slice(-3000)}`)
    const answered = await fetch(`${api}/projects/`).then(
      () => true,
      () => false,
    )
    if (answered) break
    await new Promise((r) => setTimeout(r, 100))
  }
  return { ...server, api }
}

/** The peak resident memory of a process so far, in MB (Linux). */
export const peakRssMb = (pid: number) => {
  const status = readFileSync(`/proc/${pid}/status`, "utf8")
  const kb = Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? Number.NaN)
  return kb / 1024
}

/** Prints `label  value` rows aligned. */
export const printRows = (rows: ReadonlyArray<readonly [string, string]>) => {
  const width = Math.max(...rows.map(([k]) => k.length))
  for (const [k, v] of rows) console.log(`${k.padEnd(width)}  ${v}`)
}
