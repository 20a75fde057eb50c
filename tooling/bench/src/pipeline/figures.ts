/** The pipeline benchmark's figures for one run: from the database, the fake model server and the workers. */
import type { Database } from "@dxs/db"
import type { Kysely } from "kysely"
import type { WaitSample } from "./waits.ts"

export type Db = Kysely<Database>

/** One task as a worker process reports it (milliseconds on that process's clock). */
export interface TaskSpan {
  readonly id: string
  readonly kind: string
  readonly runId: string | null
  readonly start: number
  readonly end: number
  /** The model's calls (response cache, HTTP request, decoding), [start, end] each. */
  readonly requests: ReadonlyArray<readonly [number, number]>
  /** Response-cache reads and writes. */
  readonly cacheMs: number
  /** Queries the task ran (the response cache's included), and their summed duration. */
  readonly queries: number
  readonly queryMs: number
  /** When the handler called `ctx.complete`, inside its final transaction (0: it did not). */
  readonly completeAt: number
}

/** What a worker process reports about the time since its last report. */
export interface WorkerStats {
  readonly cpuMs: number
  readonly queries: ReadonlyArray<{ readonly sql: string; readonly count: number; readonly ms: number }>
}

/** CPU seconds used during the run: the machine's (busy, of all cores) and the database server's. */
export interface CpuUse {
  readonly cores: number
  readonly machineBusyMs: number
  readonly machineTotalMs: number
  readonly databaseMs: number | undefined
}

export interface RunInput {
  readonly runId: string
  readonly workers: ReadonlyArray<{
    readonly id: string
    readonly spans: ReadonlyArray<TaskSpan>
    readonly stats: WorkerStats
  }>
  readonly cpu: CpuUse
  /** A trivial query's round trip just before the run (the database's responsiveness, as a baseline). */
  readonly roundTripMs: number
  /** Wall time the stats and CPU figures cover. */
  readonly measuredMs: number
  readonly waits: { readonly rounds: number; readonly samples: ReadonlyArray<WaitSample> }
  /** The schema name of every request the fake server received during the run. */
  readonly requests: ReadonlyArray<string>
  readonly maxInFlight: number
  readonly workerConcurrency: number
}

export interface RunFigures {
  /** runs.started_at → finished_at. */
  readonly wallMs: number
  readonly calls: number
  readonly extractCalls: number
  readonly callsPerSecond: number
  readonly pairsPerSecond: number
  /** Mean time of an extract task's statements (their sum: a task runs some side by side). */
  readonly dbMsPerExtraction: number
  /** Share of the machine's CPU time in use during the run (all processes, ours included). */
  readonly machineBusy: number
  readonly details: ReadonlyArray<string>
}

const sum = (xs: ReadonlyArray<number>) => xs.reduce((a, b) => a + b, 0)
const mean = (xs: ReadonlyArray<number>) => (xs.length === 0 ? 0 : sum(xs) / xs.length)
const quantile = (xs: ReadonlyArray<number>, q: number) => {
  if (xs.length === 0) return 0
  const sorted = [...xs].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!
}
const ms = (x: number) => `${x.toFixed(1)} ms`

const requestMs = (s: TaskSpan) => sum(s.requests.map(([a, b]) => b - a))

