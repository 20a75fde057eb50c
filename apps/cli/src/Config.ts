import { randomBytes } from "node:crypto"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import { normalizeS3Prefix, S3_MAX_SINGLE_PUT_BYTES, type S3BlobStoreOptions } from "@dxs/db/BlobStore"
import { newEncryptionKey, parseEncryptionKey } from "@dxs/pipeline/webhooks/Encryption"
import type { HttpServerSettings } from "@dxs/services"

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

export interface ConfigVariable {
  readonly name: string
  readonly default: string
  readonly description: string
}

/** Every environment variable `dxs` reads, with its default and what it does. */
export const configVariables: ReadonlyArray<ConfigVariable> = [
  { name: "PORT", default: "8080", description: "TCP port of the REST API (0 picks a free port)." },
  {
    name: "GRAPHQL_PORT",
    default: "4000",
    description:
      "TCP port of the standalone GraphQL gateway (`dxs start graphql`) at /graphql; the all-in-one process serves /graphql on PORT (0 picks a free port).",
  },
  { name: "HOST", default: "0.0.0.0", description: "Interface the REST API listens on." },
  {
    name: "DATA_DIR",
    default: "./.data",
    description:
      "Directory for the embedded PostgreSQL cluster (DATA_DIR/pg) and, by default, the blobs. " +
      "Relative paths are resolved against the directory pnpm was run in.",
  },
  {
    name: "DATABASE_URL",
    default: "(unset: embedded PostgreSQL in DATA_DIR)",
    description: "postgres:// URL of an external PostgreSQL 15+ server, shared by every dxs process.",
  },
  { name: "BLOB_DIR", default: "DATA_DIR/blobs", description: "Directory where uploaded files are stored." },
  {
    name: "BLOB_STORE",
    default: "fs",
    description: "Where uploaded files are stored: fs (BLOB_DIR) or s3 (an S3-compatible bucket, S3_BUCKET).",
  },
  {
    name: "S3_BUCKET",
    default: "(required with BLOB_STORE=s3)",
    description: "Bucket of the s3 blob store.",
  },
  { name: "S3_REGION", default: "us-east-1", description: "Region of the bucket." },
  {
    name: "S3_ENDPOINT",
    default: "(unset: AWS S3)",
    description: "URL of another S3-compatible server (MinIO, Ceph, R2, …).",
  },
  {
    name: "S3_FORCE_PATH_STYLE",
    default: "true with S3_ENDPOINT, else false",
    description: "Path-style addressing (<endpoint>/<bucket>/<key>) instead of <bucket>.<endpoint>.",
  },
  { name: "S3_PREFIX", default: "(none)", description: "Prefix put before every object key (e.g. dxs/)." },
  {
    name: "S3_TIMEOUT_SECONDS",
    default: "20",
    description:
      "Deadline of one call to the bucket, the SDK's retries included (a write has one more second per MB); past it a request answers 503 and a task is retried.",
  },
  {
    name: "PUBLIC_URL",
    default: "http://localhost:PORT",
    description: "Base URL clients use to reach the server (links in responses and logs).",
  },
  {
    name: "APP_URL",
    default: "PUBLIC_URL",
    description:
      "Base URL of the web application; the deep links of enriched schema results (`<field>_service_url`) start with it.",
  },
  {
    name: "UPLOAD_MAX_BYTES",
    default: "104857600",
    description: "Largest accepted upload, in bytes (100 MB).",
  },
  {
    name: "FILE_EDIT_MAX_BYTES",
    default: "20971520",
    description: "Largest template accepted by POST /projects/{id}/file-edit/, in bytes (20 MB).",
  },
  {
    name: "FILE_URL_TTL_SECONDS",
    default: "3600",
    description: "How long a document's signed file_url download link stays valid, in seconds.",
  },
  {
    name: "SESSION_TTL_HOURS",
    default: "12",
    description:
      "How long a sign-in to the web application lasts, in hours (1 to 8760); members then sign in again.",
  },
  {
    name: "RATE_LIMIT_PER_MINUTE",
    default: "600",
    description:
      "Requests per minute per API key or signed-in member, shared by every API process (0 turns it off).",
  },
  {
    name: "SIGN_IN_ATTEMPTS_PER_MINUTE",
    default: "10",
    description:
      "Sign-in attempts per minute per e-mail address and per client address (the TCP peer), shared by every API process; beyond it, 429 whatever the password.",
  },
  {
    name: "AUTH_FAILURES_PER_MINUTE",
    default: "30",
    description:
      "Requests with a refused API key or session (or none) per minute per client address (the TCP peer), shared by every API process and GraphQL; beyond it they get 429 instead of 401. Valid keys are not affected.",
  },
  {
    name: "MAX_SUBSCRIPTIONS_PER_KEY",
    default: "10",
    description:
      "Live GraphQL subscriptions (runProgress) an API key or signed-in member may hold at once, per gateway process.",
  },
  { name: "DB_POOL_SIZE", default: "10", description: "Database connections per process." },
  { name: "WORKER_CONCURRENCY", default: "2", description: "Tasks a worker runs at once." },
  {
    name: "TASK_RETRY_WINDOW_SECONDS",
    default: "900",
    description:
      "How long a task failing for a cause outside its document (storage or the database out of reach, its worker killed) is retried, at most 30 s apart, without counting its attempts; only a cause in the document fails it.",
  },
  {
    name: "SHUTDOWN_GRACE_SECONDS",
    default: "10",
    description:
      "On SIGTERM (or Ctrl-C) a process stops accepting connections and claiming tasks, then gives in-flight requests and tasks this long to finish; connections still open are then closed, and tasks still running are released at once (back to pending, the attempt not counted) for another worker.",
  },
  {
    name: "PARSE_THREADS",
    default: "(the number of cores)",
    description:
      "Parsing threads each process keeps warm and reuses across documents (default: the number of cores); a worker runs this many parses at once, apart from WORKER_CONCURRENCY.",
  },
  {
    name: "PARSE_TIMEOUT_SECONDS",
    default: "120",
    description:
      "Time limit of one document parse (or page image), in seconds; each OCR'd page earns 30 s more, up to 10 times this; beyond it the document is Failed.",
  },
  {
    name: "PARSE_MEMORY_MB",
    default: "1024",
    description: "Memory (JavaScript heap) limit of one parse, in MB; beyond it the document is Failed.",
  },
  { name: "MAX_PAGES", default: "2000", description: "Documents with more pages than this are Failed." },
  {
    name: "MAX_DECOMPRESSED_BYTES",
    default: "524288000",
    description:
      "Largest uncompressed size of an Office (zip) file, in bytes (500 MB); bigger ones are Failed.",
  },
  {
    name: "PDF_ENGINE",
    default: "pdfium",
    description:
      "Engine that reads PDFs: pdfium (PDFium in WebAssembly, with pdf.js for the files it refuses) or pdfjs (pdf.js alone).",
  },
  {
    name: "TRANSCRIPTION_URL",
    default: "(unset: audio documents are Failed)",
    description:
      "OpenAI-compatible speech-to-text endpoint for audio documents, e.g. https://api.openai.com/v1/audio/transcriptions.",
  },
  { name: "TRANSCRIPTION_MODEL", default: "whisper-1", description: "Model name sent to TRANSCRIPTION_URL." },
  {
    name: "TRANSCRIPTION_API_KEY",
    default: "(unset)",
    description: "Bearer token for TRANSCRIPTION_URL, if it needs one.",
  },
  {
    name: "LLM_PROVIDER",
    default: "local",
    description:
      "Language model of the pipeline: local (offline, deterministic, no weights) or openai (any OpenAI-compatible Chat Completions server).",
  },
  {
    name: "OPENAI_BASE_URL",
    default: "https://api.openai.com/v1",
    description:
      "API root of the OpenAI-compatible server (vLLM, Ollama, llama.cpp: e.g. http://127.0.0.1:8000/v1).",
  },
  {
    name: "OPENAI_API_KEY",
    default: "(unset)",
    description: "Bearer token for OPENAI_BASE_URL, if it needs one.",
  },
  { name: "OPENAI_MODEL", default: "gpt-4o-mini", description: "Model name sent with each request." },
  {
    name: "LLM_CONCURRENCY",
    default: "4",
    description:
      "Model requests in flight at most, per process (set WORKER_CONCURRENCY to about 1.5 times this).",
  },
  { name: "LLM_TIMEOUT_SECONDS", default: "60", description: "Time limit of one model request, in seconds." },
  {
    name: "LLM_MAX_RETRIES",
    default: "5",
    description: "Retries of a model request after 429, 5xx, network errors and timeouts (with backoff).",
  },
  {
    name: "LLM_MAX_AGENTS_PER_REQUEST",
    default: "20",
    description:
      "Agents of one document asked in one model request, at most (1 to 200); more make several requests.",
  },
  {
    name: "LLM_CONTEXT_TOKENS",
    default: "128000",
    description:
      "Context size of the model, in tokens (4000 to 2000000): a document's pages are sent in windows that fit it.",
  },
  {
    name: "WEB_SEARCH_URL",
    default: "(unset: web search disabled)",
    description:
      "SearXNG-compatible JSON search endpoint for agents with enable_web_search, e.g. http://127.0.0.1:8888/search (the json format must be enabled).",
  },
  {
    name: "WEB_SEARCH_MAX_RESULTS",
    default: "5",
    description: "Search hits read per web search (one search per result of an agent).",
  },
  {
    name: "DXS_ENCRYPTION_KEY",
    default: "(unset: DATA_DIR/encryption.key, created once)",
    description:
      "Key of secrets at rest (AES-256-GCM): webhook secrets, custom header values and the key that signs file_url links; 64 hex digits or base64 of 32 bytes " +
      "(e.g. openssl rand -hex 32). Every dxs process must use the same key; set it when DATABASE_URL is set.",
  },
  {
    name: "WEBHOOK_ALLOW_LOOPBACK",
    default: "false",
    description:
      "Development and tests only: allow webhook URLs on loopback (127.0.0.1, ::1, localhost), over plain http too.",
  },
  {
    name: "MAX_JSON_BYTES",
    default: "1048576",
    description:
      "Largest JSON, form or GraphQL request body, in bytes (1 MB); bigger ones get 413. Uploads have UPLOAD_MAX_BYTES.",
  },
  {
    name: "MAX_JSON_DEPTH",
    default: "64",
    description:
      "Deepest nesting of arrays and objects in a request body, an output schema, a mapping or GraphQL variables; deeper ones get 400.",
  },
  {
    name: "HTTP_HEADERS_TIMEOUT_SECONDS",
    default: "30",
    description: "Time a client has to send a request's headers; then the connection is closed.",
  },
  {
    name: "HTTP_REQUEST_TIMEOUT_SECONDS",
    default: "300",
    description:
      "Time a client has to send a whole request, body included (uploads too); then 408 and the connection is closed.",
  },
  {
    name: "HTTP_IDLE_TIMEOUT_SECONDS",
    default: "60",
    description:
      "A connection with no traffic either way for this long is closed (at least 15: subscriptions ping every 12 s).",
  },
  {
    name: "MAX_CONNECTIONS_PER_CLIENT",
    default: "128",
    description: "Open HTTP connections per client address; more are closed as they arrive.",
  },
  {
    name: "LOG_FORMAT",
    default: "pretty at a terminal, else json",
    description:
      "json (one object per line: time, level, message and fields such as request_id) or pretty (one readable line per entry).",
  },
  {
    name: "METRICS_PORT",
    default: "(unset: no metrics endpoint)",
    description:
      "Serve GET /metrics (Prometheus text format) on this port, apart from the API (0 picks a free port).",
  },
  {
    name: "METRICS_HOST",
    default: "127.0.0.1",
    description: "Interface the metrics endpoint binds (0.0.0.0 to let a Prometheus elsewhere scrape it).",
  },
  {
    name: "LOG_LEVEL",
    default: "info",
    description: "Least severe log level printed: trace, debug, info, warning, error, fatal or none.",
  },
]

