/**
 * The warm parse pool with real threads: a thread serves parse after parse; a thread whose parse runs out
 * of time, out of memory, crashes or is cancelled is terminated and replaced, and the pool keeps serving;
 * jobs beyond its size wait for a free thread; closing it ends every thread; warming it up starts every
 * thread with the PDF engine loaded, at a lower scheduling priority than the main thread (Linux).
 */
import { readdirSync, readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { afterEach, describe, expect, it } from "vitest"
import { ParseFailure } from "../src/parsing/Backend.ts"
import { ParsePool, ParsePoolClosed, runParse, warmParsePool, warmUpPdf } from "../src/parsing/Runner.ts"

const backendModule = fileURLToPath(new URL("./runner/backend.ts", import.meta.url))
const file = (fileName: string, text = "hello") => ({
  bytes: new TextEncoder().encode(text),
  fileName,
  contentType: "application/octet-stream",
})

const pools: Array<ParsePool> = []
const pool = (threads: number, idleMs?: number) => {
  const p = new ParsePool({ threads, idleMs })
  pools.push(p)
  return p
}
afterEach(async () => {
  for (const p of pools.splice(0)) await p.close()
})

/** Which thread parsed the file, and how many parses that thread had run by then. */
const parsedBy = async (p: ParsePool, name = "ok.test") => {
  const out = await runParse(file(name), { backendModule, pool: p })
  return { thread: out.metadata.threadId as number, count: out.metadata.parsesInThread as number }
}

const reasonOf = async (promise: Promise<unknown>) => {
  const e = await promise.then(
    () => undefined,
    (e: unknown) => e,
  )
  expect(e).toBeInstanceOf(ParseFailure)
  return (e as ParseFailure).reason
}

/** Resolves once `done()` holds, checking every 25 ms; fails after 10 s. */
const until = async (done: () => boolean) => {
  for (const deadline = Date.now() + 10_000; !done(); ) {
    if (Date.now() > deadline) throw new Error("the condition did not hold within 10 s")
    await new Promise((r) => setTimeout(r, 25))
  }
}

describe("ParsePool", () => {
  it("ends a thread left idle for its idle time, never one at work, and starts one again for the next job", async () => {
    const p = pool(1, 300)
    const first = await parsedBy(p)
    // Taken from idle for a job longer than the idle time (six steps of 400 ms): not ended under it.
    const slow = await runParse(file("steady.test"), { backendModule, pool: p })
    expect(slow.metadata.threadId).toBe(first.thread)
    expect(await parsedBy(p)).toEqual({ thread: first.thread, count: 3 })
    expect(p.threadsStarted).toBe(1)
    await until(() => p.liveThreads === 0)
    const later = await parsedBy(p)
    expect(later.count).toBe(1)
    expect(p.threadsStarted).toBe(2)
    expect(p.liveThreads).toBe(1)
  })

  it("runs parse after parse in the same warm thread", async () => {
    const p = pool(1)
    const first = await parsedBy(p)
    const second = await parsedBy(p)
    const third = await parsedBy(p)
    expect(second.thread).toBe(first.thread)
    expect(third.thread).toBe(first.thread)
    expect([first.count, second.count, third.count]).toEqual([1, 2, 3])
    expect(p.threadsStarted).toBe(1)
    expect(p.liveThreads).toBe(1)
  })

  it("replaces a thread whose parse times out mid-parse, and keeps serving later parses", async () => {
    const p = pool(1)
    const before = await parsedBy(p)
    expect(await reasonOf(runParse(file("hang.test"), { backendModule, pool: p, timeoutMs: 1500 }))).toBe(
      "parsing took longer than 1.5 s",
    )
    const after = await parsedBy(p)
    expect(after.thread).not.toBe(before.thread)
    // A fresh thread: its module state starts over.
    expect(after.count).toBe(1)
    expect(await parsedBy(p)).toEqual({ thread: after.thread, count: 2 })
    expect(p.threadsStarted).toBe(2)
    expect(p.liveThreads).toBe(1)
  })

  it("replaces a thread that runs out of memory, exits or is cancelled, with the reasons of one-off threads", async () => {
    const p = pool(1)
    const first = await parsedBy(p)
    expect(await reasonOf(runParse(file("hog.test"), { backendModule, pool: p, memoryMb: 64 }))).toBe(
      "parsing needed more than 64 MB of memory",
    )
    expect(await reasonOf(runParse(file("exit.test"), { backendModule, pool: p }))).toBe(
      "parsing stopped unexpectedly (exit code 3)",
    )
    const controller = new AbortController()
    const pending = runParse(file("hang.test"), { backendModule, pool: p, signal: controller.signal })
    setTimeout(() => controller.abort(), 300)
    expect(await reasonOf(pending)).toBe("parsing was cancelled")
    // A backend's own failure is an answer: the thread stays.
    const beforeRefusal = await parsedBy(p)
    expect(await reasonOf(runParse(file("refuse.test"), { backendModule, pool: p }))).toBe(
      "the file is encrypted",
    )
    const last = await parsedBy(p)
    expect(last.thread).toBe(beforeRefusal.thread)
    expect(new Set([first.thread, beforeRefusal.thread]).size).toBe(2)
    expect(p.liveThreads).toBe(1)
  })

  it("runs as many parses at once as it has threads; the others wait for a free one", async () => {
    const p = pool(2)
    // Two hanging parses hold both threads; a third parse waits, then runs in a replaced thread.
    const hung = [1, 2].map(() => runParse(file("hang.test"), { backendModule, pool: p, timeoutMs: 2000 }))
    const waiting = parsedBy(p)
    expect(await Promise.all(hung.map(reasonOf))).toEqual([
      "parsing took longer than 2 s",
      "parsing took longer than 2 s",
    ])
    await waiting
    expect(p.liveThreads).toBeLessThanOrEqual(2)
    expect(p.threadsStarted).toBeGreaterThanOrEqual(3)
  })

  it("terminates every thread when closed; parses in flight and later ones are refused as closed", async () => {
    const p = pool(2)
    await parsedBy(p)
    const inFlight = runParse(file("hang.test"), { backendModule, pool: p }).catch((e: unknown) => e)
    // Once the hanging parse has its thread.
    while (p.busyThreads < 1) await new Promise((r) => setTimeout(r, 20))
    await p.close()
    expect(await inFlight).toBeInstanceOf(ParsePoolClosed)
    expect(p.liveThreads).toBe(0)
    expect(
      await runParse(file("ok.test"), { backendModule, pool: p }).catch((e: unknown) => e),
    ).toBeInstanceOf(ParsePoolClosed)
  })

  it("warms up one thread with a small PDF that parses, so the first document finds a thread started", async () => {
    const p = pool(2)
    const warm = await runParse(
      { bytes: warmUpPdf(), fileName: "warm-up.pdf", contentType: "application/pdf" },
      { pool: p },
    )
    expect(warm.pages.map((page) => page.text.trim())).toEqual(["dxs"])
    await p.close()

    // One thread of two: the other starts when two parses overlap, and stays for the next ones.
    const q = pool(2)
    await warmParsePool({ pool: q })
    expect(q.threadsStarted).toBe(1)
    expect(q.liveThreads).toBe(1)
    await parsedBy(q, "a.test")
    expect(q.threadsStarted).toBe(1)
    await Promise.all([parsedBy(q, "a.test"), parsedBy(q, "b.test")])
    expect(q.threadsStarted).toBe(2)
    await Promise.all([parsedBy(q, "a.test"), parsedBy(q, "b.test")])
    expect(q.threadsStarted).toBe(2)
  })

  it.runIf(process.platform === "linux")(
    "runs its threads at a lower priority than the main thread",
    async () => {
      const niceOf = (tid: string) => {
        const stat = readFileSync(`/proc/self/task/${tid}/stat`, "utf8")
        return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[16])
      }
      const before = readdirSync("/proc/self/task").filter((tid) => niceOf(tid) === 10).length
      const p = pool(2)
      await Promise.all([parsedBy(p, "a.test"), parsedBy(p, "b.test")])
      expect(p.threadsStarted).toBe(2)
      const lowered = readdirSync("/proc/self/task").filter((tid) => niceOf(tid) === 10).length
      expect(lowered - before).toBe(2)
      expect(niceOf(String(process.pid))).toBeLessThan(10)
    },
  )
})
