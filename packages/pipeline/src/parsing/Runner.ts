/**
 * Runs one parse (or one page rendering) in a `worker_threads` Worker of a warm pool (ParsePool), never in
 * the caller's thread: the thread has a V8 heap limit (`resourceLimits.maxOldGenerationSizeMb`) and each
 * job a wall-clock limit, and whatever happens inside it (a hang, running out of memory, a crash) comes
 * back as a ParseFailure with a reason a user can act on; that thread is then replaced. The caller's
 * process survives.
 *
 * Compiled, the thread runs plain JavaScript; from the sources, it loads TypeScript through tsx (see
 * `threadEntry`).
 */
import * as fs from "node:fs"
import * as fsp from "node:fs/promises"
import { createRequire } from "node:module"
import * as os from "node:os"
import * as path from "node:path"
import { pathToFileURL } from "node:url"
import { Worker } from "node:worker_threads"
import { type BackendName, fileExtension, formatOfFileName } from "@dxs/domain/DocumentType"
import { Data } from "effect"
import { executableSearchPath } from "../Config.ts"
import {
  defaultLimits,
  ParseFailure,
  type ParseInput,
  type ParseLimits,
  type ParseOutput,
  type ParseTools,
  SLOW_STEP,
} from "./Backend.ts"
import { onePagePdf } from "./OnePagePdf.ts"

export interface ParseSettings {
  /** Wall-clock limit of one parse or page rendering, in milliseconds. */
  readonly timeoutMs: number
  /** Heap limit of the parsing thread, in MB (V8 old generation; native memory is not counted). */
  readonly memoryMb: number
  readonly limits: ParseLimits
  /** Path of LibreOffice's `soffice`, or undefined when it is not installed. */
  readonly libreOffice: string | undefined
  /** A speech-to-text endpoint for audio, when configured. */
  readonly transcription?: ParseTools["transcription"] | undefined
}

export const DEFAULT_PARSE_TIMEOUT_MS = 120_000
export const DEFAULT_PARSE_MEMORY_MB = 1024

/** The original bytes of a document and what it is called. */
export interface FileToParse {
  readonly bytes: Uint8Array
  readonly fileName: string
  readonly contentType: string
}

export interface RunOptions extends Partial<ParseSettings> {
  /** Aborting stops the thread at once (the parse fails with "parsing was cancelled"). */
  readonly signal?: AbortSignal | undefined
  /**
   * Tests only: path or URL of a module whose default export is the Backend to use instead of the
   * registry's choice (to exercise the limits with a backend built to break them).
   */
  readonly backendModule?: string | URL | undefined
  /** The threads to parse in (default: the process's `defaultParsePool()`). */
  readonly pool?: ParsePool | undefined
}

/** The page cannot be drawn as an image (the format has no page images, or the page does not exist). */
export class PageImageUnavailable extends Data.TaggedError("PageImageUnavailable")<{
  readonly reason: string
}> {
  override get message(): string {
    return this.reason
  }
}

/** What the thread is asked to do (one job of a ThreadRequest). */
export interface ThreadJob {
  readonly op: "parse" | "render"
  readonly input: ParseInput
  /** 1-based; for `render`. */
  readonly pageNumber: number
  /** URL of a test backend module, else undefined (the registry chooses by file name). */
  readonly backendModule: string | undefined
  /** The backend the format table names for the file (looked up here: threads import no other package). */
  readonly backend: BackendName | undefined
}

/** Extra time a parse earns with each slow step (OCR'd page) it reports, and the most it can earn in all. */
export const SLOW_STEP_ALLOWANCE_MS = 30_000
export const MAX_TIME_FACTOR = 10

/** What the thread answers to one job. */
export type ThreadReply =
  | { readonly kind: "parsed"; readonly output: ParseOutput }
  | { readonly kind: "rendered"; readonly png: Uint8Array }
  /** A ParseFailure, or any other error's message. */
  | { readonly kind: "failed"; readonly reason: string }
  /** The backend has no page images. */
  | { readonly kind: "unavailable"; readonly reason: string }

