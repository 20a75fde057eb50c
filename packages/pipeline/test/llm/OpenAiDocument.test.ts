/**
 * One request per document: every agent of the request answers from the same pages in one structured
 * answer; prompts laid out for prefix caching; answers checked against their pages and retried once with the
 * correction; confidences from token log-probabilities; cached prompt tokens accounted for.
 */
import {
  answerDocument,
  type ChatCompletionRequestBody,
  documentRequest,
  type FakeOpenAiServer,
  labelledLines,
  startFakeOpenAiServer,
} from "@dxs/testing/FakeOpenAiServer"
import { Effect } from "effect"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import type { DocumentExtractRequest } from "../../src/llm/LanguageModel.ts"
import { agent, dimension, modelFor, page, schemaOf } from "./FakeOpenAi.ts"

let server: FakeOpenAiServer
beforeAll(async () => {
  // Every token of an answer is given probability 0.8.
  server = await startFakeOpenAiServer({ logprob: () => Math.log(0.8) })
})
afterAll(() => server.close())
beforeEach(() => server.reset())

const run = Effect.runPromise

const pages = [
  page(1, "Master services agreement\nEffective Date: March 1, 2024\nGoverning law: Delaware"),
  page(2, "Fees\nAnnual fee: 12,000 USD\nTerm: two (2) years"),
]

const request = (names: ReadonlyArray<string>, overrides: Partial<DocumentExtractRequest> = {}) =>
  ({
    document: { id: "doc-1", name: "msa.pdf" },
    pages,
    agents: names.map((name, i) => ({
      agent: agent({ id: `agent-${i + 1}`, name, valueType: name === "Annual fee" ? "number" : "string" }),
      dimensions: [dimension({ name: "Document", kind: "document", dimensionId: "dim-doc" })],
    })),
    referenceDate: "2026-01-01",
    ...overrides,
  }) satisfies DocumentExtractRequest

/** Answers like a model reading "Label: value" lines, the label being the agent's name. */
const readLabels = (body: ChatCompletionRequestBody) => {
  const asked = documentRequest(body)
  if (asked === undefined) return {}
  return answerDocument(asked, (a) => labelledLines(asked, a, { firstOnly: true }))
}

