import { type FakeSearchServer, startFakeSearchServer } from "@dxs/testing/FakeSearchServer"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { searxngSearch, type WebSearchResult } from "../../src/websearch/WebSearch.ts"

const hit = (n: number): WebSearchResult => ({
  url: `https://example.com/page-${n}`,
  title: `Page ${n}`,
  content: `Content of page ${n}.`,
})

let fake: FakeSearchServer

beforeAll(async () => {
  fake = await startFakeSearchServer({
    results: (query) => {
      if (query === "teapot") return { status: 418, body: "I'm a teapot" }
      if (query === "broken") return { status: 500 }
      if (query === "messy")
        return [
          { url: "https://example.com/a", title: "  A \n title ", content: "one\n\ntwo" },
          { url: "https://example.com/a", title: "duplicate", content: "dropped" },
          { url: "ftp://example.com/b", title: "not web", content: "dropped" },
          { url: "", title: "no address", content: "dropped" },
          { url: "https://example.com/c" } as unknown as WebSearchResult,
        ]
      return [1, 2, 3, 4, 5, 6, 7].map(hit)
    },
  })
})

afterAll(async () => {
  await fake?.close()
})

describe("searxngSearch", () => {
  it("sends the query and format=json, and keeps at most maxResults hits in order", async () => {
    const search = searxngSearch({ url: fake.url, maxResults: 3 })
    const query = 'Acme Corp "founded" & year / 100% ü?'
    const results = await search.search(query)
    expect(results).toEqual([hit(1), hit(2), hit(3)])
    const last = fake.requests.at(-1)!
    expect(last.path).toBe("/search")
    expect(last.query).toBe(query)
    expect(last.params.get("format")).toBe("json")
  })

  it("keeps query parameters of the configured endpoint", async () => {
    const search = searxngSearch({ url: `${fake.url}?language=en`, maxResults: 10 })
    expect(await search.search("anything")).toHaveLength(7)
    const last = fake.requests.at(-1)!
    expect(last.params.get("language")).toBe("en")
    expect(last.params.get("q")).toBe("anything")
  })

  it("normalises hits: whitespace collapsed, duplicates and non-web addresses dropped, missing text empty", async () => {
    const results = await searxngSearch({ url: fake.url, maxResults: 10 }).search("messy")
    expect(results).toEqual([
      { url: "https://example.com/a", title: "A title", content: "one two" },
      { url: "https://example.com/c", title: "", content: "" },
    ])
  })

  it("throws a clear error on an error status", async () => {
    const search = searxngSearch({ url: fake.url, maxResults: 5 })
    await expect(search.search("teapot")).rejects.toThrow(
      `web search at ${fake.url} answered HTTP 418: I'm a teapot`,
    )
    await expect(search.search("broken")).rejects.toThrow(/answered HTTP 500$/)
  })

  it("explains a 403 (the json format not enabled)", async () => {
    const search = searxngSearch({
      url: fake.url,
      maxResults: 5,
      // A client that drops format=json, as a server without the json format sees it.
      fetch: (input, init) => {
        const u = new URL(String(input))
        u.searchParams.delete("format")
        return fetch(u, init)
      },
    })
    await expect(search.search("x")).rejects.toThrow(/HTTP 403 \(is the json format enabled/)
  })

  it("throws on an answer that is not search JSON", async () => {
    const notJson = searxngSearch({
      url: fake.url,
      maxResults: 5,
      fetch: async () => new Response("<html>hello</html>", { status: 200 }),
    })
    await expect(notJson.search("x")).rejects.toThrow(/is not JSON/)
    const noResults = searxngSearch({
      url: fake.url,
      maxResults: 5,
      fetch: async () => Response.json({ answers: [] }),
    })
    await expect(noResults.search("x")).rejects.toThrow(/without a "results" array/)
  })

  it("throws on an unreachable server and on a timeout", async () => {
    const closed = await startFakeSearchServer({ results: [] })
    await closed.close()
    await expect(searxngSearch({ url: closed.url, maxResults: 5 }).search("x")).rejects.toThrow(
      `web search request to ${closed.url} failed`,
    )
    const slow = searxngSearch({
      url: fake.url,
      maxResults: 5,
      timeoutMs: 50,
      fetch: (_input, init) =>
        new Promise((_resolve, reject) =>
          init?.signal?.addEventListener("abort", () => reject(init.signal?.reason)),
        ),
    })
    await expect(slow.search("x")).rejects.toThrow(/no answer within 50 ms/)
  })

  it("stops when the caller aborts", async () => {
    const controller = new AbortController()
    const search = searxngSearch({
      url: fake.url,
      maxResults: 5,
      fetch: (_input, init) =>
        new Promise((_resolve, reject) =>
          init?.signal?.addEventListener("abort", () => reject(new Error("aborted by caller"))),
        ),
    })
    const pending = search.search("x", { signal: controller.signal })
    controller.abort()
    await expect(pending).rejects.toThrow("aborted by caller")
  })
})
