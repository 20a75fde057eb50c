import { spawn, spawnSync } from "node:child_process"
import { randomBytes } from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { compiledDxs, Dxs, killSpawned, pidAlive, readPid, repoRoot, until } from "@dxs/testing/DxsProcess"
import { startTestS3Server } from "@dxs/testing/TestS3Server"
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

/**
 * The real `dxs` command in child processes (compiled, as `./dx start` runs it) over a temp DATA_DIR with
 * its own embedded PostgreSQL server. The tests run in order and share that directory.
 */

const KEY = /^dxs_live_[0-9A-Za-z]{32}$/
const EXTERNAL_SERVER = "postgres://postgres@127.0.0.1:5432"

let tmp = ""
let dataDir = ""
let baseEnv: NodeJS.ProcessEnv = {}

const dxs = (args: ReadonlyArray<string>, env: NodeJS.ProcessEnv = {}, input?: string) =>
  new Dxs(args, { ...baseEnv, ...env }, input)

/** Runs a command to completion. */
const run = async (args: ReadonlyArray<string>, env: NodeJS.ProcessEnv = {}, input?: string) => {
  const p = dxs(args, env, input)
  const exit = await p.waitForExit()
  return { ...exit, stdout: p.stdout, stderr: p.stderr, output: p.output }
}

const lastLine = (text: string) => text.trimEnd().split("\n").at(-1) ?? ""

/** Starts `dxs start all` on a free port and waits for its address line. */
const startServer = async () => {
  const server = dxs(["start", "all"])
  const [, port] = await server.waitFor(/REST API listening on http:\/\/127\.0\.0\.1:(\d+)\/api\/v1 \(docs: /)
  return { server, base: `http://127.0.0.1:${port}/api/v1` }
}

const get = (base: string, p: string, key: string) => fetch(base + p, { headers: { "x-api-key": key } })

const postmasterPidFile = () => path.join(dataDir, "pg", "postmaster.pid")

/** Stops whatever a failed test left running: dxs processes, then a PostgreSQL server of DATA_DIR. */
const cleanUp = async () => {
  killSpawned()
  const owner = readPid(path.join(dataDir, "pg.owner"))
  if (owner !== undefined && owner !== process.pid && pidAlive(owner)) process.kill(owner, "SIGKILL")
  const postmaster = readPid(postmasterPidFile())
  if (postmaster !== undefined && pidAlive(postmaster)) {
    process.kill(postmaster, "SIGINT")
    await until("PostgreSQL to stop", 20_000, () => !pidAlive(postmaster)).catch(() =>
      process.kill(postmaster, "SIGKILL"),
    )
  }
}

beforeAll(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), "dxs-cli-"))
  // As root the cluster runs as the `postgres` user, which must be able to enter this directory.
  fs.chmodSync(tmp, 0o755)
  dataDir = path.join(tmp, "data")
  baseEnv = {
    ...process.env,
    DATA_DIR: dataDir,
    PORT: "0",
    GRAPHQL_PORT: "0",
    HOST: "127.0.0.1",
    LOG_LEVEL: "info",
  }
  for (const name of ["DATABASE_URL", "BLOB_DIR", "PUBLIC_URL", "INIT_CWD"]) delete baseEnv[name]
})

afterAll(async () => {
  await cleanUp()
  fs.rmSync(tmp, { recursive: true, force: true })
}, 60_000)

