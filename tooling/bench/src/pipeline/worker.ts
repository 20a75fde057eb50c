/**
 * One worker process of the pipeline benchmark: the product's background handlers over the `openai`
 * provider (with the response cache in Postgres, as `dxs start` configures it), run by the worker loop.
 * Env: DATABASE_URL, MODEL_URL, MODEL_CONCURRENCY, WORKER_CONCURRENCY, WORKER_ID.
 *
 * Prints `ready` once the loop runs. A `stats` line on stdin answers one JSON line per task finished since
 * the last one (`{"task": …}`) with where its time went (the handler's span, model HTTP requests,
 * response-cache reads and writes, database queries), then `{"stats": …}`: CPU time and query times by
 * statement since the last one. Stops on SIGTERM or when stdin closes (the benchmark process is gone).
 */
import * as os from "node:os"
import * as path from "node:path"
import { type Database, fileBlobStore, makeDialect } from "@dxs/db"
import type { LanguageModelShape } from "@dxs/pipeline/llm/LanguageModel"
import { makeOpenAiModel } from "@dxs/pipeline/llm/OpenAi"
import { postgresResponseCache, type ResponseCache } from "@dxs/pipeline/llm/ResponseCache"
import { backgroundTaskHandlers, runWorker, type TaskHandler } from "@dxs/worker"
import { Effect, Fiber, FiberRef } from "effect"
import { Kysely, type KyselyPlugin } from "kysely"

const env = (name: string): string => {
  const value = process.env[name]
  if (value === undefined || value === "") throw new Error(`${name} is required`)
  return value
}

const url = env("DATABASE_URL")
const workerId = env("WORKER_ID")
const modelConcurrency = Number(env("MODEL_CONCURRENCY"))
const workerConcurrency = Number(env("WORKER_CONCURRENCY"))

/** Time spent by one task, in milliseconds since the process's time origin. */
interface Span {
  readonly start: number
  end: number
  /** The model's calls (response cache, HTTP request, decoding): [start, end] each. */
  readonly requests: Array<[number, number]>
  cacheMs: number
  /** Queries run by the task, and their summed duration. */
  queries: number
  queryMs: number
  /** When the handler called `ctx.complete` (inside its final transaction). */
  completeAt: number
}

/** The task's span, carried by its fiber (Effect's fibers do not carry the async context). */
const taskSpan = FiberRef.unsafeMake<Span | undefined>(undefined)
const now = () => performance.now()

const timedCache = (cache: ResponseCache): ResponseCache => {
  const time =
    <A extends Array<unknown>, R>(f: (...args: A) => Effect.Effect<R>) =>
    (...args: A): Effect.Effect<R> =>
      Effect.flatMap(FiberRef.get(taskSpan), (span) => {
        const start = now()
        return Effect.ensuring(
          f(...args),
          Effect.sync(() => {
            if (span) span.cacheMs += now() - start
          }),
        )
      })
  return { get: time(cache.get), put: time(cache.put) }
}

/** Query time by statement (its first words), since the last `stats` request. */
let statements = new Map<string, { count: number; ms: number }>()
let cpu = process.cpuUsage()

// The start of the text only: a statement of several kilobytes was collapsed whole at every execution.
const statementOf = (sql: string) => sql.slice(0, 400).replace(/\s+/g, " ").trim().slice(0, 110)

const db = new Kysely<Database>({
  dialect: makeDialect(url, workerConcurrency * 2 + 2),
  log: (event) => {
    const key = statementOf(event.query.sql)
    const entry = statements.get(key) ?? { count: 0, ms: 0 }
    entry.count += 1
    entry.ms += event.queryDurationMillis
    statements.set(key, entry)
  },
})

/**
 * The task's queries and their time, from the handler's own database (`ctx.db`, which the stages run every
 * statement of the task on): from the statement's start, pool waits and lock waits included, to its result.
 * (Async context cannot tell them: Effect's fibers do not carry it.)
 */
