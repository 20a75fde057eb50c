import { spawn, spawnSync } from "node:child_process"
import { randomBytes } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import { compiledDxs, repoRoot } from "@dxs/testing/DxsProcess"
import { startTestS3Server } from "@dxs/testing/TestS3Server"
import pg from "pg"
import { afterAll, describe, expect, it } from "vitest"
import { dxs, EXTERNAL_SERVER, lastLine, postmasterPidFile, run, sandbox, useSandbox } from "./sandbox.ts"

/**
 * The `dxs` commands for accounts (`users create`, `users list`) over a DATA_DIR of their own with its
 * embedded PostgreSQL server, and `dxs` with an external DATABASE_URL (`migrate`, `start` with an S3
 * bucket it cannot use), in child processes as in `cli.test.ts`.
 */

useSandbox()

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
      const errFile = path.join(sandbox.tmp, "users-create.err")
      const quote = (s: string) => `'${s.replace(/'/g, "'\\''")}'`
      const command = [...compiledDxs, "users", "create", "--org", "people", "--email", "tty@example.com"]
        .map(quote)
        .join(" ")
      // script gives the command a pseudo-terminal as stdin and stdout; stderr goes to a file.
      const child = spawn("script", ["-qec", `${command} 2>${quote(errFile)}`, "/dev/null"], {
        cwd: repoRoot,
        env: sandbox.baseEnv,
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
    expect(fs.existsSync(path.join(sandbox.dataDir, "pg", "postmaster.pid"))).toBe(false)

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