describe("dxs usage", () => {
  it("prints usage on stderr and exits 2 for an unknown command or flag", async () => {
    const unknown = await run(["frobnicate"])
    expect(unknown.code).toBe(2)
    expect(unknown.stderr).toContain("unknown command 'frobnicate'")
    expect(unknown.stderr).toContain("Usage: dxs <command>")
    expect(unknown.stdout).toBe("")
    const flag = await run(["keys", "create", "--org", "x", "--bogus"])
    expect(flag.code).toBe(2)
    expect(flag.stderr).toContain("Usage: dxs keys create")
    const missing = await run(["keys", "create"])
    expect(missing.code).toBe(2)
    expect(missing.stderr).toContain("--org NAME is required")
    const mode = await run(["start", "everything"])
    expect(mode.code).toBe(2)
  })

  it("has --help for every command", async () => {
    for (const [args, title] of [
      [["--help"], "Usage: dxs <command>"],
      [["start", "--help"], "Usage: dxs start"],
      [["migrate", "--help"], "Usage: dxs migrate"],
      [["keys", "--help"], "Usage: dxs keys <create|list|revoke>"],
      [["keys", "create", "--help"], "Usage: dxs keys create"],
      [["keys", "list", "--help"], "Usage: dxs keys list"],
      [["keys", "revoke", "--help"], "Usage: dxs keys revoke"],
    ] as const) {
      const r = await run(args)
      expect(r.code, r.output).toBe(0)
      expect(r.stdout).toContain(title)
    }
  })

  it("rejects a bad environment value with a clear message and exit 2", async () => {
    const r = await run(["migrate"], { PORT: "eighty", WORKER_CONCURRENCY: "0" })
    expect(r.code).toBe(2)
    expect(r.stderr).toContain("PORT=eighty: must be a whole number from 0 to 65535")
    expect(r.stderr).toContain("WORKER_CONCURRENCY=0")
  })
})

