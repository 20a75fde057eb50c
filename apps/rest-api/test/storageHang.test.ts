/**
 * Object storage that hangs (accepts connections, never answers) for 70 s, at the store's default deadline
 * (`S3_TIMEOUT_SECONDS`, 20 s), through the public REST API of a real API and worker over a real
 * S3-protocol server behind switchable proxies. Every request made during the hang answers 503 problem+json
 * with Retry-After within the deadline plus a margin (never 500, never held), an upload whose client gave
 * up leaves nothing behind, `/readyz` names storage; once storage is back the documents accepted before the
 * hang end Processed without a re-parse, and the bucket holds the originals of the documents and nothing
 * else.
 *
 * It lasts the outage's 70 s: left out of the REST package's default run, it runs with `pnpm test:outage`
 * (and in CI's second pass).
 */
import { randomUUID } from "node:crypto"
import { makeKysely } from "@dxs/db"
import { DEFAULT_S3_TIMEOUT_MS } from "@dxs/db/BlobStore"
import { type S3BlobStore, s3BlobStore } from "@dxs/db/S3BlobStore"
import { onePagePdf } from "@dxs/testing/Documents"
import { type Client, createProject } from "@dxs/testing/RestClient"
import { until, upload, waitProcessed } from "@dxs/testing/Runs"
import { startTcpProxy, type TcpProxy } from "@dxs/testing/TcpProxy"
import { startTestS3Server, type TestS3Server } from "@dxs/testing/TestS3Server"
import { Chunk, Effect, Stream } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startTestApi, type TestApi } from "./harness.ts"

/** How long storage hangs. */
const OUTAGE_MS = 70_000
/** How long a client waits for an answer during the hang: the store's deadline, and a margin. */
const PATIENCE_MS = DEFAULT_S3_TIMEOUT_MS + 10_000
/** When the clients of abandoned uploads give up: well after their bytes are sent, before any deadline. */
const GIVE_UP_MS = 5_000

let s3: TestS3Server
let apiStorage: TcpProxy
let workerStorage: TcpProxy
let stores: Array<S3BlobStore> = []
let api: TestApi
let a: Client
let key: string
let outageTimer: NodeJS.Timeout | undefined

beforeAll(async () => {
  s3 = await startTestS3Server()
  // The API and the worker reach the same bucket through proxies of their own, so that the worker can meet
  // the hang while the API still accepts the documents it is to parse.
  apiStorage = await startTcpProxy(s3.port)
  workerStorage = await startTcpProxy(s3.port)
  // No `timeoutMs`: the default deadline, as S3_TIMEOUT_SECONDS's.
  const apiStore = s3BlobStore(s3.options("hang/", apiStorage.port))
  const workerStore = s3BlobStore(s3.options("hang/", workerStorage.port))
  stores = [apiStore, workerStore]
  api = await startTestApi({ worker: { blobs: workerStore }, blobs: apiStore })
  key = await api.newKey("acme")
  a = api.client(key)
})

afterAll(async () => {
  clearTimeout(outageTimer)
  for (const store of stores) store.close()
  await apiStorage?.stop()
  await workerStorage?.stop()
  await s3?.stop()
})

interface Sent {
  readonly what: string
  /** False when the client gave up before an answer came. */
  readonly answered: boolean
  readonly status?: number
  readonly headers?: Headers
  readonly body?: any
  readonly seconds: number
}

/** A request whose client waits `patienceMs` at most for the whole answer. */
const send = async (
  what: string,
  method: string,
  path: string,
  options: { body?: FormData; idempotencyKey?: string; patienceMs?: number } = {},
): Promise<Sent> => {
  const started = performance.now()
  const seconds = () => Math.round((performance.now() - started) / 100) / 10
  try {
    const res = await fetch(api.base + path, {
      method,
      headers: {
        "x-api-key": key,
        ...(options.idempotencyKey === undefined ? {} : { "idempotency-key": options.idempotencyKey }),
      },
      ...(options.body === undefined ? {} : { body: options.body }),
      signal: AbortSignal.timeout(options.patienceMs ?? PATIENCE_MS),
    })
    const text = await res.text()
    const body = /json/.test(res.headers.get("content-type") ?? "") ? JSON.parse(text) : text
    return { what, answered: true, status: res.status, headers: res.headers, body, seconds: seconds() }
  } catch (e) {
    if ((e as { name?: unknown }).name === "TimeoutError")
      return { what, answered: false, seconds: seconds() }
    throw e
  }
}

