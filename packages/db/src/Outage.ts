/**
 * Outages of the parts dxs stands on (object storage, the database), told apart from every other failure:
 * a request that meets one answers 503 with Retry-After, and a task that meets one is retried for the
 * retry window without counting against its document. They travel as defects (driver failures are defects
 * at the repository edge), so they are recognised wherever they end up: thrown by a promise, wrapped in
 * another error's `cause`, or inside an Effect `Cause` (also the `FiberFailure` a promise of Effect code rejects with).
 */
import { Cause, Data, Runtime } from "effect"

/** The object store did not answer in time, refused the connection or answered 5xx. */
export class StorageUnavailable extends Data.TaggedError("StorageUnavailable")<{
  readonly operation: string
  readonly key: string
  readonly reason: string
}> {
  override get message() {
    return `object storage unavailable (${this.operation} of ${this.key}): ${this.reason}`
  }
}

/** The database could not be reached, or dropped the connection (restart, shutdown, too many clients). */
export class DatabaseUnavailable extends Data.TaggedError("DatabaseUnavailable")<{
  readonly reason: string
}> {
  override get message() {
    return `database unavailable: ${this.reason}`
  }
}

export type OutagePart = "storage" | "database"

export interface Outage {
  readonly part: OutagePart
  readonly message: string
}

/** Errors of the network below a driver: the other side is not there (or went away). */
const NETWORK_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
  // The Unix socket of an embedded server that is not running (only with the `connect` call).
  "ENOENT",
])

/** The socket calls a driver's network error names (a file system's errors name other calls). */
const SOCKET_CALLS = new Set(["connect", "read", "write", "getaddrinfo"])

/**
 * PostgreSQL's codes of a server that cannot serve now: connection exceptions (08), admin or crash
 * shutdown, cannot connect now (57P01–57P03), too many connections (53300).
 */
const DATABASE_STATES = /^(08\d\d\d|57P0[123]|53300)$/

/** Messages of pg and pg-pool for a connection lost or never made. */
const DATABASE_MESSAGES =
  /Connection terminated|Client has encountered a connection error|timeout exceeded when trying to connect|Connection ended unexpectedly|the database system is (starting up|shutting down|in recovery)/i

const fieldOf = (e: unknown, name: string): unknown =>
  e !== null && typeof e === "object" ? (e as Record<string, unknown>)[name] : undefined

/**
 * The database outage `e` is (pg's error, or a network error of its socket), if it is one. A bare network
 * error counts only when thrown as it is (`direct`), as pg throws its socket's: found as the `cause` of
 * another error it belongs to some other client (a model server, a webhook target).
 */
const asDatabaseOutage = (e: unknown, direct: boolean): Outage | undefined => {
  const code = fieldOf(e, "code")
  const message = String(fieldOf(e, "message") ?? "")
  const fromPg =
    (typeof code === "string" && DATABASE_STATES.test(code)) ||
    DATABASE_MESSAGES.test(message) ||
    // A socket error of pg names the address it tried (`connect ECONNREFUSED 127.0.0.1:5432`).
    (direct &&
      typeof code === "string" &&
      NETWORK_CODES.has(code) &&
      SOCKET_CALLS.has(String(fieldOf(e, "syscall"))) &&
      (code !== "ENOENT" || fieldOf(e, "syscall") === "connect"))
  return fromPg ? { part: "database", message: message || String(code) } : undefined
}

/** The outage behind `e` (an error, its causes, an Effect failure), or undefined when it is none. */
export const outageOf = (e: unknown, depth = 0, direct = true): Outage | undefined => {
  if (e === null || e === undefined || depth > 8) return undefined
  if (e instanceof StorageUnavailable) return { part: "storage", message: e.message }
  if (e instanceof DatabaseUnavailable) return { part: "database", message: e.message }
  if (Runtime.isFiberFailure(e)) return outageInCause(e[Runtime.FiberFailureCauseId], depth + 1)
  if (Cause.isCause(e)) return outageInCause(e, depth + 1)
  return asDatabaseOutage(e, direct) ?? outageOf(fieldOf(e, "cause"), depth + 1, false)
}

/** The first outage among a cause's failures and defects. */
export const outageInCause = (cause: Cause.Cause<unknown>, depth = 0): Outage | undefined => {
  for (const e of [...Cause.failures(cause), ...Cause.defects(cause)]) {
    const outage = outageOf(e, depth)
    if (outage !== undefined) return outage
  }
  return undefined
}
