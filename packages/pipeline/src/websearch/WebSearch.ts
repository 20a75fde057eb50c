/**
 * Web search for the pipeline's web-search stage (DESIGN §3, stage 7): agents with `enable_web_search`
 * supplement their document values with what a search finds, when a search provider is configured.
 *
 * The provider is any SearXNG-compatible JSON endpoint: `GET {url}?q=<query>&format=json` answering
 * `{ "results": [{ "url", "title", "content" }, …] }` (SearXNG needs `json` among its `search.formats`).
 */

/** One hit: the page's address, its title and the passage the engine matched (plain text). */
export interface WebSearchResult {
  readonly url: string
  readonly title: string
  readonly content: string
}

export interface WebSearchShape {
  /** Best hits first, at most the configured number. Throws an Error (the task is retried) on failure. */
  readonly search: (
    query: string,
    options?: { readonly signal?: AbortSignal | undefined },
  ) => Promise<ReadonlyArray<WebSearchResult>>
}

export interface SearxngOptions {
  /** The search endpoint, e.g. `http://127.0.0.1:8888/search`. */
  readonly url: string
  /** Hits kept per query. */
  readonly maxResults: number
  /** Time limit of one request (default 15 s). */
  readonly timeoutMs?: number | undefined
  /** The HTTP client (default: the global `fetch`). */
  readonly fetch?: typeof globalThis.fetch | undefined
}

const isWebUrl = (value: string): boolean => {
  try {
    const u = new URL(value)
    return u.protocol === "http:" || u.protocol === "https:"
  } catch {
    return false
  }
}

const text = (value: unknown): string => (typeof value === "string" ? value.replace(/\s+/g, " ").trim() : "")

/** Where a request went, for messages: the endpoint without its query string or credentials. */
const endpointLabel = (url: URL): string => `${url.origin}${url.pathname}`

/** A search provider over a SearXNG-compatible JSON endpoint. */
export const searxngSearch = (options: SearxngOptions): WebSearchShape => {
  const doFetch = options.fetch ?? globalThis.fetch
  const timeoutMs = options.timeoutMs ?? 15_000
  const maxResults = Math.max(0, Math.floor(options.maxResults))
  return {
    search: async (query, searchOptions) => {
      const url = new URL(options.url)
      url.searchParams.set("q", query)
      url.searchParams.set("format", "json")
      const where = endpointLabel(url)
      const timeout = AbortSignal.timeout(timeoutMs)
      const signal = searchOptions?.signal ? AbortSignal.any([searchOptions.signal, timeout]) : timeout
      let response: Response
      try {
        response = await doFetch(url, { headers: { accept: "application/json" }, signal })
      } catch (error) {
        if (searchOptions?.signal?.aborted) throw error
        const reason = timeout.aborted
          ? `no answer within ${timeoutMs} ms`
          : error instanceof Error
            ? error.message
            : String(error)
        throw new Error(`web search request to ${where} failed: ${reason}`, { cause: error })
      }
      if (!response.ok) {
        const body = (await response.text().catch(() => "")).slice(0, 200).trim()
        const hint =
          response.status === 403 ? " (is the json format enabled in the search server's settings?)" : ""
        throw new Error(
          `web search at ${where} answered HTTP ${response.status}${hint}${body === "" ? "" : `: ${body}`}`,
        )
      }
      let payload: unknown
      try {
        payload = await response.json()
      } catch (error) {
        throw new Error(`web search at ${where} answered something that is not JSON`, { cause: error })
      }
      const results = (payload as { results?: unknown } | null)?.results
      if (!Array.isArray(results))
        throw new Error(`web search at ${where} answered JSON without a "results" array`)
      const seen = new Set<string>()
      const out: Array<WebSearchResult> = []
      for (const entry of results as ReadonlyArray<Record<string, unknown> | null>) {
        if (out.length >= maxResults) break
        const address = typeof entry?.url === "string" ? entry.url.trim() : ""
        if (!isWebUrl(address) || seen.has(address)) continue
        seen.add(address)
        out.push({ url: address, title: text(entry?.title), content: text(entry?.content) })
      }
      return out
    },
  }
}
