/**
 * The container image's layout, without a container runtime: what the Dockerfile's final stage holds (the
 * tracked files outside .dockerignore, every package's compiled `dist/`, and production dependencies only,
 * installed as its build stage prunes them) starts with the image's command and serves: ready, a key, a
 * PDF uploaded and parsed. A module that production needs but only a development dependency brings would
 * fail here. The build is the one the package's global setup made (no build in this test).
 */
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { onePagePdf } from "@dxs/testing/Documents"
import { Dxs, killSpawned, repoRoot } from "@dxs/testing/DxsProcess"
import { createProject, restClient } from "@dxs/testing/RestClient"
import { upload, waitProcessed } from "@dxs/testing/Runs"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

const KEY = /dxs_live_[0-9A-Za-z]{32}/

let tmp = ""
let layout = ""
let env: NodeJS.ProcessEnv = {}
let server: Dxs | undefined

/** The pnpm `./dx` installed (the image's build stage installs the same version). */
const pnpm = () => {
  const local = path.join(repoRoot, ".tools/node_modules/.bin/pnpm")
  return fs.existsSync(local) ? local : "pnpm"
}

/** Tracked files (git's own view: nothing untracked or ignored), less what .dockerignore keeps out. */
const imageFiles = () => {
  const ignored = fs
    .readFileSync(path.join(repoRoot, ".dockerignore"), "utf8")
    .split("\n")
    .map((l) => l.trim().replace(/^\*\*\//, ""))
    .filter((l) => l !== "" && !l.startsWith("#"))
  return execFileSync("git", ["ls-files", "-z"], { cwd: repoRoot, encoding: "utf8" })
    .split("\0")
    .filter((f) => f !== "" && !f.split("/").some((part) => ignored.includes(part)))
}

beforeAll(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), "dxs-image-"))
  fs.chmodSync(tmp, 0o755)
  layout = path.join(tmp, "app")
  for (const file of imageFiles()) {
    const from = path.join(repoRoot, file)
    if (!fs.existsSync(from)) continue
    fs.mkdirSync(path.dirname(path.join(layout, file)), { recursive: true })
    fs.copyFileSync(from, path.join(layout, file))
  }
  // The build stage's output: each workspace package's dist/ (the web application's included).
  for (const group of ["apps", "packages", "tooling"])
    for (const name of fs.readdirSync(path.join(repoRoot, group))) {
      const dist = path.join(repoRoot, group, name, "dist")
      if (fs.existsSync(dist)) fs.cpSync(dist, path.join(layout, group, name, "dist"), { recursive: true })
    }
  // Production dependencies only, from the machine's package store, as the build stage prunes them.
  execFileSync(pnpm(), ["install", "--frozen-lockfile", "--prod", "--offline", "--reporter=silent"], {
    cwd: layout,
    env: { ...process.env, CI: "true" },
    stdio: "pipe",
  })
  env = {
    ...process.env,
    NODE_ENV: "production",
    DATA_DIR: path.join(tmp, "data"),
    HOST: "127.0.0.1",
    PORT: "0",
    LOG_FORMAT: "json",
  }
  for (const name of ["DATABASE_URL", "BLOB_DIR", "PUBLIC_URL", "INIT_CWD", "NODE_OPTIONS"]) delete env[name]
}, 300_000)

afterAll(async () => {
  if (server && !server.exit) {
    server.child.kill("SIGTERM")
    await server.waitForExit(60_000).catch(() => undefined)
  }
  killSpawned()
  fs.rmSync(tmp, { recursive: true, force: true })
}, 90_000)

describe("the image's layout", () => {
  it("holds no development dependency and serves with the image's command", async () => {
    // Pruned: a development-only package of the workspace is not there.
    expect(fs.existsSync(path.join(layout, "node_modules/vitest"))).toBe(false)
    expect(fs.existsSync(path.join(layout, "apps/cli/node_modules/vitest"))).toBe(false)

    const dockerfile = fs.readFileSync(path.join(repoRoot, "Dockerfile"), "utf8")
    const entrypoint = JSON.parse(/^ENTRYPOINT (\[.*\])$/m.exec(dockerfile)![1]!) as Array<string>
    const cmd = JSON.parse(/^CMD (\[.*\])$/m.exec(dockerfile)![1]!) as Array<string>
    expect(entrypoint[0]).toBe("node")
    const command = [
      process.execPath,
      ...entrypoint.slice(1).map((a) => (a.endsWith(".js") ? path.join(layout, a) : a)),
    ] as const
    server = new Dxs(cmd, env, undefined, command as unknown as readonly [string, ...Array<string>])
    const [, port] = await server.waitFor(
      /REST API listening on http:\/\/127\.0\.0\.1:(\d+)\/api\/v1/,
      180_000,
    )
    const origin = `http://127.0.0.1:${port}`
    expect((await fetch(`${origin}/readyz`)).status).toBe(200)

    const created = new Dxs(["keys", "create", "--org", "image"], env, undefined, [
      process.execPath,
      path.join(layout, "apps/cli/dist/main.js"),
    ])
    expect((await created.waitForExit()).code, created.output).toBe(0)
    const key = KEY.exec(created.stdout)![0]
    // The same steps as every REST test, through the shared client.
    const client = restClient(`${origin}/api/v1`, key)
    const projectId = await createProject(client, { name: "Image" })
    await upload(client, projectId, "image.pdf", onePagePdf("Image layout 5120"))
    const documents = await waitProcessed(client, projectId)
    expect(
      documents.map((d) => d.status),
      server.output,
    ).toEqual(["Processed"])
    // The web application is served from the layout too.
    const app = await fetch(`${origin}/`)
    expect(app.status).toBe(200)
    expect(await app.text()).toContain("<html")

    server.child.kill("SIGTERM")
    expect((await server.waitForExit(60_000)).code, server.output).toBe(0)
  })
})
