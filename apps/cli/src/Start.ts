import { existsSync } from "node:fs"
import * as fs from "node:fs/promises"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { BlobStore, type BlobStoreShape, type Database, Db, fileBlobStore } from "@dxs/db"
import { metricsRegistry, watchQueueDepth } from "@dxs/db/Metrics"
import { lazyGraphqlRoute } from "@dxs/graphql-gateway/LazyRoute"
import type { GatewayOptions } from "@dxs/graphql-gateway/Server"
import type { LanguageModelShape } from "@dxs/pipeline/llm/LanguageModel"
import { localModel } from "@dxs/pipeline/llm/Local"
import { makeOpenAiModel } from "@dxs/pipeline/llm/OpenAi"
import { postgresResponseCache } from "@dxs/pipeline/llm/ResponseCache"
import { PARSE_TASK } from "@dxs/pipeline/parsing/ParseDocument"
import { ParsePool, warmParsePool } from "@dxs/pipeline/parsing/Runner"
import type { WebhookSettings } from "@dxs/pipeline/webhooks/Settings"
import { searxngSearch } from "@dxs/pipeline/websearch/WebSearch"
import { nodeServerLayer, restApiWith } from "@dxs/rest-api/Server"
import { webAppRoute } from "@dxs/rest-api/WebApp"
import {
  type AuthThrottleSettings,
  backgroundLoops,
  defaultSpoolRoot,
  detectLibreOffice,
  type ServicesOptions,
  servicesLayer,
  startBackground,
  sweepSpool,
} from "@dxs/services"
import { backgroundTaskHandlers, runWorker, type TaskHandler } from "@dxs/worker"
import * as HttpServer from "@effect/platform/HttpServer"
import type * as HttpServerError from "@effect/platform/HttpServerError"
import { Cause, Effect, Layer } from "effect"
import type { Kysely } from "kysely"
import type { StartMode } from "./Args.ts"
import { CliError } from "./CliError.ts"
import { type Config, loadEncryptionKey, publicUrlFor, redactUrl } from "./Config.ts"
import { DatabaseServer, migratedDbLayer } from "./Database.ts"

/**
 * Parse limits from the configuration, and the process's pool of parsing threads (shared by the worker and
 * the API's page images); LibreOffice is looked for once, at start.
 */
const parsingOptions = (config: Config, pool: ParsePool) => ({
  pool,
  timeoutMs: config.parsing.timeoutSeconds * 1000,
  memoryMb: config.parsing.memoryMb,
  limits: { maxPages: config.parsing.maxPages, maxDecompressedBytes: config.parsing.maxDecompressedBytes },
  libreOffice: detectLibreOffice(),
  transcription: config.parsing.transcription,
})

/** The pipeline's language model; the OpenAI-compatible one caches its answers in the database. */
const modelFor = (config: Config, db: Kysely<Database>): LanguageModelShape =>
  config.llm.provider === "openai"
    ? makeOpenAiModel({
        baseUrl: config.llm.baseUrl,
        ...(config.llm.apiKey !== undefined ? { apiKey: config.llm.apiKey } : {}),
        model: config.llm.model,
        concurrency: config.llm.concurrency,
        timeoutMs: config.llm.timeoutSeconds * 1000,
        maxRetries: config.llm.maxRetries,
        cache: postgresResponseCache(db),
      })
    : localModel

/** Task kinds this process runs: parse, archive, archive-sweep, the pipeline's and webhook delivery. */
const handlersFor = (
  config: Config,
  db: Kysely<Database>,
  webhooks: WebhookSettings,
  blobs: BlobStoreShape,
  pool: ParsePool,
): Readonly<Record<string, TaskHandler>> =>
  backgroundTaskHandlers({
    blobs,
    parsing: parsingOptions(config, pool),
    model: modelFor(config, db),
    webSearch: config.webSearch === undefined ? undefined : searxngSearch(config.webSearch),
    webhooks,
    requestBudget: config.requestBudget,
  })

/**
 * Webhook settings: the encryption key of secrets at rest, webhook secrets and the file_url signing key
 * (DXS_ENCRYPTION_KEY, else DATA_DIR/encryption.key, created once)
 * and whether loopback targets are allowed. Says where the key came from; a key file just created while
 * DATABASE_URL is set is a warning: processes on other machines would each create their own.
 */
