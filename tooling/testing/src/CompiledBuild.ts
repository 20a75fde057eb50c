/**
 * The compiled build, made once per test run before any test file starts (a vitest global setup), for the
 * tests of processes: `dxs` runs as plain Node from apps/cli/dist, as `./dx start` runs it, never through a
 * TypeScript loader. The build script is the one `./dx start` and `pnpm build` use (incremental: nothing is
 * compiled when nothing changed; two builds of the checkout at once wait for each other).
 */
import { execFile } from "node:child_process"
import * as path from "node:path"

export const repoRoot = path.resolve(import.meta.dirname, "../../..")

/** `dxs` compiled: plain Node over apps/cli/dist/main.js. */
export const compiledDxs: readonly [string, ...Array<string>] = [
  process.execPath,
  path.join(repoRoot, "apps/cli/dist/main.js"),
]

/** Runs tooling/build/build.mjs with `args` (`--no-web`: tsc -b alone). */
export const buildCompiled = (args: ReadonlyArray<string>) =>
  new Promise<void>((resolve, reject) => {
    // The production build whatever the test runner set (NODE_ENV=test would bundle React's development build).
    const { NODE_ENV: _, ...env } = process.env
    execFile(
      process.execPath,
      [path.join(repoRoot, "tooling/build/build.mjs"), ...args],
      { cwd: repoRoot, env, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) =>
        error ? reject(new Error(`the build failed: ${error.message}\n${stdout}\n${stderr}`)) : resolve(),
    )
  })
