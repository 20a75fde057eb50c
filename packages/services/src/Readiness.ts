/**
 * What a load balancer or an orchestrator asks a process: is it ready to serve (`/readyz`)? The database
 * answers, its schema is the one this code needs, and object storage answers. Each check is bounded, so
 * an outage is reported, not waited for.
 */
import { BlobStore, Db, pendingMigrations } from "@dxs/db"
import { Duration, Effect } from "effect"
import { sql } from "kysely"

export type ReadinessPart = "database" | "migrations" | "storage"

export interface ReadinessReport {
  readonly ready: boolean
  /** `ok`, or what is wrong, per part. */
  readonly checks: Readonly<Record<ReadinessPart, string>>
  /** The parts found failing (a part that could not be checked because another failed is not named). */
  readonly failing: ReadonlyArray<ReadinessPart>
}

/** The longest a check may take before its part counts as unavailable. */
const CHECK_TIMEOUT = Duration.seconds(5)

const bounded = (what: string, check: () => Promise<string | undefined>) =>
  Effect.tryPromise(check).pipe(
    Effect.map((problem) => problem ?? "ok"),
    Effect.timeoutTo({
      duration: CHECK_TIMEOUT,
      onSuccess: (r) => r,
      onTimeout: () => `${what} did not answer within ${Duration.toSeconds(CHECK_TIMEOUT)} s`,
    }),
    Effect.catchAll((e) =>
      Effect.succeed(`${what}: ${e.error instanceof Error ? e.error.message : String(e.error)}`),
    ),
  )

/** The readiness check of this process's database and blob store, to run on each request. */
export const readinessProbe: Effect.Effect<
  Effect.Effect<ReadinessReport>,
  never,
  Db | BlobStore
> = Effect.gen(function* () {
  const { kysely } = yield* Db
  const blobs = yield* BlobStore
  return Effect.gen(function* () {
    const [database, storage] = yield* Effect.all(
      [
        bounded("the database", () => sql`select 1`.execute(kysely).then(() => undefined)),
        blobs.check === undefined ? Effect.succeed("ok") : bounded("object storage", blobs.check),
      ],
      { concurrency: "unbounded" },
    )
    const unknown = database !== "ok"
    const migrations = unknown
      ? "unknown while the database is unavailable"
      : yield* bounded("the database", () =>
          pendingMigrations(kysely).then((pending) =>
            pending.length === 0 ? undefined : `not applied: ${pending.join(", ")}`,
          ),
        )
    const checks = { database, migrations, storage }
    const failing = (["database", "migrations", "storage"] as const).filter(
      (part) => checks[part] !== "ok" && !(part === "migrations" && unknown),
    )
    return { ready: Object.values(checks).every((c) => c === "ok"), checks, failing }
  })
})
