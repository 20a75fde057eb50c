/**
 * What the tests of live subscriptions share: an SSE client that can drop its connection, a meter of the
 * test database's transactions, a logger that records what the gateway logs, and the all-in-one stack
 * (the REST API with `/graphql` as a route of its router, as `dxs start` serves it) on loopback.
 */
import { randomUUID } from "node:crypto"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import { type Database, Db, makeKysely } from "@dxs/db"
import { nodeServerLayer, restApiWith } from "@dxs/rest-api/Server"
import { ApiKeys, servicesLayer } from "@dxs/services"
import { afterThisFile } from "@dxs/testing/FileCleanup"
import { useTestDatabase } from "@dxs/testing/TestDatabase"
import { HttpServer } from "@effect/platform"
import { Effect, Layer, ManagedRuntime } from "effect"
import type { YogaLogger } from "graphql-yoga"
import { type Kysely, sql } from "kysely"
import { type GatewayOptions, graphqlRoute } from "../src/index.ts"

export const PROGRESS = `subscription ($p: ID!) { runProgress(projectId: $p) {
  project_id pipeline_running status { pipeline_running parsing_state document_count }
  agents { agent_id progress { extraction { total completed } is_pending } } } }`

/** An open SSE subscription: the pushed payloads as they arrive; `stop` drops the connection. */
export interface Sse {
  readonly status: number
  readonly events: Array<any>
  /** True once the server ended the stream (`event: complete`, or the body ended). */
  readonly ended: () => boolean
  readonly completed: () => boolean
  readonly stop: () => Promise<void>
}

/** Opens `query` over SSE (`POST` with `Accept: text/event-stream`) with the API key. */
export const openSse = async (
  url: string,
  key: string | undefined,
  query: string,
  variables: Record<string, unknown>,
): Promise<Sse> => {
  const abort = new AbortController()
  const res = await fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "text/event-stream",
      ...(key === undefined ? {} : { "x-api-key": key }),
    },
    body: JSON.stringify({ query, variables }),
    signal: abort.signal,
  })
  const events: Array<any> = []
  let ended = false
  let completed = false
  const reading = (async () => {
    const reader = res.body!.getReader()
    const decoder = new TextDecoder()
    let buffer = ""
    try {
      for (;;) {
        const { value, done } = await reader.read()
        if (done) return
        buffer += decoder.decode(value, { stream: true })
        let end = buffer.indexOf("\n\n")
        while (end >= 0) {
          const lines = buffer.slice(0, end).split("\n")
          buffer = buffer.slice(end + 2)
          if (lines.includes("event: complete")) completed = true
          const data = lines
            .filter((l) => l.startsWith("data:"))
            .map((l) => l.slice(5).trim())
            .join("\n")
          if (data !== "") events.push(JSON.parse(data))
          end = buffer.indexOf("\n\n")
        }
      }
    } catch {
      // the connection was dropped
    } finally {
      ended = true
    }
  })()
  return {
    status: res.status,
    events,
    ended: () => ended,
    completed: () => completed,
    stop: async () => {
      abort.abort()
      await reading
    },
  }
}

/** Waits for `f` to hold, checking every 50 ms; fails after `timeoutMs`. */
export const until = async (what: string, f: () => boolean | Promise<boolean>, timeoutMs = 20_000) => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    if (await f()) return
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 50))
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/**
 * Counts the test database's transactions (all sessions) as PostgreSQL's statistics report them. The
 * statistics of a session reach `pg_stat_database` up to a second after its transactions (ten when it
 * then goes idle), so a window's count may include a little earlier work; a steady reader shows in every
 * window.
 */
export const transactionMeter = (dbUrl: string) => {
  const db = makeKysely(dbUrl, 1)
  const read = async () =>
    Number(
      (
        await sql<{ n: string }>`select xact_commit + xact_rollback as n from pg_stat_database
          where datname = current_database()`.execute(db)
      ).rows[0]!.n,
    )
  return {
    /** Transactions of everyone but this meter during `ms` milliseconds (its own reading excluded). */
    count: async (ms = 1000) => {
      const before = await read()
      await sleep(ms)
      return (await read()) - before - 1
    },
    close: () => db.destroy(),
  }
}