describe("dxs on an embedded PostgreSQL server", () => {
  let key = ""
  let keyId = ""
  let base = ""
  let server: Dxs | undefined

  it("(a) keys create prints a new key as the last line with no server running", async () => {
    const r = await run(["keys", "create", "--org", "acme", "--name", "first"])
    expect(r.code, r.output).toBe(0)
    key = lastLine(r.stdout)
    expect(key).toMatch(KEY)
    expect(r.stderr).toContain("initialising a new PostgreSQL cluster")
    // It started its own server and stopped it again.
    expect(fs.existsSync(postmasterPidFile())).toBe(false)
    const list = await run(["keys", "list", "--org", "acme"])
    expect(list.code, list.output).toBe(0)
    expect(list.stdout).toContain("acme")
    expect(list.stdout).toContain("first")
    expect(list.stdout).toContain(key.slice(0, 13))
    expect(list.stdout).not.toContain(key)
    keyId = /^([0-9a-f-]{36})\s+acme\s+first/m.exec(list.stdout)?.[1] ?? ""
    expect(keyId).not.toBe("")
  })

  it("(b) start all serves; keys create attaches to the running server; keys authenticate", async () => {
    const started = await startServer()
    server = started.server
    base = started.base
    expect(server.stderr).toMatch(/docs: http:\/\/localhost:\d+\/api\/v1\/docs/)

    const created = await run(["keys", "create", "--org", "acme"])
    expect(created.code, created.output).toBe(0)
    expect(created.stderr).toContain("attaching to the embedded PostgreSQL server")
    const second = lastLine(created.stdout)
    expect(second).toMatch(KEY)

    expect((await get(base, "/projects/", second)).status).toBe(200)
    expect((await get(base, "/projects/", key)).status).toBe(200)
    expect((await get(base, "/projects/", `dxs_live_${"a".repeat(32)}`)).status).toBe(401)
    expect((await get(base, "/projects/", "nonsense")).status).toBe(401)
    const project = await fetch(`${base}/projects/`, {
      method: "POST",
      headers: { "x-api-key": key, "content-type": "application/json" },
      body: JSON.stringify({ name: "Kept across restarts" }),
    })
    expect(project.status).toBe(201)
    // The all-in-one process serves GraphQL on the REST API's port.
    const graphql = await fetch(base.replace(/\/api\/v1$/, "/graphql"), {
      method: "POST",
      headers: { "x-api-key": key, "content-type": "application/json" },
      body: JSON.stringify({ query: "{ projects { name } }" }),
    })
    expect(graphql.status).toBe(200)
    expect(await graphql.json()).toEqual({ data: { projects: [{ name: "Kept across restarts" }] } })
    expect(server.stderr).toContain(`GraphQL on ${base.replace(/\/api\/v1$/, "/graphql")}`)
    // The attached command did not stop the shared server.
    expect((await get(base, "/projects/", key)).status).toBe(200)
  })

  it("(c) SIGTERM stops the HTTP server and the embedded PostgreSQL server, and exits 0", async () => {
    const s = server!
    const postmaster = readPid(postmasterPidFile())
    expect(postmaster).toBeDefined()
    s.child.kill("SIGTERM")
    const exit = await s.waitForExit(60_000)
    expect(exit.code, s.output).toBe(0)
    expect(s.stderr).toContain("embedded PostgreSQL server stopped")
    expect(fs.existsSync(postmasterPidFile())).toBe(false)
    expect(pidAlive(postmaster!)).toBe(false)
    await expect(get(base, "/projects/", key)).rejects.toThrow()
  })

  it("(d) a restart on the same DATA_DIR keeps the data", async () => {
    const started = await startServer()
    server = started.server
    base = started.base
    const r = await get(base, "/projects/", key)
    expect(r.status).toBe(200)
    const projects = (await r.json()) as Array<{ name: string }>
    expect(projects.map((p) => p.name)).toContain("Kept across restarts")
  })

  it("(e) after kill -9 of the server process, a new start recovers from the stale PostgreSQL server", async () => {
    const s = server!
    // The Node process that owns the embedded server.
    const owner = readPid(path.join(dataDir, "pg.owner"))
    const postmaster = readPid(postmasterPidFile())
    expect(owner).toBeDefined()
    expect(postmaster).toBeDefined()
    process.kill(owner!, "SIGKILL")
    await s.waitForExit(30_000)
    await until("the killed process to disappear", 10_000, () => !pidAlive(owner!))
    // Its PostgreSQL server is left behind.
    expect(pidAlive(postmaster!)).toBe(true)

    const started = await startServer()
    server = started.server
    base = started.base
    expect(server.stderr).toContain("stopping a stale embedded PostgreSQL server")
    expect(pidAlive(postmaster!)).toBe(false)
    const r = await get(base, "/projects/", key)
    expect(r.status).toBe(200)
    expect(((await r.json()) as Array<{ name: string }>).map((p) => p.name)).toContain("Kept across restarts")
  })

  it("(f) keys revoke makes the key fail with 401", async () => {
    expect((await get(base, "/projects/", key)).status).toBe(200)
    const revoked = await run(["keys", "revoke", key])
    expect(revoked.code, revoked.output).toBe(0)
    expect(revoked.stdout).toContain(`Revoked API key ${keyId}`)
    expect((await get(base, "/projects/", key)).status).toBe(401)

    const again = await run(["keys", "revoke", keyId])
    expect(again.code).toBe(1)
    expect(again.stderr).toContain(`no active API key matches ${keyId}`)
    expect(again.stderr).not.toMatch(/\n\s+at /) // no stack trace
    const unknown = await run(["keys", "revoke", "00000000-0000-4000-8000-000000000000"])
    expect(unknown.code).toBe(1)

    const list = await run(["keys", "list", "--json"])
    expect(list.code, list.output).toBe(0)
    const rows = JSON.parse(list.stdout) as Array<{ id: string; revoked_at: string | null }>
    expect(rows.find((r) => r.id === keyId)?.revoked_at).not.toBeNull()
    expect(list.stdout).not.toContain(key)

    const s = server!
    s.child.kill("SIGTERM")
    expect((await s.waitForExit(60_000)).code, s.output).toBe(0)
    expect(fs.existsSync(postmasterPidFile())).toBe(false)
  })
})

describe("./dx start", () => {
  // What it builds first (tsc -b, the web application) was built before the tests: it finds nothing to do.
  it("is the server itself: a signal to it stops the server and PostgreSQL, and it prints no pnpm noise", async () => {
    const s = new Dxs(["start"], baseEnv, undefined, ["bash", path.join(repoRoot, "dx")])
    const [, port] = await s.waitFor(/REST API listening on http:\/\/127\.0\.0\.1:(\d+)\/api\/v1/, 180_000)
    expect((await fetch(`http://127.0.0.1:${port}/api/v1/schema/`)).status).toBe(200)
    const postmaster = readPid(postmasterPidFile())
    expect(postmaster).toBeDefined()
    // What `kill %1` does to `./dx start &`: the signal goes to the process that was started.
    s.child.kill("SIGTERM")
    const exit = await s.waitForExit(60_000)
    expect(exit.code, s.output).toBe(0)
    expect(s.stderr).toContain("embedded PostgreSQL server stopped")
    expect(pidAlive(postmaster!)).toBe(false)
    await expect(fetch(`http://127.0.0.1:${port}/api/v1/schema/`)).rejects.toThrow()
    expect(s.output).not.toMatch(/ELIFECYCLE|Ignored build scripts|Lockfile is up to date/)
  })
})

