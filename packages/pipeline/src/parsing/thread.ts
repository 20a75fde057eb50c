/**
 * A parsing thread of the pool (Runner.ts): for each job it is sent, one at a time, it picks the backend
 * for the file, runs the parse or page rendering, and posts one ThreadReply back (tagged with the job's
 * id), transferring the bytes it produced instead of copying them. Modules stay loaded between jobs.
 */
import { readlinkSync } from "node:fs"
import { setPriority } from "node:os"
import { parentPort } from "node:worker_threads"
import { Cause, Effect, Exit } from "effect"
import { type Backend, isParseFailure, type ParseFailure, type ParseOutput } from "./Backend.ts"
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

const messageOf = (e: unknown) => (e instanceof Error ? e.message : String(e)) || "unknown error"

/** The backend of the job; undefined when it names none (the runner answers such files without a thread). */
const loadBackend = async (job: ThreadJob): Promise<Backend | undefined> => {
  if (job.backendModule !== undefined) return (await import(job.backendModule)).default as Backend
  return job.backend === undefined ? undefined : backendLoaders[job.backend]()
}

/**
 * Runs a backend's Effect (the thread is the edge where they run): its value, or the reply for its
 * ParseFailure or defect, whose reason is the error's message.
 */
const settle = async <A>(
  effect: Effect.Effect<A, ParseFailure>,
): Promise<{ readonly value: A } | { readonly failed: ThreadReply }> => {
  const exit = await Effect.runPromiseExit(effect)
  if (Exit.isSuccess(exit)) return { value: exit.value }
  const error = Cause.squash(exit.cause)
  return { failed: { kind: "failed", reason: isParseFailure(error) ? error.reason : messageOf(error) } }
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
  if (backend === undefined)
    return { reply: { kind: "failed", reason: "the job names no backend" }, transfer: [] }
  if (job.op === "render") {
    if (backend.renderPage === undefined)
      return {
        reply: { kind: "unavailable", reason: `${backend.name} documents have no page images` },
        transfer: [],
      }
    const rendered = await settle(backend.renderPage(job.input, job.pageNumber))
    if ("failed" in rendered) return { reply: rendered.failed, transfer: [] }
    const png = owned(rendered.value)
    return { reply: { kind: "rendered", png }, transfer: [png.buffer as ArrayBuffer] }
  }
  const result = await settle(backend.parse(job.input))
  if ("failed" in result) return { reply: result.failed, transfer: [] }
  const parsed = result.value
  const attachments = (parsed.attachments ?? []).map((a) => ({ ...a, bytes: owned(a.bytes) }))
  const output: ParseOutput = { ...parsed, attachments }
  return {
    reply: { kind: "parsed", output },
    transfer: [...new Set(attachments.map((a) => a.bytes.buffer as ArrayBuffer))],
  }
}

/** Posts a message to the pool; what kept it from being posted, else undefined. */
const tryPost = (
  message: ThreadMessage,
  transfer: Array<ArrayBuffer>,
): { readonly error: unknown } | undefined => {
  try {
    parentPort!.postMessage(message, transfer)
    return undefined
  } catch (error) {
    return { error }
  }
}

const post = (id: number, reply: ThreadReply, transfer: Array<ArrayBuffer> = []) => {
  const message = (reply: ThreadReply): ThreadMessage => ({ kind: "reply", id, reply })
  let refused = tryPost(message(reply), transfer)
  // Memory a native module allocated (a canvas's PNG) cannot be transferred on every Node version
  // (Node 24 refuses it): then the bytes are copied instead.
  if (refused !== undefined && transfer.length > 0) refused = tryPost(message(reply), [])
  // The backend returned something that cannot cross threads (a function, a class instance with handles…).
  if (refused !== undefined)
    parentPort!.postMessage(
      message({
        kind: "failed",
        reason: `the parser returned data that cannot be passed back: ${messageOf(refused.error)}`,
      }),
    )
}

parentPort!.on("message", ({ id, job }: ThreadRequest) => {
  run(job).then(
    ({ reply, transfer }) => post(id, reply, transfer),
    (e: unknown) => post(id, { kind: "failed", reason: isParseFailure(e) ? e.reason : messageOf(e) }),
  )
})
