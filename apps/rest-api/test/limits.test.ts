import { randomUUID } from "node:crypto"
import * as fs from "node:fs/promises"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { monitorEventLoopDelay } from "node:perf_hooks"
import { MAX_NAME_LENGTH, MAX_TEXT_LENGTH } from "@dxs/domain/Limits"
import { type Client, createProject, expectProblem } from "@dxs/testing/RestClient"
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest"
import { startTestApi, type TestApi } from "./harness.ts"

let api: TestApi
let key: string
let a: Client
let spoolRoot: string

beforeAll(async () => {
  spoolRoot = await fs.mkdtemp(path.join(os.tmpdir(), "dxs-spool-limits-"))
  api = await startTestApi({
    spoolRoot,
    limits: { maxJsonBytes: 64 * 1024 },
    http: {
      requestTimeoutSeconds: 2,
      idleTimeoutSeconds: 2,
      headersTimeoutSeconds: 2,
      maxConnectionsPerClient: 40,
    },
  })
  key = await api.newKey("acme")
  a = api.client(key)
})
afterAll(() => fs.rm(spoolRoot, { recursive: true, force: true }))

const raw = (path: string, init: Omit<RequestInit, "headers"> & { headers?: Record<string, string> } = {}) =>
  fetch(api.base + path, { ...init, headers: { "x-api-key": key, ...(init.headers ?? {}) } }).then(
    async (res) => {
      const text = await res.text()
      return {
        status: res.status,
        headers: res.headers,
        text,
        body: /json/.test(res.headers.get("content-type") ?? "") && text !== "" ? JSON.parse(text) : text,
      }
    },
  )

const json = (body: string) => ({
  method: "POST",
  body,
  headers: { "content-type": "application/json" },
})

/** Sends raw bytes on a socket and resolves with what came back once the server closes or `ms` pass. */
const exchange = (payload: string | Buffer, ms: number, keepOpen = true) =>
  new Promise<{ readonly answer: string; readonly closed: boolean }>((resolve) => {
    const url = new URL(api.base)
    const socket = net.connect(Number(url.port), url.hostname)
    let answer = ""
    let closed = false
    socket.on("data", (d) => {
      answer += d.toString("latin1")
    })
    socket.on("error", () => undefined)
    socket.on("close", () => {
      closed = true
      clearTimeout(timer)
      resolve({ answer, closed })
    })
    socket.write(payload)
    if (!keepOpen) socket.end()
    const timer = setTimeout(() => {
      socket.destroy()
      resolve({ answer, closed })
    }, ms)
  })

const deep = (n: number) => `${'{"a":'.repeat(n)}1${"}".repeat(n)}`

describe("body size", () => {
  it("refuses a JSON body over the limit with 413 before reading it all", async () => {
    const r = await raw("/projects/", json(JSON.stringify({ name: "x", description: "y".repeat(70_000) })))
    expectProblem(r, 413)
    expect(r.body.detail).toMatch(/65536 bytes/)
  })

  it("counts a body sent without Content-Length (chunked)", async () => {
    const chunk = new TextEncoder().encode(`{"name":"x","description":"${"y".repeat(70_000)}"}`)
    const stream = new ReadableStream({
      start(controller) {
        controller.enqueue(chunk)
        controller.close()
      },
    })
    const r = await raw("/projects/", {
      method: "POST",
      body: stream,
      headers: { "content-type": "application/json" },
      duplex: "half",
    } as Omit<RequestInit, "headers">)
    expectProblem(r, 413)
  })

  it("applies to form bodies too", async () => {
    const r = await raw("/projects/", {
      method: "POST",
      body: `name=x&description=${"y".repeat(70_000)}`,
      headers: { "content-type": "application/x-www-form-urlencoded" },
    })
    expectProblem(r, 413)
  })
})

