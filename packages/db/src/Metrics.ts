/**
 * The process's metrics in Prometheus' text format (prom-client): HTTP requests, background tasks and the
 * queue, parsing and language-model traffic, and the Node process itself. Served by `dxs` on its own port
 * when METRICS_PORT is set. One registry per process; every layer records into it.
 */
import type { Kysely } from "kysely"
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client"
import type { Database } from "./Schema.ts"

export const metricsRegistry = new Registry()
collectDefaultMetrics({ register: metricsRegistry, prefix: "dxs_" })

const seconds = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120]

export const httpRequests = new Counter({
  name: "dxs_http_requests_total",
  help: "HTTP requests answered, by method, route (ids replaced by {id}) and status",
  labelNames: ["method", "route", "status"] as const,
  registers: [metricsRegistry],
})

export const httpRequestSeconds = new Histogram({
  name: "dxs_http_request_duration_seconds",
  help: "Time to answer an HTTP request, by method and route",
  labelNames: ["method", "route"] as const,
  buckets: seconds,
  registers: [metricsRegistry],
})

export const tasksDone = new Counter({
  name: "dxs_tasks_total",
  help: "Background tasks run by this process, by kind and outcome (succeeded, retrying, failed, abandoned)",
  labelNames: ["kind", "outcome"] as const,
  registers: [metricsRegistry],
})

export const taskSeconds = new Histogram({
  name: "dxs_task_duration_seconds",
  help: "Time a background task ran, by kind",
  labelNames: ["kind"] as const,
  buckets: seconds,
  registers: [metricsRegistry],
})

export const parseSeconds = new Histogram({
  name: "dxs_parse_duration_seconds",
  help: "Time to parse a document, by type and outcome (Processed or Failed)",
  labelNames: ["type", "outcome"] as const,
  buckets: seconds,
  registers: [metricsRegistry],
})

export const parsedPages = new Counter({
  name: "dxs_parsed_pages_total",
  help: "Pages of documents parsed, by type",
  labelNames: ["type"] as const,
  registers: [metricsRegistry],
})

export const modelRequests = new Counter({
  name: "dxs_model_requests_total",
  help: "Requests to the language model, by outcome (ok, cached, retried, failed)",
  labelNames: ["outcome"] as const,
  registers: [metricsRegistry],
})

export const modelTokens = new Counter({
  name: "dxs_model_tokens_total",
  help: "Tokens of language-model requests, by kind (prompt, completion)",
  labelNames: ["kind"] as const,
  registers: [metricsRegistry],
})

/**
 * Tasks waiting or running, by kind and status, read from the database when the metrics are scraped
 * (`database` is the process's pool). Call once per process.
 */
export const watchQueueDepth = (database: Kysely<Database>) =>
  new Gauge({
    name: "dxs_queue_depth",
    help: "Background tasks pending or running in the whole deployment, by kind and status",
    labelNames: ["kind", "status"] as const,
    registers: [metricsRegistry],
    async collect() {
      const rows = await database
        .selectFrom("tasks")
        .select(["kind", "status", (eb) => eb.fn.countAll<string>().as("n")])
        .where("status", "in", ["pending", "running"])
        .groupBy(["kind", "status"])
        .execute()
      this.reset()
      for (const row of rows) this.set({ kind: row.kind, status: row.status }, Number(row.n))
    },
  })

/** The path of a request with its ids (UUIDs, numbers) replaced, so routes stay few. */
export const routeOf = (path: string): string =>
  path
    .split("?")[0]!
    .replace(/\/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}(?=\/|$)/gi, "/{id}")
    .replace(/\/\d+(?=\/|$)/g, "/{n}")
    .replace(/\/+$/, "/")
