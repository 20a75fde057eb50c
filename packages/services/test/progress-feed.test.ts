/**
 * The progress feed over a real database: subscribers get the state, then each change, driven by the
 * database's notifications; the subscribers of one project share its reads; bursts are read once; a
 * missed notification is covered by the safety read and by the re-read after a lost connection; one
 * listening connection exists only while someone subscribes; organisations never see each other's
 * projects; a shutdown ends the streams.
 */
import { randomUUID } from "node:crypto"
import * as os from "node:os"
import * as path from "node:path"
import { BlobStore, type Database, Db, fileBlobStore, makeKysely } from "@dxs/db"
import { useTestDatabase } from "@dxs/testing/TestDatabase"
import { Cause, Effect, Exit, Fiber, Layer, ManagedRuntime, Stream } from "effect"
import { type Kysely, sql } from "kysely"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { CurrentOrganization } from "../src/CurrentOrganization.ts"
import { LiveSubscriptionSettings } from "../src/LiveSubscriptions.ts"
import { ProgressFeed, ProgressFeedSettings, type ProjectProgress } from "../src/ProgressFeed.ts"

let url: string
let db: Kysely<Database>
let statements = 0

beforeAll(async () => {
  url = await useTestDatabase()
  db = makeKysely(url, 2)
})

afterAll(async () => {
  await db?.destroy()
})

type Settings = Partial<ProgressFeedSettings["Type"]> & { readonly maxPerSubject?: number }

/** A feed over the test database whose SQL statements are counted in `statements`. */
const startFeed = (settings: Settings = {}) => {
  const counted = makeKysely(url, 5).withPlugin({
    transformQuery: (args) => {
      statements++
      return args.node
    },
    transformResult: async (args) => args.result,
  })
  const runtime = ManagedRuntime.make(
    ProgressFeed.Default.pipe(
      Layer.provide(Layer.succeed(Db, { kysely: counted, url })),
      // The services' storage; the feed never reads a file.
      Layer.provide(Layer.succeed(BlobStore, fileBlobStore(path.join(os.tmpdir(), "dxs-progress-feed")))),
      Layer.provide(
        Layer.succeed(ProgressFeedSettings, {
          minReadIntervalMs: settings.minReadIntervalMs ?? 200,
          safetyReadIntervalMs: settings.safetyReadIntervalMs ?? 60_000,
        }),
      ),
      Layer.provide(Layer.succeed(LiveSubscriptionSettings, { maxPerSubject: settings.maxPerSubject ?? 10 })),
    ),
  )
  return {
    runtime,
    close: async () => {
      await runtime.dispose()
      await counted.destroy()
    },
  }
}

type Feed = ReturnType<typeof startFeed>

const newOrganization = async (): Promise<CurrentOrganization["Type"]> => {
  const name = randomUUID()
  const row = await db.insertInto("organizations").values({ name }).returning("id").executeTakeFirstOrThrow()
  return { id: row.id, name }
}

const newProject = async (org: CurrentOrganization["Type"]) =>
  (
    await db
      .insertInto("projects")
      .values({ organization_id: org.id, name: randomUUID(), project_modules: "{}" })
      .returning("id")
      .executeTakeFirstOrThrow()
  ).id

const addDocument = (projectId: string, conn: Kysely<Database> = db) =>
  conn
    .insertInto("documents")
    .values({
      project_id: projectId,
      file_name: `${randomUUID()}.pdf`,
      type: "PDF",
      page_count: 1,
      blob_key: randomUUID(),
      content_type: "application/pdf",
      size_bytes: 1,
      sha256: "0",
    })
    .execute()

const until = async (what: string, f: () => boolean | Promise<boolean>, timeoutMs = 10_000) => {
  const deadline = Date.now() + timeoutMs
  while (!(await f())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 20))
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** Reads the project's feed in the background as `org`, with the subject's places. */
const watch = (
  feed: Feed,
  org: CurrentOrganization["Type"],
  projectId: string,
  subject = `key:${org.id}`,
) => {
  const states: Array<ProjectProgress> = []
  let exit: Exit.Exit<void, unknown> | undefined
  const fiber = feed.runtime.runFork(
    Effect.flatMap(ProgressFeed, (f) =>
      Stream.runForEach(f.subscribe(projectId, subject), (s) => Effect.sync(() => states.push(s))),
    ).pipe(Effect.provideService(CurrentOrganization, org)),
  )
  fiber.addObserver((e) => {
    exit = e
  })
  return {
    states,
    documents: () => states.at(-1)?.status.document_count,
    exit: () => exit,
    stop: () => Effect.runPromise(Fiber.interrupt(fiber)),
  }
}

