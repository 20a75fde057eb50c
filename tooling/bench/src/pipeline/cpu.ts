/**
 * CPU time on Linux from /proc: the whole machine's, and the embedded database server's (the `postgres`
 * processes this benchmark started, with their exited children). Elsewhere the figures are left out.
 */
import { readFileSync } from "node:fs"
import * as os from "node:os"
import { processes, TICK_MS } from "../common/cpu.ts"
import type { CpuUse } from "./figures.ts"

interface Snapshot {
  readonly machine: { readonly busy: number; readonly total: number } | undefined
  readonly database: number | undefined
}

const machineTicks = () => {
  try {
    const fields = readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/).slice(1).map(Number)
    const total = fields.reduce((a, b) => a + b, 0)
    const idle = (fields[3] ?? 0) + (fields[4] ?? 0)
    return { busy: total - idle, total }
  } catch {
    return undefined
  }
}

/** Ticks of the postgres servers started by this process: each server, its live children and the exited ones. */
const databaseTicks = (): number | undefined => {
  try {
    const all = processes()
    const servers = all.filter((p) => p.ppid === process.pid && p.comm === "postgres")
    if (servers.length === 0) return undefined
    let ticks = 0
    for (const server of servers) {
      ticks += server.own + server.children
      for (const child of all) if (child.ppid === server.pid) ticks += child.own
    }
    return ticks
  } catch {
    return undefined
  }
}

export const cpuSnapshot = (): Snapshot => ({ machine: machineTicks(), database: databaseTicks() })

export const cpuUsedSince = (before: Snapshot): CpuUse => {
  const after = cpuSnapshot()
  const cores = os.availableParallelism()
  const machine =
    before.machine && after.machine
      ? {
          busy: (after.machine.busy - before.machine.busy) * TICK_MS,
          total: (after.machine.total - before.machine.total) * TICK_MS,
        }
      : { busy: 0, total: 1 }
  return {
    cores,
    machineBusyMs: machine.busy,
    machineTotalMs: machine.total,
    databaseMs:
      before.database !== undefined && after.database !== undefined
        ? (after.database - before.database) * TICK_MS
        : undefined,
  }
}
