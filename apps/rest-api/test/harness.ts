import { randomUUID } from "node:crypto"
import * as fs from "node:fs/promises"
import * as http from "node:http"
import * as os from "node:os"
import * as path from "node:path"
import type { TaskRow } from "@dxs/db"
import { type BlobStoreShape, type Database, fileBlobStore, makeKysely } from "@dxs/db"
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
import { useTestDatabase } from "@dxs/testing/TestDatabase"
import { backgroundTaskHandlers, runWorker, type TaskContext, type TaskHandler } from "@dxs/worker"
import { HttpServer } from "@effect/platform"
import { Cause, Effect, Exit, Fiber, Layer, Logger, LogLevel, ManagedRuntime, Option } from "effect"
import type { Kysely } from "kysely"
import { afterAll, expect } from "vitest"
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

export interface Reply<T = any> {
  readonly status: number
  readonly headers: Headers
  readonly body: T
  readonly text: string
}

export interface Client {
  readonly get: <T = any>(path: string) => Promise<Reply<T>>
  readonly delete: <T = any>(path: string) => Promise<Reply<T>>
  readonly post: <T = any>(path: string, body?: unknown) => Promise<Reply<T>>
  readonly patch: <T = any>(path: string, body?: unknown) => Promise<Reply<T>>
  readonly put: <T = any>(path: string, body?: unknown) => Promise<Reply<T>>
  /** Sends a FormData (multipart) or URLSearchParams (url-encoded) body. */
  readonly send: <T = any>(
    method: string,
    path: string,
    body: FormData | URLSearchParams | string,
    contentType?: string,
  ) => Promise<Reply<T>>
}

const read = async (res: Response): Promise<Reply> => {
  const text = await res.text()
  let body: unknown = text
  if (text !== "" && /json/.test(res.headers.get("content-type") ?? "")) body = JSON.parse(text)
  return { status: res.status, headers: res.headers, body, text }
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
  /** The provider the launch preview reports (default: `local`). */
  readonly llmProvider?: "local" | "openai"
  /** The budget of one extraction request, of the API's preview and the worker (default: 20 agents, 128k tokens). */
  readonly requestBudget?: { readonly maxAgentsPerRequest: number; readonly contextTokens: number }
}

/** Starts the real REST server on loopback over a fresh database for this test file. */
export const startTestApi = async (options: TestApiOptions = {}): Promise<TestApi> => {
  const dbUrl = await useTestDatabase()
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
  const runtime = ManagedRuntime.make(Layer.merge(layer, Logger.minimumLogLevel(LogLevel.Warning)))
  const address = await runtime.runPromise(Effect.map(HttpServer.HttpServer, (s) => s.address))
  if (address._tag !== "TcpAddress") throw new Error("expected a TCP address")
  afterAll(async () => {
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
    afterAll(async () => {
      await Effect.runPromise(Fiber.interrupt(fiber))
      await Effect.runPromise(Fiber.interrupt(loops))
      await kysely.destroy()
    })
  }
  const origin = `http://127.0.0.1:${address.port}`
  const base = `${origin}/api/v1`
  const client = (key: string | undefined): Client => {
    const headers = (extra: Record<string, string> = {}) => ({
      ...(key ? { "x-api-key": key } : {}),
      ...extra,
    })
    const json = (method: string) => async (p: string, body?: unknown) =>
      read(
        await fetch(base + p, {
          method,
          headers: headers(body === undefined ? {} : { "content-type": "application/json" }),
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        }),
      )
    return {
      get: (p) => fetch(base + p, { headers: headers() }).then(read),
      delete: (p) => fetch(base + p, { method: "DELETE", headers: headers() }).then(read),
      post: json("POST"),
      patch: json("PATCH"),
      put: json("PUT"),
      send: async (method, p, body, contentType) =>
        read(
          await fetch(base + p, {
            method,
            headers: headers(contentType ? { "content-type": contentType } : {}),
            body,
          }),
        ),
    }
  }
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
 * An HTTP request sent from `localAddress` (any address of 127.0.0.0/8), so the server sees that address
 * as the client's; a new connection each time.
 */
export const fetchFrom = (
  localAddress: string,
  url: string,
  init: { readonly method?: string; readonly headers?: Record<string, string>; readonly body?: string } = {},
): Promise<Reply> =>
  new Promise((resolve, reject) => {
    const req = http.request(
      url,
      { method: init.method ?? "GET", headers: init.headers, localAddress, agent: false },
      (res) => {
        const chunks: Array<Buffer> = []
        res.on("data", (c: Buffer) => chunks.push(c))
        res.on("error", reject)
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8")
          const headers = new Headers()
          for (const [name, value] of Object.entries(res.headers))
            for (const v of Array.isArray(value) ? value : value === undefined ? [] : [value])
              headers.append(name, v)
          let body: unknown = text
          if (text !== "" && /json/.test(headers.get("content-type") ?? "")) body = JSON.parse(text)
          resolve({ status: res.statusCode ?? 0, headers, body, text })
        })
      },
    )
    req.on("error", reject)
    req.end(init.body)
  })

/** Waits for the next minute when the current one is nearly over (per-minute counts start afresh). */
export const freshMinute = async () => {
  const second = new Date().getUTCSeconds()
  if (second > 40) await new Promise((r) => setTimeout(r, (61 - second) * 1000))
}

/** Asserts an RFC 9457 problem+json response with this status. */
export const expectProblem = (r: { status: number; headers: Headers; body: any }, status: number) => {
  expect(r.status).toBe(status)
  expect(r.headers.get("content-type")).toContain("application/problem+json")
  expect(r.body).toMatchObject({
    status,
    title: expect.any(String),
    detail: expect.any(String),
    type: expect.any(String),
  })
  expect(r.body._tag).toBeUndefined()
}

export const uuid = expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/)
export const timestamp = expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/)

/** Creates a project with a unique name and returns its id. */
export const createProject = async (client: Client, body: Record<string, unknown> = {}) => {
  const r = await client.post("/projects/", { name: `P ${randomUUID().slice(0, 8)}`, ...body })
  expect(r.status).toBe(201)
  return r.body.id as string
}

/** A small, well-formed one-page PDF with a line of text (different each time by default). */
export const onePagePdf = (line: string = randomUUID()): Uint8Array => {
  const stream = `BT /F1 24 Tf 72 700 Td (${line}) Tj ET`
  const objects = [
    "<< /Type /Catalog /Pages 2 0 R >>",
    "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
    "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
    `<< /Length ${stream.length} >>\nstream\n${stream}\nendstream`,
    "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
  ]
  let out = "%PDF-1.4\n"
  const offsets: Array<number> = []
  objects.forEach((o, i) => {
    offsets.push(out.length)
    out += `${i + 1} 0 obj\n${o}\nendobj\n`
  })
  const xref = out.length
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`
  for (const off of offsets) out += `${String(off).padStart(10, "0")} 00000 n \n`
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`
  return new TextEncoder().encode(out)
}

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
