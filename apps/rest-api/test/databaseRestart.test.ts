/**
 * PostgreSQL stopped and started again under a running API and worker, through the public REST API: while
 * it is down every request answers 503 problem+json with Retry-After naming the database (never 500, never
 * held), `/readyz` says so; once it is back the same processes serve again without a restart, the worker
 * resumes, and nothing is lost or done twice. The database is a server of this file's own (embedded,
 * on a data directory that outlives the stop), so stopping it touches no other test file.
 */
import { randomUUID } from "node:crypto"
import fs from "node:fs/promises"
import os from "node:os"
import path from "node:path"
import { type EmbeddedServer, makeKysely, migrateToLatest, startEmbedded } from "@dxs/db"
import { onePagePdf } from "@dxs/testing/Documents"
import { type Client, createProject } from "@dxs/testing/RestClient"
import { upload, waitProcessed } from "@dxs/testing/Runs"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startTestApi, type TestApi } from "./harness.ts"

let dataDir: string
let server: EmbeddedServer
let api: TestApi
let a: Client

beforeAll(async () => {
  dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "dxs-restart-"))
  await fs.chmod(dataDir, 0o755)
  server = await startEmbedded({ dataDir })
  const db = makeKysely(server.url, 1)
  await migrateToLatest(db)
  await db.destroy()
  api = await startTestApi({ worker: { concurrency: 2 }, dbUrl: server.url })
  a = api.client(await api.newKey(`restart-${randomUUID()}`))
})

afterAll(async () => {
  await server?.stop()
  if (dataDir !== undefined) await fs.rm(dataDir, { recursive: true, force: true })
})

const expectDatabaseUnavailable = (r: { status: number; headers: Headers; body: any }) => {
  expect(r.status).toBe(503)
  expect(r.headers.get("content-type")).toContain("application/problem+json")
  expect(Number(r.headers.get("retry-after"))).toBeGreaterThan(0)
  expect(r.body).toMatchObject({ status: 503, unavailable: "database", retry_after: expect.any(Number) })
}

describe("the database stopped and started again", () => {
  it("answers 503 while it is down, then serves and parses again, nothing lost or done twice", async () => {
    const projectId = await createProject(a)
    const before = await upload(a, projectId, "before.pdf", onePagePdf(randomUUID()))
    await waitProcessed(a, projectId)

    // Accepted just before the stop: its parse is queued or under way when the database goes.
    const accepted = await upload(a, projectId, "accepted.pdf", onePagePdf(randomUUID()))
    await server.stop()
    expectDatabaseUnavailable(await a.get(`/projects/${projectId}/documents/`))
    expectDatabaseUnavailable(await a.get("/projects/"))
    const form = new FormData()
    form.append("file", new Blob([onePagePdf(randomUUID()) as Uint8Array<ArrayBuffer>]), "during.pdf")
    expectDatabaseUnavailable(await a.send("POST", `/projects/${projectId}/documents/`, form))
    expect((await fetch(`${api.origin}/healthz`)).status).toBe(200)
    const notReady = await fetch(`${api.origin}/readyz`)
    expect(notReady.status).toBe(503)
    // The database is named; the migrations, which cannot be checked without it, are not.
    expect(await notReady.json()).toMatchObject({
      status: 503,
      failing: ["database"],
      checks: { migrations: "unknown while the database is unavailable", storage: "ok" },
    })

    server = await startEmbedded({ dataDir })
    // The same API and worker, without a restart of their own: the pools connect again.
    const listed = await a.get(`/projects/${projectId}/documents/`)
    expect(listed.status).toBe(200)
    expect(listed.body.map((d: any) => d.id).sort()).toEqual([before, accepted].sort())
    expect((await fetch(`${api.origin}/readyz`)).status).toBe(200)
    const after = await upload(a, projectId, "after.pdf", onePagePdf(randomUUID()))
    const documents = await waitProcessed(a, projectId)
    expect(documents.map((d) => [d.id, d.status]).sort()).toEqual(
      [
        [before, "Processed"],
        [accepted, "Processed"],
        [after, "Processed"],
      ].sort(),
    )

    // One parse task per document, each succeeded once; each document's page written once.
    const db = makeKysely(server.url, 1)
    try {
      const tasks = await db
        .selectFrom("tasks")
        .select(["status", "payload"])
        .where("kind", "=", "parse")
        .where("project_id", "=", projectId)
        .execute()
      expect(tasks.map((t) => t.status)).toEqual(["succeeded", "succeeded", "succeeded"])
      const pages = await db
        .selectFrom("pages")
        .innerJoin("documents", "documents.id", "pages.document_id")
        .select(["documents.id", "pages.number"])
        .where("documents.project_id", "=", projectId)
        .execute()
      expect(pages.map((p) => p.id).sort()).toEqual([before, accepted, after].sort())
    } finally {
      await db.destroy()
    }
  })
})