const webhookSettings = (config: Config) =>
  Effect.gen(function* () {
    const loaded = yield* Effect.tryPromise({
      try: () => loadEncryptionKey(config),
      catch: (e) => new CliError({ message: e instanceof Error ? e.message : String(e), exitCode: 1 }),
    })
    if (loaded.source === "created") {
      yield* Effect.log(
        `created the encryption key of secrets at rest (webhook secrets, the file_url signing key) in ${loaded.file} (mode 0600): keep it`,
      )
      if (config.databaseUrl !== undefined)
        yield* Effect.logWarning(
          "DATABASE_URL is set but DXS_ENCRYPTION_KEY is not: every dxs process must share one key; " +
            `set DXS_ENCRYPTION_KEY on all of them (for example to the contents of ${loaded.file})`,
        )
    } else if (loaded.source === "file") {
      yield* Effect.logDebug(`encryption key of secrets at rest: ${loaded.file}`)
    }
    if (config.webhooks.allowLoopback)
      yield* Effect.logWarning(
        "WEBHOOK_ALLOW_LOOPBACK is on: webhooks may target loopback (development only)",
      )
    const settings: WebhookSettings = {
      encryptionKey: loaded.key,
      allowLoopback: config.webhooks.allowLoopback,
    }
    return settings
  })

/** The throttles against guessing credentials, the same in the REST API and the GraphQL gateway. */
const authThrottleOf = (config: Config): AuthThrottleSettings["Type"] => ({
  signInAttemptsPerMinute: config.signInAttemptsPerMinute,
  authFailuresPerMinute: config.authFailuresPerMinute,
})
/** The gateway's (graphql-yoga's) log level for LOG_LEVEL. */
const yogaLogLevels: Record<Config["logLevel"], NonNullable<GatewayOptions["logging"]>> = {
  trace: "debug",
  debug: "debug",
  info: "info",
  warning: "warn",
  error: "error",
  fatal: "error",
  none: false,
}

/**
 * The settings of the services that the REST API and the GraphQL gateway share, over this process's pool
 * and blob store.
 */
const servicesOptions = (
  config: Config,
  db: Db["Type"],
  blobs: BlobStoreShape,
  webhooks: WebhookSettings,
): ServicesOptions => ({
  dbUrl: db.url,
  db: Layer.succeed(Db, db),
  blobDir: config.blobDir,
  blobs,
  webhooks,
  rateLimitPerMinute: config.rateLimitPerMinute,
  authThrottle: authThrottleOf(config),
  llmProvider: config.llm.provider,
  requestBudget: config.requestBudget,
})

/** What the GraphQL gateway needs, over this process's pool and blob store: the same settings as the REST API. */
const gatewayOptions = (
  config: Config,
  db: Db["Type"],
  blobs: BlobStoreShape,
  webhooks: WebhookSettings,
): GatewayOptions => ({
  ...servicesOptions(config, db, blobs, webhooks),
  publicUrl: publicUrlFor(config, config.port),
  appUrl: config.appUrl ?? publicUrlFor(config, config.port),
  limits: config.limits,
  http: config.http,
  maxSubscriptionsPerKey: config.maxSubscriptionsPerKey,
  logging: yogaLogLevels[config.logLevel],
})

/** The built web application (apps/web/dist), if it has been built. */
const builtWebApp = (): string | undefined => {
  const dir = fileURLToPath(new URL("../../web/dist", import.meta.url))
  return existsSync(path.join(dir, "index.html")) ? dir : undefined
}

const hostForUrl = (host: string) => (host.includes(":") ? `[${host}]` : host)

/**
 * The REST API on HOST:PORT; logs its address once it listens. `withGraphql`: the GraphQL gateway is
 * served on the same port at /graphql (the all-in-one process).
 */