describe("string lengths", () => {
  it("refuses names over the limit on every resource, naming the field and the limit", async () => {
    const long = "n".repeat(MAX_NAME_LENGTH + 1)
    const p = await createProject(a)
    for (const [path, body] of [
      ["/projects/", { name: long }],
      ["/projects/", { name: "x".repeat(3000) }],
      ["/folders/", { name: long }],
      [`/projects/${p}/agents/`, { name: long }],
      [`/projects/${p}/dimensions/`, { name: long }],
      ["/webhooks/", { name: long, url: "https://example.com/h", subscribed_events: ["webhook.ping"] }],
    ] as const) {
      const r = await a.post(path, body)
      expectProblem(r, 400)
      expect(r.body.errors, path).toContainEqual({
        path: "name",
        message: `must be at most ${MAX_NAME_LENGTH} characters`,
      })
    }
    const ok = await a.post("/projects/", {
      name: "n".repeat(MAX_NAME_LENGTH - 8) + randomUUID().slice(0, 8),
    })
    expect(ok.status).toBe(201)
  })

  it("refuses instructions over the limit", async () => {
    const p = await createProject(a)
    const r = await a.post(`/projects/${p}/agents/`, {
      name: "Total",
      extraction_instructions: "i".repeat(MAX_TEXT_LENGTH + 1),
    })
    expectProblem(r, 400)
    expect(r.body.errors).toContainEqual({
      path: "extraction_instructions",
      message: `must be at most ${MAX_TEXT_LENGTH} characters`,
    })
  })
})

describe("string content", () => {
  it("refuses a NUL byte in a body with 400 naming the field", async () => {
    const r = await a.post("/projects/", { name: "a\u0000b" })
    expectProblem(r, 400)
    expect(r.body.errors).toEqual([{ path: "name", message: expect.stringContaining("NUL") }])
    const p = await createProject(a)
    const nested = await a.post(`/projects/${p}/agents/`, {
      name: "Split",
      dimensions: [{ dimension_id: randomUUID(), values: ["ok", "b\u0000d"] }],
    })
    expectProblem(nested, 400)
    expect(nested.body.errors[0].path).toBe("dimensions/0/values/1")
  })

  it("refuses a lone surrogate", async () => {
    const r = await raw("/projects/", json('{"name":"\\ud800"}'))
    expectProblem(r, 400)
    expect(r.body.errors[0]).toEqual({ path: "name", message: expect.stringContaining("Unicode") })
  })

  it("refuses NUL bytes and broken escapes in the query string and the path", async () => {
    const p = await createProject(a)
    const nul = await a.get(`/projects/${p}/results/?dimension_value=%00`)
    expectProblem(nul, 400)
    expect(nul.body.errors[0].path).toBe("dimension_value")
    expectProblem(await a.get(`/projects/${p}/results/?dimension_value=%E0%A4%A`), 400)
    expectProblem(await a.get("/projects/%ZZ/"), 400)
    expectProblem(await a.get(`/projects/${p}%00/`), 400)
  })

  it("refuses a NUL byte or a broken escape in a form body", async () => {
    for (const body of ["name=a%00b", "name=%ZZ%", "name=%E0%A4%A"]) {
      const r = await raw("/projects/", {
        method: "POST",
        body,
        headers: { "content-type": "application/x-www-form-urlencoded" },
      })
      expectProblem(r, 400)
    }
  })
})

describe("structure", () => {
  it("refuses JSON nested deeper than the limit with 400", async () => {
    const r = await raw("/projects/", json(deep(10_000)))
    expectProblem(r, 400)
    expect(r.body.detail).toMatch(/deeper than the limit of 64/)
    const p = await createProject(a)
    const schema = await a.put(`/projects/${p}/schema/`, {
      schema: JSON.parse(`{"type":"object","properties":${deep(100)}}`),
      auto_map: true,
    })
    expectProblem(schema, 400)
  })

  it("says where malformed JSON breaks", async () => {
    const r = await raw("/projects/", json('{"name": "x",}'))
    expectProblem(r, 400)
    expect(r.body.detail).toMatch(/not valid JSON/)
    expect(r.body.detail).toMatch(/position 13/)
  })

  it("refuses multipart without a boundary, and a truncated multipart body, with 400 at once", async () => {
    const none = await raw("/projects/", {
      method: "POST",
      body: "--x\r\n",
      headers: { "content-type": "multipart/form-data" },
    })
    expectProblem(none, 400)
    expect(none.body.detail).toMatch(/boundary/)
    const body =
      '--b\r\nContent-Disposition: form-data; name="name"\r\n\r\nTruncated project\r\n--b\r\nContent-Disposition: form-da'
    const { answer } = await exchange(
      `POST /api/v1/projects/ HTTP/1.1\r\nHost: x\r\nx-api-key: ${key}\r\ncontent-type: multipart/form-data; boundary=b\r\ncontent-length: ${body.length}\r\nconnection: close\r\n\r\n${body}`,
      1500,
    )
    expect(answer).toMatch(/^HTTP\/1\.1 400/)
  })

  it("answers 400 for a page number out of range", async () => {
    const p = await createProject(a)
    const d = randomUUID()
    for (const n of ["2147483648", "99999999999999999999", "-1", "0", "1.5"]) {
      const r = await a.get(`/projects/${p}/documents/${d}/pages/${n}/`)
      expectProblem(r, 400)
    }
  })
})

