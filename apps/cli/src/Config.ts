import { randomBytes } from "node:crypto"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import { normalizeS3Prefix, S3_MAX_SINGLE_PUT_BYTES, type S3BlobStoreOptions } from "@dxs/db/BlobStore"
import { newEncryptionKey, parseEncryptionKey } from "@dxs/pipeline/webhooks/Encryption"
import type { HttpServerSettings } from "@dxs/services"
import { Data } from "effect"

/**
 * The `dxs` command's configuration: the one place that reads `process.env`. Every variable is listed in
 * `configVariables` (the README's table is checked against it) and validated at once, so a bad value is
 * reported with all the others before anything starts.
 */

export type LogLevelName = "trace" | "debug" | "info" | "warning" | "error" | "fatal" | "none"
export type LogFormat = "json" | "pretty"

export interface Config {
  readonly port: number
  /** TCP port of the GraphQL gateway. */
  readonly graphqlPort: number
  readonly host: string
  /** Absolute. */
  readonly dataDir: string
  /** Undefined: the embedded PostgreSQL server of `dataDir`. */
  readonly databaseUrl: string | undefined
  /** Absolute. */
  readonly blobDir: string
  /** Where blobs are stored: `BLOB_DIR` (`fs`, the default) or an S3-compatible bucket (`s3`). */
  readonly blobStore: BlobStoreConfig
  /** Without a trailing slash. Undefined: `http://localhost:<the port the server bound>`. */
  readonly publicUrl: string | undefined
  /** Base of the web application's deep links; unset: the public URL. */
  readonly appUrl: string | undefined
  readonly uploadMaxBytes: number
  /** Largest file-edit template. */
  readonly fileEditMaxBytes: number
  readonly fileUrlTtlSeconds: number
  /** How long a web sign-in (session) lasts, in hours. */
  readonly sessionTtlHours: number
  readonly dbPoolSize: number
  /** Requests per minute per key or member; 0 = no limit. */
  readonly rateLimitPerMinute: number
  /** Sign-in attempts per minute per e-mail address and per client address. */
  readonly signInAttemptsPerMinute: number
  /** Requests with refused credentials per minute per client address before they get 429. */
  readonly authFailuresPerMinute: number
  /** Live GraphQL subscriptions per key or member, in each gateway process. */
  readonly maxSubscriptionsPerKey: number
  readonly workerConcurrency: number
  /** How long tasks meeting outages are retried without counting their attempts. */
  readonly taskRetryWindowSeconds: number
  /** On SIGTERM: how long in-flight requests and tasks may finish before they are cut (tasks released). */
  readonly shutdownGraceSeconds: number
  readonly logLevel: LogLevelName
  readonly logFormat: LogFormat
  /** Where `/metrics` is served (Prometheus text format); undefined: nowhere. */
  readonly metrics: { readonly port: number; readonly host: string } | undefined
  readonly parsing: ParsingConfig
  readonly llm: LlmConfig
  /** The budget of one extraction request, whatever the provider (the launch preview estimates with it). */
  readonly requestBudget: RequestBudget
  /** The web search of agents with `enable_web_search`; undefined: not configured (documents only). */
  readonly webSearch: WebSearchConfig | undefined
  readonly webhooks: WebhooksConfig
  /** HTTP server timeouts and connections per client. */
  readonly http: HttpServerSettings
  /** What a JSON or form body may carry. */
  readonly limits: { readonly maxJsonBytes: number; readonly maxJsonDepth: number }
}

/** BLOB_STORE and the S3_* settings. S3 credentials come from the AWS SDK's default chain (AWS_* variables). */
export type BlobStoreConfig =
  | { readonly kind: "fs" }
  | ({ readonly kind: "s3" } & Required<Pick<S3BlobStoreOptions, "bucket" | "region" | "prefix">> &
      Pick<S3BlobStoreOptions, "endpoint" | "forcePathStyle" | "timeoutMs">)

export interface WebhooksConfig {
  /**
   * The 32-byte key of secrets at rest (webhook secrets and custom header values, the file_url signing
   * key), from DXS_ENCRYPTION_KEY.
   * Undefined: read from (or created once in) DATA_DIR/encryption.key.
   */
  readonly encryptionKey: Uint8Array | undefined
  /** Development and tests only: webhook targets on loopback, and plain http to them. */
  readonly allowLoopback: boolean
}