const apiLayer = (config: Config, webhooks: WebhookSettings, pool: ParsePool, withGraphql = false) => {
  const webApp = withGraphql ? builtWebApp() : undefined
  const http = nodeServerLayer({
    port: config.port,
    host: config.host,
    http: config.http,
    shutdownGraceMs: config.shutdownGraceSeconds * 1000,
  })
  const portOf = ({ address }: HttpServer.HttpServer) =>
    address._tag === "TcpAddress" ? address.port : config.port
  const services = Layer.unwrapEffect(
    Effect.zipWith(Db, BlobStore, (db, blobs) =>
      servicesLayer({
        ...servicesOptions(config, db, blobs, webhooks),
        publicUrl: Effect.map(HttpServer.HttpServer, (server) => publicUrlFor(config, portOf(server))),
        appUrl: Effect.map(
          HttpServer.HttpServer,
          (server) => config.appUrl ?? publicUrlFor(config, portOf(server)),
        ),
        uploadMaxBytes: config.uploadMaxBytes,
        fileEditMaxBytes: config.fileEditMaxBytes,
        sessionTtlSeconds: config.sessionTtlHours * 3600,
        requestLimits: config.limits,
        fileUrlTtlSeconds: config.fileUrlTtlSeconds,
        parsing: parsingOptions(config, pool),
      }),
    ),
  )
  const graphql = withGraphql
    ? Layer.unwrapEffect(
        Effect.zipWith(Db, BlobStore, (db, blobs) =>
          lazyGraphqlRoute(gatewayOptions(config, db, blobs, webhooks)),
        ),
      )
    : Layer.empty
  const routes = Layer.merge(graphql, webApp === undefined ? Layer.empty : webAppRoute(webApp))
  const server = restApiWith(routes).pipe(Layer.provide(services), Layer.provideMerge(http))
  const announce = Layer.scopedDiscard(
    Effect.gen(function* () {
      const { address } = yield* HttpServer.HttpServer
      const port = address._tag === "TcpAddress" ? address.port : config.port
      const base = `http://${hostForUrl(config.host)}:${port}/api/v1`
      yield* Effect.log(`REST API listening on ${base} (docs: ${publicUrlFor(config, port)}/api/v1/docs)`)
      if (withGraphql) yield* Effect.log(`GraphQL on http://${hostForUrl(config.host)}:${port}/graphql`)
      if (withGraphql)
        yield* Effect.log(
          webApp === undefined
            ? "web application not built (pnpm build): the REST API and GraphQL only"
            : `web application on ${config.appUrl ?? publicUrlFor(config, port)}/`,
        )
      yield* Effect.addFinalizer(() => Effect.log("stopping the REST API"))
      // Uploads that a killed API process was reading left their spool folders behind.
      yield* Effect.tryPromise(() => sweepSpool({ root: defaultSpoolRoot() })).pipe(
        Effect.catchAll((e) => Effect.logWarning(`sweeping upload spool folders failed: ${String(e.error)}`)),
      )
    }),
  )
  return announce.pipe(Layer.provide(server))
}

/** The GraphQL gateway on HOST:GRAPHQL_PORT at /graphql, over this process's database pool. */
const graphqlLayer = (config: Config, webhooks: WebhookSettings) =>
  Layer.scopedDiscard(
    Effect.gen(function* () {
      const db = yield* Db
      const blobs = yield* BlobStore
      const server = yield* Effect.acquireRelease(
        Effect.tryPromise({
          try: () =>
            import("@dxs/graphql-gateway/Server").then(({ startGraphqlServer }) =>
              startGraphqlServer({
                ...gatewayOptions(config, db, blobs, webhooks),
                port: config.graphqlPort,
                host: config.host,
                shutdownGraceMs: config.shutdownGraceSeconds * 1000,
              }),
            ),
          catch: (e) =>
            new CliError({
              message: `cannot listen on ${config.host}:${config.graphqlPort}: ${e instanceof Error ? e.message : String(e)}`,
              exitCode: 1,
            }),
        }),
        (server) =>
          Effect.log("stopping the GraphQL gateway").pipe(
            Effect.zipRight(Effect.promise(() => server.close())),
          ),
      )
      yield* Effect.log(`GraphQL on http://${hostForUrl(config.host)}:${server.port}/graphql`)
    }),
  )

/**
 * A worker loop in this process; on shutdown it claims nothing more, lets in-flight tasks finish for
 * SHUTDOWN_GRACE_SECONDS, and releases those still running.
 */