describe("what Node's HTTP parser refuses", () => {
  it("answers a request line or headers over the limit with 431 problem+json, readable by the client", async () => {
    const { answer } = await exchange(
      `GET /api/v1/projects/?q=${"x".repeat(1024 * 1024)} HTTP/1.1\r\nHost: x\r\nx-api-key: ${key}\r\n\r\n`,
      3000,
    )
    expect(answer).toMatch(/^HTTP\/1\.1 431 /)
    expect(answer).toMatch(/\r\ncontent-type: application\/problem\+json\r\n/i)
    const body = JSON.parse(answer.slice(answer.indexOf("\r\n\r\n") + 4))
    expect(body).toMatchObject({ status: 431, type: expect.any(String), title: expect.any(String) })
    expect(body.detail).toMatch(/larger than the limit/)
    expect(answer).toContain(`x-request-id: ${body.request_id}`)
  })

  it("answers a request that is not HTTP with 400 problem+json", async () => {
    const { answer } = await exchange("GET /api/v1/projects/ HTTP/1.1\r\nBad Header\r\n\r\n", 3000)
    expect(answer).toMatch(/^HTTP\/1\.1 400 /)
    expect(answer).toMatch(/\r\ncontent-type: application\/problem\+json\r\n/i)
    expect(JSON.parse(answer.slice(answer.indexOf("\r\n\r\n") + 4))).toMatchObject({ status: 400 })
  })

  it("refuses an empty segment inside an API path instead of routing around it", async () => {
    const p = await createProject(a)
    for (const path of ["/projects//", `/projects/${p}/agents//`, "//projects/"]) {
      const r = await raw(path)
      expectProblem(r, 400)
      expect(r.body.detail, path).toMatch(/empty segment/)
    }
  })
})

describe("work that takes long", () => {
  it("checks large output schemas off the event loop, so other requests are not held up", async () => {
    const full = await startTestApi()
    const client = full.client(await full.newKey("acme"))
    const projects = await Promise.all([1, 2, 3, 4].map(() => createProject(client)))
    const properties: Record<string, unknown> = {}
    for (let i = 0; i < 4000; i++) properties[`field_${i}`] = { type: "string", description: "d".repeat(80) }
    const histogram = monitorEventLoopDelay({ resolution: 10 })
    histogram.enable()
    const started = performance.now()
    const answers = await Promise.all(
      projects.map((p) =>
        client.put(`/projects/${p}/schema/`, { schema: { type: "object", properties }, auto_map: false }),
      ),
    )
    const took = performance.now() - started
    histogram.disable()
    expect(answers.map((r) => r.status)).toEqual([200, 200, 200, 200])
    // Compiling such a schema takes Ajv a good part of a second; on the event loop it would stall it for
    // about a quarter of the time the four take.
    expect(histogram.max / 1e6).toBeLessThan(took / 8)
  })
})

