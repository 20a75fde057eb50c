import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import type { DerivedInput, ExtractRequest } from "../../src/llm/LanguageModel.ts"
import { locatePassage } from "../../src/llm/OpenAi.ts"
import {
  agent,
  candidate,
  dimension,
  type FakeOpenAiServer,
  modelFor,
  page,
  schemaName,
  schemaOf,
  useFakeOpenAiServer,
  userMessage,
} from "./FakeOpenAi.ts"

let server: FakeOpenAiServer
useFakeOpenAiServer((started) => {
  server = started
})

const run = Effect.runPromise

const pages = [
  page(1, "Annual report 2024\nPrepared by the finance team."),
  page(
    2,
    "Revenue by region\nEurope:   1.234.567 EUR\nUnited States: 2,500,000 EUR\nAsia did not report.\nThe “core” segment grew 4 %.",
  ),
  page(3, "Outlook\nWe expect moderate growth in 2025."),
]

const extractRequest = (overrides: Partial<ExtractRequest> = {}): ExtractRequest => ({
  agent: agent({ valueType: "number", unit: "EUR" }),
  document: { id: "doc-1", name: "report.pdf" },
  pages,
  dimensions: [
    dimension({ name: "Region", values: ["Europe", "United States", "Asia"], kind: "dynamic" }),
    dimension({ name: "Document", kind: "document", dimensionId: "dim-doc" }),
    dimension({ name: "Client", kind: "tag", dimensionId: "dim-client", values: ["Acme"] }),
  ],
  referenceDate: "2026-03-01",
  ...overrides,
})

