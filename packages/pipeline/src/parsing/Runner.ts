/**
 * Runs one parse (or one page rendering) in a `worker_threads` Worker, never in the caller's thread: the
 * thread gets a V8 heap limit (`resourceLimits.maxOldGenerationSizeMb`) and a wall-clock limit, and
 * whatever happens inside it (a hang, running out of memory, a crash) comes back as a ParseFailure with a
 * reason a user can act on. The caller's process survives.
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
import {
  defaultLimits,
  ParseFailure,
  type ParseInput,
  type ParseLimits,
  type ParseOutput,
  type ParseTools,
  SLOW_STEP,
} from "./Backend.ts"

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
}

/** The page cannot be drawn as an image (the format has no page images, or the page does not exist). */
export class PageImageUnavailable extends Error {
  override readonly name = "PageImageUnavailable"
  constructor(readonly reason: string) {
    super(reason)
  }
}

/** What the thread is asked to do (its `workerData`). */
export interface ThreadJob {
  readonly op: "parse" | "render"
  readonly input: ParseInput
  /** 1-based; for `render`. */
  readonly pageNumber: number
  /** URL of a test backend module, else undefined (the registry chooses by file name). */
  readonly backendModule: string | undefined
}

/** What the thread answers (one message). */
/** Extra time a parse earns with each slow step (OCR'd page) it reports, and the most it can earn in all. */
export const SLOW_STEP_ALLOWANCE_MS = 30_000
export const MAX_TIME_FACTOR = 10

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
    const dirs = (process.env.PATH ?? "").split(path.delimiter).filter((d) => d !== "")
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

const bootstrap = threadEntry()

const seconds = (ms: number) => {
  const s = ms / 1000
  return Number.isInteger(s) ? String(s) : s.toFixed(1)
}

const messageOf = (e: unknown) => (e instanceof Error ? e.message : String(e)) || "unknown error"

/**
 * Runs `job` in a fresh thread under the limits; resolves with its reply. Every way the thread can end
 * without a reply becomes a `failed` reply. The thread and the per-parse temp dir are gone when it settles.
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
    }
    return await new Promise<ThreadReply>((resolve) => {
      let settled = false
      const worker = new Worker(bootstrap, {
        eval: true,
        // Not the parent's flags: a parent started with `--import tsx` must not register tsx twice.
        execArgv: [],
        workerData: job,
        resourceLimits: { maxOldGenerationSizeMb: settings.memoryMb },
      })
      const finish = (reply: ThreadReply) => {
        if (settled) return
        settled = true
        clearTimeout(timer)
        options.signal?.removeEventListener("abort", onAbort)
        // The backend may have left timers or helper workers behind: stop the thread either way.
        worker.terminate().catch(() => undefined)
        resolve(reply)
      }
      // The limit grows with each slow step the backend reports (OCR'd pages), up to MAX_TIME_FACTOR times.
      const started = Date.now()
      const hardLimit = started + settings.timeoutMs * MAX_TIME_FACTOR
      let deadline = started + settings.timeoutMs
      const expire = () =>
        finish({ kind: "failed", reason: `${verb} took longer than ${seconds(deadline - started)} s` })
      let timer = setTimeout(expire, settings.timeoutMs)
      const extend = () => {
        deadline = Math.min(hardLimit, Math.max(deadline, Date.now()) + SLOW_STEP_ALLOWANCE_MS)
        clearTimeout(timer)
        timer = setTimeout(expire, deadline - Date.now())
      }
      const onAbort = () => finish({ kind: "failed", reason: `${verb} was cancelled` })
      options.signal?.addEventListener("abort", onAbort, { once: true })
      worker.on("message", (reply: ThreadReply | { readonly kind: typeof SLOW_STEP }) =>
        reply.kind === SLOW_STEP ? extend() : finish(reply),
      )
      worker.on("error", (e: Error & { code?: string }) =>
        finish({
          kind: "failed",
          reason:
            e.code === "ERR_WORKER_OUT_OF_MEMORY"
              ? `${verb} needed more than ${settings.memoryMb} MB of memory`
              : messageOf(e),
        }),
      )
      worker.on("exit", (code) =>
        finish({ kind: "failed", reason: `${verb} stopped unexpectedly (exit code ${code})` }),
      )
    })
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
  throw new ParseFailure(reply.kind === "rendered" ? "the parser answered with an image" : reply.reason)
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
  if (reply.kind === "unavailable") throw new PageImageUnavailable(reply.reason)
  throw new ParseFailure(reply.kind === "parsed" ? "the parser answered without an image" : reply.reason)
}
