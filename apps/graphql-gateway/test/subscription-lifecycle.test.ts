/**
 * Live subscriptions end with their client, on both serving paths (the standalone gateway, and the
 * `/graphql` route of the all-in-one router): once the client has dropped the connection the database
 * is as idle as before it came, however many changes the subscription saw. Each API key has a bounded
 * number of live subscriptions, and shutting the server down with subscriptions open ends them quietly.
 */
import { makeKysely } from "@dxs/db"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import {
  addDocumentRow,
  holdLock,
  lockWaiters,
  openSse,
  PROGRESS,
  recordingLogger,
  type Sse,
  sleep,
  startAllInOne,
  transactionMeter,
  until,
} from "./live.ts"
import { startGateway } from "./support.ts"

interface Stack {
  readonly url: string
  readonly dbUrl: string
  readonly newKey: (org: string) => Promise<string>
  readonly close: () => Promise<void>
}

type Start = (options?: { readonly logging?: ReturnType<typeof recordingLogger>["logger"] }) => Promise<Stack>

const standalone: Start = async (options = {}) => {
  const gql = await startGateway(options)
  return { url: gql.url, dbUrl: gql.api.dbUrl, newKey: gql.api.newKey, close: gql.close }
}

const allInOne: Start = (options = {}) => startAllInOne(options)

const createProject = async (stack: Stack, key: string) => {
  const res = await fetch(stack.url, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": key },
    body: JSON.stringify({
      query: `mutation ($n: String!) { createProject(input: { name: $n }) { id } }`,
      variables: { n: `P ${Math.random().toString(36).slice(2, 10)}` },
    }),
  })
  const body = (await res.json()) as any
  expect(body.errors, JSON.stringify(body.errors)).toBeUndefined()
  return body.data.createProject.id as string
}

const progressOf = (sub: Sse) => sub.events.at(-1)?.data?.runProgress

let warnings: Array<Error> = []
const onWarning = (w: Error) => warnings.push(w)
beforeEach(() => {
  warnings = []
  process.on("warning", onWarning)
})
afterEach(() => {
  process.off("warning", onWarning)
})

describe.each([
  ["the standalone gateway", standalone],
  ["the /graphql route of the all-in-one router", allInOne],
])("runProgress on %s", (_, start) => {
  it("pushes every change, then does no more work once the client has gone", async () => {
    const stack = await start()
    const key = await stack.newKey("acme")
    const project = await createProject(stack, key)
    const db = makeKysely(stack.dbUrl, 1)
    const meter = transactionMeter(stack.dbUrl)
    try {
      // Idle, with a margin for the meter's own statistics: well under one read of a project's progress
      // (about fifteen statements).
      const idle = Math.max(0, await meter.count(), await meter.count()) + 5
      const sub = await openSse(stack.url, key, PROGRESS, { p: project })
      expect(sub.status).toBe(200)
      await until("the first state", () => progressOf(sub) !== undefined)
      expect(progressOf(sub)).toMatchObject({ project_id: project, status: { document_count: 0 } })
      // Many changes, each seen before the next: the subscription lives through many reads.
      for (let n = 1; n <= 15; n++) {
        await addDocumentRow(db, project)
        await until(`document ${n} to be pushed`, () => progressOf(sub)?.status.document_count === n)
      }
      await sub.stop()
      // Back to idle: a window of a second with no more transactions than before the subscription. The
      // statistics of the last reads may still arrive in one window (see transactionMeter); a subscription
      // still reading shows in every window.
      const after: Array<number> = []
      await until(
        "the database to be idle again",
        async () => {
          after.push(await meter.count())
          return after.at(-1)! <= idle
        },
        15_000,
      )
      // …and stays idle.
      for (let i = 0; i < 3; i++)
        expect(await meter.count(), `idle ${idle}, after ${after}`).toBeLessThanOrEqual(idle)
      expect(warnings.filter((w) => w.name === "MaxListenersExceededWarning")).toEqual([])
    } finally {
      await meter.close()
      await db.destroy()
      await stack.close()
    }
  })

  it("stops a subscription whose client goes before its first state", async () => {
    const log = recordingLogger()
    const stack = await start({ logging: log.logger })
    const db = makeKysely(stack.dbUrl, 1)
    const subs: Array<Sse> = []
    try {
      const key = await stack.newKey("acme")
      const project = await createProject(stack, key)
      // The first read waits on a lock (of the documents' counts it reads); the client goes meanwhile.
      const release = await holdLock(stack.dbUrl, "document_tallies")
      try {
        const abort = new AbortController()
        const answer = fetch(stack.url, {
          method: "POST",
          headers: { "content-type": "application/json", accept: "text/event-stream", "x-api-key": key },
          body: JSON.stringify({ query: PROGRESS, variables: { p: project } }),
          signal: abort.signal,
        }).catch(() => undefined)
        await until("the first read to wait", async () => (await lockWaiters(db)) > 0)
        abort.abort()
        await answer
      } finally {
        await release()
      }
      // Its place is free: the key's ten subscriptions all open.
      await until("ten subscriptions to open", async () => {
        for (let i = 0; i < 10; i++) {
          const s = await openSse(stack.url, key, PROGRESS, { p: project })
          subs.push(s)
          await until("an answer", () => s.events.length > 0)
        }
        const open = subs.every((s) => progressOf(s) !== undefined)
        if (!open) await Promise.all(subs.splice(0).map((s) => s.stop()))
        return open
      })
      // A client going away is not a failure of the service.
      expect(log.errors()).toEqual([])
    } finally {
      await Promise.all(subs.map((s) => s.stop()))
      await db.destroy()
      await stack.close()
    }
  })

  it("ends open subscriptions quietly when the server shuts down", async () => {
    const log = recordingLogger()
    const stack = await start({ logging: log.logger })
    const key = await stack.newKey("acme")
    const project = await createProject(stack, key)
    const subs = await Promise.all([1, 2, 3].map(() => openSse(stack.url, key, PROGRESS, { p: project })))
    await until("the first states", () => subs.every((s) => progressOf(s) !== undefined))
    const consoleErrors: Array<unknown> = []
    const original = console.error
    console.error = (...args: Array<unknown>) => {
      consoleErrors.push(args)
    }
    try {
      await stack.close()
      await until("the streams to end", () => subs.every((s) => s.ended()), 10_000)
      // Let anything a late failure would log be logged.
      await sleep(300)
    } finally {
      console.error = original
    }
    expect(subs.every((s) => s.completed())).toBe(true)
    expect(log.errors()).toEqual([])
    expect(consoleErrors).toEqual([])
  })
})