/** A SearXNG-compatible JSON search endpoint (`GET <url>?q=…&format=json`). */
export interface WebSearchConfig {
  readonly url: string
  /** Hits read per search. */
  readonly maxResults: number
}

/** LLM_MAX_AGENTS_PER_REQUEST and LLM_CONTEXT_TOKENS. */
export interface RequestBudget {
  /** Agents of one document sent in one model request, at most. */
  readonly maxAgentsPerRequest: number
  /** The model's context size, in tokens: the pages of one request are windowed to fit it. */
  readonly contextTokens: number
}

/** The pipeline's language model: `local` (offline, the default) or an OpenAI-compatible server. */
export type LlmConfig =
  | { readonly provider: "local" }
  | {
      readonly provider: "openai"
      readonly baseUrl: string
      readonly apiKey: string | undefined
      readonly model: string
      readonly concurrency: number
      readonly timeoutSeconds: number
      readonly maxRetries: number
    }

export interface ParsingConfig {
  /** Parsing threads of a process's warm pool; also the parse tasks a worker runs at once. */
  readonly threads: number
  /** A parsing thread idle this long is ended (started again by the next parse); 0: kept. */
  readonly idleSeconds: number
  /** Wall-clock limit of one parse (or page rendering), in seconds. */
  readonly timeoutSeconds: number
  /** Heap limit of the parsing thread, in MB. */
  readonly memoryMb: number
  /** Documents with more pages fail. */
  readonly maxPages: number
  /** Largest total uncompressed size of an Office (zip) file, in bytes. */
  readonly maxDecompressedBytes: number
  /**
   * The PDF engine (PDF_ENGINE): PDFium, with pdf.js for the files it refuses, or pdf.js alone. The parsing
   * thread inherits the environment and reads the validated value there (Pdf.ts).
   */
  readonly pdfEngine: "pdfium" | "pdfjs"
  /** An OpenAI-compatible speech-to-text endpoint for audio documents, when configured. */
  readonly transcription:
    | { readonly url: string; readonly model: string; readonly apiKey?: string }
    | undefined
}

export { type ConfigVariable, configVariables } from "./ConfigVariables.ts"

/** Every bad value of a configuration at once; `dxs` prints the message and exits with 2. */
export class ConfigError extends Data.TaggedError("ConfigError")<{
  readonly problems: ReadonlyArray<string>
}> {
  override get message(): string {
    return `invalid configuration:\n${this.problems.map((p) => `  ${p}`).join("\n")}`
  }
}

const LOG_LEVELS: Record<string, LogLevelName> = {
  trace: "trace",
  debug: "debug",
  info: "info",
  warn: "warning",
  warning: "warning",
  error: "error",
  fatal: "fatal",
  none: "none",
  off: "none",
}

const BOOLEANS: Record<string, boolean> = {
  true: true,
  "1": true,
  yes: true,
  on: true,
  false: false,
  "0": false,
  no: false,
  off: false,
}

/** Hides the password of a connection URL, for messages. */
export const redactUrl = (url: string): string => {
  try {
    const u = new URL(url)
    if (u.password) u.password = "***"
    return u.toString()
  } catch {
    return "(unparseable URL)"
  }
}

const isHttpUrl = (text: string): boolean => {
  try {
    const u = new URL(text)
    return u.protocol === "http:" || u.protocol === "https:"
  } catch {
    return false
  }
}

/** Reads the values of one environment; every bad one adds to `problems` and reads as its default. */
interface Reader {
  readonly problems: Array<string>
  /** The trimmed value; empty values count as unset. */
  readonly get: (name: string) => string | undefined
  readonly int: (name: string, fallback: number, min: number, max: number) => number
  readonly bool: (name: string, fallback: boolean) => boolean
}

