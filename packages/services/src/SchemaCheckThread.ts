/**
 * Ajv's check of a target schema (its meta-schema, then a compile that resolves every `$ref`) in a worker
 * thread. Compiling is CPU work proportional to the schema: a schema near the 1 MB limit with thousands
 * of fields takes Ajv a second or more, and on the main thread that second would stall every other request
 * of the process (a burst of them stalled it long enough for waiting connections to be dropped). One
 * thread per process checks one schema at a time; its heap is bounded, and a thread that dies is replaced.
 *
 * The thread runs plain JavaScript (Ajv and ajv-formats are CommonJS packages), so it needs no loader.
 */
import { createRequire } from "node:module"
import { Worker } from "node:worker_threads"
import type { ErrorObject } from "ajv/dist/2020.js"

const require = createRequire(import.meta.url)

const SOURCE = `
const { parentPort, workerData } = require("node:worker_threads")
const Ajv2020 = require(workerData.ajv).default
const formats = require(workerData.formats)
const addFormats = formats.default ?? formats
parentPort.on("message", ({ id, schema }) => {
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true })
  addFormats(ajv)
  if (!ajv.validateSchema(schema)) {
    const errors = (ajv.errors ?? []).map((e) => ({ instancePath: e.instancePath, keyword: e.keyword, message: e.message }))
    parentPort.postMessage({ id, outcome: "invalid", text: ajv.errorsText(ajv.errors, { dataVar: "schema" }), errors })
    return
  }
  try {
    ajv.compile(schema)
    parentPort.postMessage({ id, outcome: "ok" })
  } catch (e) {
    parentPort.postMessage({ id, outcome: "unusable", text: e instanceof Error ? e.message : String(e) })
  }
})
`

/** Heap of the checking thread: a schema is at most 1 MB of JSON; Ajv's work on it fits well within this. */
const THREAD_HEAP_MB = 256

export type SchemaCheck =
  | { readonly outcome: "ok" }
  | {
      readonly outcome: "invalid"
      readonly text: string
      readonly errors: ReadonlyArray<Pick<ErrorObject, "instancePath" | "keyword" | "message">>
    }
  | { readonly outcome: "unusable"; readonly text: string }

interface Pending {
  readonly resolve: (check: SchemaCheck) => void
}

let thread: Worker | undefined
const pending = new Map<number, Pending>()
let nextId = 0

/** Everything waiting on a thread that is gone is answered: the schema could not be checked. */
const lost = (why: string) => {
  thread = undefined
  for (const [id, p] of pending) {
    pending.delete(id)
    p.resolve({ outcome: "unusable", text: `it could not be checked (${why})` })
  }
}

const threadFor = (): Worker => {
  if (thread !== undefined) return thread
  const worker = new Worker(SOURCE, {
    eval: true,
    workerData: { ajv: require.resolve("ajv/dist/2020.js"), formats: require.resolve("ajv-formats") },
    resourceLimits: { maxOldGenerationSizeMb: THREAD_HEAP_MB },
  })
  worker.unref()
  worker.on("message", (message: { readonly id: number } & SchemaCheck) => {
    const p = pending.get(message.id)
    pending.delete(message.id)
    if (pending.size === 0) worker.unref()
    const { id: _, ...check } = message
    p?.resolve(check as SchemaCheck)
  })
  worker.on("error", (e) => {
    if (thread === worker) lost(e instanceof Error ? e.message : String(e))
  })
  worker.on("exit", (code) => {
    if (thread === worker) lost(`the checking thread stopped with code ${code}`)
  })
  thread = worker
  return worker
}

/** Checks `schema` with Ajv (meta-schema, then compile) in the checking thread. */
export const checkSchemaInThread = (schema: object): Promise<SchemaCheck> =>
  new Promise((resolve) => {
    const worker = threadFor()
    const id = nextId++
    pending.set(id, { resolve })
    // While a check is waiting, the thread keeps the process alive; idle, it does not.
    worker.ref()
    worker.postMessage({ id, schema })
  })
