/**
 * The real `dxs` command in child processes: the compiled build (apps/cli/dist, made once before the tests
 * by the package's global setup, as `./dx start` builds it) on plain Node unless a test gives another
 * command, with its output captured: shared by the CLI's tests and the web application's end-to-end tests.
 */
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import { compiledDxs, repoRoot } from "./CompiledBuild.ts"

export { compiledDxs, repoRoot }

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

export const pidAlive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM"
  }
}

export const readPid = (file: string): number | undefined => {
  try {
    const pid = Number.parseInt(fs.readFileSync(file, "utf8").split("\n")[0] ?? "", 10)
    return Number.isInteger(pid) && pid > 0 ? pid : undefined
  } catch {
    return undefined
  }
}

export const until = async (what: string, ms: number, check: () => boolean) => {
  const deadline = Date.now() + ms
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`)
    await sleep(100)
  }
}

export interface Exited {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
}

/** A running `dxs` child process with its output captured. */
export class Dxs {
  stdout = ""
  stderr = ""
  exit: Exited | undefined
  readonly exited: Promise<Exited>
  readonly child: ChildProcess

  /**
   * `input`: written to standard input (a pipe, then closed); without it stdin is /dev/null. `command`:
   * the program and its first arguments (default: the compiled `dxs`).
   */
  constructor(
    args: ReadonlyArray<string>,
    env: NodeJS.ProcessEnv,
    input?: string,
    command: readonly [string, ...Array<string>] = compiledDxs,
  ) {
    this.child = spawn(command[0], [...command.slice(1), ...args], {
      cwd: repoRoot,
      env,
      stdio: [input === undefined ? "ignore" : "pipe", "pipe", "pipe"],
    })
    if (input !== undefined) this.child.stdin!.end(input)
    this.child.stdout!.on("data", (b: Buffer) => {
      this.stdout += b.toString()
    })
    this.child.stderr!.on("data", (b: Buffer) => {
      this.stderr += b.toString()
    })
    this.exited = new Promise((resolve) => {
      this.child.on("close", (code, signal) => {
        this.exit = { code, signal }
        resolve(this.exit)
      })
    })
    spawned.add(this)
  }

  get output() {
    return `--- stdout ---\n${this.stdout}\n--- stderr ---\n${this.stderr}`
  }

  /** Waits until the output matches, failing early if the process exits. */
  async waitFor(pattern: RegExp, ms = 90_000): Promise<RegExpMatchArray> {
    const deadline = Date.now() + ms
    for (;;) {
      const m = (this.stdout + this.stderr).match(pattern)
      if (m) return m
      if (this.exit)
        throw new Error(`dxs exited (${JSON.stringify(this.exit)}) before ${pattern}\n${this.output}`)
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${pattern}\n${this.output}`)
      await sleep(100)
    }
  }

  async waitForExit(ms = 90_000): Promise<Exited> {
    const timeout = sleep(ms).then(() => undefined)
    const result = await Promise.race([this.exited, timeout])
    if (!result) throw new Error(`dxs did not exit within ${ms} ms\n${this.output}`)
    return result
  }
}

export const spawned = new Set<Dxs>()

/** Kills (SIGKILL) every spawned process that has not exited: what a failed test left running. */
export const killSpawned = () => {
  for (const p of spawned) if (!p.exit) p.child.kill("SIGKILL")
}