const pdfForm = (name: string, bytes = onePagePdf(randomUUID())) => {
  const form = new FormData()
  form.append("file", new Blob([bytes as Uint8Array<ArrayBuffer>]), name)
  return form
}

const expectStorageUnavailable = (r: Sent) => {
  expect({ what: r.what, answered: r.answered, status: r.status }).toEqual({
    what: r.what,
    answered: true,
    status: 503,
  })
  expect(r.headers!.get("content-type"), r.what).toContain("application/problem+json")
  expect(Number(r.headers!.get("retry-after")), r.what).toBeGreaterThan(0)
  expect(r.body, r.what).toMatchObject({
    status: 503,
    unavailable: "storage",
    retry_after: expect.any(Number),
  })
}

/** Every key in the bucket, listed from the S3 server itself (not through a proxy). */
const bucketKeys = async (): Promise<Array<string>> => {
  const direct = s3BlobStore(s3.options())
  try {
    const entries = await Effect.runPromise(Stream.runCollect(direct.list()))
    return Chunk.toReadonlyArray(entries)
      .map((e) => e.key)
      .toSorted()
  } finally {
    direct.close()
  }
}

describe("object storage that hangs for 70 s, at the default deadline", () => {
  it(
    "answers every request 503 in time, keeps nothing of abandoned uploads, and parses what it accepted once storage is back",
    async () => {
      const db = makeKysely(api.dbUrl, 2)
      try {
        const projectId = await createProject(a)
        const done = await upload(a, projectId, "done.pdf", onePagePdf(randomUUID()))
        await waitProcessed(a, projectId)

        // Accepted just before the hang, which the worker meets first: their parses are under way in it.
        await workerStorage.setMode("hang")
        const accepted = [
          await upload(a, projectId, "accepted-1.pdf", onePagePdf(randomUUID())),
          await upload(a, projectId, "accepted-2.pdf", onePagePdf(randomUUID())),
          await upload(a, projectId, "accepted-3.pdf", onePagePdf(randomUUID())),
        ]

        // The outage: one timer, after which storage answers again for the API and the worker alike.
        await apiStorage.setMode("hang")
        const hangStarted = performance.now()
        const storageBack = new Promise<void>((resolve) => {
          outageTimer = setTimeout(resolve, OUTAGE_MS)
        }).then(() => Promise.all([apiStorage.setMode("pass"), workerStorage.setMode("pass")]))

        // Alive, but not ready: storage is named.
        expect((await fetch(`${api.origin}/healthz`)).status).toBe(200)
        const notReady = await fetch(`${api.origin}/readyz`)
        expect(notReady.status).toBe(503)
        expect(await notReady.json()).toMatchObject({
          status: 503,
          failing: ["storage"],
          checks: { database: "ok", migrations: "ok" },
        })

        const idempotencyKey = `hang-${randomUUID()}`
        const keyedBytes = onePagePdf(randomUUID())
        const [during, abandoned] = await Promise.all([
          Promise.all([
            ...[1, 2, 3, 4].map((n) =>
              send(`upload ${n}`, "POST", `/projects/${projectId}/documents/`, {
                body: pdfForm(`during-${n}.pdf`),
              }),
            ),
            send("download", "GET", `/projects/${projectId}/documents/${done}/file/`),
            send("re-parse", "POST", `/projects/${projectId}/documents/${done}/reparse/`),
          ]),
          Promise.all([
            send("abandoned upload", "POST", `/projects/${projectId}/documents/`, {
              body: pdfForm("abandoned.pdf"),
              patienceMs: GIVE_UP_MS,
            }),
            send("abandoned upload with a key", "POST", `/projects/${projectId}/documents/`, {
              body: pdfForm("keyed.pdf", keyedBytes),
              idempotencyKey,
              patienceMs: GIVE_UP_MS,
            }),
          ]),
        ])
        for (const r of during) expectStorageUnavailable(r)
        expect(abandoned.map((r) => [r.what, r.answered])).toEqual([
          ["abandoned upload", false],
          ["abandoned upload with a key", false],
        ])
        // All of it within the hang: what follows is checked while storage still hangs.
        expect(performance.now() - hangStarted).toBeLessThan(OUTAGE_MS - 10_000)

        // The worker has met the hang with each accepted document: its parse is waiting to be retried,
        // and the document is still Pending.
        await until(
          "every accepted document's parse to meet the hang",
          async () => {
            const tasks = await db
              .selectFrom("tasks")
              .select(["payload", "status", "outage_since"])
              .where("kind", "=", "parse")
              .where("project_id", "=", projectId)
              .execute()
            const met = tasks.filter((t) => t.outage_since !== null && t.status !== "succeeded")
            return met.length === accepted.length ? met : undefined
          },
          OUTAGE_MS,
        )
        const listed = await a.get(`/projects/${projectId}/documents/`)
        expect(listed.body.map((d: any) => [d.id, d.status]).toSorted()).toEqual(
          [[done, "Processed"], ...accepted.map((id) => [id, "Pending"])].toSorted(),
        )
        expect(performance.now() - hangStarted).toBeLessThan(OUTAGE_MS)

        await storageBack
        const outageSeconds = Math.round((performance.now() - hangStarted) / 1000)
        expect((await fetch(`${api.origin}/readyz`)).status).toBe(200)

        // The client of the keyed upload sends it again: one document, however often it is sent.
        const keyed = await send("keyed upload again", "POST", `/projects/${projectId}/documents/`, {
          body: pdfForm("keyed.pdf", keyedBytes),
          idempotencyKey,
        })
        expect(keyed.status).toBe(201)
        expect(keyed.headers!.get("idempotent-replayed")).toBeNull()
        const keyedAgain = await send("keyed upload once more", "POST", `/projects/${projectId}/documents/`, {
          body: pdfForm("keyed.pdf", keyedBytes),
          idempotencyKey,
        })
        expect(keyedAgain.status).toBe(201)
        expect(keyedAgain.headers!.get("idempotent-replayed")).toBe("true")
        expect(keyedAgain.body.id).toBe(keyed.body.id)
        const after = await upload(a, projectId, "after.pdf", onePagePdf(randomUUID()))

        // Every accepted document Processed, none of the refused or abandoned uploads among them.
        const documents = await waitProcessed(a, projectId)
        const ids = [done, ...accepted, keyed.body.id, after]
        expect(documents.map((d) => [d.id, d.status]).toSorted()).toEqual(
          ids.map((id) => [id, "Processed"]).toSorted(),
        )
        const recovered = Math.round((performance.now() - hangStarted) / 1000) - outageSeconds

        // Parsed once each, at their first version: nobody parsed anything again.
        const rows = await db
          .selectFrom("documents")
          .select(["id", "version", "blob_key"])
          .where("project_id", "=", projectId)
          .execute()
        expect(rows.map((d) => [d.id, d.version]).toSorted()).toEqual(ids.map((id) => [id, 1]).toSorted())
        const tasks = await db
          .selectFrom("tasks")
          .select(["payload", "status"])
          .where("kind", "=", "parse")
          .where("project_id", "=", projectId)
          .execute()
        expect(tasks.map((t) => [(t.payload as any).document_id, t.status]).toSorted()).toEqual(
          ids.map((id) => [id, "succeeded"]).toSorted(),
        )

        // Nothing half-written: the bucket holds the original of each document and nothing else.
        expect(await bucketKeys()).toEqual(rows.map((d) => `hang/${d.blob_key}`).toSorted())

        console.info(
          `storage hung for ${outageSeconds} s; answers during the hang in ${during
            .map((r) => `${r.what} ${r.seconds} s`)
            .join(", ")}; every document Processed ${recovered} s after storage was back`,
        )
      } finally {
        await db.destroy()
      }
    },
    OUTAGE_MS + 90_000,
  )
})