const workerLayer = (config: Config, webhooks: WebhookSettings, pool: ParsePool) =>
  Layer.scopedDiscard(
    Effect.gen(function* () {
      const { kysely, url } = yield* Db
      const blobs = yield* BlobStore
      const workerId = `${os.hostname()}:${process.pid}`
      const handlers = handlersFor(config, kysely, webhooks, blobs, pool)
      const kinds = Object.keys(handlers)
      // The daily archive sweep is queued, and documents whose parse died with its worker become Failed.
      // Orphan files of the blob store, and spool folders that dead processes left in this machine's temp directory.
      const leftovers = { blobs }
      yield* startBackground(kysely, leftovers).pipe(
        Effect.catchAllCause((cause) =>
          Cause.isInterruptedOnly(cause)
            ? Effect.failCause(cause)
            : Effect.logWarning(`worker start-up housekeeping failed: ${String(Cause.squash(cause))}`),
        ),
      )
      yield* Effect.forkScoped(backgroundLoops(kysely, leftovers))
      // Threads started and the PDF engine loaded before the first upload arrives, not when it does.
      yield* Effect.forkScoped(Effect.promise(() => warmParsePool(parsingOptions(config, pool))))
      yield* Effect.forkScoped(
        runWorker({
          url,
          kysely,
          workerId,
          handlers,
          concurrency: config.workerConcurrency,
          retryWindowMs: config.taskRetryWindowSeconds * 1000,
          graceMs: config.shutdownGraceSeconds * 1000,
          // Two parse tasks per parsing thread, apart from the other kinds' slots: while one parses, the
          // other reads its file and writes its pages (each parse keeps its own time limit in the pool).
          kindConcurrency: { [PARSE_TASK]: pool.size * 2 },
        }),
      )
      yield* Effect.log(
        config.llm.provider === "openai"
          ? `language model: ${config.llm.model} at ${config.llm.baseUrl} (at most ${config.llm.concurrency} requests at once)`
          : "language model: local (offline; set LLM_PROVIDER=openai for an OpenAI-compatible server)",
      )
      yield* Effect.log(
        config.webSearch === undefined
          ? "web search: not configured (agents with enable_web_search use their documents only; set WEB_SEARCH_URL)"
          : `web search: ${redactUrl(config.webSearch.url)} (${config.webSearch.maxResults} hits per search)`,
      )
      const libreOffice = parsingOptions(config, pool).libreOffice
      yield* Effect.log(
        libreOffice === undefined
          ? "LibreOffice not found: Word/PowerPoint/Excel files are parsed without exact pages or page images"
          : `LibreOffice found at ${libreOffice}`,
      )
      yield* Effect.log(
        kinds.length === 0
          ? `worker ${workerId} started, but no task kinds are registered yet: it claims nothing`
          : `worker ${workerId} started for ${kinds.join(", ")} (concurrency ${config.workerConcurrency}, ${pool.size} parsing threads)`,
      )
      yield* Effect.addFinalizer(() => Effect.log("stopping the worker"))
    }),
  )

/**
 * GET /metrics (Prometheus text format) on METRICS_HOST:METRICS_PORT, apart from the API so that it needs
 * no key and can stay on a private interface. The queue's depth is read from the database at each scrape.
 */
const metricsLayer = (config: Config) =>
  config.metrics === undefined
    ? Layer.empty
    : Layer.scopedDiscard(
        Effect.gen(function* () {
          const { host, port } = config.metrics!
          const { kysely } = yield* Db
          watchQueueDepth(kysely)
          const server = createServer((req, res) => {
            if (req.method !== "GET" || (req.url ?? "").split("?")[0] !== "/metrics") {
              res.writeHead(404, { "content-type": "text/plain" }).end("GET /metrics\n")
              return
            }
            metricsRegistry.metrics().then(
              (body) => res.writeHead(200, { "content-type": metricsRegistry.contentType }).end(body),
              (e) => res.writeHead(500, { "content-type": "text/plain" }).end(`${String(e)}\n`),
            )
          })
          const bound = yield* Effect.acquireRelease(
            Effect.async<number, CliError>((resume) => {
              server.once("error", (e) =>
                resume(
                  Effect.fail(
                    new CliError({
                      message: `cannot listen on ${host}:${port} for metrics: ${e.message}`,
                      exitCode: 1,
                    }),
                  ),
                ),
              )
              server.listen(port, host, () => resume(Effect.succeed((server.address() as AddressInfo).port)))
            }),
            () =>
              Effect.async<void>((resume) => {
                server.close(() => resume(Effect.void))
              }),
          )
          yield* Effect.log(`metrics on http://${hostForUrl(host)}:${bound}/metrics`)
        }),
      )