const LIBREOFFICE_NAMES = ["soffice", "libreoffice"]
const LIBREOFFICE_PLACES = [
  "/usr/lib/libreoffice/program/soffice",
  "/opt/libreoffice/program/soffice",
  "/Applications/LibreOffice.app/Contents/MacOS/soffice",
]

const isExecutable = (file: string) => {
  try {
    fs.accessSync(file, fs.constants.X_OK)
    return fs.statSync(file).isFile()
  } catch {
    return false
  }
}

let libreOfficeFound: { readonly path: string | undefined } | undefined

/**
 * The LibreOffice binary (`soffice` or `libreoffice` on the PATH, or a usual install place), or undefined
 * when it is not installed. Looked up once per process; it is optional.
 */
export const detectLibreOffice = (): string | undefined => {
  if (libreOfficeFound === undefined) {
    const dirs = executableSearchPath()
      .split(path.delimiter)
      .filter((d) => d !== "")
    const candidates = [
      ...dirs.flatMap((d) => LIBREOFFICE_NAMES.map((n) => path.join(d, n))),
      ...LIBREOFFICE_PLACES,
    ]
    libreOfficeFound = { path: candidates.find(isExecutable) }
  }
  return libreOfficeFound.path
}

/** The settings with every default filled in (LibreOffice detected unless given). */
export const parseSettings = (options: Partial<ParseSettings> = {}): ParseSettings => ({
  timeoutMs: options.timeoutMs ?? DEFAULT_PARSE_TIMEOUT_MS,
  memoryMb: options.memoryMb ?? DEFAULT_PARSE_MEMORY_MB,
  limits: options.limits ?? defaultLimits,
  libreOffice: "libreOffice" in options ? options.libreOffice : detectLibreOffice(),
  transcription: options.transcription,
})

/** tsx's ESM registration API, found through its package.json from this package; undefined without tsx. */
const tsxApiUrl = (): string | undefined => {
  try {
    const require = createRequire(import.meta.url)
    const manifest = require.resolve("tsx/package.json")
    const pkg = JSON.parse(fs.readFileSync(manifest, "utf8")) as {
      readonly exports?: Record<string, { readonly import?: { readonly default?: string } } | string>
    }
    const entry = pkg.exports?.["./esm/api"]
    const file = typeof entry === "object" ? entry.import?.default : undefined
    return file ? pathToFileURL(path.join(path.dirname(manifest), file)).href : undefined
  } catch {
    return undefined
  }
}

/**
 * The thread's entry (the code the Worker evaluates), for this module at `runnerUrl`. Compiled (Runner.js
 * in dist/), it imports thread.js beside it: plain JavaScript, no loader. From the sources (Runner.ts), it
 * registers tsx first, then imports thread.ts: on Node 20, `execArgv: ["--import", "tsx"]` does NOT work in
 * a worker thread (tsx registers its hooks in worker threads only from Node 22.22 / 24.11 on; before that
 * the entry fails with ERR_UNKNOWN_FILE_EXTENSION). Errors surface as the worker's.
 */
export const threadEntry = (runnerUrl: string = import.meta.url): string => {
  if (runnerUrl.endsWith(".js")) return `import(${JSON.stringify(new URL("./thread.js", runnerUrl).href)})`
  const threadUrl = JSON.stringify(new URL("./thread.ts", runnerUrl).href)
  const tsx = tsxApiUrl()
  return tsx === undefined
    ? `import(${threadUrl})`
    : `import(${JSON.stringify(tsx)}).then((tsx) => { tsx.register(); return import(${threadUrl}) })`
}

/**
 * Where the threads' code comes from: beside this module, or, for the sources' tests, the compiled build
 * that their global setup made moments before (`DXS_COMPILED_PARSE_THREADS=1`, set by it): such a thread
 * starts without compiling TypeScript, as in production.
 */