export const describeRun = async (db: Db, input: RunInput): Promise<RunFigures> => {
  const run = await db.selectFrom("runs").selectAll().where("id", "=", input.runId).executeTakeFirstOrThrow()
  const tasks = await db
    .selectFrom("tasks")
    .select(["kind", "completed_at", "attempts", "payload"])
    .where("run_id", "=", input.runId)
    .execute()
  const started = run.started_at!.getTime()
  const finished = run.finished_at!.getTime()
  const wallMs = finished - started
  const extractTasks = tasks.filter((t) => t.kind === "extract")
  const extractEnd = Math.max(...extractTasks.map((t) => t.completed_at?.getTime() ?? started))
  const retried = tasks.filter((t) => t.attempts > 1).length

  const spans = input.workers.flatMap((w) => w.spans)
  const extract = spans.filter((s) => s.kind === "extract")
  const outside = extract.map((s) => s.end - s.start - requestMs(s))
  const asked = extract.filter((s) => s.requests.length > 0)
  const before = asked.map((s) => s.requests[0]![0] - s.start)
  const after = asked.map((s) => s.end - s.requests[s.requests.length - 1]![1])
  const finalTx = extract.filter((s) => s.completeAt > 0).map((s) => s.end - s.completeAt)
  const calls = input.requests.length
  const extractCalls = input.requests.filter((n) => n === "extract_document").length

  const details = [
    `run: ${ms(wallMs)} (queued ${ms(started - run.created_at.getTime())} before it started); ` +
      `extract phase ${ms(extractEnd - started)}, then resolve ${ms(finished - extractEnd)}`,
    `model: ${calls} requests (${extractCalls} extraction), at most ${input.maxInFlight} in flight; ` +
      `runs.model_calls ${run.model_calls}, cache hits ${run.cache_hits}; ${retried} task(s) retried`,
    `extract task, mean of ${extract.length}: ${ms(mean(extract.map((s) => s.end - s.start)))} = ` +
      `${ms(mean(before))} before the model call + ${ms(mean(extract.map(requestMs)))} call (response cache, ` +
      `request, decoding) + ${ms(mean(after))} after it`,
    `  outside the model: mean ${ms(mean(outside))}, p50 ${ms(quantile(outside, 0.5))}, ` +
      `p95 ${ms(quantile(outside, 0.95))}, max ${ms(quantile(outside, 1))}; response cache ${ms(mean(extract.map((s) => s.cacheMs)))}`,
    `  queries: ${mean(extract.map((s) => s.queries)).toFixed(1)} per task taking ${ms(mean(extract.map((s) => s.queryMs)))} ` +
      `(lock waits included; \`select 1\` took ${ms(input.roundTripMs)} before the run); the rest outside the model (Node CPU, event loop, pool waits): ` +
      `${ms(mean(extract.map((s) => s.end - s.start - requestMs(s) - s.queryMs)))}; ` +
      `model calls seen by tasks: ${sum(extract.map((s) => s.requests.length))}`,
    `  ctx.complete → end (the completion with the task's writes and usage, then the look at the phase): mean ${ms(mean(finalTx))}, ` +
      `p95 ${ms(quantile(finalTx, 0.95))}, max ${ms(quantile(finalTx, 1))}`,
  ]
  for (const kind of ["run-start", "resolve"]) {
    const of = spans.filter((s) => s.kind === kind)
    if (of.length > 0)
      details.push(`${kind}: ${of.length} task(s), mean ${ms(mean(of.map((s) => s.end - s.start)))}`)
  }
  const cpu = input.cpu
  const measured = input.measuredMs
  details.push(
    `CPU over ${ms(measured)}: machine ${((100 * cpu.machineBusyMs) / cpu.machineTotalMs).toFixed(0)} % busy of ${cpu.cores} cores; ` +
      input.workers
        .map((w) => `worker ${w.id} ${((100 * w.stats.cpuMs) / measured).toFixed(0)} % of a core`)
        .join(", ") +
      (cpu.databaseMs === undefined
        ? ""
        : `; Postgres ${((100 * cpu.databaseMs) / measured).toFixed(0)} % of a core`) +
      // Less noisy than the run's time on a shared machine: what the workers spent, whatever waited.
      (extract.length === 0
        ? ""
        : `; the workers' CPU per extract task ${ms(sum(input.workers.map((w) => w.stats.cpuMs)) / extract.length)} (the run's other tasks included)`),
  )
  const byStatement = new Map<string, { count: number; ms: number }>()
  for (const w of input.workers)
    for (const q of w.stats.queries) {
      const e = byStatement.get(q.sql) ?? { count: 0, ms: 0 }
      e.count += q.count
      e.ms += q.ms
      byStatement.set(q.sql, e)
    }
  const top = [...byStatement].sort((a, b) => b[1].ms - a[1].ms).slice(0, 8)
  details.push("slowest statements (total, count × mean):")
  for (const [text, e] of top)
    details.push(
      `  ${ms(e.ms).padStart(10)}  ${String(e.count).padStart(5)} × ${ms(e.ms / e.count).padStart(9)}  ${text}`,
    )
  const { rounds, samples } = input.waits
  if (rounds > 0) {
    details.push(
      `database sessions at work, mean of ${rounds} samples: ${(sum(samples.map((x) => x.count)) / rounds).toFixed(1)}; ` +
        "most frequent (sessions per sample, wait, statement):",
    )
    for (const x of samples.slice(0, 8))
      details.push(`  ${(x.count / rounds).toFixed(2).padStart(5)}  ${x.wait.padEnd(24)} ${x.query}`)
  }
  for (const w of input.workers) {
    const mine = w.spans.filter((s) => s.kind === "extract")
    if (mine.length === 0) {
      details.push(`worker ${w.id}: no extract task`)
      continue
    }
    const from = Math.min(...mine.map((s) => s.start))
    const to = Math.max(...mine.map((s) => s.end))
    const slots = input.workerConcurrency * (to - from)
    const busy = sum(mine.map((s) => s.end - s.start))
    details.push(
      `worker ${w.id}: ${mine.length} extract tasks in ${ms(to - from)}; task slots busy ${((100 * busy) / slots).toFixed(1)} %, ` +
        `model requests ${((100 * sum(mine.map(requestMs))) / slots).toFixed(1)} % of slot time; ` +
        `idle slot time per task ${ms((slots - busy) / mine.length)}`,
    )
  }
  return {
    wallMs,
    calls,
    extractCalls,
    callsPerSecond: calls / (wallMs / 1000),
    // An extract task holds one document and all its agents: its pairs are its agents.
    pairsPerSecond:
      extractTasks.reduce(
        (n, t) => n + ((t.payload as { agents?: ReadonlyArray<unknown> } | null)?.agents?.length ?? 1),
        0,
      ) /
      (wallMs / 1000),
    // Time in database queries per extract task (lock waits included).
    dbMsPerExtraction: mean(extract.map((s) => s.queryMs)),
    machineBusy: cpu.machineBusyMs / cpu.machineTotalMs,
    details,
  }
}