/** Adds a document row to the project, as an upload does (its file aside): one more in its status. */
export const addDocumentRow = (db: Kysely<Database>, projectId: string) =>
  db
    .insertInto("documents")
    .values({
      project_id: projectId,
      file_name: `${randomUUID()}.pdf`,
      type: "PDF",
      status: "Pending",
      page_count: 1,
      blob_key: `test/${randomUUID()}`,
      content_type: "application/pdf",
      size_bytes: 1,
      sha256: "0",
    })
    .execute()

/**
 * Locks `table` against every reader until the returned function is called: a read of it waits meanwhile
 * (see `lockWaiters`).
 */
export const holdLock = async (dbUrl: string, table: string): Promise<() => Promise<void>> => {
  const db = makeKysely(dbUrl, 1)
  let release!: () => void
  const released = new Promise<void>((r) => {
    release = r
  })
  let locked!: () => void
  const isLocked = new Promise<void>((r) => {
    locked = r
  })
  const done = db.transaction().execute(async (trx) => {
    await sql`lock table ${sql.table(table)} in access exclusive mode`.execute(trx)
    locked()
    await released
  })
  await isLocked
  return async () => {
    release()
    await done
    await db.destroy()
  }
}

/** Sessions of the database waiting for a lock. */
export const lockWaiters = async (db: Kysely<Database>) =>
  (
    await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity
      where datname = current_database() and wait_event_type = 'Lock'`.execute(db)
  ).rows[0]!.n

export interface LogLine {
  readonly level: "debug" | "info" | "warn" | "error"
  readonly args: ReadonlyArray<unknown>
}

/** A yoga logger that records every call. */
export const recordingLogger = () => {
  const lines: Array<LogLine> = []
  const at =
    (level: LogLine["level"]) =>
    (...args: Array<unknown>) => {
      lines.push({ level, args })
    }
  const logger: YogaLogger = { debug: at("debug"), info: at("info"), warn: at("warn"), error: at("error") }
  return { logger, lines, errors: () => lines.filter((l) => l.level === "error") }
}

/** The all-in-one stack on loopback: the REST API with the gateway at `/graphql` of the same router. */
export interface AllInOne {
  readonly origin: string
  /** The GraphQL endpoint. */
  readonly url: string
  readonly dbUrl: string
  readonly newKey: (org: string) => Promise<string>
  /** Stops the server and the gateway (as `dxs start` does on SIGTERM); also done after the file. */
  readonly close: () => Promise<void>
}

export const startAllInOne = async (
  options: Partial<Pick<GatewayOptions, "logging" | "maxSubscriptionsPerKey">> = {},
): Promise<AllInOne> => {
  const dbUrl = await useTestDatabase()
  const blobDir = await fs.mkdtemp(path.join(os.tmpdir(), "dxs-blobs-"))
  const graphql = Layer.unwrapEffect(
    Effect.map(Db, (db) =>
      graphqlRoute({
        dbUrl,
        blobDir,
        db: Layer.succeed(Db, db),
        rateLimitPerMinute: 100_000,
        ...options,
      }),
    ),
  )
  const layer = restApiWith(graphql).pipe(
    Layer.provideMerge(servicesLayer({ dbUrl, blobDir, rateLimitPerMinute: 100_000 })),
    Layer.provideMerge(nodeServerLayer({ port: 0, host: "127.0.0.1" })),
  )
  const runtime = ManagedRuntime.make(layer)
  const address = await runtime.runPromise(Effect.map(HttpServer.HttpServer, (s) => s.address))
  if (address._tag !== "TcpAddress") throw new Error("expected a TCP address")
  let closed: Promise<void> | undefined
  const close = () => {
    closed ??= runtime.dispose()
    return closed
  }
  afterThisFile(async () => {
    await close()
    await fs.rm(blobDir, { recursive: true, force: true })
  })
  const origin = `http://127.0.0.1:${address.port}`
  return {
    origin,
    url: `${origin}/graphql`,
    dbUrl,
    newKey: (org) => runtime.runPromise(Effect.flatMap(ApiKeys, (k) => k.create(org))).then((r) => r.key),
    close,
  }
}