const threadRunnerUrl =
  // biome-ignore lint/style/noProcessEnv: a switch of the tests' global setup, not a setting of the service
  !import.meta.url.endsWith(".js") && process.env.DXS_COMPILED_PARSE_THREADS === "1"
    ? new URL("../../dist/parsing/Runner.js", import.meta.url).href
    : import.meta.url

const bootstrap = threadEntry(threadRunnerUrl)

/**
 * From the sources, a thread resolves the workspace's packages (the format table of `@dxs/domain`, which
 * the e-mail and audio backends read) to their sources as well; compiled, to their builds.
 */
const threadExecArgv = threadRunnerUrl.endsWith(".js") ? [] : ["--conditions=@dxs/source"]

const seconds = (ms: number) => {
  const s = ms / 1000
  return Number.isInteger(s) ? String(s) : s.toFixed(1)
}

const messageOf = (e: unknown) => (e instanceof Error ? e.message : String(e)) || "unknown error"

/** What the pool posts to a thread: one job at a time. */
export interface ThreadRequest {
  readonly id: number
  readonly job: ThreadJob
}

/** What a thread posts back: the reply to job `id`, or a slow step of the job it runs. */
export type ThreadMessage =
  | { readonly kind: "reply"; readonly id: number; readonly reply: ThreadReply }
  | { readonly kind: typeof SLOW_STEP }

/** The pool was closed (the process is stopping): not the document's fault, so not a ParseFailure. */
export class ParsePoolClosed extends Data.TaggedError("ParsePoolClosed") {
  override get message(): string {
    return "the parse pool was closed (the process is stopping)"
  }
}

/** A job in a thread: how the thread's events reach it. */
interface Assigned {
  readonly id: number
  readonly onMessage: (message: ThreadMessage) => void
  /** The thread died (error, exit, or terminated by the pool). */
  readonly onDeath: (how: ThreadDeath) => void
}

type ThreadDeath =
  | { readonly _tag: "error"; readonly error: Error & { code?: string } }
  | { readonly _tag: "exit"; readonly code: number }
  | { readonly _tag: "closed" }

interface PoolThread {
  readonly worker: Worker
  /** The heap limit it was started with (resourceLimits are fixed for a thread's life). */
  readonly memoryMb: number
  job: Assigned | undefined
  dead: boolean
  /** While idle: ends the thread when no job has come for the pool's `idleMs`. */
  idleTimer: ReturnType<typeof setTimeout> | undefined
}

export interface ParsePoolOptions {
  /** Threads at most (default: os.availableParallelism()). */
  readonly threads?: number | undefined
  /**
   * A thread idle this long is ended (its heap, tens of MB with the parsers loaded, given back); the next
   * job starts one again. Undefined or 0: idle threads are kept until the pool closes.
   */
  readonly idleMs?: number | undefined
}

let jobIds = 0

/**
 * Warm parsing threads reused across documents: starting a thread (tsx and every parser loaded) costs
 * 0.5–2.5 s, a parse of a text PDF far less. At most `threads` threads, each running one job at a time; a
 * job waits for a free thread. A thread keeps module state between jobs (the OCR engine, parsers' caches).
 * Each job keeps its own wall-clock limit; a thread that overruns it, runs out of heap (its
 * resourceLimits), crashes, exits, or whose job is cancelled is terminated and replaced by a fresh one.
 * Idle threads do not keep the process alive (unref'd); `close()` terminates them all.
 */
export class ParsePool {
  readonly size: number
  private readonly threads = new Set<PoolThread>()
  private readonly idle: Array<PoolThread> = []
  private readonly waiting: Array<() => void> = []
  private closed = false
  private started = 0
  private readonly idleMs: number

  constructor(options: ParsePoolOptions = {}) {
    this.size = Math.max(1, Math.floor(options.threads ?? os.availableParallelism()))
    this.idleMs = Math.max(0, options.idleMs ?? 0)
  }

