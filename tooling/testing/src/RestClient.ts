/**
 * A client of the REST API for tests, over `fetch` or from a chosen loopback address, and the assertions
 * its answers are checked with (problem+json, ids, timestamps).
 */
import { randomUUID } from "node:crypto"
import * as http from "node:http"
import { expect } from "vitest"

export interface Reply<T = any> {
  readonly status: number
  readonly headers: Headers
  readonly body: T
  readonly text: string
}

export interface Client {
  readonly get: <T = any>(path: string) => Promise<Reply<T>>
  readonly delete: <T = any>(path: string) => Promise<Reply<T>>
  readonly post: <T = any>(path: string, body?: unknown) => Promise<Reply<T>>
  readonly patch: <T = any>(path: string, body?: unknown) => Promise<Reply<T>>
  readonly put: <T = any>(path: string, body?: unknown) => Promise<Reply<T>>
  /** Sends a FormData (multipart) or URLSearchParams (url-encoded) body. */
  readonly send: <T = any>(
    method: string,
    path: string,
    body: FormData | URLSearchParams | string,
    contentType?: string,
  ) => Promise<Reply<T>>
}

const read = async (res: Response): Promise<Reply> => {
  const text = await res.text()
  let body: unknown = text
  if (text !== "" && /json/.test(res.headers.get("content-type") ?? "")) body = JSON.parse(text)
  return { status: res.status, headers: res.headers, body, text }
}

/** A client of the REST API at `base` (with `/api/v1`), sending the API key `key` when given. */
export const restClient = (base: string, key: string | undefined): Client => {
  const headers = (extra: Record<string, string> = {}) => ({
    ...(key ? { "x-api-key": key } : {}),
    ...extra,
  })
  const json = (method: string) => async (p: string, body?: unknown) =>
    read(
      await fetch(base + p, {
        method,
        headers: headers(body === undefined ? {} : { "content-type": "application/json" }),
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      }),
    )
  return {
    get: (p) => fetch(base + p, { headers: headers() }).then(read),
    delete: (p) => fetch(base + p, { method: "DELETE", headers: headers() }).then(read),
    post: json("POST"),
    patch: json("PATCH"),
    put: json("PUT"),
    send: async (method, p, body, contentType) =>
      read(
        await fetch(base + p, {
          method,
          headers: headers(contentType ? { "content-type": contentType } : {}),
          body,
        }),
      ),
  }
}

/**
 * An HTTP request sent from `localAddress` (any address of 127.0.0.0/8), so the server sees that address
 * as the client's; a new connection each time.
 */
export const fetchFrom = (
  localAddress: string,
  url: string,
  init: { readonly method?: string; readonly headers?: Record<string, string>; readonly body?: string } = {},
): Promise<Reply> =>
  new Promise((resolve, reject) => {
    const req = http.request(
      url,
      { method: init.method ?? "GET", headers: init.headers, localAddress, agent: false },
      (res) => {
        const chunks: Array<Buffer> = []
        res.on("data", (c: Buffer) => chunks.push(c))
        res.on("error", reject)
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8")
          const headers = new Headers()
          for (const [name, value] of Object.entries(res.headers))
            for (const v of Array.isArray(value) ? value : value === undefined ? [] : [value])
              headers.append(name, v)
          let body: unknown = text
          if (text !== "" && /json/.test(headers.get("content-type") ?? "")) body = JSON.parse(text)
          resolve({ status: res.statusCode ?? 0, headers, body, text })
        })
      },
    )
    req.on("error", reject)
    req.end(init.body)
  })

/** Asserts an RFC 9457 problem+json response with this status. */
export const expectProblem = (r: { status: number; headers: Headers; body: any }, status: number) => {
  expect(r.status).toBe(status)
  expect(r.headers.get("content-type")).toContain("application/problem+json")
  expect(r.body).toMatchObject({
    status,
    title: expect.any(String),
    detail: expect.any(String),
    type: expect.any(String),
  })
  expect(r.body._tag).toBeUndefined()
}

export const uuid = expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/)
export const timestamp = expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/)

/** Creates a project with a unique name and returns its id. */
export const createProject = async (client: Client, body: Record<string, unknown> = {}) => {
  const r = await client.post("/projects/", { name: `P ${randomUUID().slice(0, 8)}`, ...body })
  expect(r.status).toBe(201)
  return r.body.id as string
}