describe("dxs graphql", () => {
  it("graphql schema prints the SDL without a database", async () => {
    const r = await run(["graphql", "schema"])
    expect(r.code, r.output).toBe(0)
    expect(r.stdout).toContain("type Query")
    expect(fs.existsSync(postmasterPidFile())).toBe(false)
  })

  it("start graphql serves /graphql to API keys and stops on SIGTERM", async () => {
    const created = await run(["keys", "create", "--org", "graphql-org"])
    expect(created.code, created.output).toBe(0)
    const key = lastLine(created.stdout)
    expect(key).toMatch(KEY)

    const s = dxs(["start", "graphql"])
    const [, port] = await s.waitFor(/GraphQL on http:\/\/127\.0\.0\.1:(\d+)\/graphql/)
    const url = `http://127.0.0.1:${port}/graphql`
    const query = (headers: Record<string, string>) =>
      fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
        body: JSON.stringify({ query: "{ projects { id } }" }),
      }).then((r) => r.json() as Promise<{ data?: { projects?: unknown }; errors?: Array<any> }>)

    const ok = await query({ "x-api-key": key })
    expect(ok.errors, JSON.stringify(ok)).toBeUndefined()
    expect(Array.isArray(ok.data?.projects)).toBe(true)
    const anonymous = await query({})
    expect(anonymous.errors?.[0]?.extensions?.code).toBe("UNAUTHENTICATED")

    s.child.kill("SIGTERM")
    expect((await s.waitForExit(60_000)).code, s.output).toBe(0)
    expect(s.stderr).toContain("stopping the GraphQL gateway")
    expect(fs.existsSync(postmasterPidFile())).toBe(false)
  })
})

/** util-linux `script` runs a command on a pseudo-terminal: how a test gets stdin to be a TTY. */
const hasScript = spawnSync("script", ["--version"], { stdio: "ignore" }).status === 0
if (!hasScript) console.warn("users create in a terminal: skipped (no util-linux script command)")

