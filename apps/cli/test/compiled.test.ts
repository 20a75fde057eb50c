/**
 * The compiled `dxs` (apps/cli/dist, built before the tests by the build script, as `./dx start` builds it)
 * runs on plain Node: no tsx, no source condition. `start all` serves the REST API and parses a PDF, which
 * proves the parse thread runs compiled JavaScript too (a thread started from dist/ has no TypeScript
 * loader: it could not load thread.ts).
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { onePagePdf } from "@dxs/pipeline/parsing/OnePagePdf"
import { Dxs, killSpawned } from "@dxs/testing/DxsProcess"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

const KEY = /dxs_live_[0-9A-Za-z]{32}/
const dxs = (args: ReadonlyArray<string>, env: NodeJS.ProcessEnv, input?: string) => new Dxs(args, env, input)

let tmp = ""
let env: NodeJS.ProcessEnv = {}
let server: Dxs | undefined

beforeAll(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), "dxs-compiled-"))
  // As root the cluster runs as the `postgres` user, which must be able to enter this directory.
  fs.chmodSync(tmp, 0o755)
  env = { ...process.env, DATA_DIR: path.join(tmp, "data"), PORT: "0", HOST: "127.0.0.1", LOG_LEVEL: "info" }
  // Plain Node, as `./dx start` runs it: no loader, no condition that would resolve to the sources.
  for (const name of ["DATABASE_URL", "BLOB_DIR", "PUBLIC_URL", "INIT_CWD", "NODE_OPTIONS"]) delete env[name]
})

afterAll(async () => {
  if (server && !server.exit) {
    server.child.kill("SIGTERM")
    await server.waitForExit(60_000).catch(() => undefined)
  }
  killSpawned()
  fs.rmSync(tmp, { recursive: true, force: true })
}, 90_000)

describe("the compiled dxs", () => {
  it("answers --help", async () => {
    const help = dxs(["--help"], env)
    const exit = await help.waitForExit()
    expect(exit.code, help.output).toBe(0)
    expect(help.stdout).toMatch(/^Usage: dxs <command>/)
    expect(help.stdout).toContain("start")
  })

  it("start all serves the REST API and parses a PDF in a compiled parse thread", async () => {
    server = dxs(["start", "all"], env)
    const [, port] = await server.waitFor(
      /REST API listening on http:\/\/127\.0\.0\.1:(\d+)\/api\/v1/,
      180_000,
    )
    const api = `http://127.0.0.1:${port}/api/v1`
    expect((await fetch(`${api}/schema/?format=json`)).status).toBe(200)

    const created = dxs(["keys", "create", "--org", "compiled"], env)
    expect((await created.waitForExit()).code, created.output).toBe(0)
    const key = KEY.exec(created.stdout)![0]
    const call = (p: string, init: RequestInit = {}) =>
      fetch(`${api}${p}`, { ...init, headers: { "x-api-key": key, ...(init.headers as object) } })

    const project = (await (
      await call("/projects/", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ name: "Compiled" }),
      })
    ).json()) as { id: string }
    const form = new FormData()
    form.set("file", new Blob([onePagePdf("Compiled parse thread 4471")]), "compiled.pdf")
    const uploaded = await call(`/projects/${project.id}/documents/`, { method: "POST", body: form })
    expect(uploaded.status, await uploaded.clone().text()).toBe(201)
    const { id } = (await uploaded.json()) as { id: string }

    const deadline = Date.now() + 90_000
    let document: { status: string; page_count: number; metadata: string } | undefined
    for (;;) {
      document = (await (await call(`/projects/${project.id}/documents/${id}/`)).json()) as typeof document
      if (document!.status !== "Pending" || Date.now() > deadline) break
      await new Promise((r) => setTimeout(r, 200))
    }
    expect(document, server.output).toMatchObject({ status: "Processed", page_count: 1 })
    const page = (await (await call(`/projects/${project.id}/documents/${id}/pages/1/`)).json()) as {
      text: string
    }
    expect(page.text).toContain("Compiled parse thread 4471")

    server.child.kill("SIGTERM")
    expect((await server.waitForExit(60_000)).code, server.output).toBe(0)
    // Nothing of the sources was loaded: the process ran dist/ only.
    expect(server.output).not.toMatch(/ERR_UNKNOWN_FILE_EXTENSION|\.ts:\d+/)
  })
})