const reader = (env: Readonly<Record<string, string | undefined>>): Reader => {
  const problems: string[] = []
  const get = (name: string): string | undefined => {
    const v = env[name]?.trim()
    return v === undefined || v === "" ? undefined : v
  }
  const int = (name: string, fallback: number, min: number, max: number): number => {
    const raw = get(name)
    if (raw === undefined) return fallback
    const n = /^\d+$/.test(raw) ? Number(raw) : Number.NaN
    if (!Number.isSafeInteger(n) || n < min || n > max) {
      problems.push(`${name}=${raw}: must be a whole number from ${min} to ${max}`)
      return fallback
    }
    return n
  }
  const bool = (name: string, fallback: boolean): boolean => {
    const raw = get(name)
    if (raw === undefined) return fallback
    const value = BOOLEANS[raw.toLowerCase()]
    if (value === undefined) {
      problems.push(`${name}=${raw}: must be true or false`)
      return fallback
    }
    return value
  }
  return { problems, get, int, bool }
}

/** BLOB_STORE and, for `s3`, the S3_* settings. */
const readBlobStore = (r: Reader): BlobStoreConfig => {
  const blobStoreKind = (r.get("BLOB_STORE") ?? "fs").toLowerCase()
  if (blobStoreKind === "s3") {
    const bucket = r.get("S3_BUCKET")
    if (bucket === undefined)
      r.problems.push("S3_BUCKET: required with BLOB_STORE=s3 (the bucket to store files in)")
    const endpoint = r.get("S3_ENDPOINT")
    if (endpoint !== undefined && !isHttpUrl(endpoint))
      r.problems.push(`S3_ENDPOINT=${redactUrl(endpoint)}: must be an http:// or https:// URL`)
    return {
      kind: "s3",
      bucket: bucket ?? "",
      region: r.get("S3_REGION") ?? "us-east-1",
      prefix: normalizeS3Prefix(r.get("S3_PREFIX")),
      endpoint,
      forcePathStyle: r.bool("S3_FORCE_PATH_STYLE", endpoint !== undefined),
      timeoutMs: r.int("S3_TIMEOUT_SECONDS", 20, 1, 3600) * 1000,
    }
  }
  if (blobStoreKind !== "fs") r.problems.push(`BLOB_STORE=${blobStoreKind}: must be fs or s3`)
  return { kind: "fs" }
}

const checkDatabaseUrl = (r: Reader, databaseUrl: string | undefined): void => {
  if (databaseUrl === undefined) return
  let protocol = ""
  try {
    protocol = new URL(databaseUrl).protocol
  } catch {
    r.problems.push("DATABASE_URL: not a URL (expected postgres://user:password@host:5432/database)")
  }
  if (protocol !== "" && protocol !== "postgres:" && protocol !== "postgresql:") {
    r.problems.push(`DATABASE_URL=${redactUrl(databaseUrl)}: must start with postgres:// or postgresql://`)
  }
}

/** A base URL (PUBLIC_URL, APP_URL) without its trailing slashes. */
const baseUrl = (r: Reader, name: string, value: string | undefined): string | undefined => {
  if (value === undefined) return undefined
  if (isHttpUrl(value)) return value.replace(/\/+$/, "")
  r.problems.push(`${name}=${value}: must be an http:// or https:// URL`)
  return value
}

const readParsing = (r: Reader): ParsingConfig => {
  let parsing: ParsingConfig = {
    threads: r.int("PARSE_THREADS", os.availableParallelism(), 1, 1024),
    idleSeconds: r.int("PARSE_THREAD_IDLE_SECONDS", 60, 0, 86_400),
    timeoutSeconds: r.int("PARSE_TIMEOUT_SECONDS", 120, 1, 86_400),
    memoryMb: r.int("PARSE_MEMORY_MB", 1024, 64, 1_048_576),
    maxPages: r.int("MAX_PAGES", 2000, 1, 10_000_000),
    maxDecompressedBytes: r.int("MAX_DECOMPRESSED_BYTES", 524_288_000, 1, Number.MAX_SAFE_INTEGER),
    pdfEngine: "pdfium",
    transcription: undefined,
  }
  const pdfEngine = (r.get("PDF_ENGINE") ?? "pdfium").toLowerCase()
  if (pdfEngine === "pdfium" || pdfEngine === "pdfjs") parsing = { ...parsing, pdfEngine }
  else r.problems.push(`PDF_ENGINE=${pdfEngine}: must be pdfium or pdfjs`)
  const transcriptionUrl = r.get("TRANSCRIPTION_URL")
  if (transcriptionUrl === undefined) return parsing
  if (!isHttpUrl(transcriptionUrl)) {
    r.problems.push("TRANSCRIPTION_URL: must be an http:// or https:// URL")
    return parsing
  }
  const apiKey = r.get("TRANSCRIPTION_API_KEY")
  return {
    ...parsing,
    transcription: {
      url: transcriptionUrl,
      model: r.get("TRANSCRIPTION_MODEL") ?? "whisper-1",
      ...(apiKey !== undefined ? { apiKey } : {}),
    },
  }
}

