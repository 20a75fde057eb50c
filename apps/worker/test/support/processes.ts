/**
 * Worker OS processes for the process-level tests: each runs a script of `test/fixtures` under tsx, in a
 * process group of its own, with its output collected; it prints "ready" once running.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { fileURLToPath } from "node:url"
import { sourceConditionFlag } from "@dxs/vitest/conditions"

const TSX = fileURLToPath(new URL("../../node_modules/.bin/tsx", import.meta.url))

export interface WorkerProcess {
  readonly id: string
  readonly child: ChildProcess
  readonly output: () => string
  readonly exited: Promise<void>
}

/** Polls `f` until it returns something other than undefined; bounded. */
export const eventually = async <A>(
  f: () => Promise<A | undefined>,
  timeoutMs = 120_000,
  everyMs = 100,
): Promise<A> => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const a = await f()
    if (a !== undefined) return a
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`)
    await new Promise((r) => setTimeout(r, everyMs))
  }
}

/** SIGKILL to the whole process group (tsx and the node process running the script). */
export const killWorker = async (w: WorkerProcess) => {
  try {
    process.kill(-w.child.pid!, "SIGKILL")
  } catch {
    // already gone
  }
  await w.exited
}

/** SIGTERM (graceful; tsx relays it), then SIGKILL if it does not exit in time. */
export const stopWorker = async (w: WorkerProcess) => {
  if (w.child.exitCode === null && w.child.signalCode === null) {
    w.child.kill("SIGTERM")
    const timer = setTimeout(() => killWorker(w), 15_000)
    await w.exited
    clearTimeout(timer)
  }
  await killWorker(w)
}

/**
 * Polls a readiness check until it holds (returns true) or gives up; it rejects with the check's error
 * when the process has exited.
 */
export type WaitForReady = (check: () => true | undefined) => Promise<unknown>

const waitForReady: WaitForReady = (check) => eventually(async () => check(), 90_000)

/**
 * The worker processes of one test file running `fixture` (a file name in `test/fixtures`) against the
 * database at `databaseUrl`. `stopAll` belongs in the file's `afterEach`.
 */
export const workerProcesses = (fixture: string, databaseUrl: string) => {
  const script = fileURLToPath(new URL(`../fixtures/${fixture}`, import.meta.url))
  const processes: WorkerProcess[] = []

  /** Starts a worker OS process with WORKER_ID `id` and `env`; resolves once it prints "ready". */
  const start = async (
    id: string,
    env: Record<string, string> = {},
    wait: WaitForReady = waitForReady,
  ): Promise<WorkerProcess> => {
    // tsx runs the script in a child node process: a process group of its own lets `kill` reach both.
    // stdin stays open as a lifeline: the script exits when it closes (this test process died).
    const child = spawn(TSX, [sourceConditionFlag, script], {
      env: { ...process.env, DATABASE_URL: databaseUrl, WORKER_ID: id, ...env },
      stdio: ["pipe", "pipe", "pipe"],
      detached: true,
    })
    let output = ""
    child.stdout?.on("data", (d) => {
      output += d
    })
    child.stderr?.on("data", (d) => {
      output += d
    })
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
    const worker: WorkerProcess = { id, child, output: () => output, exited }
    processes.push(worker)
    await wait(() => {
      if (child.exitCode !== null || child.signalCode !== null) {
        throw new Error(`worker ${id} exited early:\n${output}`)
      }
      return output.includes("ready") ? true : undefined
    })
    return worker
  }

  /** Stops every process started since the last call. */
  const stopAll = async () => {
    await Promise.all(processes.splice(0).map(stopWorker))
  }

  /** The output of every running process, each under its id. */
  const outputs = () => processes.map((w) => `--- ${w.id}\n${w.output()}`).join("\n")

  return { start, stopAll, outputs }
}