describe("request ids", () => {
  it("answers every request with an X-Request-Id, echoing a sane one the client sent", async () => {
    const r = await a.get("/projects/")
    expect(r.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/)
    const given = await raw("/projects/", { headers: { "x-request-id": "trace-123" } })
    expect(given.headers.get("x-request-id")).toBe("trace-123")
    const insane = await raw("/projects/", { headers: { "x-request-id": "a b\tc" } })
    expect(insane.headers.get("x-request-id")).not.toBe("a b\tc")
  })

  it("logs a request at error level only when the server failed, not for an unknown route", async () => {
    const lines: Array<string> = []
    const spies = (["log", "info", "warn", "error"] as const).map((m) =>
      vi.spyOn(console, m).mockImplementation((...args: Array<unknown>) => {
        lines.push(args.map(String).join(" "))
      }),
    )
    try {
      const r = await raw("/no-such-route/", { headers: { "x-request-id": "unknown-route" } })
      expectProblem(r, 404)
    } finally {
      for (const spy of spies) spy.mockRestore()
    }
    expect(lines.filter((l) => l.includes("unknown-route") && /level=ERROR/.test(l))).toEqual([])
  })

  it("carries the request id in every problem body", async () => {
    const r = await raw("/projects/nope/", { headers: { "x-request-id": "req-42" } })
    expectProblem(r, 400)
    expect(r.body.request_id).toBe("req-42")
    const missing = await raw(`/projects/${randomUUID()}/`)
    expectProblem(missing, 404)
    expect(missing.body.request_id).toBe(missing.headers.get("x-request-id"))
  })
})

describe("timeouts and connections", () => {
  it("answers 408 or closes a request whose body stalls, within the request timeout", async () => {
    const { answer, closed } = await exchange(
      `POST /api/v1/projects/ HTTP/1.1\r\nHost: x\r\nx-api-key: ${key}\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{"name":`,
      6000,
    )
    expect(closed).toBe(true)
    if (answer !== "") expect(answer).toMatch(/^HTTP\/1\.1 408/)
  })

  it("closes an upload that stalls half way, and removes what it had spooled", async () => {
    const p = await createProject(a)
    const head =
      '--b\r\nContent-Disposition: form-data; name="file"; filename="stalled.pdf"\r\nContent-Type: application/pdf\r\n\r\n'
    const part = `${head}%PDF-1.4\n${"x".repeat(50_000)}`
    const { answer, closed } = await exchange(
      `POST /api/v1/projects/${p}/documents/ HTTP/1.1\r\nHost: x\r\nx-api-key: ${key}\r\ncontent-type: multipart/form-data; boundary=b\r\ncontent-length: ${part.length + 100_000}\r\n\r\n${part}`,
      6000,
    )
    expect(closed).toBe(true)
    if (answer !== "") expect(answer).toMatch(/^HTTP\/1\.1 (408|400)/)
    const until = Date.now() + 5000
    let left = await fs.readdir(spoolRoot).catch(() => [] as Array<string>)
    while (left.length > 0 && Date.now() < until) {
      await new Promise((r) => setTimeout(r, 50))
      left = await fs.readdir(spoolRoot).catch(() => [] as Array<string>)
    }
    expect(left).toEqual([])
    expect((await a.get(`/projects/${p}/documents/`)).body).toEqual([])
  })

  it("closes a connection that sends nothing", async () => {
    const { closed } = await exchange("", 6000)
    expect(closed).toBe(true)
  })

  it("closes connections of one client beyond the limit", async () => {
    const url = new URL(api.base)
    let closedByServer = 0
    const sockets = await Promise.all(
      Array.from(
        { length: 45 },
        () =>
          new Promise<net.Socket>((resolve) => {
            const s = net.connect(Number(url.port), url.hostname, () => resolve(s))
            s.on("error", () => undefined)
            s.on("close", () => {
              closedByServer++
            })
          }),
      ),
    )
    const until = Date.now() + 5000
    while (closedByServer < 5 && Date.now() < until) await new Promise((r) => setTimeout(r, 20))
    // The connections over the limit are closed at once (the client's own pooled connections count too).
    expect(closedByServer).toBeGreaterThanOrEqual(5)
    expect(closedByServer).toBeLessThan(45)
    for (const s of sockets) s.destroy()
    // Once they are gone, the client is served again.
    let status = 0
    while (status !== 200 && Date.now() < until + 5000) {
      status = await a.get("/projects/").then(
        (r) => r.status,
        () => 0,
      )
    }
    expect(status).toBe(200)
  })
})
