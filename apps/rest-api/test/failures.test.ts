import { createServer } from "node:http"
import { HttpRouter, HttpServer, HttpServerResponse } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { Effect, Layer, Logger, ManagedRuntime } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { guard } from "../src/Guard.ts"
import { problemJson } from "../src/Problem.ts"

// The middleware every REST route runs in, around routes that fail on the server's side.
const logged: Array<{ readonly message: string; readonly annotations: Record<string, unknown> }> = []
const capture = Logger.make(({ message, annotations, cause }) => {
  const text = [message].flat().map(String).join(" ")
  logged.push({
    message: `${text} ${cause._tag === "Empty" ? "" : String(cause)}`,
    annotations: Object.fromEntries(annotations),
  })
})

const app = HttpRouter.empty.pipe(
  HttpRouter.get("/api/v1/boom", Effect.die(new Error("the disk caught fire"))),
  HttpRouter.get("/api/v1/ok", HttpServerResponse.text("fine")),
)

let base = ""
let runtime: ManagedRuntime.ManagedRuntime<HttpServer.HttpServer, unknown>
beforeAll(async () => {
  runtime = ManagedRuntime.make(
    HttpServer.serve(app, (a) => problemJson(guard(a))).pipe(
      Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" })),
      Layer.provide(Logger.replace(Logger.defaultLogger, capture)),
    ),
  )
  const address = await runtime.runPromise(Effect.map(HttpServer.HttpServer, (s) => s.address))
  if (address._tag !== "TcpAddress") throw new Error("expected a TCP address")
  base = `http://127.0.0.1:${address.port}`
})
afterAll(() => runtime.dispose())

describe("a request that fails on the server's side", () => {
  it("answers 500 problem+json carrying the request id, and logs the failure with the same id", async () => {
    const res = await fetch(`${base}/api/v1/boom`, { headers: { "x-request-id": "incident-7" } })
    expect(res.status).toBe(500)
    expect(res.headers.get("content-type")).toContain("application/problem+json")
    expect(res.headers.get("x-request-id")).toBe("incident-7")
    const body = await res.json()
    expect(body).toMatchObject({ status: 500, request_id: "incident-7" })
    expect(JSON.stringify(body)).not.toContain("disk caught fire")
    const entry = logged.find((l) => l.annotations.request_id === "incident-7")
    expect(entry?.message).toContain("the disk caught fire")
    expect(entry?.annotations).toMatchObject({ method: "GET", url: "/api/v1/boom" })
  })

  it("logs only its request line for a request that succeeds", async () => {
    const before = logged.length
    const res = await fetch(`${base}/api/v1/ok`, { headers: { "x-request-id": "fine-1" } })
    expect(res.status).toBe(200)
    expect(res.headers.get("x-request-id")).toBe("fine-1")
    const lines = logged.slice(before)
    expect(lines.map((l) => l.message.trim())).toEqual(["request"])
    expect(lines[0]?.annotations).toMatchObject({ request_id: "fine-1", status: 200, method: "GET" })
  })

  it("logs the status the client got: 404 for an unknown path, 405 for a method the path does not have", async () => {
    const unknown = await fetch(`${base}/api/v1/nowhere/`, { headers: { "x-request-id": "lost-1" } })
    expect(unknown.status).toBe(404)
    const wrong = await fetch(`${base}/api/v1/projects/`, {
      method: "DELETE",
      headers: { "x-request-id": "wrong-1" },
    })
    expect(wrong.status).toBe(405)
    expect(wrong.headers.get("allow")).toBe("GET, POST")
    const line = (id: string) =>
      logged.find((l) => l.annotations.request_id === id && l.message.trim() === "request")
    expect(line("lost-1")?.annotations).toMatchObject({ status: 404 })
    expect(line("wrong-1")?.annotations).toMatchObject({ status: 405, method: "DELETE" })
    expect(
      logged.some((l) => l.annotations.request_id === "lost-1" && l.message.startsWith("request failed")),
    ).toBe(false)
  })
})
