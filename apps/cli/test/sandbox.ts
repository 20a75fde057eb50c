/**
 * What the CLI's process tests share: the real `dxs` command in child processes (compiled, as `./dx start`
 * runs it) over a temporary DATA_DIR with its own embedded PostgreSQL server, made before a file's tests
 * and removed after them (with whatever a failed test left running). The tests of a file run in order and
 * share that directory; each file has its own.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Dxs, killSpawned, pidAlive, readPid, until } from "@dxs/testing/DxsProcess"
import { afterAll, beforeAll } from "vitest"

export const KEY = /^dxs_live_[0-9A-Za-z]{32}$/
export const EXTERNAL_SERVER = "postgres://postgres@127.0.0.1:5432"

/** The file's directory, data directory and environment, set before its tests. */
export const sandbox = { tmp: "", dataDir: "", baseEnv: {} as NodeJS.ProcessEnv }

export const dxs = (args: ReadonlyArray<string>, env: NodeJS.ProcessEnv = {}, input?: string) =>
  new Dxs(args, { ...sandbox.baseEnv, ...env }, input)

/** Runs a command to completion. */
export const run = async (args: ReadonlyArray<string>, env: NodeJS.ProcessEnv = {}, input?: string) => {
  const p = dxs(args, env, input)
  const exit = await p.waitForExit()
  return { ...exit, stdout: p.stdout, stderr: p.stderr, output: p.output }
}

export const lastLine = (text: string) => text.trimEnd().split("\n").at(-1) ?? ""

export const postmasterPidFile = () => path.join(sandbox.dataDir, "pg", "postmaster.pid")

/** Stops whatever a failed test left running: dxs processes, then a PostgreSQL server of DATA_DIR. */
export const cleanUp = async () => {
  killSpawned()
  const owner = readPid(path.join(sandbox.dataDir, "pg.owner"))
  if (owner !== undefined && owner !== process.pid && pidAlive(owner)) process.kill(owner, "SIGKILL")
  const postmaster = readPid(postmasterPidFile())
  if (postmaster !== undefined && pidAlive(postmaster)) {
    process.kill(postmaster, "SIGINT")
    await until("PostgreSQL to stop", 20_000, () => !pidAlive(postmaster)).catch(() =>
      process.kill(postmaster, "SIGKILL"),
    )
  }
}

/** Registers the file's hooks: the sandbox made before its tests, cleaned up and removed after them. */
export const useSandbox = () => {
  beforeAll(() => {
    sandbox.tmp = fs.mkdtempSync(path.join(os.tmpdir(), "dxs-cli-"))
    // As root the cluster runs as the `postgres` user, which must be able to enter this directory.
    fs.chmodSync(sandbox.tmp, 0o755)
    sandbox.dataDir = path.join(sandbox.tmp, "data")
    sandbox.baseEnv = {
      ...process.env,
      DATA_DIR: sandbox.dataDir,
      PORT: "0",
      GRAPHQL_PORT: "0",
      HOST: "127.0.0.1",
      LOG_LEVEL: "info",
    }
    for (const name of ["DATABASE_URL", "BLOB_DIR", "PUBLIC_URL", "INIT_CWD"]) delete sandbox.baseEnv[name]
  })

  afterAll(async () => {
    await cleanUp()
    fs.rmSync(sandbox.tmp, { recursive: true, force: true })
  }, 60_000)
}
