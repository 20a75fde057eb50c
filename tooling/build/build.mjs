#!/usr/bin/env node
/**
 * `pnpm build` (and the first step of `./dx start`): builds what plain Node runs, and only what changed.
 * - Every package and app is compiled to dist/ by `tsc -b` (TypeScript project references, incremental:
 *   nothing is compiled when nothing changed).
 * - The web application is built by `vite build` only when its inputs changed: a hash of its sources, the
 *   domain package it bundles, its configuration and the lockfile is kept beside node_modules/.cache.
 * `--no-web` skips the web application; `--web-only` builds just the web application (what the web
 * application's end-to-end tests serve). Output goes to stderr (stdout stays the server's). Two builds at
 * once in one checkout wait for each other (a lock directory), so one never rewrites apps/web/dist while
 * another build's server is serving it.
 */
import { spawnSync } from "node:child_process"
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"

const root = path.resolve(import.meta.dirname, "../..")
const web = path.join(root, "apps/web")
const cacheDir = path.join(root, "node_modules/.cache/dxs-build")
const stampFile = path.join(cacheDir, "web-inputs.sha256")
const lockDir = path.join(cacheDir, "lock")

/** What the web application's build reads: when none of it changed, its dist/ is up to date. */
const WEB_INPUTS = [
  "apps/web/src",
  "apps/web/index.html",
  "apps/web/vite.config.ts",
  "apps/web/tsconfig.json",
  "apps/web/package.json",
  "packages/domain/src",
  "packages/domain/package.json",
  "tooling/vitest/src/conditions.ts",
  "tooling/typescript/base.json",
  "pnpm-lock.yaml",
]

const filesUnder = (p) => {
  const stat = fs.statSync(p, { throwIfNoEntry: false })
  if (stat === undefined) return []
  if (!stat.isDirectory()) return [p]
  return fs
    .readdirSync(p)
    .sort()
    .flatMap((name) => filesUnder(path.join(p, name)))
}

const webInputsHash = () => {
  const hash = createHash("sha256")
  for (const input of WEB_INPUTS)
    for (const file of filesUnder(path.join(root, input))) {
      hash.update(path.relative(root, file))
      hash.update("\0")
      hash.update(fs.readFileSync(file))
      hash.update("\0")
    }
  return hash.digest("hex")
}

const fail = (message) => {
  process.stderr.write(`build: ${message}\n`)
  process.exit(1)
}

/** Runs a tool with its output on stderr; exits when it fails. */
const run = (what, args, options = {}) => {
  const r = spawnSync(process.execPath, args, { cwd: root, stdio: ["ignore", 2, 2], ...options })
  if (r.error) fail(`${what}: ${r.error.message}`)
  if (r.status !== 0) fail(`${what} failed`)
}

const sleep = (ms) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms)

const alive = (pid) => {
  try {
    process.kill(pid, 0)
    return true
  } catch (e) {
    return e.code === "EPERM"
  }
}

/** Takes the lock (mkdir is atomic); a lock whose process is gone is taken over. */
const lock = () => {
  fs.mkdirSync(cacheDir, { recursive: true })
  for (let waited = 0; ; waited += 200) {
    try {
      fs.mkdirSync(lockDir)
      fs.writeFileSync(path.join(lockDir, "pid"), String(process.pid))
      return
    } catch (e) {
      if (e.code !== "EEXIST") throw e
    }
    let owner = Number.NaN
    try {
      owner = Number.parseInt(fs.readFileSync(path.join(lockDir, "pid"), "utf8"), 10)
    } catch {
      // Just taken (its pid not written yet) or just released.
    }
    if (Number.isInteger(owner) && !alive(owner)) fs.rmSync(lockDir, { recursive: true, force: true })
    else if (waited === 1000) process.stderr.write("build: waiting for another build of this checkout\n")
    else if (waited > 600_000) fail(`another build holds ${lockDir}`)
    sleep(200)
  }
}

lock()
try {
  // Emit only: the types are checked by `pnpm typecheck` (over the tests too), so the build does not check
  // them again (`--noCheck`: the same JavaScript, a third less time on a clean checkout, 41 s -> 27 s).
  if (!process.argv.includes("--web-only"))
    run("tsc -b", [
      path.join(root, "node_modules/typescript/bin/tsc"),
      "-b",
      "tsconfig.build.json",
      "--noCheck",
    ])
  if (!process.argv.includes("--no-web")) {
    const inputs = webInputsHash()
    const built = fs.existsSync(path.join(web, "dist/index.html"))
    const stamp = fs.existsSync(stampFile) ? fs.readFileSync(stampFile, "utf8") : ""
    if (!built || stamp !== inputs) {
      fs.rmSync(stampFile, { force: true })
      // Always the production build (a NODE_ENV=test or development inherited here would bundle React's
      // development build).
      const { NODE_ENV: _, ...env } = process.env
      run("vite build", [path.join(web, "node_modules/vite/bin/vite.js"), "build", "--logLevel", "warn"], {
        cwd: web,
        env,
      })
      fs.writeFileSync(stampFile, inputs)
    }
  }
} finally {
  fs.rmSync(lockDir, { recursive: true, force: true })
}
