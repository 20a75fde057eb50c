import { describe, expect, it } from "vitest"
import {
  AGENT_ANSWER_TOKENS,
  agentGroups,
  estimateDocumentRequests,
  pageTokenBudget,
  pageTokens,
  pageWindows,
} from "./ModelRequests.ts"

describe("agentGroups", () => {
  it("splits agents into groups of at most the maximum, in order", () => {
    expect(agentGroups([1, 2, 3, 4, 5], 2)).toEqual([[1, 2], [3, 4], [5]])
    expect(agentGroups([1, 2, 3], 20)).toEqual([[1, 2, 3]])
    expect(agentGroups([], 20)).toEqual([])
    expect(agentGroups([1, 2], 0)).toEqual([[1], [2]])
  })
})

describe("pageWindows", () => {
  const pages = (...tokens: Array<number>) => tokens.map((t, i) => ({ page: i + 1, tokens: t }))
  it("keeps a document that fits in one window", () => {
    expect(pageWindows(pages(10, 20, 30), 100).map((w) => w.map((p) => p.page))).toEqual([[1, 2, 3]])
  })
  it("starts a new window when the next page would exceed the budget", () => {
    expect(pageWindows(pages(40, 40, 40, 10), 90).map((w) => w.map((p) => p.page))).toEqual([
      [1, 2],
      [3, 4],
    ])
  })
  it("gives a page larger than the budget a window of its own", () => {
    expect(pageWindows(pages(10, 500, 10), 100).map((w) => w.map((p) => p.page))).toEqual([[1], [2], [3]])
  })
})

describe("estimateDocumentRequests", () => {
  it("makes one request for a document that fits and up to the maximum of agents", () => {
    const e = estimateDocumentRequests([4000, 4000], 8)
    expect(e.requests).toBe(1)
    expect(e.outputTokens).toBe(8 * AGENT_ANSWER_TOKENS)
    expect(e.inputTokens).toBeGreaterThan(2000)
  })
  it("multiplies agent groups by page windows", () => {
    const budget = { maxAgentsPerRequest: 2, contextTokens: 3000 }
    const perPage = pageTokens(4000)
    // Each window holds as many 1,000-token pages as the budget left for two agents allows.
    const perWindow = Math.floor(pageTokenBudget(budget, 2) / perPage)
    const windows = Math.ceil(10 / perWindow)
    expect(estimateDocumentRequests(Array(10).fill(4000), 5, budget).requests).toBe(3 * windows)
  })
  it("costs nothing without agents or pages", () => {
    expect(estimateDocumentRequests([100], 0).requests).toBe(0)
    expect(estimateDocumentRequests([], 3).requests).toBe(0)
  })
})
