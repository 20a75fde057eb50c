/**
 * The REST API of a test file: the real server on loopback over a fresh database (with a worker in the
 * process when asked), cleaned up after the file. Other packages' tests import it as
 * `@dxs/rest-api/TestApi`; the client it hands out and the assertions on answers are `@dxs/testing/RestClient`.
 */
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import type { TaskRow } from "@dxs/db"
import { type BlobStoreShape, type Database, fileBlobStore, makeKysely } from "@dxs/db"
import * as TaskQueue from "@dxs/db/TaskQueue"
import type { LanguageModelShape } from "@dxs/pipeline/llm/LanguageModel"
import type { WebhookSettings } from "@dxs/pipeline/webhooks/Settings"
import type { WebSearchShape } from "@dxs/pipeline/websearch/WebSearch"
import {
  ApiKeys,
  backgroundLoops,
  defaultHttpServerSettings,
  type HttpServerSettings,
  type Member,
  Members,
  RequestLimits,
  servicesLayer,
  WebhookConfig,
} from "@dxs/services"
import { afterThisFile } from "@dxs/testing/FileCleanup"
import { type Client, restClient } from "@dxs/testing/RestClient"
import { useTestDatabase } from "@dxs/testing/TestDatabase"
import { backgroundTaskHandlers, runWorker, type TaskContext, type TaskHandler } from "@dxs/worker"
import { HttpServer } from "@effect/platform"
import {
  Cause,
  type Clock,
  Effect,
  Exit,
  Fiber,
  Layer,
  Logger,
  LogLevel,
  ManagedRuntime,
  Option,
} from "effect"
import type { Kysely } from "kysely"
import { nodeServerLayer, restApiWith } from "../src/Server.ts"
import { webAppRoute } from "../src/WebApp.ts"

export interface TestApi {
  /** Base address including /api/v1, without a trailing slash. */
  readonly base: string
  /** The server's origin (`http://127.0.0.1:<port>`), which is also its PublicUrl unless overridden. */
  readonly origin: string
  readonly dbUrl: string
  readonly blobDir: string
  /** The key of secrets at rest in this server's database (the webhook settings' encryption key). */
  readonly encryptionKey: Uint8Array
  /** Creates an organisation (if new) and a key for it. */
  readonly newKey: (org: string) => Promise<string>
  /** Creates an organisation (if new) and a member of it who can sign in. */
  readonly newMember: (org: string, email: string, password: string) => Promise<Member>
  readonly client: (key: string | undefined) => Client
}

export interface TestApiOptions {
  /** Upload limit per file (default: the service default, 100 MB). */
  readonly maxUploadBytes?: number
  /** Largest file-edit template (default: the service default, 20 MB). */
  readonly maxTemplateBytes?: number
  /** A built web application to serve at the root, as the all-in-one process does. */
  readonly webApp?: string
  /** Requests per minute per key or member (default here: 100,000, so suites are not throttled; 0 = off). */
  readonly rateLimitPerMinute?: number
  /** Sign-in attempts per minute per e-mail and per client address (default here: 100,000). */
  readonly signInAttemptsPerMinute?: number
  /** Refused credentials per minute per client address before 429 (default here: 100,000). */
  readonly authFailuresPerMinute?: number
  /**
   * The server's clock (rate windows, link expiry): a `movableClock` of `@dxs/testing/MovableClock` lets a
   * test move time instead of waiting (default: the system's).
   */
  readonly clock?: Clock.Clock
  /**
   * More routes beside the API, made over this server's database and blob directory (as the all-in-one
   * process serves GraphQL beside the REST API).
   */
  readonly routes?: (store: { readonly dbUrl: string; readonly blobDir: string }) => Layer.Layer<never>
  /** Base of `file_url` links (default: this server's own address). */
  readonly publicUrl?: string
  /**
   * Also run a worker loop in this process with every background handler (parsing, the pipeline), as
   * `pnpm start` does; `model` is the pipeline's language model (default `local`).
   */
  readonly worker?: {
    /** A model, or one made with the worker's database handle (for a response cache). */
    readonly model?: LanguageModelShape | ((db: Kysely<Database>) => LanguageModelShape)
    readonly concurrency?: number
    /** The web search of agents with `enable_web_search` (default: none). */
    readonly webSearch?: WebSearchShape
    /** Where the worker reads and writes files (default: the API's store). */
    readonly blobs?: BlobStoreShape
  }
  /** Where uploads are spooled while read (default: the service default under the temp directory). */
  readonly spoolRoot?: string
  /**
   * Webhook settings of the API (merged over the default: a per-process key, no loopback targets) and,
   * with `worker`, of the worker's deliveries.
   */
  readonly webhooks?: Partial<WebhookSettings>
  /** Body limits (default: MAX_JSON_BYTES and MAX_JSON_DEPTH's defaults). */
  readonly limits?: Partial<RequestLimits["Type"]>
  /** HTTP server timeouts and connections per client (default: the server's defaults). */
  readonly http?: Partial<HttpServerSettings>
  /** Where the API and the worker store files (default: the directory `blobDir`). */
  readonly blobs?: BlobStoreShape
  /** A migrated database of the test's own (a server it stops and starts), instead of a fresh clone. */
  readonly dbUrl?: string
  /** The provider the launch preview reports (default: `local`). */
  readonly llmProvider?: "local" | "openai"
  /** The budget of one extraction request, of the API's preview and the worker (default: 20 agents, 128k tokens). */
  readonly requestBudget?: { readonly maxAgentsPerRequest: number; readonly contextTokens: number }
  /**
   * scrypt's cost of new password hashes (default here: 1,024, a few milliseconds a sign-in, where the
   * service's `PASSWORD_HASH_COST` takes a fifth of a second of a core; a hash verifies at its own cost).
   */
  readonly passwordHashCost?: number
}