describe("dxs users", () => {
  const PASSWORD = "correct horse battery staple"

  it("has usage and --help for users create and users list", async () => {
    for (const [args, title] of [
      [["users", "--help"], "Usage: dxs users <create|list>"],
      [["users", "create", "--help"], "Usage: dxs users create"],
      [["users", "list", "--help"], "Usage: dxs users list"],
    ] as const) {
      const r = await run(args)
      expect(r.code, r.output).toBe(0)
      expect(r.stdout).toContain(title)
    }
    const main = await run(["--help"])
    expect(main.stdout).toContain("users create --org NAME --email ADDRESS")
    const missing = await run(["users", "create", "--org", "acme"])
    expect(missing.code).toBe(2)
    expect(missing.stderr).toContain("--email ADDRESS is required")
    expect(missing.stderr).toContain("Usage: dxs users create")
    const flag = await run(["users", "list", "--bogus"])
    expect(flag.code).toBe(2)
    expect(flag.stderr).toContain("Usage: dxs users list")
    const sub = await run(["users", "delete"])
    expect(sub.code).toBe(2)
    expect(sub.stderr).toContain("unknown users command 'delete'")
  })

  it("users create reads the password from stdin; users list shows the member, never a password", async () => {
    const created = await run(
      ["users", "create", "--org", "people", "--email", "Ada@Example.com"],
      {},
      `${PASSWORD}\n`,
    )
    expect(created.code, created.output).toBe(0)
    expect(created.stderr).toContain("Created member Ada@Example.com of organisation 'people'.")
    expect(created.stdout).toBe("")
    expect(created.output).not.toContain(PASSWORD)
    expect(fs.existsSync(postmasterPidFile())).toBe(false)

    const list = await run(["users", "list", "--json"])
    expect(list.code, list.output).toBe(0)
    const rows = JSON.parse(list.stdout) as Array<Record<string, unknown>>
    const ada = rows.find((r) => r.email === "Ada@Example.com")
    expect(ada).toMatchObject({ organization: { name: "people" } })
    expect(Object.keys(ada!).sort()).toEqual(["created_at", "email", "id", "organization"])
    expect(list.stdout).not.toContain(PASSWORD)
    expect(list.stdout).not.toMatch(/password|scrypt/i)

    const table = await run(["users", "list", "--org", "people"])
    expect(table.code, table.output).toBe(0)
    expect(table.stdout).toMatch(/^ID\s+ORGANIZATION\s+EMAIL\s+CREATED$/m)
    expect(table.stdout).toMatch(new RegExp(`^${ada!.id}\\s+people\\s+Ada@Example\\.com\\s+\\d{4}-`, "m"))
    const none = await run(["users", "list", "--org", "nobody"])
    expect(none.code, none.output).toBe(0)
    expect(none.stderr).toContain("No members of organisation 'nobody'.")
  })

  it("users create fails with exit 1 for a taken e-mail (any case), a short password or a bad e-mail", async () => {
    const taken = await run(
      ["users", "create", "--org", "people", "--email", "ada@EXAMPLE.com"],
      {},
      PASSWORD,
    )
    expect(taken.code, taken.output).toBe(1)
    expect(taken.stderr).toContain("a member with the e-mail address ada@EXAMPLE.com already exists")
    expect(taken.stderr).not.toMatch(/\n\s+at /) // no stack trace

    const short = await run(
      ["users", "create", "--org", "people", "--email", "bob@example.com"],
      {},
      "tooShort1\n",
    )
    expect(short.code, short.output).toBe(1)
    expect(short.stderr).toContain("the password must have at least 12 characters")
    expect(short.output).not.toContain("tooShort1")

    const email = await run(["users", "create", "--org", "people", "--email", "bob"], {}, `${PASSWORD}\n`)
    expect(email.code, email.output).toBe(1)
    expect(email.stderr).toContain('"bob" is not an e-mail address')

    // stdin neither a terminal nor carrying a line: refused before the database starts.
    const empty = await run(["users", "create", "--org", "people", "--email", "bob@example.com"])
    expect(empty.code, empty.output).toBe(1)
    expect(empty.stderr).toContain("no password on standard input")
    expect(empty.stderr).not.toContain("PostgreSQL")

    const list = await run(["users", "list", "--json"])
    const emails = (JSON.parse(list.stdout) as Array<{ email: string }>).map((r) => r.email.toLowerCase())
    expect(emails.filter((e) => e === "ada@example.com")).toHaveLength(1)
    expect(emails).not.toContain("bob@example.com")
  })

  it.skipIf(!hasScript)(
    "users create in a terminal generates a password and prints it once, last",
    async () => {
      const errFile = path.join(tmp, "users-create.err")
      const quote = (s: string) => `'${s.replace(/'/g, "'\\''")}'`
      const command = [...compiledDxs, "users", "create", "--org", "people", "--email", "tty@example.com"]
        .map(quote)
        .join(" ")
      // script gives the command a pseudo-terminal as stdin and stdout; stderr goes to a file.
      const child = spawn("script", ["-qec", `${command} 2>${quote(errFile)}`, "/dev/null"], {
        cwd: repoRoot,
        env: baseEnv,
        stdio: ["ignore", "pipe", "pipe"],
      })
      let stdout = ""
      child.stdout!.on("data", (b: Buffer) => {
        stdout += b.toString()
      })
      const code = await new Promise<number | null>((resolve) => child.on("close", resolve))
      const stderr = fs.readFileSync(errFile, "utf8")
      const output = `--- stdout ---\n${stdout}\n--- stderr ---\n${stderr}`
      expect(code, output).toBe(0)
      const password = lastLine(stdout.replace(/\r/g, ""))
      expect(password, output).toMatch(/^[0-9A-Za-z]{20}$/)
      expect(stderr).toContain("Created member tty@example.com of organisation 'people'.")
      expect(stderr).toContain("shown only once")
      expect(stderr).not.toContain(password)

      const list = await run(["users", "list", "--json"])
      expect(list.stdout).toContain("tty@example.com")
      expect(list.stdout).not.toContain(password)
    },
  )
})