const readLlm = (r: Reader): LlmConfig => {
  const provider = (r.get("LLM_PROVIDER") ?? "local").toLowerCase()
  if (provider === "openai") {
    const baseUrl = (r.get("OPENAI_BASE_URL") ?? "https://api.openai.com/v1").replace(/\/+$/, "")
    if (!isHttpUrl(baseUrl)) r.problems.push(`OPENAI_BASE_URL=${baseUrl}: must be an http:// or https:// URL`)
    return {
      provider: "openai",
      baseUrl,
      apiKey: r.get("OPENAI_API_KEY"),
      model: r.get("OPENAI_MODEL") ?? "gpt-4o-mini",
      concurrency: r.int("LLM_CONCURRENCY", 4, 1, 1000),
      timeoutSeconds: r.int("LLM_TIMEOUT_SECONDS", 60, 1, 3600),
      maxRetries: r.int("LLM_MAX_RETRIES", 5, 0, 100),
    }
  }
  if (provider !== "local") r.problems.push(`LLM_PROVIDER=${provider}: must be local or openai`)
  return { provider: "local" }
}

const readWebSearch = (r: Reader): WebSearchConfig | undefined => {
  const webSearchUrl = r.get("WEB_SEARCH_URL")
  const webSearchMaxResults = r.int("WEB_SEARCH_MAX_RESULTS", 5, 1, 100)
  if (webSearchUrl === undefined) return undefined
  if (isHttpUrl(webSearchUrl)) return { url: webSearchUrl, maxResults: webSearchMaxResults }
  r.problems.push(`WEB_SEARCH_URL=${redactUrl(webSearchUrl)}: must be an http:// or https:// URL`)
  return undefined
}

const readEncryptionKey = (r: Reader): Uint8Array | undefined => {
  const rawKey = r.get("DXS_ENCRYPTION_KEY")
  const encryptionKey = rawKey === undefined ? undefined : parseEncryptionKey(rawKey)
  if (rawKey !== undefined && encryptionKey === undefined) {
    // The value is a secret: never repeated in the message.
    r.problems.push(
      "DXS_ENCRYPTION_KEY: must be 64 hex digits or base64 of 32 bytes (e.g. openssl rand -hex 32)",
    )
  }
  return encryptionKey
}

const readLogging = (r: Reader, terminal: boolean) => {
  const rawLevel = r.get("LOG_LEVEL")
  const logLevel = rawLevel === undefined ? "info" : LOG_LEVELS[rawLevel.toLowerCase()]
  if (logLevel === undefined) {
    r.problems.push(`LOG_LEVEL=${rawLevel}: must be one of trace, debug, info, warning, error, fatal, none`)
  }
  const rawFormat = r.get("LOG_FORMAT")?.toLowerCase()
  const logFormat: LogFormat =
    rawFormat === undefined
      ? terminal
        ? "pretty"
        : "json"
      : rawFormat === "text"
        ? "pretty"
        : (rawFormat as LogFormat)
  if (logFormat !== "json" && logFormat !== "pretty")
    r.problems.push(`LOG_FORMAT=${rawFormat}: must be json or pretty`)
  return { logLevel: logLevel ?? "info", logFormat }
}

/**
 * Validates an environment. `cwd` is the directory relative paths are resolved against.
 * Empty values count as unset. Throws a ConfigError listing every bad value.
 */