  /** Threads started so far (replacements included). */
  get threadsStarted(): number {
    return this.started
  }

  /** Threads alive now. */
  get liveThreads(): number {
    return this.threads.size
  }

  /** Threads running a job now. */
  get busyThreads(): number {
    return this.threads.size - this.idle.length
  }

  get isClosed(): boolean {
    return this.closed
  }

  private spawn(memoryMb: number): PoolThread {
    const worker = new Worker(bootstrap, {
      eval: true,
      // Not the parent's flags: a parent started with `--import tsx` must not register tsx twice.
      execArgv: threadExecArgv,
      resourceLimits: { maxOldGenerationSizeMb: memoryMb },
    })
    const thread: PoolThread = { worker, memoryMb, job: undefined, dead: false, idleTimer: undefined }
    this.started += 1
    this.threads.add(thread)
    worker.unref()
    worker.on("message", (message: ThreadMessage) => thread.job?.onMessage(message))
    const died = (how: ThreadDeath) => {
      const job = thread.job
      this.forget(thread)
      job?.onDeath(how)
    }
    worker.on("error", (error: Error & { code?: string }) => died({ _tag: "error", error }))
    worker.on("exit", (code) => died({ _tag: "exit", code }))
    return thread
  }

  /** Takes a dead or terminated thread out of the pool; a waiting job may now start one. */
  private forget(thread: PoolThread) {
    if (thread.dead) return
    thread.dead = true
    thread.job = undefined
    clearTimeout(thread.idleTimer)
    this.threads.delete(thread)
    const i = this.idle.indexOf(thread)
    if (i >= 0) this.idle.splice(i, 1)
    this.waiting.shift()?.()
  }

  /** Terminates a thread (its job is over) and starts a fresh one in its place. */
  private replace(thread: PoolThread) {
    if (!thread.dead) {
      this.forget(thread)
      thread.worker.terminate().catch(() => undefined)
    }
    if (!this.closed && this.threads.size < this.size) this.idle.push(this.spawn(thread.memoryMb))
  }

  /** A thread free for a job with this heap limit, waiting for one when all are busy. */
  private async acquire(memoryMb: number, signal: AbortSignal | undefined): Promise<PoolThread | undefined> {
    for (;;) {
      if (this.closed) throw new ParsePoolClosed()
      if (signal?.aborted) return undefined
      const same = this.idle.findIndex((t) => t.memoryMb === memoryMb)
      if (same >= 0) {
        const thread = this.idle.splice(same, 1)[0]!
        clearTimeout(thread.idleTimer)
        return thread
      }
      if (this.threads.size < this.size) return this.spawn(memoryMb)
      // All threads exist, some idle with another heap limit: one of them makes room.
      const other = this.idle.shift()
      if (other !== undefined) {
        this.forget(other)
        other.worker.terminate().catch(() => undefined)
        return this.spawn(memoryMb)
      }
      await new Promise<void>((resolve) => {
        const onAbort = () => {
          const i = this.waiting.indexOf(wake)
          if (i >= 0) this.waiting.splice(i, 1)
          resolve()
        }
        const wake = () => {
          signal?.removeEventListener("abort", onAbort)
          resolve()
        }
        this.waiting.push(wake)
        signal?.addEventListener("abort", onAbort, { once: true })
      })
    }
  }

  /** A healthy thread back to the idle ones, or to a waiting job. */
  private release(thread: PoolThread) {
    thread.job = undefined
    if (thread.dead) return
    if (this.closed) {
      this.forget(thread)
      thread.worker.terminate().catch(() => undefined)
      return
    }
    thread.worker.unref()
    this.idle.push(thread)
    if (this.idleMs > 0) {
      clearTimeout(thread.idleTimer)
      thread.idleTimer = setTimeout(() => {
        if (!this.idle.includes(thread)) return
        this.forget(thread)
        thread.worker.terminate().catch(() => undefined)
      }, this.idleMs)
      thread.idleTimer.unref()
    }
    this.waiting.shift()?.()
  }