describe("live subscriptions per API key", () => {
  it("refuses one more than the limit with RATE_LIMITED, and frees a place when one ends", async () => {
    const stack = await standalone()
    const key = await stack.newKey("acme")
    const project = await createProject(stack, key)
    const open = async (k: string) => {
      const s = await openSse(stack.url, k, PROGRESS, { p: project })
      await until("an answer", () => s.events.length > 0)
      return s
    }
    const subs: Array<Sse> = []
    try {
      for (let i = 0; i < 10; i++) subs.push(await open(key))
      expect(subs.every((s) => progressOf(s)?.project_id === project)).toBe(true)

      const refused = await open(key)
      expect(refused.events[0].errors?.[0]?.extensions?.code).toBe("RATE_LIMITED")
      expect(refused.events[0].errors[0].message).toMatch(/10 live subscriptions/)
      await until("the refused stream to end", () => refused.ended())

      // Another key of the same organisation has its own allowance.
      const other = await open(await stack.newKey("acme"))
      expect(progressOf(other)?.project_id).toBe(project)
      subs.push(other)

      // One ends: its place is free again.
      await subs.shift()!.stop()
      await until("a place to be free", async () => {
        const s = await open(key)
        if (progressOf(s) !== undefined) {
          subs.push(s)
          return true
        }
        await s.stop()
        return false
      })
    } finally {
      await Promise.all(subs.map((s) => s.stop()))
      await stack.close()
    }
  })
})

describe("a watched project", () => {
  it("deleted while watched: the subscription ends with NOT_FOUND", async () => {
    const stack = await standalone()
    try {
      const key = await stack.newKey("acme")
      const project = await createProject(stack, key)
      const sub = await openSse(stack.url, key, PROGRESS, { p: project })
      await until("the first state", () => progressOf(sub) !== undefined)
      const res = await fetch(stack.url, {
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": key },
        body: JSON.stringify({
          query: `mutation ($id: ID!) { deleteProject(id: $id) }`,
          variables: { id: project },
        }),
      })
      expect(((await res.json()) as any).errors).toBeUndefined()
      await until("the end", () => sub.ended())
      expect(sub.completed()).toBe(true)
      expect(sub.events.at(-1)).toMatchObject({ data: null, errors: [{ extensions: { code: "NOT_FOUND" } }] })
    } finally {
      await stack.close()
    }
  })
})
