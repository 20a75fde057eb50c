/**
 * CPU time of processes on Linux, from /proc (clock ticks of USER_HZ, 100 per second). Elsewhere nothing is
 * found and the figures built on it are left out.
 */
import { readdirSync, readFileSync } from "node:fs"

export const TICK_MS = 10

export interface Proc {
  readonly pid: number
  readonly ppid: number
  readonly comm: string
  /** utime + stime, and cutime + cstime (exited, waited-for children), in ticks. */
  readonly own: number
  readonly children: number
}

const processOf = (pid: number): Proc => {
  const text = readFileSync(`/proc/${pid}/stat`, "utf8")
  const close = text.lastIndexOf(")")
  const comm = text.slice(text.indexOf("(") + 1, close)
  const f = text.slice(close + 2).split(" ")
  return {
    pid,
    ppid: Number(f[1]),
    comm,
    own: Number(f[11]) + Number(f[12]),
    children: Number(f[13]) + Number(f[14]),
  }
}

/** Every process of the machine. */
export const processes = (): ReadonlyArray<Proc> => {
  const out: Array<Proc> = []
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue
    try {
      out.push(processOf(Number(name)))
    } catch {
      // gone meanwhile
    }
  }
  return out
}

/** The CPU time a process has used (user and system), in ms; NaN where it cannot be told. */
export const processCpuMs = (pid: number): number => {
  try {
    return processOf(pid).own * TICK_MS
  } catch {
    return Number.NaN
  }
}

/** The CPU time (ms) of each PostgreSQL process of the machine by its pid (see `postgresCpuSince`). */
export const postgresCpu = (): Map<number, number> =>
  new Map(processes().flatMap((p) => (p.comm === "postgres" ? [[p.pid, p.own * TICK_MS] as const] : [])))

/**
 * The CPU time the machine's PostgreSQL processes have used since `before` (ms): the server a benchmark runs
 * on when it is local. Backends come and go with connections, so each process counts from its reading then
 * (or from its start); one that ended meanwhile is not counted (the connections measured stay open).
 */
export const postgresCpuSince = (before: ReadonlyMap<number, number>): number => {
  let total = 0
  for (const [pid, ms] of postgresCpu()) total += ms - (before.get(pid) ?? 0)
  return total
}