/**
 * The blob store of this process: BLOB_DIR, or the bucket of BLOB_STORE=s3, whose reachability is checked
 * once at start (a missing bucket or refused credentials stop the start with their reason) and whose client
 * is let go of at shutdown. The AWS SDK is loaded only then.
 */
const blobStoreLayer = (config: Config): Layer.Layer<BlobStore, CliError> => {
  const settings = config.blobStore
  if (settings.kind === "fs") return Layer.succeed(BlobStore, fileBlobStore(config.blobDir))
  const where = `${settings.endpoint ?? "AWS S3"} bucket ${settings.bucket}${settings.prefix === "" ? "" : ` under ${settings.prefix}`}`
  return Layer.scoped(
    BlobStore,
    Effect.gen(function* () {
      const { s3BlobStore } = yield* Effect.promise(() => import("@dxs/db/S3BlobStore"))
      const store = yield* Effect.acquireRelease(
        Effect.sync(() => s3BlobStore(settings)),
        (store) => Effect.sync(() => store.close()),
      )
      const problem = yield* Effect.promise(() => store.check())
      if (problem !== undefined)
        return yield* Effect.fail(
          new CliError({ message: `BLOB_STORE=s3 (${settings.region}): ${problem}`, exitCode: 1 }),
        )
      yield* Effect.log(`files stored in ${where} (${settings.region})`)
      return store as BlobStoreShape
    }),
  )
}

/**
 * `dxs start`: migrations, then the REST API, the GraphQL gateway and/or a worker, until SIGINT/SIGTERM. Shutdown runs the
 * layers' finalizers in reverse: HTTP server and worker first, then the pool, then the embedded server.
 */
export const start = (config: Config, mode: StartMode) =>
  Effect.gen(function* () {
    if (mode !== "worker" && config.blobStore.kind === "fs") {
      yield* Effect.tryPromise({
        try: () => fs.mkdir(config.blobDir, { recursive: true }),
        catch: (e) =>
          new CliError({ message: `cannot create BLOB_DIR ${config.blobDir}: ${String(e)}`, exitCode: 1 }),
      })
    }
    const webhooks = yield* webhookSettings(config)
    // The parsing threads, closed after every layer has stopped (threads start on first use).
    const pool = yield* Effect.acquireRelease(
      Effect.sync(
        () => new ParsePool({ threads: config.parsing.threads, idleMs: config.parsing.idleSeconds * 1000 }),
      ),
      (pool) => Effect.promise(() => pool.close()),
    )
    const services: Layer.Layer<never, HttpServerError.ServeError | CliError, Db | BlobStore> =
      mode === "api"
        ? apiLayer(config, webhooks, pool)
        : mode === "worker"
          ? workerLayer(config, webhooks, pool)
          : mode === "graphql"
            ? graphqlLayer(config, webhooks)
            : Layer.mergeAll(apiLayer(config, webhooks, pool, true), workerLayer(config, webhooks, pool))
    const describeDb = Layer.effectDiscard(
      Effect.flatMap(DatabaseServer, (db) =>
        Effect.log(
          `dxs ${mode}: database ${db.description}${db.kind === "embedded" && !db.owner ? " (shared)" : ""}`,
        ),
      ),
    )
    return yield* Layer.launch(
      // Storage is checked before the database is migrated: a missing bucket stops the start with its
      // reason and nothing applied.
      Layer.mergeAll(services, describeDb, metricsLayer(config)).pipe(
        Layer.provide(migratedDbLayer(config)),
        Layer.provide(blobStoreLayer(config)),
      ),
    )
  }).pipe(
    Effect.scoped,
    Effect.catchTag("ServeError", (e) =>
      Effect.fail(
        new CliError({
          message: `cannot listen on ${config.host}:${config.port}: ${e.cause instanceof Error ? e.cause.message : String(e.cause)}`,
          exitCode: 1,
        }),
      ),
    ),
  )