describe("extractDocument", () => {
  it("asks for every agent of the request in one request, with a member per agent", async () => {
    server.respond = readLabels
    const r = await run(modelFor(server).extractDocument(request(["Governing law", "Annual fee", "Term"])))
    expect(server.requests).toHaveLength(1)
    const body = server.requests[0]!.body
    expect(body.response_format?.json_schema?.name).toBe("extract_document")
    expect(Object.keys(schemaOf(body).properties)).toEqual(["A1", "A2", "A3"])
    expect(r.agents.map((a) => [a.agentId, a.values.map((v) => [v.value, v.pageNumber])])).toEqual([
      ["agent-1", [["Delaware", 1]]],
      ["agent-2", [["12000", 2]]],
      ["agent-3", [["two (2) years", 2]]],
    ])
    expect(r.usage.calls).toBe(1)
  })

  it("sends the instructions and the pages first, byte-identical across requests for the document", async () => {
    server.respond = readLabels
    const model = modelFor(server)
    await run(model.extractDocument(request(["Governing law"])))
    await run(model.extractDocument(request(["Annual fee", "Term"])))
    const [a, b] = server.requests.map((r) => r.body.messages ?? [])
    expect(a!.map((m) => m.role)).toEqual(["system", "user", "user"])
    expect(b!.slice(0, 2)).toEqual(a!.slice(0, 2))
    expect(a![1]!.content).toContain("--- Page 2 ---\nFees")
    expect(a![1]!.content).not.toContain("Governing law\n")
    expect(a![2]!.content).toContain("Agent: Governing law")
    expect(b![2]!.content).toContain("Agent: Term")
  })

  it("reports the prompt tokens the server served from its prefix cache", async () => {
    server.respond = readLabels
    const long = [page(1, `Governing law: Delaware\n${"Background text of the agreement. ".repeat(200)}`)]
    const model = modelFor(server)
    const first = await run(model.extractDocument(request(["Governing law"], { pages: long })))
    const second = await run(model.extractDocument(request(["Term"], { pages: long })))
    expect(first.usage.cachedTokens).toBe(0)
    expect(second.usage.cachedTokens).toBeGreaterThan(1000)
    expect(second.usage.cachedTokens).toBeLessThan(second.usage.promptTokens)
  })

  it("gives each value the model's confidence from the log-probabilities of its tokens", async () => {
    server.respond = readLabels
    const r = await run(modelFor(server).extractDocument(request(["Governing law"])))
    expect(server.requests[0]!.body.logprobs).toBe(true)
    expect(r.agents[0]!.values[0]!.modelConfidence).toBeCloseTo(0.8, 3)
  })

  it("asks again without log-probabilities when the server refuses them", async () => {
    server.respond = readLabels
    server.fail({ status: 400, body: { error: { message: "logprobs are not supported by this model" } } })
    const model = modelFor(server)
    const r = await run(model.extractDocument(request(["Governing law"])))
    expect(r.agents[0]!.values.map((v) => v.value)).toEqual(["Delaware"])
    expect(server.requests.map((q) => q.body.logprobs)).toEqual([true, undefined])
    expect(r.agents[0]!.values[0]!.modelConfidence).toBeUndefined()
  })

  it("retries an answer whose passage is not on its page once, with the correction, for its agent only", async () => {
    let calls = 0
    server.respond = (body) => {
      calls += 1
      const asked = documentRequest(body)!
      if (calls === 1)
        return {
          A1: [
            { value: "Delaware", relevant_passage: "Governing law: Delaware", page_number: 1, reasoning: "" },
          ],
          A2: [
            {
              value: "Nevada",
              relevant_passage: "This agreement is governed by Nevada law",
              page_number: 2,
              reasoning: "",
            },
          ],
        }
      expect(asked.agents.map((a) => a.name)).toEqual(["Venue"])
      expect(asked.corrections).toHaveLength(1)
      expect(asked.corrections[0]).toMatch(
        /^A1: the passage "This agreement is governed by Nevada law" is not on page 2/,
      )
      return {
        A1: [
          { value: "Delaware", relevant_passage: "Governing law: Delaware", page_number: 1, reasoning: "" },
        ],
      }
    }
    const r = await run(modelFor(server).extractDocument(request(["Governing law", "Venue"])))
    expect(server.requests).toHaveLength(2)
    // The retry's prefix is the first request's.
    expect(server.requests[1]!.body.messages!.slice(0, 2)).toEqual(
      server.requests[0]!.body.messages!.slice(0, 2),
    )
    expect(r.agents[1]!.values).toMatchObject([
      { value: "Delaware", relevantPassage: "Governing law: Delaware", pageNumber: 1 },
    ])
    expect(r.usage.calls).toBe(2)
  })

  it("returns a still ungrounded answer as the model gave it, and drops one withdrawn on correction", async () => {
    server.respond = (body) => {
      const asked = documentRequest(body)!
      const retry = asked.corrections.length > 0
      return answerDocument(asked, (a) =>
        a.name === "Venue"
          ? [{ value: "Nevada", relevant_passage: "Courts of Nevada", page_number: 2, reasoning: "" }]
          : retry
            ? []
            : [{ value: "Ohio", relevant_passage: "Governed by Ohio law", page_number: 1, reasoning: "" }],
      )
    }
    const r = await run(modelFor(server).extractDocument(request(["Governing law", "Venue"])))
    expect(server.requests).toHaveLength(2)
    expect(r.agents[0]!.values).toEqual([])
    expect(r.agents[1]!.values).toMatchObject([
      { value: "Nevada", relevantPassage: "Courts of Nevada", pageNumber: 2 },
    ])
  })

  it("asks nothing for agents whose dimension has no value here, or without pages", async () => {
    const split = request(["Governing law"])
    const r = await run(
      modelFor(server).extractDocument({
        ...split,
        agents: [
          { ...split.agents[0]!, dimensions: [dimension({ name: "Region", kind: "dynamic", values: [] })] },
        ],
      }),
    )
    expect(r.agents).toEqual([{ agentId: "agent-1", values: [] }])
    const none = await run(modelFor(server).extractDocument(request(["Governing law"], { pages: [] })))
    expect(none.agents[0]!.values).toEqual([])
    expect(server.requests).toHaveLength(0)
  })
})
