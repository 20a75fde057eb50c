/**
 * The table of every environment variable `dxs` reads (Config.ts reads them; the README's table is checked
 * against this one): its name, its default and what it does.
 */

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
      "Parsing threads each process keeps warm and reuses across documents, the first started with the worker and the others as parses overlap (default: the number of cores); a worker runs this many parses at once, apart from WORKER_CONCURRENCY.",
  },
  {
    name: "PARSE_THREAD_IDLE_SECONDS",
    default: "60",
    description:
      "A parsing thread that has had no document for this long is ended, giving back its memory (tens of MB each, with the parsers loaded); the next parse starts one again (0.5–2.5 s). 0 keeps them for the process's life.",
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
