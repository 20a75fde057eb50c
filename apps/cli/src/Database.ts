import { Db, EmbeddedPostgresError, type EmbeddedServer, migrateToLatest, startEmbedded } from "@dxs/db"
import { Context, Effect, Layer, Runtime } from "effect"
import { CliError } from "./CliError.ts"
import { type Config, redactUrl } from "./Config.ts"

const describe = (e: unknown): string => (e instanceof Error ? e.message : String(e))

/** The PostgreSQL server this process uses: external (DATABASE_URL) or the embedded one of DATA_DIR. */
export class DatabaseServer extends Context.Tag("@dxs/cli/DatabaseServer")<
  DatabaseServer,
  {
    readonly url: string
    readonly kind: "external" | "embedded"
    /** True when this process started the embedded server (and stops it on exit). */
    readonly owner: boolean
    /** For messages: the URL without its password. */
    readonly description: string
  }
>() {}

/** Stops a server this process started (Embedded.stop copes with a server already shutting down). */
const stopEmbedded = (server: EmbeddedServer) =>
  Effect.log("stopping the embedded PostgreSQL server").pipe(
    Effect.zipRight(Effect.promise(() => server.stop())),
    Effect.timeout("70 seconds"),
    Effect.matchEffect({
      onSuccess: () => Effect.log("embedded PostgreSQL server stopped"),
      onFailure: () =>
        Effect.logWarning("the embedded PostgreSQL server did not stop within 70 s; the next start stops it"),
    }),
  )

/**
 * DATABASE_URL selects an external server; otherwise the embedded server of DATA_DIR is started, or
 * attached to when another dxs process runs it. A server this process started is stopped when the
 * layer's scope closes (normal end, failure or interruption by a signal).
 */
export const databaseServerLayer = (config: Config) =>
  Layer.scoped(
    DatabaseServer,
    config.databaseUrl !== undefined
      ? Effect.succeed({
          url: config.databaseUrl,
          kind: "external" as const,
          owner: false,
          description: redactUrl(config.databaseUrl),
        })
      : Effect.acquireRelease(
          Effect.runtime<never>().pipe(
            Effect.flatMap((runtime) =>
              Effect.tryPromise({
                try: () =>
                  startEmbedded({
                    dataDir: config.dataDir,
                    log: (line) => Runtime.runFork(runtime)(Effect.log(line)),
                  }),
                catch: (e) =>
                  new CliError({
                    message:
                      e instanceof EmbeddedPostgresError
                        ? e.message
                        : `the embedded PostgreSQL server in ${config.dataDir} could not start: ${describe(e)}`,
                    exitCode: 1,
                  }),
              }),
            ),
          ),
          (server) => (server.owner ? stopEmbedded(server) : Effect.void),
        ).pipe(
          Effect.map((server) => ({
            url: server.url,
            kind: "embedded" as const,
            owner: server.owner,
            description: `embedded PostgreSQL in ${config.dataDir}`,
          })),
        ),
  )

/** Checks that the server answers, so a wrong DATABASE_URL is one clear message. */
const checkConnection = Effect.gen(function* () {
  const { kysely } = yield* Db
  const server = yield* DatabaseServer
  yield* Effect.tryPromise({
    try: () => kysely.selectNoFrom((eb) => eb.lit(1).as("one")).execute(),
    catch: (e) =>
      new CliError({ message: `cannot connect to ${server.description}: ${describe(e)}`, exitCode: 1 }),
  })
})

/** Brings the schema up to date (under Kysely's advisory lock) and returns the names applied. */
export const migrate = Effect.gen(function* () {
  yield* checkConnection
  const { kysely } = yield* Db
  const { applied } = yield* Effect.tryPromise({
    try: () => migrateToLatest(kysely),
    catch: (e) => new CliError({ message: describe(e), exitCode: 1 }),
  })
  return applied
})

/** The database server and a connection pool (Db) over it. */
export const dbLayer = (config: Config) =>
  Layer.unwrapEffect(Effect.map(DatabaseServer, (server) => Db.layer(server.url, config.dbPoolSize))).pipe(
    Layer.provideMerge(databaseServerLayer(config)),
  )

/** Db over a schema brought up to date first; later layers build only after the migrations. */
export const migratedDbLayer = (config: Config) =>
  Layer.effectDiscard(
    migrate.pipe(
      Effect.tap((applied) =>
        applied.length > 0
          ? Effect.log(`applied ${applied.length} migration(s): ${applied.join(", ")}`)
          : Effect.logDebug("database schema is up to date"),
      ),
    ),
  ).pipe(Layer.provideMerge(dbLayer(config)))
