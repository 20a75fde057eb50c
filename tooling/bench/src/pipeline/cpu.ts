/**
 * CPU time on Linux from /proc: the whole machine's, and the embedded database server's (the `postgres`
 * processes this benchmark started, with their exited children). Elsewhere the figures are left out.
 */
import { readdirSync, readFileSync } from "node:fs"
import * as os from "node:os"
import type { CpuUse } from "./figures.ts"

const TICK_MS = 10

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

interface Proc {
  readonly pid: number
  readonly ppid: number
  readonly comm: string
  /** utime + stime, and cutime + cstime (exited, waited-for children). */
  readonly own: number
  readonly children: number
}

const processes = (): ReadonlyArray<Proc> => {
  const out: Array<Proc> = []
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue
    try {
      const text = readFileSync(`/proc/${name}/stat`, "utf8")
      const close = text.lastIndexOf(")")
      const comm = text.slice(text.indexOf("(") + 1, close)
      const f = text.slice(close + 2).split(" ")
      out.push({
        pid: Number(name),
        ppid: Number(f[1]),
        comm,
        own: Number(f[11]) + Number(f[12]),
        children: Number(f[13]) + Number(f[14]),
      })
    } catch {
      // gone meanwhile
    }
  }
  return out
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
