/**
 * The all-in-one process serves GraphQL as a web handler inside the Effect HTTP server. The web request
 * the handler gets aborts when its client goes, also while the response is still streaming (an SSE
 * subscription), as the standalone server's requests do; a response read to its end aborts nothing.
 */

import { nodeServerLayer } from "@dxs/rest-api/Server"
import { HttpServer } from "@effect/platform"
import { Effect, Layer, ManagedRuntime } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { fromWebHandler } from "../src/Server.ts"
import { until } from "./live.ts"

const aborted = new Set<string>()

/** Answers `/stream` with an event stream that never ends, anything else with a short text. */
const handler = async (request: Request) => {
  const path = new URL(request.url).pathname
  request.signal.addEventListener("abort", () => aborted.add(path), { once: true })
  if (path !== "/stream") return new Response("done")
  const body = new ReadableStream<Uint8Array>({
    start: (c) => c.enqueue(new TextEncoder().encode("data: first\n\n")),
  })
  return new Response(body, { headers: { "content-type": "text/event-stream" } })
}

let runtime: ManagedRuntime.ManagedRuntime<HttpServer.HttpServer, unknown>
let origin: string

beforeAll(async () => {
  runtime = ManagedRuntime.make(
    HttpServer.serve()(fromWebHandler(handler)).pipe(
      Layer.provideMerge(nodeServerLayer({ port: 0, host: "127.0.0.1" })),
    ),
  )
  const address = await runtime.runPromise(Effect.map(HttpServer.HttpServer, (s) => s.address))
  if (address._tag !== "TcpAddress") throw new Error("expected a TCP address")
  origin = `http://127.0.0.1:${address.port}`
})

afterAll(async () => {
  await runtime?.dispose()
})

describe("a web handler inside the Effect HTTP server", () => {
  it("sees its request abort when the client goes while the response streams", async () => {
    const abort = new AbortController()
    const res = await fetch(`${origin}/stream`, { signal: abort.signal })
    const reader = res.body!.getReader()
    expect(new TextDecoder().decode((await reader.read()).value)).toBe("data: first\n\n")
    expect(aborted.has("/stream")).toBe(false)
    abort.abort()
    await until("the request to abort", () => aborted.has("/stream"), 10_000)
  })

  it("sees nothing abort when the response is read to its end", async () => {
    const res = await fetch(`${origin}/short`)
    expect(await res.text()).toBe("done")
    await new Promise((r) => setTimeout(r, 200))
    expect(aborted.has("/short")).toBe(false)
  })
})