/** Whether the machine's PostgreSQL answers; (g) is skipped otherwise. */
const externalReachable = async () => {
  const client = new pg.Client({ connectionString: `${EXTERNAL_SERVER}/test`, connectionTimeoutMillis: 3000 })
  try {
    await client.connect()
    return true
  } catch {
    return false
  } finally {
    await client.end().catch(() => undefined)
  }
}

const external = await externalReachable()
if (!external) console.warn(`(g) skipped: no PostgreSQL server answers at ${EXTERNAL_SERVER}/test`)

describe("dxs with DATABASE_URL", () => {
  const database = `dxs_cli_test_${randomBytes(5).toString("hex")}`
  const admin = async <A>(f: (c: pg.Client) => Promise<A>) => {
    const client = new pg.Client({ connectionString: `${EXTERNAL_SERVER}/test` })
    await client.connect()
    try {
      return await f(client)
    } finally {
      await client.end()
    }
  }

  afterAll(async () => {
    if (external)
      for (const name of [database, `${database}_s3`])
        await admin((c) => c.query(`drop database if exists ${name} with (force)`))
  })

  it.skipIf(!external)("(g) migrate applies the migrations to a fresh external database", async () => {
    await admin((c) => c.query(`create database ${database}`))
    const url = `${EXTERNAL_SERVER}/${database}`
    const first = await run(["migrate"], { DATABASE_URL: url })
    expect(first.code, first.output).toBe(0)
    expect(first.stdout).toMatch(/Applied \d+ migration\(s\)/)
    expect(first.stdout).toContain("2026_11_22_0001_foundation")
    // The embedded server was not involved.
    expect(fs.existsSync(path.join(dataDir, "pg", "postmaster.pid"))).toBe(false)

    const second = await run(["migrate"], { DATABASE_URL: url })
    expect(second.code, second.output).toBe(0)
    expect(second.stdout).toContain("up to date")

    const client = new pg.Client({ connectionString: url })
    await client.connect()
    try {
      const r = await client.query("select count(*)::int as n from organizations")
      expect(r.rows[0].n).toBe(0)
    } finally {
      await client.end()
    }
  })

  it.skipIf(!external)(
    "(h) start with BLOB_STORE=s3 names a bucket it cannot use and exits 1, and announces a usable one",
    async () => {
      const s3 = await startTestS3Server()
      try {
        await admin((c) => c.query(`create database ${database}_s3`))
        const env = {
          DATABASE_URL: `${EXTERNAL_SERVER}/${database}_s3`,
          BLOB_STORE: "s3",
          S3_ENDPOINT: s3.options().endpoint,
          // The SDK's default chain reads the standard variables.
          AWS_ACCESS_KEY_ID: "S3RVER",
          AWS_SECRET_ACCESS_KEY: "S3RVER",
        }
        const missing = await run(["start", "api"], { ...env, S3_BUCKET: "no-such-bucket" })
        expect(missing.code, missing.output).toBe(1)
        expect(missing.stderr).toContain("BLOB_STORE=s3 (us-east-1): bucket no-such-bucket does not exist")
        const s = dxs(["start", "api"], { ...env, S3_BUCKET: "dxs-test", S3_PREFIX: "cli" })
        await s.waitFor(/files stored in http:\/\/127\.0\.0\.1:\d+ bucket dxs-test under cli\/ \(us-east-1\)/)
        await s.waitFor(/REST API listening on /)
        s.child.kill("SIGTERM")
        expect((await s.waitForExit(60_000)).code, s.output).toBe(0)
      } finally {
        await s3.stop()
      }
    },
  )

  it("migrate reports an unreachable DATABASE_URL in one line, without its password", async () => {
    const r = await run(["migrate"], { DATABASE_URL: "postgres://dxs:s3cret@127.0.0.1:1/nothing" })
    expect(r.code).toBe(1)
    expect(r.stderr).toContain("cannot connect to postgres://dxs:***@127.0.0.1:1/nothing")
    expect(r.stderr).not.toContain("s3cret")
  })
})