  /**
   * Runs `job` in a thread under the limits; resolves with its reply. Every way the thread can end without
   * a reply becomes a `failed` reply (and the thread is replaced). Rejects with ParsePoolClosed when the
   * pool is closed before or while the job runs.
   */
  async run(
    job: ThreadJob,
    settings: Pick<ParseSettings, "timeoutMs" | "memoryMb">,
    signal: AbortSignal | undefined,
  ): Promise<ThreadReply> {
    const verb = job.op === "parse" ? "parsing" : "rendering the page"
    const cancelled: ThreadReply = { kind: "failed", reason: `${verb} was cancelled` }
    const thread = await this.acquire(settings.memoryMb, signal)
    if (thread === undefined) return cancelled
    const id = ++jobIds
    return new Promise<ThreadReply>((resolve, reject) => {
      let settled = false
      const finish = (reply: ThreadReply | ParsePoolClosed, healthy: boolean) => {
        if (settled) return
        settled = true
        clearTimeout(timer)
        signal?.removeEventListener("abort", onAbort)
        if (healthy) this.release(thread)
        else this.replace(thread)
        if (reply instanceof ParsePoolClosed) reject(reply)
        else resolve(reply)
      }
      // The limit grows with each slow step the backend reports (OCR'd pages), up to MAX_TIME_FACTOR times.
      const started = Date.now()
      const hardLimit = started + settings.timeoutMs * MAX_TIME_FACTOR
      let deadline = started + settings.timeoutMs
      const expire = () =>
        finish({ kind: "failed", reason: `${verb} took longer than ${seconds(deadline - started)} s` }, false)
      let timer = setTimeout(expire, settings.timeoutMs)
      const extend = () => {
        deadline = Math.min(hardLimit, Math.max(deadline, Date.now()) + SLOW_STEP_ALLOWANCE_MS)
        clearTimeout(timer)
        timer = setTimeout(expire, deadline - Date.now())
      }
      const onAbort = () => finish(cancelled, false)
      signal?.addEventListener("abort", onAbort, { once: true })
      thread.job = {
        id,
        onMessage: (message) => {
          if (message.kind === SLOW_STEP) extend()
          else if (message.id === id) finish(message.reply, true)
        },
        onDeath: (how) =>
          finish(
            how._tag === "closed"
              ? new ParsePoolClosed()
              : {
                  kind: "failed",
                  reason:
                    how._tag === "exit"
                      ? `${verb} stopped unexpectedly (exit code ${how.code})`
                      : how.error.code === "ERR_WORKER_OUT_OF_MEMORY"
                        ? `${verb} needed more than ${settings.memoryMb} MB of memory`
                        : messageOf(how.error),
                },
            false,
          ),
      }
      thread.worker.ref()
      try {
        thread.worker.postMessage({ id, job } satisfies ThreadRequest)
      } catch (e) {
        finish({ kind: "failed", reason: messageOf(e) }, true)
      }
    })
  }

  /** Terminates every thread; jobs in flight and waiting reject with ParsePoolClosed. Idempotent. */
  async close(): Promise<void> {
    this.closed = true
    for (const wake of this.waiting.splice(0)) wake()
    const threads = [...this.threads]
    for (const thread of threads) {
      const job = thread.job
      this.forget(thread)
      job?.onDeath({ _tag: "closed" })
    }
    await Promise.all(threads.map((t) => t.worker.terminate().catch(() => undefined)))
  }
}

let sharedPool: ParsePool | undefined

/**
 * The process's default pool (os.availableParallelism() threads), for callers that pass none: created on
 * first use; its idle threads do not keep the process alive.
 */
export const defaultParsePool = (): ParsePool => {
  if (sharedPool === undefined || sharedPool.isClosed) sharedPool = new ParsePool()
  return sharedPool
}