export class ConfigError extends Error {
  override readonly name = "ConfigError"
  constructor(readonly problems: ReadonlyArray<string>) {
    super(`invalid configuration:\n${problems.map((p) => `  ${p}`).join("\n")}`)
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

/**
 * Validates an environment. `cwd` is the directory relative paths are resolved against.
 * Empty values count as unset. Throws a ConfigError listing every bad value.
 */
export const parseConfig = (
  env: Readonly<Record<string, string | undefined>>,
  cwd: string,
  terminal = false,
): Config => {
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

  const port = int("PORT", 8080, 0, 65535)
  const graphqlPort = int("GRAPHQL_PORT", 4000, 0, 65535)
  const host = get("HOST") ?? "0.0.0.0"
  const dataDir = path.resolve(cwd, get("DATA_DIR") ?? "./.data")
  const blobDir = path.resolve(cwd, get("BLOB_DIR") ?? path.join(dataDir, "blobs"))

  const blobStoreKind = (get("BLOB_STORE") ?? "fs").toLowerCase()
  let blobStore: BlobStoreConfig = { kind: "fs" }
  if (blobStoreKind === "s3") {
    const bucket = get("S3_BUCKET")
    if (bucket === undefined)
      problems.push("S3_BUCKET: required with BLOB_STORE=s3 (the bucket to store files in)")
    const endpoint = get("S3_ENDPOINT")
    if (endpoint !== undefined) {
      try {
        const u = new URL(endpoint)
        if (u.protocol !== "http:" && u.protocol !== "https:") throw new Error("protocol")
      } catch {
        problems.push(`S3_ENDPOINT=${redactUrl(endpoint)}: must be an http:// or https:// URL`)
      }
    }
    blobStore = {
      kind: "s3",
      bucket: bucket ?? "",
      region: get("S3_REGION") ?? "us-east-1",
      prefix: normalizeS3Prefix(get("S3_PREFIX")),
      endpoint,
      forcePathStyle: bool("S3_FORCE_PATH_STYLE", endpoint !== undefined),
      timeoutMs: int("S3_TIMEOUT_SECONDS", 20, 1, 3600) * 1000,
    }
  } else if (blobStoreKind !== "fs") {
    problems.push(`BLOB_STORE=${blobStoreKind}: must be fs or s3`)
  }

  const databaseUrl = get("DATABASE_URL")
  if (databaseUrl !== undefined) {
    let protocol = ""
    try {
      protocol = new URL(databaseUrl).protocol
    } catch {
      problems.push("DATABASE_URL: not a URL (expected postgres://user:password@host:5432/database)")
    }
    if (protocol !== "" && protocol !== "postgres:" && protocol !== "postgresql:") {
      problems.push(`DATABASE_URL=${redactUrl(databaseUrl)}: must start with postgres:// or postgresql://`)
    }
  }

  let publicUrl = get("PUBLIC_URL")
  if (publicUrl !== undefined) {
    try {
      const u = new URL(publicUrl)
      if (u.protocol !== "http:" && u.protocol !== "https:") throw new Error("protocol")
      publicUrl = publicUrl.replace(/\/+$/, "")
    } catch {
      problems.push(`PUBLIC_URL=${publicUrl}: must be an http:// or https:// URL`)
    }
  }

  let appUrl = get("APP_URL")
  if (appUrl !== undefined) {
    try {
      const u = new URL(appUrl)
      if (u.protocol !== "http:" && u.protocol !== "https:") throw new Error("protocol")
      appUrl = appUrl.replace(/\/+$/, "")
    } catch {
      problems.push(`APP_URL=${appUrl}: must be an http:// or https:// URL`)
    }
  }

  // One PutObject writes an upload into a bucket: at most 5 GiB.
  const largestUpload = blobStore.kind === "s3" ? S3_MAX_SINGLE_PUT_BYTES : Number.MAX_SAFE_INTEGER
  const uploadMaxBytes = int("UPLOAD_MAX_BYTES", 104_857_600, 1, largestUpload)
  const fileEditMaxBytes = int("FILE_EDIT_MAX_BYTES", 20_971_520, 1, 1_073_741_824)
  const fileUrlTtlSeconds = int("FILE_URL_TTL_SECONDS", 3600, 1, 31_536_000)
  const sessionTtlHours = int("SESSION_TTL_HOURS", 12, 1, 8760)
  const dbPoolSize = int("DB_POOL_SIZE", 10, 1, 1000)
  const rateLimitPerMinute = int("RATE_LIMIT_PER_MINUTE", 600, 0, 1_000_000)
  const signInAttemptsPerMinute = int("SIGN_IN_ATTEMPTS_PER_MINUTE", 10, 1, 1_000_000)
  const authFailuresPerMinute = int("AUTH_FAILURES_PER_MINUTE", 30, 1, 1_000_000)
  const maxSubscriptionsPerKey = int("MAX_SUBSCRIPTIONS_PER_KEY", 10, 1, 100_000)
  const workerConcurrency = int("WORKER_CONCURRENCY", 2, 1, 1000)
  const taskRetryWindowSeconds = int("TASK_RETRY_WINDOW_SECONDS", 900, 0, 7 * 24 * 3600)
  const shutdownGraceSeconds = int("SHUTDOWN_GRACE_SECONDS", 10, 0, 3600)
  let parsing: ParsingConfig = {
    threads: int("PARSE_THREADS", os.availableParallelism(), 1, 1024),
    timeoutSeconds: int("PARSE_TIMEOUT_SECONDS", 120, 1, 86_400),
    memoryMb: int("PARSE_MEMORY_MB", 1024, 64, 1_048_576),
    maxPages: int("MAX_PAGES", 2000, 1, 10_000_000),
    maxDecompressedBytes: int("MAX_DECOMPRESSED_BYTES", 524_288_000, 1, Number.MAX_SAFE_INTEGER),
    pdfEngine: "pdfium",
    transcription: undefined,
  }
  const pdfEngine = (get("PDF_ENGINE") ?? "pdfium").toLowerCase()
  if (pdfEngine === "pdfium" || pdfEngine === "pdfjs") parsing = { ...parsing, pdfEngine }
  else problems.push(`PDF_ENGINE=${pdfEngine}: must be pdfium or pdfjs`)
  const transcriptionUrl = get("TRANSCRIPTION_URL")
  if (transcriptionUrl !== undefined) {
    try {
      const u = new URL(transcriptionUrl)
      if (u.protocol !== "http:" && u.protocol !== "https:") throw new Error("protocol")
      const apiKey = get("TRANSCRIPTION_API_KEY")
      parsing = {
        ...parsing,
        transcription: {
          url: transcriptionUrl,
          model: get("TRANSCRIPTION_MODEL") ?? "whisper-1",
          ...(apiKey !== undefined ? { apiKey } : {}),
        },
      }
    } catch {
      problems.push("TRANSCRIPTION_URL: must be an http:// or https:// URL")
    }
  }

  const provider = (get("LLM_PROVIDER") ?? "local").toLowerCase()
  let llm: LlmConfig = { provider: "local" }
  if (provider === "openai") {
    const baseUrl = (get("OPENAI_BASE_URL") ?? "https://api.openai.com/v1").replace(/\/+$/, "")
    try {
      const u = new URL(baseUrl)
      if (u.protocol !== "http:" && u.protocol !== "https:") throw new Error("protocol")
    } catch {
      problems.push(`OPENAI_BASE_URL=${baseUrl}: must be an http:// or https:// URL`)
    }
    llm = {
      provider: "openai",
      baseUrl,
      apiKey: get("OPENAI_API_KEY"),
      model: get("OPENAI_MODEL") ?? "gpt-4o-mini",
      concurrency: int("LLM_CONCURRENCY", 4, 1, 1000),
      timeoutSeconds: int("LLM_TIMEOUT_SECONDS", 60, 1, 3600),
      maxRetries: int("LLM_MAX_RETRIES", 5, 0, 100),
    }
  } else if (provider !== "local") {
    problems.push(`LLM_PROVIDER=${provider}: must be local or openai`)
  }

  const requestBudget: RequestBudget = {
    maxAgentsPerRequest: int("LLM_MAX_AGENTS_PER_REQUEST", 20, 1, 200),
    contextTokens: int("LLM_CONTEXT_TOKENS", 128_000, 4_000, 2_000_000),
  }

  const webSearchUrl = get("WEB_SEARCH_URL")
  const webSearchMaxResults = int("WEB_SEARCH_MAX_RESULTS", 5, 1, 100)
  let webSearch: WebSearchConfig | undefined
  if (webSearchUrl !== undefined) {
    try {
      const u = new URL(webSearchUrl)
      if (u.protocol !== "http:" && u.protocol !== "https:") throw new Error("protocol")
      webSearch = { url: webSearchUrl, maxResults: webSearchMaxResults }
    } catch {
      problems.push(`WEB_SEARCH_URL=${redactUrl(webSearchUrl)}: must be an http:// or https:// URL`)
    }
  }

  const rawKey = get("DXS_ENCRYPTION_KEY")
  const encryptionKey = rawKey === undefined ? undefined : parseEncryptionKey(rawKey)
  if (rawKey !== undefined && encryptionKey === undefined) {
    // The value is a secret: never repeated in the message.
    problems.push(
      "DXS_ENCRYPTION_KEY: must be 64 hex digits or base64 of 32 bytes (e.g. openssl rand -hex 32)",
    )
  }
  const allowLoopback = bool("WEBHOOK_ALLOW_LOOPBACK", false)

  const http: HttpServerSettings = {
    headersTimeoutSeconds: int("HTTP_HEADERS_TIMEOUT_SECONDS", 30, 1, 3600),
    requestTimeoutSeconds: int("HTTP_REQUEST_TIMEOUT_SECONDS", 300, 1, 86_400),
    idleTimeoutSeconds: int("HTTP_IDLE_TIMEOUT_SECONDS", 60, 15, 86_400),
    maxConnectionsPerClient: int("MAX_CONNECTIONS_PER_CLIENT", 128, 1, 1_000_000),
  }
  const limits = {
    maxJsonBytes: int("MAX_JSON_BYTES", 1_048_576, 1024, 1_073_741_824),
    maxJsonDepth: int("MAX_JSON_DEPTH", 64, 8, 10_000),
  }

  const rawLevel = get("LOG_LEVEL")
  const logLevel = rawLevel === undefined ? "info" : LOG_LEVELS[rawLevel.toLowerCase()]
  if (logLevel === undefined) {
    problems.push(`LOG_LEVEL=${rawLevel}: must be one of trace, debug, info, warning, error, fatal, none`)
  }

  const rawFormat = get("LOG_FORMAT")?.toLowerCase()
  const logFormat: LogFormat =
    rawFormat === undefined
      ? terminal
        ? "pretty"
        : "json"
      : rawFormat === "text"
        ? "pretty"
        : (rawFormat as LogFormat)
  if (logFormat !== "json" && logFormat !== "pretty")
    problems.push(`LOG_FORMAT=${rawFormat}: must be json or pretty`)
  const metricsPort = get("METRICS_PORT") === undefined ? undefined : int("METRICS_PORT", 0, 0, 65535)
  const metrics =
    metricsPort === undefined ? undefined : { port: metricsPort, host: get("METRICS_HOST") ?? "127.0.0.1" }

  if (problems.length > 0) throw new ConfigError(problems)
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
    logLevel: logLevel ?? "info",
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
      throw new ConfigError([`${file}: cannot be read (${(e as Error).message}); or set DXS_ENCRYPTION_KEY`])
    }
    const key = parseEncryptionKey(text)
    if (key === undefined)
      throw new ConfigError([
        `${file}: not an encryption key (64 hex digits or base64 of 32 bytes); restore it or set DXS_ENCRYPTION_KEY`,
      ])
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
    throw new ConfigError([
      `${file}: cannot be created (${(e as Error).message}); set DXS_ENCRYPTION_KEY instead`,
    ])
  }
  return { key, source: "created", file }
}