describe("extract", () => {
  it("maps dimension names to ids, normalises numbers and fills the fixed dimensions", async () => {
    server.respond = () => ({
      values: [
        {
          dimension_values: { Region: "Europe" },
          value: "1.234.567",
          relevant_passage: "Europe:   1.234.567 EUR",
          reasoning: "The Europe row of the revenue table.",
          page_number: 2,
        },
        {
          dimension_values: { region: "united states" },
          value: "2,500,000 EUR",
          relevant_passage: "United States: 2,500,000 EUR",
          reasoning: "US row.",
          page_number: 2,
        },
        {
          dimension_values: { Region: "Asia" },
          value: null,
          relevant_passage: "",
          reasoning: "",
          page_number: 2,
        },
        {
          dimension_values: { Region: "Asia" },
          value: "  ",
          relevant_passage: "",
          reasoning: "",
          page_number: 2,
        },
        {
          dimension_values: { Region: "Mars" },
          value: "5",
          relevant_passage: "Asia did not report.",
          reasoning: "",
          page_number: 2,
        },
      ],
    })
    const result = await run(modelFor(server).extract(extractRequest()))
    expect(result.values).toEqual([
      {
        dimensionValues: { "dim-region": "Europe", "dim-doc": "report.pdf", "dim-client": "Acme" },
        value: "1234567",
        relevantPassage: "Europe:   1.234.567 EUR",
        reasoning: "The Europe row of the revenue table.",
        pageNumber: 2,
      },
      {
        dimensionValues: { "dim-region": "United States", "dim-doc": "report.pdf", "dim-client": "Acme" },
        value: "2500000",
        relevantPassage: "United States: 2,500,000 EUR",
        reasoning: "US row.",
        pageNumber: 2,
      },
    ])
    expect(result.usage.calls).toBe(1)
  })

  it("describes the wanted combinations and constrains dimension values in the schema", async () => {
    await run(
      modelFor(server).extract(
        extractRequest({
          dimensions: [
            dimension({ name: "Region", values: ["Europe", "Asia"] }),
            dimension({ name: "Year", values: ["2024", "2025"], kind: "dynamic" }),
          ],
        }),
      ),
    )
    const body = server.requests[0]!.body
    expect(schemaName(body)).toBe("extract_values")
    const user = userMessage(body)
    expect(user).toContain('1. Region = "Europe", Year = "2024"')
    expect(user).toContain('4. Region = "Asia", Year = "2025"')
    expect(user).toContain("--- Page 2 ---\nRevenue by region")
    expect(user).toContain("Unit: EUR")
    const item = schemaOf(body).properties.values.items
    expect(item.properties.dimension_values.properties.Year).toEqual({
      type: "string",
      enum: ["2024", "2025"],
    })
    expect(item.properties.dimension_values.required).toEqual(["Region", "Year"])
    expect(item.properties.value.type).toEqual(["string", "null"])
  })

  it("keeps one value per combination", async () => {
    server.respond = () => ({
      values: [
        { value: "1", relevant_passage: "Prepared by the finance team.", reasoning: "", page_number: 1 },
        { value: "2", relevant_passage: "Outlook", reasoning: "", page_number: 3 },
      ],
    })
    const result = await run(modelFor(server).extract(extractRequest({ dimensions: [] })))
    expect(result.values.map((v) => v.value)).toEqual(["1"])
  })

  it("repairs passages that are not verbatim and never cites text absent from the pages", async () => {
    server.respond = () => ({
      values: [
        // Spacing and quote style differ from the page.
        {
          dimension_values: { Region: "Europe" },
          value: "4",
          relevant_passage: 'The "core" segment\ngrew 4 %.',
          reasoning: "",
          page_number: 2,
        },
        // Paraphrased: the best matching line of the cited page is cited instead.
        {
          dimension_values: { Region: "United States" },
          value: "2500000",
          relevant_passage: "Revenue in the United States was 2.5 million",
          reasoning: "",
          page_number: 2,
        },
        // Nothing in any page supports it: dropped.
        {
          dimension_values: { Region: "Asia" },
          value: "77",
          relevant_passage: "Quarterly dividends rose sharply",
          reasoning: "",
          page_number: 2,
        },
      ],
    })
    const result = await run(modelFor(server).extract(extractRequest()))
    expect(result.values.map((v) => [v.value, v.relevantPassage, v.pageNumber])).toEqual([
      ["4", "The “core” segment grew 4 %.", 2],
      ["2500000", "United States: 2,500,000 EUR", 2],
    ])
    for (const v of result.values) expect(pages[v.pageNumber - 1]!.text).toContain(v.relevantPassage)
  })

  it("moves the page number to the page that holds the passage, and clamps unknown pages", async () => {
    server.respond = () => ({
      values: [
        {
          dimension_values: { Region: "Europe" },
          value: "2025",
          relevant_passage: "We expect moderate growth in 2025.",
          reasoning: "",
          page_number: 1,
        },
        {
          dimension_values: { Region: "Asia" },
          value: "x",
          relevant_passage: "Outlook",
          reasoning: "",
          page_number: 99,
        },
      ],
    })
    const result = await run(
      modelFor(server).extract(extractRequest({ agent: agent({ valueType: "string" }) })),
    )
    expect(result.values.map((v) => v.pageNumber)).toEqual([3, 3])
  })

  it("asks nothing when a dimension has no values or there are no pages", async () => {
    const model = modelFor(server)
    const none = await run(
      model.extract(
        extractRequest({ dimensions: [dimension({ name: "Region", kind: "dynamic", values: [] })] }),
      ),
    )
    expect(none.values).toEqual([])
    const noPages = await run(model.extract(extractRequest({ pages: [] })))
    expect(noPages.values).toEqual([])
    expect(server.requests).toHaveLength(0)
  })

  it("works with the default responder (an empty answer)", async () => {
    const result = await run(modelFor(server).extract(extractRequest()))
    expect(result.values).toEqual([])
    expect(result.usage.calls).toBe(1)
  })
})

describe("locatePassage", () => {
  it("returns verbatim page text or nothing", () => {
    const p = [page(4, "Line one\nTotal: 1,000 USD\nLine three")]
    expect(locatePassage(p, 4, "Total: 1,000 USD", "1000", "number")).toEqual({
      pageNumber: 4,
      passage: "Total: 1,000 USD",
    })
    expect(locatePassage(p, 4, "total:  1,000 usd", "1000", "number")).toEqual({
      pageNumber: 4,
      passage: "Total: 1,000 USD",
    })
    expect(locatePassage(p, 1, "", "1000", "number")).toEqual({ pageNumber: 4, passage: "Total: 1,000 USD" })
    expect(locatePassage(p, 4, "Invented sentence", "42", "number")).toBeUndefined()
    expect(locatePassage([], 1, "x", "x", "string")).toBeUndefined()
  })
})

describe("discoverDimensionValues", () => {
  it("lists distinct values, reusing known spellings", async () => {
    server.respond = () => ({ values: ["europe", "Europe", " United  States ", "", "Asia"] })
    const result = await run(
      modelFor(server).discoverDimensionValues({
        agent: agent(),
        dimension: dimension({
          name: "Region",
          kind: "dynamic",
          values: ["Europe"],
          exampleValues: "Europe, Asia",
        }),
        document: { id: "doc-1", name: "report.pdf" },
        pages,
      }),
    )
    expect(result.values).toEqual(["Europe", "United States", "Asia"])
    const body = server.requests[0]!.body
    expect(schemaName(body)).toBe("discover_dimension_values")
    expect(userMessage(body)).toContain("Dimension: Region")
    expect(userMessage(body)).toContain("Example values: Europe, Asia")
  })
})