/**
 * Runs `job` in a pooled thread under the limits; resolves with its reply. The per-parse temp dir is gone
 * when it settles.
 */
const runInThread = async (
  op: ThreadJob["op"],
  file: FileToParse,
  pageNumber: number,
  options: RunOptions,
): Promise<ThreadReply> => {
  const settings = parseSettings(options)
  const verb = op === "parse" ? "parsing" : "rendering the page"
  if (options.signal?.aborted) return { kind: "failed", reason: `${verb} was cancelled` }
  const backend = formatOfFileName(file.fileName)?.backend
  if (backend === undefined && options.backendModule === undefined) {
    const ext = fileExtension(file.fileName)
    return {
      kind: "failed",
      reason:
        ext === undefined
          ? "the file name has no extension, so no parser applies"
          : `no parser for .${ext} files`,
    }
  }
  const tempDir = await fsp.mkdtemp(path.join(os.tmpdir(), "dxs-parse-"))
  try {
    const job: ThreadJob = {
      op,
      input: {
        bytes: file.bytes,
        fileName: file.fileName,
        contentType: file.contentType,
        limits: settings.limits,
        tools: {
          libreOffice: settings.libreOffice,
          tempDir,
          ...(settings.transcription ? { transcription: settings.transcription } : {}),
        },
      },
      pageNumber,
      backendModule:
        options.backendModule === undefined
          ? undefined
          : options.backendModule instanceof URL
            ? options.backendModule.href
            : pathToFileURL(path.resolve(options.backendModule)).href,
      backend,
    }
    return await (options.pool ?? defaultParsePool()).run(job, settings, options.signal)
  } finally {
    await fsp.rm(tempDir, { recursive: true, force: true }).catch(() => undefined)
  }
}

/**
 * Parses a file in a worker thread under the time and memory limits. Rejects with a ParseFailure (a
 * reason to show on the Failed document) for anything that keeps the parse from completing.
 */
export const runParse = async (file: FileToParse, options: RunOptions = {}): Promise<ParseOutput> => {
  const reply = await runInThread("parse", file, 0, options)
  if (reply.kind === "parsed") return reply.output
  throw new ParseFailure({
    reason: reply.kind === "rendered" ? "the parser answered with an image" : reply.reason,
  })
}

/**
 * The PNG image of one page (1-based), drawn by the format's backend in a worker thread under the same
 * limits. Rejects with PageImageUnavailable when the backend has no page images, else with a ParseFailure.
 */
export const renderPageImage = async (
  file: FileToParse,
  pageNumber: number,
  options: RunOptions = {},
): Promise<Uint8Array> => {
  const reply = await runInThread("render", file, pageNumber, options)
  if (reply.kind === "rendered") return reply.png
  if (reply.kind === "unavailable") throw new PageImageUnavailable({ reason: reply.reason })
  throw new ParseFailure({
    reason: reply.kind === "parsed" ? "the parser answered without an image" : reply.reason,
  })
}

/** The small PDF each thread parses when the pool warms up. */
export const warmUpPdf = (): Uint8Array => new TextEncoder().encode(onePagePdf("dxs"))

/**
 * Starts the pool's first thread and has it parse a small PDF, so the first upload after start-up does not
 * wait for a thread to start, the PDF engine to load and compile its WebAssembly, and the parse path to
 * warm up (about 0.9 s against 15–30 ms warm). One thread, not the pool: each costs about 40 MB while it
 * lives, and a process that is started and mostly read from (or given one document at a time) needs no
 * more; further threads start as parses overlap, and all of them end when left idle (`idleMs`). Errors
 * are ignored: a thread that cannot warm up is started again by the first real parse.
 */
export const warmParsePool = async (options: RunOptions & { readonly pool: ParsePool }): Promise<void> => {
  await runParse(
    { bytes: warmUpPdf(), fileName: "warm-up.pdf", contentType: "application/pdf" },
    options,
  ).catch(() => undefined)
}