export const parseConfig = (
  env: Readonly<Record<string, string | undefined>>,
  cwd: string,
  terminal = false,
): Config => {
  const r = reader(env)
  const port = r.int("PORT", 8080, 0, 65535)
  const graphqlPort = r.int("GRAPHQL_PORT", 4000, 0, 65535)
  const host = r.get("HOST") ?? "0.0.0.0"
  const dataDir = path.resolve(cwd, r.get("DATA_DIR") ?? "./.data")
  const blobDir = path.resolve(cwd, r.get("BLOB_DIR") ?? path.join(dataDir, "blobs"))
  const blobStore = readBlobStore(r)
  const databaseUrl = r.get("DATABASE_URL")
  checkDatabaseUrl(r, databaseUrl)
  const publicUrl = baseUrl(r, "PUBLIC_URL", r.get("PUBLIC_URL"))
  const appUrl = baseUrl(r, "APP_URL", r.get("APP_URL"))

  // One PutObject writes an upload into a bucket: at most 5 GiB.
  const largestUpload = blobStore.kind === "s3" ? S3_MAX_SINGLE_PUT_BYTES : Number.MAX_SAFE_INTEGER
  const uploadMaxBytes = r.int("UPLOAD_MAX_BYTES", 104_857_600, 1, largestUpload)
  const fileEditMaxBytes = r.int("FILE_EDIT_MAX_BYTES", 20_971_520, 1, 1_073_741_824)
  const fileUrlTtlSeconds = r.int("FILE_URL_TTL_SECONDS", 3600, 1, 31_536_000)
  const sessionTtlHours = r.int("SESSION_TTL_HOURS", 12, 1, 8760)
  const dbPoolSize = r.int("DB_POOL_SIZE", 10, 1, 1000)
  const rateLimitPerMinute = r.int("RATE_LIMIT_PER_MINUTE", 600, 0, 1_000_000)
  const signInAttemptsPerMinute = r.int("SIGN_IN_ATTEMPTS_PER_MINUTE", 10, 1, 1_000_000)
  const authFailuresPerMinute = r.int("AUTH_FAILURES_PER_MINUTE", 30, 1, 1_000_000)
  const maxSubscriptionsPerKey = r.int("MAX_SUBSCRIPTIONS_PER_KEY", 10, 1, 100_000)
  const workerConcurrency = r.int("WORKER_CONCURRENCY", 2, 1, 1000)
  const taskRetryWindowSeconds = r.int("TASK_RETRY_WINDOW_SECONDS", 900, 0, 7 * 24 * 3600)
  const shutdownGraceSeconds = r.int("SHUTDOWN_GRACE_SECONDS", 10, 0, 3600)
  const parsing = readParsing(r)
  const llm = readLlm(r)
  const requestBudget: RequestBudget = {
    maxAgentsPerRequest: r.int("LLM_MAX_AGENTS_PER_REQUEST", 20, 1, 200),
    contextTokens: r.int("LLM_CONTEXT_TOKENS", 128_000, 4_000, 2_000_000),
  }
  const webSearch = readWebSearch(r)
  const encryptionKey = readEncryptionKey(r)
  const allowLoopback = r.bool("WEBHOOK_ALLOW_LOOPBACK", false)
  const http: HttpServerSettings = {
    headersTimeoutSeconds: r.int("HTTP_HEADERS_TIMEOUT_SECONDS", 30, 1, 3600),
    requestTimeoutSeconds: r.int("HTTP_REQUEST_TIMEOUT_SECONDS", 300, 1, 86_400),
    idleTimeoutSeconds: r.int("HTTP_IDLE_TIMEOUT_SECONDS", 60, 15, 86_400),
    maxConnectionsPerClient: r.int("MAX_CONNECTIONS_PER_CLIENT", 128, 1, 1_000_000),
  }
  const limits = {
    maxJsonBytes: r.int("MAX_JSON_BYTES", 1_048_576, 1024, 1_073_741_824),
    maxJsonDepth: r.int("MAX_JSON_DEPTH", 64, 8, 10_000),
  }
  const { logLevel, logFormat } = readLogging(r, terminal)
  const metricsPort = r.get("METRICS_PORT") === undefined ? undefined : r.int("METRICS_PORT", 0, 0, 65535)
  const metrics =
    metricsPort === undefined ? undefined : { port: metricsPort, host: r.get("METRICS_HOST") ?? "127.0.0.1" }

  if (r.problems.length > 0) throw new ConfigError({ problems: r.problems })
  return {
    port,
    graphqlPort,
    host,
    dataDir,
    databaseUrl,
    blobDir,
    blobStore,
    publicUrl,
    appUrl,
    uploadMaxBytes,
    fileEditMaxBytes,
    fileUrlTtlSeconds,
    sessionTtlHours,
    dbPoolSize,
    rateLimitPerMinute,
    signInAttemptsPerMinute,
    authFailuresPerMinute,
    maxSubscriptionsPerKey,
    workerConcurrency,
    taskRetryWindowSeconds,
    shutdownGraceSeconds,
    logLevel,
    logFormat,
    metrics,
    parsing,
    llm,
    requestBudget,
    webSearch,
    webhooks: { encryptionKey, allowLoopback },
    http,
    limits,
  }
}