describe("checkConsistency", () => {
  it("answers without a call when all values are equal and there are no custom instructions", async () => {
    const result = await run(
      modelFor(server).checkConsistency({
        agent: agent({ valueType: "number" }),
        resultName: "Revenue",
        extractions: [candidate("a", "1,000"), candidate("b", "1000.00"), candidate("c", "1000")],
      }),
    )
    expect(result.verdicts.map((v) => [v.id, v.consistent])).toEqual([
      ["a", true],
      ["b", true],
      ["c", true],
    ])
    expect(result.summary).toBeNull()
    expect(result.usage).toEqual({
      calls: 0,
      cacheHits: 0,
      promptTokens: 0,
      cachedTokens: 0,
      completionTokens: 0,
    })
    expect(server.requests).toHaveLength(0)
  })

  it("asks the model when values differ, mapping labels back to ids", async () => {
    server.respond = () => ({
      verdicts: [
        { id: "E1", consistent: true, justification: "Agrees with the audited report." },
        { id: "E2", consistent: false, justification: "A draft figure." },
      ],
      summary: "The draft states a different revenue.",
    })
    const result = await run(
      modelFor(server).checkConsistency({
        agent: agent({ valueType: "number" }),
        resultName: "Revenue",
        extractions: [candidate("a", "1000"), candidate("b", "1200"), candidate("c", "1000")],
      }),
    )
    expect(result.verdicts).toEqual([
      { id: "a", consistent: true, justification: "Agrees with the audited report." },
      { id: "b", consistent: false, justification: "A draft figure." },
      { id: "c", consistent: false, justification: "not assessed by the model" },
    ])
    expect(result.summary).toBe("The draft states a different revenue.")
    expect(result.usage.calls).toBe(1)
    const body = server.requests[0]!.body
    expect(schemaName(body)).toBe("check_consistency")
    expect(userMessage(body)).toContain('E2: value "1200"')
  })

  it("asks the model when custom instructions are given, even for equal values", async () => {
    server.respond = () => ({
      verdicts: [{ id: "E1", consistent: true, justification: "ok" }],
      summary: "ignored when all agree",
    })
    const result = await run(
      modelFor(server).checkConsistency({
        agent: agent({ inconsistencyInstructions: "Values from drafts are inconsistent." }),
        resultName: "Revenue",
        extractions: [candidate("a", "x")],
      }),
    )
    expect(result.verdicts).toEqual([{ id: "a", consistent: true, justification: "ok" }])
    expect(result.summary).toBeNull()
    expect(userMessage(server.requests[0]!.body)).toContain("Values from drafts are inconsistent.")
  })
})

describe("resolve", () => {
  it("answers No result without a call when there are no extractions", async () => {
    const result = await run(
      modelFor(server).resolve({ agent: agent(), resultName: "Revenue", extractions: [] }),
    )
    expect(result).toMatchObject({ value: null, status: "No result", usedExtractionIds: [] })
    expect(server.requests).toHaveLength(0)
  })

  it("resolves equal consistent values without a call", async () => {
    const result = await run(
      modelFor(server).resolve({
        agent: agent({ valueType: "number" }),
        resultName: "Revenue",
        extractions: [
          { ...candidate("a", "1,000.00"), consistent: true },
          { ...candidate("b", "1000"), consistent: null },
        ],
      }),
    )
    expect(result).toMatchObject({ value: "1000", status: "Resolved", usedExtractionIds: ["a", "b"] })
    expect(result.usage.calls).toBe(0)
    expect(server.requests).toHaveLength(0)
  })

  it("asks the model when values differ, with complex calculations, or with custom instructions", async () => {
    server.respond = () => ({
      justification: "Sum of both documents.",
      used_extraction_ids: ["E1", "E2", "E9"],
      status: "Resolved",
      value: "3,000",
    })
    const model = modelFor(server)
    const result = await run(
      model.resolve({
        agent: agent({ valueType: "number", enableComplexCalculations: true }),
        resultName: "Revenue",
        extractions: [
          { ...candidate("a", "1000"), consistent: true },
          { ...candidate("b", "2000"), consistent: true },
        ],
      }),
    )
    expect(result).toMatchObject({
      value: "3000",
      status: "Resolved",
      justification: "Sum of both documents.",
      usedExtractionIds: ["a", "b"],
    })
    const body = server.requests[0]!.body
    expect(schemaName(body)).toBe("resolve_value")
    expect(userMessage(body)).toContain("combine the extracted values arithmetically")
    const schema = schemaOf(body)
    expect(schema.properties.status.enum).toContain("Requires attention")

    await run(
      model.resolve({
        agent: agent({ resolutionInstructions: "Prefer the newest document." }),
        resultName: "Revenue",
        extractions: [{ ...candidate("a", "x"), consistent: true }],
      }),
    )
    expect(server.requests).toHaveLength(2)
  })

  it("never reports a resolved null", async () => {
    server.respond = () => ({
      justification: "",
      used_extraction_ids: ["E1"],
      status: "Resolved",
      value: null,
    })
    const result = await run(
      modelFor(server).resolve({
        agent: agent(),
        resultName: "Revenue",
        extractions: [
          { ...candidate("a", "x"), consistent: false },
          { ...candidate("b", "y"), consistent: true },
        ],
      }),
    )
    expect(result).toMatchObject({ value: null, status: "No result", usedExtractionIds: [] })
  })
})