const timedQueries = (span: Span): KyselyPlugin => {
  const started = new WeakMap<object, number>()
  return {
    transformQuery: (args) => {
      started.set(args.queryId, now())
      return args.node
    },
    transformResult: async (args) => {
      const start = started.get(args.queryId)
      if (start !== undefined) {
        span.queries += 1
        span.queryMs += now() - start
      }
      return args.result
    },
  }
}
/**
 * The model's calls timed into the span of the task that makes them (the provider's call: its response
 * cache, the HTTP request and the answer's decoding), through the task's fiber.
 */
const timedModel = (shape: LanguageModelShape): LanguageModelShape => {
  const timed = <A, E>(call: Effect.Effect<A, E>): Effect.Effect<A, E> =>
    Effect.flatMap(FiberRef.get(taskSpan), (span) => {
      const start = now()
      return Effect.ensuring(
        call,
        Effect.sync(() => span?.requests.push([start, now()])),
      )
    })
  return Object.fromEntries(
    Object.entries(shape).map(([key, value]) => [
      key,
      typeof value === "function"
        ? (...args: Array<unknown>) => {
            const call = (value as (...a: Array<unknown>) => unknown)(...args)
            return Effect.isEffect(call) ? timed(call as Effect.Effect<unknown, unknown>) : call
          }
        : value,
    ]),
  ) as unknown as LanguageModelShape
}

const model = makeOpenAiModel({
  baseUrl: env("MODEL_URL"),
  model: "bench",
  concurrency: modelConcurrency,
  timeoutMs: 30_000,
  maxRetries: 2,
  cache: timedCache(postgresResponseCache(db)),
})
const background = backgroundTaskHandlers({
  blobs: fileBlobStore(path.join(os.tmpdir(), "dxs-bench-blobs")),
  model: timedModel(model),
})

/**
 * Finished tasks' spans, sent with the next `stats` answer: a write to stdout per task was a system call in
 * the middle of the run the benchmark measures.
 */
let finished: Array<Span & { readonly id: string; readonly kind: string; readonly runId: string | null }> = []

const instrumented =
  (kind: string, handler: TaskHandler): TaskHandler =>
  (task, ctx) =>
    Effect.suspend(() => {
      const span: Span = {
        start: now(),
        end: 0,
        requests: [],
        cacheMs: 0,
        queries: 0,
        queryMs: 0,
        completeAt: 0,
      }
      const complete: typeof ctx.complete = async (...args) => {
        span.completeAt = now()
        return ctx.complete(...args)
      }
      return Effect.suspend(() =>
        handler(task, { ...ctx, db: ctx.db.withPlugin(timedQueries(span)), complete }),
      )
        .pipe(Effect.locally(taskSpan, span))
        .pipe(
          Effect.ensuring(
            Effect.sync(() => {
              span.end = now()
              finished.push({ id: task.id, kind, runId: task.run_id, ...span })
            }),
          ),
        )
    })

const handlers = Object.fromEntries(
  Object.entries(background).map(([kind, handler]) => [kind, instrumented(kind, handler)]),
)

const fiber = Effect.runFork(
  runWorker({ url, kysely: db, workerId, handlers, concurrency: workerConcurrency }),
)

const stop = () => {
  Effect.runPromise(Fiber.interrupt(fiber))
    .then(() => db.destroy())
    .finally(() => process.exit(0))
}
process.on("SIGTERM", stop)
process.stdin.on("end", () => process.exit(1))
process.stdin.setEncoding("utf8")
process.stdin.on("data", (chunk: string) => {
  for (const line of chunk.split("\n")) {
    if (line.trim() !== "stats") continue
    const used = process.cpuUsage(cpu)
    const queries = [...statements].map(([sql, e]) => ({ sql, ...e }))
    const spans = finished.map((task) => `${JSON.stringify({ task })}\n`).join("")
    finished = []
    process.stdout.write(
      `${spans}${JSON.stringify({ stats: { cpuMs: (used.user + used.system) / 1000, queries } })}\n`,
    )
    statements = new Map()
    cpu = process.cpuUsage()
  }
})
console.log("ready")