/** The suites' cost of password hashes (see `TestApiOptions.passwordHashCost`). */
const TEST_PASSWORD_HASH_COST = 1024

/** Starts the real REST server on loopback over a fresh database for this test file. */
export const startTestApi = async (options: TestApiOptions = {}): Promise<TestApi> => {
  const dbUrl = options.dbUrl ?? (await useTestDatabase())
  const blobDir = await fs.mkdtemp(path.join(os.tmpdir(), "dxs-blobs-"))
  const blobs = options.blobs ?? fileBlobStore(blobDir)
  const webhooks: WebhookSettings | undefined =
    options.webhooks === undefined ? undefined : { ...WebhookConfig.defaultValue(), ...options.webhooks }
  const routes = Layer.merge(
    options.webApp === undefined ? Layer.empty : webAppRoute(options.webApp),
    options.routes === undefined ? Layer.empty : options.routes({ dbUrl, blobDir }),
  )
  const ownAddress = Effect.map(HttpServer.HttpServer, (s) =>
    s.address._tag === "TcpAddress" ? `http://127.0.0.1:${s.address.port}` : "",
  )
  const services = servicesLayer({
    dbUrl,
    blobDir,
    blobs,
    publicUrl: options.publicUrl ?? ownAddress,
    // The web application's deep links point at this server, as in the all-in-one process.
    appUrl: ownAddress,
    webhooks,
    rateLimitPerMinute: options.rateLimitPerMinute ?? 100_000,
    authThrottle: {
      signInAttemptsPerMinute: options.signInAttemptsPerMinute ?? 100_000,
      authFailuresPerMinute: options.authFailuresPerMinute ?? 100_000,
    },
    requestLimits: { ...RequestLimits.defaultValue(), ...options.limits },
    uploadMaxBytes: options.maxUploadBytes,
    fileEditMaxBytes: options.maxTemplateBytes,
    spoolRoot: options.spoolRoot,
    llmProvider: options.llmProvider,
    requestBudget: options.requestBudget,
    passwordHashCost: options.passwordHashCost ?? TEST_PASSWORD_HASH_COST,
    clock: options.clock,
  })
  const layer = restApiWith(routes).pipe(
    Layer.provideMerge(services),
    Layer.provideMerge(
      nodeServerLayer({
        port: 0,
        host: "127.0.0.1",
        http: { ...defaultHttpServerSettings, ...options.http },
      }),
    ),
  )
  // Request and task lines (info) would drown a test's output: warnings and errors only.
  const runtime = ManagedRuntime.make(layer.pipe(Layer.provide(Logger.minimumLogLevel(LogLevel.Warning))))
  const address = await runtime.runPromise(Effect.map(HttpServer.HttpServer, (s) => s.address))
  if (address._tag !== "TcpAddress") throw new Error("expected a TCP address")
  afterThisFile(async () => {
    await runtime.dispose()
    await fs.rm(blobDir, { recursive: true, force: true })
  })
  if (options.worker) {
    const kysely = makeKysely(dbUrl, 8)
    const handlers = backgroundTaskHandlers({
      blobs: options.worker.blobs ?? blobs,
      parsing: { timeoutMs: 60_000 },
      model: typeof options.worker.model === "function" ? options.worker.model(kysely) : options.worker.model,
      webSearch: options.worker.webSearch,
      webhooks,
      requestBudget: options.requestBudget,
    })
    const loops = Effect.runFork(backgroundLoops(kysely, { blobs, spoolRoot: options.spoolRoot }))
    const fiber = Effect.runFork(
      runWorker({
        url: dbUrl,
        kysely,
        workerId: `test-worker-${process.pid}`,
        handlers,
        concurrency: options.worker.concurrency ?? 4,
        pollMs: 200,
      }).pipe(Logger.withMinimumLogLevel(LogLevel.Warning)),
    )
    afterThisFile(async () => {
      await Effect.runPromise(Fiber.interrupt(fiber))
      await Effect.runPromise(Fiber.interrupt(loops))
      await kysely.destroy()
    })
  }
  const origin = `http://127.0.0.1:${address.port}`
  const base = `${origin}/api/v1`
  const client = (key: string | undefined): Client => restClient(base, key)
  return {
    base,
    origin,
    dbUrl,
    blobDir,
    encryptionKey: (webhooks ?? WebhookConfig.defaultValue()).encryptionKey,
    newKey: (org) => runtime.runPromise(Effect.flatMap(ApiKeys, (k) => k.create(org))).then((r) => r.key),
    newMember: (org, email, password) =>
      runtime.runPromise(Effect.flatMap(Members, (m) => m.create(org, email, password))),
    client,
  }
}

/**
 * A task's context as the worker gives it to a handler run by this test's worker `workerId`: the completion
 * carries the usage and the writes the handler gives it, and a lost lease rejects.
 */
export const taskContext = (db: Kysely<Database>, task: TaskRow, workerId: string): TaskContext => ({
  workerId,
  db,
  signal: new AbortController().signal,
  complete: async (conn, usage, writes) => {
    if (!(await TaskQueue.complete(conn, task.id, workerId, usage, writes))) throw new Error("lease lost")
  },
})

/**
 * Runs one task with its handler, as the worker loop does: rejects with what the task's record would say
 * went wrong (the failure, else the defect).
 */
export const runTaskHandler = async (
  handler: TaskHandler,
  task: TaskRow,
  ctx: TaskContext,
): Promise<void> => {
  const exit = await Effect.runPromiseExit(handler(task, ctx))
  if (Exit.isFailure(exit))
    throw Option.getOrElse(Cause.failureOption(exit.cause), () => Cause.squash(exit.cause))
}
