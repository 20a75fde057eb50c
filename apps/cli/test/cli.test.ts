import * as fs from "node:fs"
import * as path from "node:path"
import { Dxs, pidAlive, readPid, repoRoot, until } from "@dxs/testing/DxsProcess"
import { describe, expect, it } from "vitest"
import { dxs, KEY, lastLine, postmasterPidFile, run, sandbox, useSandbox } from "./sandbox.ts"

/**
 * The real `dxs` command in child processes (compiled, as `./dx start` runs it) over a temp DATA_DIR with
 * its own embedded PostgreSQL server (`sandbox.ts`): usage, the embedded server's life, `./dx start` and
 * GraphQL. Accounts and an external DATABASE_URL are in `accounts.test.ts`.
 */

/** Modules of the servers and of the pipeline's stages: what a command that only reads keys must not load. */
const SERVERS_AND_PIPELINE =
  /\/(apps\/(rest-api|graphql-gateway|worker|web)|packages\/pipeline\/dist\/(parsing|extraction|llm|run|retrieval))\//

/** Runs `dxs args` with a module hook that names every module it loads: its result and those modules' URLs. */
const runNamingModules = async (args: ReadonlyArray<string>) => {
  const loaded = path.join(sandbox.tmp, `${args.join("-")}-modules.txt`)
  const result = await run(args, {
    DXS_LOADED_MODULES: loaded,
    NODE_OPTIONS: `--import ${path.join(import.meta.dirname, "loadedModules.mjs")}`,
  })
  return { result, modules: fs.readFileSync(loaded, "utf8").trim().split("\n") }
}

/** Starts `dxs start all` on a free port and waits for its address line. */
const startServer = async () => {
  const server = dxs(["start", "all"])
  const [, port] = await server.waitFor(/REST API listening on http:\/\/127\.0\.0\.1:(\d+)\/api\/v1 \(docs: /)
  return { server, base: `http://127.0.0.1:${port}/api/v1` }
}

const get = (base: string, p: string, key: string) => fetch(base + p, { headers: { "x-api-key": key } })

useSandbox()

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

  it("answers help and usage errors before loading Effect, the configuration or any service", async () => {
    for (const [args, code] of [
      [["--help"], 0],
      [["keys", "create", "--help"], 0],
      [["frobnicate"], 2],
    ] as const) {
      const { result: r, modules } = await runNamingModules(args)
      expect(r.code, r.output).toBe(code)
      expect(modules).toContainEqual(expect.stringMatching(/\/cli\/dist\/Args\.js$/))
      expect(
        modules.filter((url) =>
          /\/node_modules\/|\/cli\/dist\/Config\.js$|\/(db|services|pipeline)\/dist\//.test(url),
        ),
      ).toEqual([])
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
    // Each command loads only its own code: listing keys loads neither the servers' nor the pipeline's.
    const { result: list, modules } = await runNamingModules(["keys", "list", "--org", "acme"])
    expect(list.code, list.output).toBe(0)
    expect(modules).toContainEqual(expect.stringMatching(/\/services\/dist\/ApiKeys\.js$/))
    expect(modules.filter((url) => SERVERS_AND_PIPELINE.test(url))).toEqual([])
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
    const owner = readPid(path.join(sandbox.dataDir, "pg.owner"))
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
    const s = new Dxs(["start"], sandbox.baseEnv, undefined, ["bash", path.join(repoRoot, "dx")])
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