const listeners = async () =>
  (
    await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity
      where datname = current_database() and application_name = 'dxs listen dxs_progress'`.execute(db)
  ).rows[0]!.n

/** The tag of the failure a watch ended with, if it failed. */
const failureOf = (exit: Exit.Exit<void, unknown> | undefined) => {
  if (exit === undefined || Exit.isSuccess(exit)) return undefined
  const failure = Cause.failureOption(exit.cause)
  return failure._tag === "Some"
    ? (failure.value as { readonly _tag: string })._tag
    : Cause.pretty(exit.cause)
}

const activity = (feed: Feed) => feed.runtime.runPromise(Effect.flatMap(ProgressFeed, (f) => f.activity))

describe("the progress feed", () => {
  it("pushes the state, then each change, to every subscriber of the project, reading once per change", async () => {
    const feed = startFeed()
    try {
      const org = await newOrganization()
      const p = await newProject(org)
      const first = watch(feed, org, p)
      await until("the first state", () => first.states.length === 1)
      expect(first.states[0]!.status).toMatchObject({ document_count: 0, pipeline_running: false })
      expect(first.states[0]!.agents).toEqual({ progress: {}, consistency: {}, pipeline_running: false })

      // One subscriber: what one change costs.
      let before = statements
      await addDocument(p)
      await until("the change", () => first.documents() === 1)
      await sleep(300)
      const one = statements - before

      // Five subscribers: the same.
      const more = [1, 2, 3, 4].map(() => watch(feed, org, p))
      await until("the others' first state", () => more.every((w) => w.documents() === 1))
      before = statements
      await addDocument(p)
      await until("the change everywhere", () => [first, ...more].every((w) => w.documents() === 2))
      await sleep(300)
      expect(statements - before).toBe(one)
      expect(await activity(feed)).toEqual({ projects: 1, listening: true })

      // Only changes are pushed: a notification that changes nothing is read but not sent.
      before = statements
      await sql`select pg_notify('dxs_progress', ${p})`.execute(db)
      await until("the read", () => statements - before >= one)
      await sleep(300)
      expect(first.states.map((s) => s.status.document_count)).toEqual([0, 1, 2])
      await Promise.all([first, ...more].map((w) => w.stop()))
    } finally {
      await feed.close()
    }
  })

  it("reads a burst of changes a few times, not once per change", async () => {
    const feed = startFeed({ minReadIntervalMs: 250 })
    try {
      const org = await newOrganization()
      const p = await newProject(org)
      const w = watch(feed, org, p)
      await until("the first state", () => w.documents() === 0)
      const before = statements
      await Promise.all(Array.from({ length: 40 }, () => addDocument(p)))
      await until("the last state", () => w.documents() === 40)
      await sleep(600)
      // One read is about fifteen statements; forty reads would be six hundred.
      expect(statements - before).toBeLessThan(15 * 10)
      expect(w.states.at(-1)!.status.documents_by_status.Pending).toBe(40)
      await w.stop()
    } finally {
      await feed.close()
    }
  })

  it("covers a missed notification with the safety read", async () => {
    const feed = startFeed({ safetyReadIntervalMs: 1000 })
    try {
      const org = await newOrganization()
      const p = await newProject(org)
      const w = watch(feed, org, p)
      await until("the first state", () => w.documents() === 0)
      // Its notifying trigger disabled for the change: a change nobody is told about (the tallies the
      // other triggers keep still count it).
      await db.transaction().execute(async (trx) => {
        await sql`alter table documents disable trigger documents_progress_insert`.execute(trx)
        await addDocument(p, trx)
        await sql`alter table documents enable trigger documents_progress_insert`.execute(trx)
      })
      await until("the safety read", () => w.documents() === 1, 10_000)
      await w.stop()
    } finally {
      await feed.close()
    }
  })

  it("reads every project again once its listening connection is back", async () => {
    const feed = startFeed()
    try {
      const org = await newOrganization()
      const [p, q] = [await newProject(org), await newProject(org)]
      const a = watch(feed, org, p)
      const b = watch(feed, org, q)
      await until("the first states", () => a.documents() === 0 && b.documents() === 0)
      await sql`select pg_terminate_backend(pid) from pg_stat_activity
        where datname = current_database() and application_name = 'dxs listen dxs_progress'`.execute(db)
      // While the connection is down (it comes back after a second), these notifications are lost.
      await addDocument(p)
      await addDocument(q)
      await until(
        "the re-read after the reconnection",
        () => a.documents() === 1 && b.documents() === 1,
        15_000,
      )
      expect(await listeners()).toBe(1)
      await Promise.all([a.stop(), b.stop()])
    } finally {
      await feed.close()
    }
  })

  it("listens with one connection while there are subscribers, and with none after", async () => {
    const feed = startFeed()
    try {
      const org = await newOrganization()
      expect(await listeners()).toBe(0)
      const [p, q] = [await newProject(org), await newProject(org)]
      const ws = [watch(feed, org, p), watch(feed, org, p), watch(feed, org, q)]
      await until("the first states", () => ws.every((w) => w.documents() === 0))
      expect(await listeners()).toBe(1)
      expect(await activity(feed)).toEqual({ projects: 2, listening: true })
      await ws[0]!.stop()
      expect(await activity(feed)).toEqual({ projects: 2, listening: true })
      await Promise.all([ws[1]!.stop(), ws[2]!.stop()])
      expect(await activity(feed)).toEqual({ projects: 0, listening: false })
      await until("the connection to close", async () => (await listeners()) === 0)
      // …and listens again for the next one.
      const again = watch(feed, org, p)
      await until("the state", () => again.documents() === 0)
      expect(await listeners()).toBe(1)
      await again.stop()
    } finally {
      await feed.close()
    }
  })

  it("fails with NotFound for another organisation's project, and when the project is deleted", async () => {
    const feed = startFeed()
    try {
      const acme = await newOrganization()
      const globex = await newOrganization()
      const p = await newProject(acme)
      const own = watch(feed, acme, p)
      await until("the state", () => own.documents() === 0)
      for (const w of [watch(feed, globex, p), watch(feed, acme, randomUUID())]) {
        await until("the end", () => w.exit() !== undefined)
        expect(failureOf(w.exit())).toBe("NotFound")
        expect(w.states).toEqual([])
      }
      await db.deleteFrom("projects").where("id", "=", p).execute()
      await until("the end", () => own.exit() !== undefined)
      expect(failureOf(own.exit())).toBe("NotFound")
    } finally {
      await feed.close()
    }
  })

  it("holds a place of the subscriber per subscription, refusing one too many", async () => {
    const feed = startFeed({ maxPerSubject: 2 })
    try {
      const org = await newOrganization()
      const p = await newProject(org)
      const [a, b] = [watch(feed, org, p, "key:one"), watch(feed, org, p, "key:one")]
      await until("the states", () => a.documents() === 0 && b.documents() === 0)
      const refused = watch(feed, org, p, "key:one")
      await until("the refusal", () => refused.exit() !== undefined)
      expect(failureOf(refused.exit())).toBe("TooManySubscriptions")
      const other = watch(feed, org, p, "key:two")
      await until("another subject's state", () => other.documents() === 0)
      await a.stop()
      const next = watch(feed, org, p, "key:one")
      await until("the freed place", () => next.documents() === 0)
      await Promise.all([b.stop(), other.stop(), next.stop()])
    } finally {
      await feed.close()
    }
  })

  it("ends every stream, without a failure, when it shuts down", async () => {
    const feed = startFeed()
    const org = await newOrganization()
    const ws = [watch(feed, org, await newProject(org)), watch(feed, org, await newProject(org))]
    await until("the states", () => ws.every((w) => w.documents() === 0))
    await feed.close()
    await until("the ends", () => ws.every((w) => w.exit() !== undefined))
    expect(ws.map((w) => Exit.isSuccess(w.exit()!))).toEqual([true, true])
    expect(await listeners()).toBe(0)
  })
})