describe("derive", () => {
  const inputs: ReadonlyArray<DerivedInput> = [
    {
      agentId: "a1",
      agentName: "Revenue",
      resultId: "r1",
      dimensionValues: { Year: "2024" },
      value: "1000",
    },
    { agentId: "a2", agentName: "Costs", resultId: "r2", dimensionValues: {}, value: null },
  ]

  it("derives a value from the inputs", async () => {
    server.respond = () => ({ reasoning: "Revenue minus costs.", value: " 1 000 " })
    const result = await run(
      modelFor(server).derive({
        agent: agent({ valueType: "number", derivedPrompt: "@Revenue minus @Costs" }),
        resultName: "Profit",
        inputs,
      }),
    )
    expect(result).toMatchObject({ value: "1000", reasoning: "Revenue minus costs." })
    const user = userMessage(server.requests[0]!.body)
    expect(schemaName(server.requests[0]!.body)).toBe("derive_value")
    expect(user).toContain("Prompt: @Revenue minus @Costs")
    expect(user).toContain('- @Revenue [Year = 2024]: "1000"')
    expect(user).toContain("- @Costs: no result")
  })

  it("makes evaluation agents answer a number", async () => {
    server.respond = () => ({ reasoning: "Meets most criteria.", value: "8.50" })
    const evaluation = agent({ isEvaluation: true, derivedPrompt: "Score the disclosure quality 0-10" })
    const scored = await run(modelFor(server).derive({ agent: evaluation, resultName: "Quality", inputs }))
    expect(scored.value).toBe("8.5")
    expect(userMessage(server.requests[0]!.body)).toContain(
      "Evaluation criterion: Score the disclosure quality",
    )

    server.respond = () => ({ reasoning: "Good.", value: "good" })
    const notNumber = await run(modelFor(server).derive({ agent: evaluation, resultName: "Quality", inputs }))
    expect(notNumber.value).toBeNull()
    expect(notNumber.reasoning).toContain("not a number")
  })
})

describe("fake server", () => {
  it("answers every operation with its default responder, on both paths", async () => {
    const model = modelFor(server, { baseUrl: server.baseUrl.replace(/\/v1$/, "") })
    const resolved = await run(
      model.resolve({
        agent: agent(),
        resultName: "Revenue",
        extractions: [
          { ...candidate("a", "x"), consistent: true },
          { ...candidate("b", "y"), consistent: true },
        ],
      }),
    )
    expect(resolved.value).toBeNull()
    const derived = await run(
      model.derive({ agent: agent({ derivedPrompt: "p" }), resultName: "r", inputs: [] }),
    )
    expect(derived.value).toBeNull()
    expect(server.requests.map((r) => r.path)).toEqual(["/chat/completions", "/chat/completions"])
    expect(server.completions).toBe(2)
    const models = await fetch(`${server.baseUrl}/models`)
    expect(((await models.json()) as { object: string }).object).toBe("list")
    const missing = await fetch(`${server.baseUrl}/embeddings`, { method: "POST", body: "{}" })
    expect(missing.status).toBe(404)
  })
})
