/**
 * SIGTERM to an API process (the compiled `dxs start api` over a test database): it stops accepting new
 * connections at once, lets a request in flight finish (an upload whose body is still arriving is stored
 * and answered 201), closes what is still open when SHUTDOWN_GRACE_SECONDS have passed, and exits 0.
 */
import * as fs from "node:fs"
import * as http from "node:http"
import * as os from "node:os"
import * as path from "node:path"
import { Dxs, killSpawned } from "@dxs/testing/DxsProcess"
import { useTestDatabase } from "@dxs/testing/TestDatabase"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

const KEY = /dxs_live_[0-9A-Za-z]{32}/
let tmp = ""
let env: NodeJS.ProcessEnv = {}

beforeAll(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), "dxs-shutdown-"))
  env = {
    ...process.env,
    DATABASE_URL: await useTestDatabase(),
    BLOB_DIR: path.join(tmp, "blobs"),
    PORT: "0",
    HOST: "127.0.0.1",
    LOG_LEVEL: "info",
    SHUTDOWN_GRACE_SECONDS: "2",
  }
  for (const name of ["PUBLIC_URL", "INIT_CWD", "NODE_OPTIONS"]) delete env[name]
})

afterAll(() => {
  killSpawned()
  fs.rmSync(tmp, { recursive: true, force: true })
})

/** An API process with a key and a project. */
const started = async () => {
  const created = new Dxs(["keys", "create", "--org", "shutdown"], env)
  expect((await created.waitForExit()).code, created.output).toBe(0)
  const key = KEY.exec(created.stdout)![0]
  const server = new Dxs(["start", "api"], env)
  const [, port] = await server.waitFor(/REST API listening on http:\/\/127\.0\.0\.1:(\d+)\/api\/v1/)
  const api = `http://127.0.0.1:${port}/api/v1`
  const project = await fetch(`${api}/projects/`, {
    method: "POST",
    headers: { "x-api-key": key, "content-type": "application/json" },
    body: JSON.stringify({ name: "Shutdown" }),
  })
  expect(project.status).toBe(201)
  const { id } = (await project.json()) as { id: string }
  return { server, port: Number(port), key, uploads: `/api/v1/projects/${id}/documents/` }
}

/** An upload whose multipart body is sent in two parts: the second when `finish` is called. */
const slowUpload = (port: number, urlPath: string, key: string) => {
  const boundary = "dxs-shutdown-boundary"
  const head = `--${boundary}\r\ncontent-disposition: form-data; name="file"; filename="notes.txt"\r\ncontent-type: text/plain\r\n\r\n`
  const tail = `Invoice number: INV-1\r\n--${boundary}--\r\n`
  const request = http.request({
    host: "127.0.0.1",
    port,
    path: urlPath,
    method: "POST",
    headers: {
      "x-api-key": key,
      "content-type": `multipart/form-data; boundary=${boundary}`,
      "content-length": Buffer.byteLength(head) + Buffer.byteLength(tail),
    },
  })
  const answer = new Promise<{ status: number; body: string }>((resolve, reject) => {
    request.on("response", (res) => {
      let body = ""
      res.on("data", (b: Buffer) => {
        body += b.toString()
      })
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }))
      res.on("error", reject)
    })
    request.on("error", reject)
  })
  request.write(head)
  return { answer, finish: () => request.end(tail) }
}

/** Whether a new connection to the port is refused. */
const refused = (port: number) =>
  new Promise<boolean>((resolve) => {
    const probe = http.get({ host: "127.0.0.1", port, path: "/healthz" }, (res) => {
      res.resume()
      resolve(false)
    })
    probe.on("error", (e: NodeJS.ErrnoException) => resolve(e.code === "ECONNREFUSED"))
  })

describe("an API process on SIGTERM", () => {
  it("refuses new connections, finishes the request in flight, and exits 0", async () => {
    const { server, port, key, uploads } = await started()
    const upload = slowUpload(port, uploads, key)
    // The request is under way once its headers are read: the server logs nothing for it yet, so the
    // server's own view is awaited through a second request that has been answered.
    expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200)
    server.child.kill("SIGTERM")
    // New connections are refused from the moment the server stops listening, while the upload goes on.
    await server.waitFor(/stopping the REST API/)
    for (const deadline = Date.now() + 10_000; !(await refused(port)); )
      if (Date.now() > deadline) throw new Error(`still accepting connections\n${server.output}`)
    upload.finish()
    const answered = await upload.answer
    expect(answered.status, answered.body).toBe(201)
    expect(JSON.parse(answered.body)).toMatchObject({ file_name: "notes.txt" })
    const exit = await server.waitForExit(30_000)
    expect(exit.code, server.output).toBe(0)
  })

  it("closes a request still open when the grace period ends, and exits 0", async () => {
    const { server, port, key, uploads } = await started()
    const upload = slowUpload(port, uploads, key)
    expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200)
    server.child.kill("SIGTERM")
    // The body never comes: the connection is closed after SHUTDOWN_GRACE_SECONDS (2 s).
    await expect(upload.answer).rejects.toThrow()
    const exit = await server.waitForExit(30_000)
    expect(exit.code, server.output).toBe(0)
  })
})
