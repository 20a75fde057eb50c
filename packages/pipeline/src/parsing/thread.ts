/**
 * A parsing thread of the pool (Runner.ts): for each job it is sent, one at a time, it picks the backend
 * for the file, runs the parse or page rendering, and posts one ThreadReply back (tagged with the job's
 * id), transferring the bytes it produced instead of copying them. Modules stay loaded between jobs.
 */
import { readlinkSync } from "node:fs"
import { setPriority } from "node:os"
import { parentPort } from "node:worker_threads"
import { type Backend, ParseFailure, type ParseOutput } from "./Backend.ts"
import { backendLoaders } from "./Formats.ts"
import type { ThreadJob, ThreadMessage, ThreadReply, ThreadRequest } from "./Runner.ts"

/**
 * Parsing is background work: on Linux, where each thread has a scheduling priority of its own, this thread
 * yields the processor to the process's main thread, which answers requests (uploads, reads) and records
 * finished parses. Elsewhere, or when not permitted, the thread keeps the process's priority.
 */
const lowerPriority = () => {
  try {
    const tid = Number(readlinkSync("/proc/thread-self").split("/").pop())
    if (Number.isInteger(tid) && tid > 0) setPriority(tid, Math.min(19, 10))
  } catch {
    // Not Linux, or not permitted.
  }
}
lowerPriority()

/** A ParseFailure, also when a backend module brought its own copy of the class. */
const failureReason = (e: unknown): string | undefined =>
  e instanceof ParseFailure
    ? e.reason
    : e instanceof Error &&
        e.name === "ParseFailure" &&
        typeof (e as { reason?: unknown }).reason === "string"
      ? (e as unknown as { reason: string }).reason
      : undefined

const messageOf = (e: unknown) => (e instanceof Error ? e.message : String(e)) || "unknown error"

const loadBackend = async (job: ThreadJob): Promise<Backend> => {
  if (job.backendModule !== undefined) return (await import(job.backendModule)).default as Backend
  // The runner answers a file no backend reads without asking a thread.
  if (job.backend === undefined) throw new Error("the job names no backend")
  return backendLoaders[job.backend]()
}

/** Bytes that own their whole buffer can be transferred; a view into a larger (pooled) one is copied first. */
const owned = (bytes: Uint8Array): Uint8Array =>
  bytes.byteOffset === 0 &&
  bytes.byteLength === bytes.buffer.byteLength &&
  bytes.buffer instanceof ArrayBuffer
    ? bytes
    : new Uint8Array(bytes)

const run = async (
  job: ThreadJob,
): Promise<{ readonly reply: ThreadReply; readonly transfer: Array<ArrayBuffer> }> => {
  const backend = await loadBackend(job)
  if (job.op === "render") {
    if (backend.renderPage === undefined)
      return {
        reply: { kind: "unavailable", reason: `${backend.name} documents have no page images` },
        transfer: [],
      }
    const png = owned(await backend.renderPage(job.input, job.pageNumber))
    return { reply: { kind: "rendered", png }, transfer: [png.buffer as ArrayBuffer] }
  }
  const parsed = await backend.parse(job.input)
  const attachments = (parsed.attachments ?? []).map((a) => ({ ...a, bytes: owned(a.bytes) }))
  const output: ParseOutput = { ...parsed, attachments }
  return {
    reply: { kind: "parsed", output },
    transfer: [...new Set(attachments.map((a) => a.bytes.buffer as ArrayBuffer))],
  }
}

const post = (id: number, reply: ThreadReply, transfer: Array<ArrayBuffer> = []) => {
  const message = (reply: ThreadReply): ThreadMessage => ({ kind: "reply", id, reply })
  try {
    try {
      parentPort!.postMessage(message(reply), transfer)
    } catch (e) {
      // Memory a native module allocated (a canvas's PNG) cannot be transferred on every Node version
      // (Node 24 refuses it): then the bytes are copied instead.
      if (transfer.length === 0) throw e
      parentPort!.postMessage(message(reply))
    }
  } catch (e) {
    // The backend returned something that cannot cross threads (a function, a class instance with handles…).
    parentPort!.postMessage(
      message({
        kind: "failed",
        reason: `the parser returned data that cannot be passed back: ${messageOf(e)}`,
      }),
    )
  }
}

parentPort!.on("message", ({ id, job }: ThreadRequest) => {
  run(job).then(
    ({ reply, transfer }) => post(id, reply, transfer),
    (e: unknown) => post(id, { kind: "failed", reason: failureReason(e) ?? messageOf(e) }),
  )
})
