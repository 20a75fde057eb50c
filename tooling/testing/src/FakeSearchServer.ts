/**
 * A fake SearXNG-compatible search server, for tests only: a real `node:http` server on 127.0.0.1 (a free
 * port) that answers `GET /search?q=…&format=json` with `{ query, number_of_results, results }`.
 *
 * - `results` is the fixed list every query gets, or a function of the query returning the hits or a
 *   scripted failure (`{ status, body? }`: that HTTP status and body).
 * - A request without `format=json` gets 403, as a SearXNG server without the json format does.
 * - Every request is recorded (`requests`: path, query and the status answered).
 *
 * Not part of the product's runtime: nothing in the service starts it.
 */
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import type { WebSearchResult } from "@dxs/pipeline/websearch/WebSearch"

export type FakeSearchAnswer =
  | ReadonlyArray<WebSearchResult>
  | { readonly status: number; readonly body?: string | undefined }

export interface FakeSearchServerOptions {
  readonly results: ReadonlyArray<WebSearchResult> | ((query: string) => FakeSearchAnswer)
}

export interface FakeSearchRequest {
  readonly path: string
  readonly query: string
  readonly params: URLSearchParams
  readonly status: number
}

export interface FakeSearchServer {
  /** The search endpoint: `http://127.0.0.1:<port>/search`. */
  readonly url: string
  readonly requests: ReadonlyArray<FakeSearchRequest>
  readonly close: () => Promise<void>
}

export const startFakeSearchServer = async (options: FakeSearchServerOptions): Promise<FakeSearchServer> => {
  const requests: Array<FakeSearchRequest> = []
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1")
    const query = url.searchParams.get("q") ?? ""
    const answer = (status: number, contentType: string, body: string) => {
      requests.push({ path: url.pathname, query, params: url.searchParams, status })
      res.writeHead(status, { "content-type": contentType }).end(body)
    }
    if (req.method !== "GET" || url.pathname !== "/search") return answer(404, "text/plain", "not found")
    if (url.searchParams.get("format") !== "json") return answer(403, "text/plain", "format not allowed")
    let hits: FakeSearchAnswer
    try {
      hits = typeof options.results === "function" ? options.results(query) : options.results
    } catch (error) {
      return answer(500, "text/plain", error instanceof Error ? error.message : String(error))
    }
    if (!Array.isArray(hits)) {
      const failure = hits as { readonly status: number; readonly body?: string | undefined }
      return answer(failure.status, "text/plain", failure.body ?? "")
    }
    const results = (hits as ReadonlyArray<WebSearchResult>).map((h, i) => ({
      ...h,
      engine: "fake",
      score: 1 / (i + 1),
    }))
    answer(
      200,
      "application/json",
      JSON.stringify({ query, number_of_results: results.length, results, answers: [], suggestions: [] }),
    )
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const port = (server.address() as AddressInfo).port
  return {
    url: `http://127.0.0.1:${port}/search`,
    requests,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections()
        server.close((e) => (e ? reject(e) : resolve()))
      }),
  }
}
