import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import {
  ConfigError,
  configVariables,
  encryptionKeyFile,
  loadEncryptionKey,
  parseConfig,
  publicUrlFor,
  redactUrl,
} from "../src/Config.ts"

const repoRoot = path.resolve(import.meta.dirname, "../../..")

describe("configuration", () => {
  it("has defaults for everything", () => {
    const config = parseConfig({}, "/srv/app")
    expect(config).toEqual({
      port: 8080,
      graphqlPort: 4000,
      host: "0.0.0.0",
      dataDir: "/srv/app/.data",
      databaseUrl: undefined,
      blobDir: "/srv/app/.data/blobs",
      blobStore: { kind: "fs" },
      publicUrl: undefined,
      uploadMaxBytes: 104_857_600,
      fileEditMaxBytes: 20_971_520,
      fileUrlTtlSeconds: 3600,
      sessionTtlHours: 12,
      dbPoolSize: 10,
      rateLimitPerMinute: 600,
      signInAttemptsPerMinute: 10,
      authFailuresPerMinute: 30,
      maxSubscriptionsPerKey: 10,
      workerConcurrency: 2,
      taskRetryWindowSeconds: 900,
      shutdownGraceSeconds: 10,
      logLevel: "info",
      logFormat: "json",
      metrics: undefined,
      parsing: {
        threads: os.availableParallelism(),
        idleSeconds: 60,
        timeoutSeconds: 120,
        memoryMb: 1024,
        maxPages: 2000,
        maxDecompressedBytes: 524_288_000,
        pdfEngine: "pdfium",
        transcription: undefined,
      },
      llm: { provider: "local" },
      requestBudget: { maxAgentsPerRequest: 20, contextTokens: 128_000 },
      webSearch: undefined,
      webhooks: { encryptionKey: undefined, allowLoopback: false },
      http: {
        headersTimeoutSeconds: 30,
        requestTimeoutSeconds: 300,
        idleTimeoutSeconds: 60,
        maxConnectionsPerClient: 128,
      },
      limits: { maxJsonBytes: 1_048_576, maxJsonDepth: 64 },
    })
    expect(publicUrlFor(config, 8080)).toBe("http://localhost:8080")
  })

  it("reads every variable, resolving relative directories against the invocation directory", () => {
    const config = parseConfig(
      {
        PORT: "0",
        GRAPHQL_PORT: "4001",
        HOST: "127.0.0.1",
        DATA_DIR: "var/dxs",
        DATABASE_URL: "postgresql://u:p@db:5432/dxs",
        BLOB_DIR: "/mnt/blobs",
        BLOB_STORE: "S3",
        S3_BUCKET: "dxs-files",
        S3_REGION: "eu-central-1",
        S3_ENDPOINT: "https://minio.internal:9000",
        S3_FORCE_PATH_STYLE: "false",
        S3_PREFIX: "/prod/dxs",
        S3_TIMEOUT_SECONDS: "7",
        TASK_RETRY_WINDOW_SECONDS: "60",
        SHUTDOWN_GRACE_SECONDS: "3",
        PUBLIC_URL: "https://dxs.example.com/",
        UPLOAD_MAX_BYTES: "1000",
        FILE_EDIT_MAX_BYTES: "500",
        FILE_URL_TTL_SECONDS: "60",
        SESSION_TTL_HOURS: "24",
        DB_POOL_SIZE: "3",
        SIGN_IN_ATTEMPTS_PER_MINUTE: "5",
        AUTH_FAILURES_PER_MINUTE: "50",
        MAX_SUBSCRIPTIONS_PER_KEY: "25",
        WORKER_CONCURRENCY: "8",
        LOG_LEVEL: "WARN",
        LOG_FORMAT: "pretty",
        METRICS_PORT: "9464",
        METRICS_HOST: "0.0.0.0",
        PARSE_THREADS: "3",
        PARSE_THREAD_IDLE_SECONDS: "0",
        PARSE_TIMEOUT_SECONDS: "30",
        PARSE_MEMORY_MB: "256",
        MAX_PAGES: "50",
        MAX_DECOMPRESSED_BYTES: "1000000",
        PDF_ENGINE: "PDFJS",
        TRANSCRIPTION_URL: "http://127.0.0.1:9000/v1/audio/transcriptions",
        TRANSCRIPTION_MODEL: "whisper-large",
        TRANSCRIPTION_API_KEY: "sk-test",
        WEB_SEARCH_URL: "http://127.0.0.1:8888/search",
        WEB_SEARCH_MAX_RESULTS: "7",
        DXS_ENCRYPTION_KEY: `${"00".repeat(31)}ff`,
        WEBHOOK_ALLOW_LOOPBACK: "true",
        MAX_JSON_BYTES: "2048",
        MAX_JSON_DEPTH: "16",
        HTTP_HEADERS_TIMEOUT_SECONDS: "5",
        HTTP_REQUEST_TIMEOUT_SECONDS: "120",
        HTTP_IDLE_TIMEOUT_SECONDS: "30",
        MAX_CONNECTIONS_PER_CLIENT: "20",
      },
      "/home/me",
    )
    expect(config).toEqual({
      port: 0,
      graphqlPort: 4001,
      host: "127.0.0.1",
      dataDir: "/home/me/var/dxs",
      databaseUrl: "postgresql://u:p@db:5432/dxs",
      blobDir: "/mnt/blobs",
      blobStore: {
        kind: "s3",
        bucket: "dxs-files",
        region: "eu-central-1",
        endpoint: "https://minio.internal:9000",
        forcePathStyle: false,
        prefix: "prod/dxs/",
        timeoutMs: 7000,
      },
      publicUrl: "https://dxs.example.com",
      uploadMaxBytes: 1000,
      fileEditMaxBytes: 500,
      fileUrlTtlSeconds: 60,
      sessionTtlHours: 24,
      dbPoolSize: 3,
      rateLimitPerMinute: 600,
      signInAttemptsPerMinute: 5,
      authFailuresPerMinute: 50,
      maxSubscriptionsPerKey: 25,
      workerConcurrency: 8,
      taskRetryWindowSeconds: 60,
      shutdownGraceSeconds: 3,
      logLevel: "warning",
      logFormat: "pretty",
      metrics: { port: 9464, host: "0.0.0.0" },
      parsing: {
        threads: 3,
        idleSeconds: 0,
        timeoutSeconds: 30,
        memoryMb: 256,
        maxPages: 50,
        maxDecompressedBytes: 1_000_000,
        pdfEngine: "pdfjs",
        transcription: {
          url: "http://127.0.0.1:9000/v1/audio/transcriptions",
          model: "whisper-large",
          apiKey: "sk-test",
        },
      },
      llm: { provider: "local" },
      requestBudget: { maxAgentsPerRequest: 20, contextTokens: 128_000 },
      webSearch: { url: "http://127.0.0.1:8888/search", maxResults: 7 },
      webhooks: { encryptionKey: Buffer.from(`${"00".repeat(31)}ff`, "hex"), allowLoopback: true },
      http: {
        headersTimeoutSeconds: 5,
        requestTimeoutSeconds: 120,
        idleTimeoutSeconds: 30,
        maxConnectionsPerClient: 20,
      },
      limits: { maxJsonBytes: 2048, maxJsonDepth: 16 },
    })
    expect(parseConfig({ DATA_DIR: "/d" }, "/x").blobDir).toBe("/d/blobs")
    expect(parseConfig({ PORT: "" }, "/x").port).toBe(8080)
  })

  it("stores files in an S3 bucket with BLOB_STORE=s3, which needs S3_BUCKET", () => {
    expect(parseConfig({ BLOB_STORE: "s3", S3_BUCKET: "b" }, "/x").blobStore).toEqual({
      kind: "s3",
      bucket: "b",
      region: "us-east-1",
      endpoint: undefined,
      forcePathStyle: false,
      prefix: "",
      timeoutMs: 20_000,
    })
    // Another server than AWS: path-style addressing unless told otherwise.
    expect(
      parseConfig({ BLOB_STORE: "s3", S3_BUCKET: "b", S3_ENDPOINT: "http://127.0.0.1:9000" }, "/x").blobStore,
    ).toMatchObject({ endpoint: "http://127.0.0.1:9000", forcePathStyle: true })
    expect(() => parseConfig({ BLOB_STORE: "s3" }, "/x")).toThrow(/S3_BUCKET: required with BLOB_STORE=s3/)
    expect(() => parseConfig({ BLOB_STORE: "gcs" }, "/x")).toThrow(/BLOB_STORE=gcs: must be fs or s3/)
    expect(() => parseConfig({ BLOB_STORE: "s3", S3_BUCKET: "b", S3_ENDPOINT: "minio:9000" }, "/x")).toThrow(
      /S3_ENDPOINT=.*: must be an http:\/\/ or https:\/\/ URL/,
    )
    // One PutObject carries an upload: at most 5 GiB.
    expect(() =>
      parseConfig({ BLOB_STORE: "s3", S3_BUCKET: "b", UPLOAD_MAX_BYTES: String(6 * 1024 ** 3) }, "/x"),
    ).toThrow(/UPLOAD_MAX_BYTES=.*: must be a whole number from 1 to 5368709120/)
    // The S3 settings mean nothing to the directory store.
    expect(parseConfig({ S3_BUCKET: "b" }, "/x").blobStore).toEqual({ kind: "fs" })
  })

  it("logs pretty lines at a terminal and JSON lines otherwise, unless LOG_FORMAT says", () => {
    expect(parseConfig({}, "/x", true).logFormat).toBe("pretty")
    expect(parseConfig({}, "/x", false).logFormat).toBe("json")
    expect(parseConfig({ LOG_FORMAT: "json" }, "/x", true).logFormat).toBe("json")
    expect(() => parseConfig({ LOG_FORMAT: "xml" }, "/x")).toThrow(/LOG_FORMAT=xml: must be json or pretty/)
    expect(parseConfig({ METRICS_PORT: "0" }, "/x").metrics).toEqual({ port: 0, host: "127.0.0.1" })
  })

  it("reports every bad value at once, without printing passwords", () => {
    const bad = {
      PORT: "80a",
      DATABASE_URL: "mysql://root:hunter2@db/x",
      PUBLIC_URL: "ftp://x",
      UPLOAD_MAX_BYTES: "0",
      DB_POOL_SIZE: "-1",
      WORKER_CONCURRENCY: "1.5",
      LOG_LEVEL: "loud",
    }
    let error: unknown
    try {
      parseConfig(bad, "/")
    } catch (e) {
      error = e
    }
    expect(error).toBeInstanceOf(ConfigError)
    const problems = (error as ConfigError).problems
    expect(problems.map((p) => p.split(/[=:]/)[0])).toEqual([
      "PORT",
      "DATABASE_URL",
      "PUBLIC_URL",
      "UPLOAD_MAX_BYTES",
      "DB_POOL_SIZE",
      "WORKER_CONCURRENCY",
      "LOG_LEVEL",
    ])
    expect((error as Error).message).not.toContain("hunter2")
    expect(() => parseConfig({ PORT: "65536" }, "/")).toThrow(
      /PORT=65536: must be a whole number from 0 to 65535/,
    )
    expect(() => parseConfig({ DATABASE_URL: "not a url" }, "/")).toThrow(/DATABASE_URL: not a URL/)
    expect(redactUrl("postgres://u:secret@h/db")).toBe("postgres://u:***@h/db")
  })

  it("reads PDF_ENGINE as pdfium (the default) or pdfjs", () => {
    expect(parseConfig({}, "/").parsing.pdfEngine).toBe("pdfium")
    expect(parseConfig({ PDF_ENGINE: " pdfium " }, "/").parsing.pdfEngine).toBe("pdfium")
    expect(parseConfig({ PDF_ENGINE: "pdfjs" }, "/").parsing.pdfEngine).toBe("pdfjs")
    expect(() => parseConfig({ PDF_ENGINE: "mupdf" }, "/")).toThrow(
      "PDF_ENGINE=mupdf: must be pdfium or pdfjs",
    )
  })

  it("reads MAX_SUBSCRIPTIONS_PER_KEY as a whole number of at least 1", () => {
    expect(parseConfig({ MAX_SUBSCRIPTIONS_PER_KEY: "1" }, "/").maxSubscriptionsPerKey).toBe(1)
    for (const raw of ["0", "-2", "1.5", "many"])
      expect(() => parseConfig({ MAX_SUBSCRIPTIONS_PER_KEY: raw }, "/")).toThrow(
        `MAX_SUBSCRIPTIONS_PER_KEY=${raw}: must be a whole number from 1 to 100000`,
      )
  })

  it("reads the request budget: LLM_MAX_AGENTS_PER_REQUEST (1 to 200) and LLM_CONTEXT_TOKENS (4000 to 2000000)", () => {
    expect(
      parseConfig({ LLM_MAX_AGENTS_PER_REQUEST: "8", LLM_CONTEXT_TOKENS: "32000" }, "/").requestBudget,
    ).toEqual({ maxAgentsPerRequest: 8, contextTokens: 32_000 })
    expect(
      parseConfig({ LLM_MAX_AGENTS_PER_REQUEST: "200", LLM_CONTEXT_TOKENS: "2000000" }, "/").requestBudget,
    ).toEqual({ maxAgentsPerRequest: 200, contextTokens: 2_000_000 })
    for (const raw of ["0", "201", "1.5", "many"])
      expect(() => parseConfig({ LLM_MAX_AGENTS_PER_REQUEST: raw }, "/")).toThrow(
        `LLM_MAX_AGENTS_PER_REQUEST=${raw}: must be a whole number from 1 to 200`,
      )
    for (const raw of ["3999", "2000001", "128k"])
      expect(() => parseConfig({ LLM_CONTEXT_TOKENS: raw }, "/")).toThrow(
        `LLM_CONTEXT_TOKENS=${raw}: must be a whole number from 4000 to 2000000`,
      )
  })

  it("reads SESSION_TTL_HOURS as whole hours from 1 to 8760", () => {
    expect(parseConfig({ SESSION_TTL_HOURS: "1" }, "/").sessionTtlHours).toBe(1)
    expect(parseConfig({ SESSION_TTL_HOURS: "8760" }, "/").sessionTtlHours).toBe(8760)
    for (const raw of ["0", "8761", "1.5", "12h", "-1"])
      expect(() => parseConfig({ SESSION_TTL_HOURS: raw }, "/")).toThrow(
        `SESSION_TTL_HOURS=${raw}: must be a whole number from 1 to 8760`,
      )
  })

  it("configures web search only with WEB_SEARCH_URL", () => {
    expect(parseConfig({}, "/").webSearch).toBeUndefined()
    expect(parseConfig({ WEB_SEARCH_MAX_RESULTS: "8" }, "/").webSearch).toBeUndefined()
    expect(parseConfig({ WEB_SEARCH_URL: "http://127.0.0.1:8888/search" }, "/").webSearch).toEqual({
      url: "http://127.0.0.1:8888/search",
      maxResults: 5,
    })
    expect(
      parseConfig({ WEB_SEARCH_URL: "https://search.example.com/search", WEB_SEARCH_MAX_RESULTS: "10" }, "/")
        .webSearch,
    ).toEqual({ url: "https://search.example.com/search", maxResults: 10 })
    expect(() => parseConfig({ WEB_SEARCH_URL: "searx.local" }, "/")).toThrow(
      /WEB_SEARCH_URL=.*must be an http/,
    )
    expect(() => parseConfig({ WEB_SEARCH_MAX_RESULTS: "0" }, "/")).toThrow(
      /WEB_SEARCH_MAX_RESULTS=0: must be a whole number from 1 to 100/,
    )
  })

  it("reads the webhook encryption key as hex or base64, and WEBHOOK_ALLOW_LOOPBACK as a boolean", () => {
    const key = Buffer.from(Array.from({ length: 32 }, (_, i) => i))
    expect(parseConfig({ DXS_ENCRYPTION_KEY: key.toString("hex") }, "/").webhooks.encryptionKey).toEqual(key)
    expect(parseConfig({ DXS_ENCRYPTION_KEY: key.toString("base64") }, "/").webhooks.encryptionKey).toEqual(
      key,
    )
    for (const [raw, value] of [
      ["1", true],
      ["yes", true],
      ["FALSE", false],
      ["off", false],
    ] as const)
      expect(parseConfig({ WEBHOOK_ALLOW_LOOPBACK: raw }, "/").webhooks.allowLoopback).toBe(value)
    let error: unknown
    try {
      parseConfig({ DXS_ENCRYPTION_KEY: "hunter2-not-a-key", WEBHOOK_ALLOW_LOOPBACK: "maybe" }, "/")
    } catch (e) {
      error = e
    }
    expect(error).toBeInstanceOf(ConfigError)
    const problems = (error as ConfigError).problems
    expect(problems).toEqual([
      expect.stringMatching(/^DXS_ENCRYPTION_KEY: must be 64 hex digits or base64 of 32 bytes/),
      "WEBHOOK_ALLOW_LOOPBACK=maybe: must be true or false",
    ])
    // The bad key itself is a secret: never echoed.
    expect(problems.join("\n")).not.toContain("hunter2")
  })

  it("without DXS_ENCRYPTION_KEY, creates DATA_DIR/encryption.key once (mode 0600) and reads it afterwards", async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "dxs-key-"))
    try {
      const config = parseConfig({ DATA_DIR: path.join(dataDir, "nested") }, "/")
      const file = encryptionKeyFile(config)
      // Several processes starting at once: one creates the key, all use it.
      const loaded = await Promise.all(Array.from({ length: 5 }, () => loadEncryptionKey(config)))
      expect(loaded.filter((l) => l.source === "created")).toHaveLength(1)
      for (const l of loaded) expect(Buffer.from(l.key)).toEqual(Buffer.from(loaded[0]!.key))
      expect(loaded[0]!.key).toHaveLength(32)
      expect(fs.statSync(file).mode & 0o777).toBe(0o600)
      expect(fs.readFileSync(file, "utf8")).toBe(`${Buffer.from(loaded[0]!.key).toString("hex")}\n`)
      expect(fs.readdirSync(path.dirname(file))).toEqual(["encryption.key"])

      const again = await loadEncryptionKey(config)
      expect(again).toEqual({ key: loaded[0]!.key, source: "file", file })

      // The variable wins over the file.
      const fromEnv = await loadEncryptionKey(
        parseConfig({ DATA_DIR: path.join(dataDir, "nested"), DXS_ENCRYPTION_KEY: "ab".repeat(32) }, "/"),
      )
      expect(fromEnv).toEqual({ key: Buffer.from("ab".repeat(32), "hex"), source: "env", file: undefined })

      fs.writeFileSync(file, "not a key\n")
      await expect(loadEncryptionKey(config)).rejects.toThrow(/encryption\.key: not an encryption key/)
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true })
    }
  })

  it("lists every variable it reads in the table", () => {
    const source = fs.readFileSync(path.join(import.meta.dirname, "../src/Config.ts"), "utf8")
    const read = new Set(
      [...source.matchAll(/get\("([A-Z0-9_]+)"\)|(?:int|bool)\("([A-Z0-9_]+)"/g)].map((m) => m[1] ?? m[2]),
    )
    expect([...read].sort()).toEqual(configVariables.map((v) => v.name).sort())
  })

  it("every variable is documented in the repository README", () => {
    const readmePath = path.join(repoRoot, "README.md")
    const readme = fs.existsSync(readmePath) ? fs.readFileSync(readmePath, "utf8") : ""
    const missing = configVariables
      .map((v) => v.name)
      .filter((name) => !new RegExp(`\\b${name}\\b`).test(readme))
    expect(missing, `README.md does not mention: ${missing.join(", ")}`).toEqual([])
  })
})