/**
 * The directory the user ran the command in. `pnpm --filter @dxs/cli exec` runs in apps/cli, but pnpm
 * records where it was invoked in INIT_CWD.
 */
export const invocationDir = (): string => process.env.INIT_CWD || process.cwd()

/** Reads and validates the process environment. Throws a ConfigError. */
export const readConfig = (): Config =>
  parseConfig(process.env, invocationDir(), process.stderr.isTTY === true)

/** The public base URL once the server's real port is known. */
export const publicUrlFor = (config: Config, boundPort: number): string =>
  config.publicUrl ?? `http://localhost:${boundPort}`

/** Where the encryption key lives when DXS_ENCRYPTION_KEY is unset. */
export const encryptionKeyFile = (config: Config): string => path.join(config.dataDir, "encryption.key")

export interface EncryptionKeySource {
  readonly key: Uint8Array
  /** `env`: DXS_ENCRYPTION_KEY; `file`: read from the key file; `created`: the key file was just created. */
  readonly source: "env" | "file" | "created"
  readonly file: string | undefined
}

/**
 * The encryption key of secrets at rest: DXS_ENCRYPTION_KEY, else DATA_DIR/encryption.key, which
 * is created (mode 0600, 64 hex digits) when missing. Creation is atomic and happens once: a process
 * racing another reads the key the other one wrote. Throws a ConfigError for an unreadable or invalid file.
 */
export const loadEncryptionKey = async (config: Config): Promise<EncryptionKeySource> => {
  if (config.webhooks.encryptionKey !== undefined)
    return { key: config.webhooks.encryptionKey, source: "env", file: undefined }
  const file = encryptionKeyFile(config)
  const read = async (): Promise<Uint8Array | undefined> => {
    let text: string
    try {
      text = await fs.readFile(file, "utf8")
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "ENOENT") return undefined
      throw new ConfigError({
        problems: [`${file}: cannot be read (${(e as Error).message}); or set DXS_ENCRYPTION_KEY`],
      })
    }
    const key = parseEncryptionKey(text)
    if (key === undefined)
      throw new ConfigError({
        problems: [
          `${file}: not an encryption key (64 hex digits or base64 of 32 bytes); restore it or set DXS_ENCRYPTION_KEY`,
        ],
      })
    return key
  }
  const existing = await read()
  if (existing !== undefined) return { key: existing, source: "file", file }

  const key = newEncryptionKey()
  try {
    await fs.mkdir(config.dataDir, { recursive: true })
    // Written in full under a temporary name, then linked into place: readers never see a partial file,
    // and of two processes creating it at once only one wins.
    const temp = `${file}.${process.pid}.${randomBytes(4).toString("hex")}`
    await fs.writeFile(temp, `${Buffer.from(key).toString("hex")}\n`, { mode: 0o600, flag: "wx" })
    try {
      await fs.link(temp, file)
    } finally {
      await fs.rm(temp, { force: true })
    }
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "EEXIST") {
      const other = await read()
      if (other !== undefined) return { key: other, source: "file", file }
    }
    throw new ConfigError({
      problems: [`${file}: cannot be created (${(e as Error).message}); set DXS_ENCRYPTION_KEY instead`],
    })
  }
  return { key, source: "created", file }
}
