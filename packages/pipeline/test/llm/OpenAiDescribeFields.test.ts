import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import type { DescribeFieldsRequest, FieldToDescribe } from "../../src/llm/LanguageModel.ts"
import { localModel } from "../../src/llm/Local.ts"
import { memoryResponseCache } from "../../src/llm/ResponseCache.ts"
import {
  type FakeOpenAiServer,
  modelFor,
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

const field = (
  overrides: Partial<FieldToDescribe> & Pick<FieldToDescribe, "path" | "agentName">,
): FieldToDescribe => ({
  types: ["string"],
  description: "",
  format: "",
  enumValues: [],
  dimensions: [],
  draft: {
    extractionInstructions: `The ${overrides.agentName.toLowerCase()}.`,
    valueType: "string",
    unit: "",
    examples: "",
  },
  ...overrides,
})

const fields: ReadonlyArray<FieldToDescribe> = [
  field({
    path: "seller/name",
    agentName: "Seller name",
    description: "Legal name of the seller",
    draft: {
      extractionInstructions: "The seller name (Legal name of the seller).",
      valueType: "string",
      unit: "",
      examples: "",
    },
  }),
  field({
    path: "currency",
    agentName: "Currency",
    enumValues: ["EUR", "USD"],
    draft: {
      extractionInstructions: "The currency. One of: EUR, USD.",
      valueType: "string",
      unit: "",
      examples: "EUR, USD",
    },
  }),
  field({
    path: "line_items/[*]/amount",
    agentName: "Line item amount",
    types: ["number"],
    dimensions: ["Line item"],
    draft: {
      extractionInstructions: "The amount of the line item. Answer with a number.",
      valueType: "number",
      unit: "",
      examples: "",
    },
  }),
]

const request: DescribeFieldsRequest = { schemaTitle: "Invoice", fields }

/** Improved texts for the first and third field (not the second), plus a path that was not asked for. */
const improvedAnswer = () => ({
  fields: [
    {
      path: "line_items/[*]/amount",
      extraction_instructions: "  The net amount of this line item, as a number without currency symbol.  ",
      value_type: "string",
      unit: " EUR ",
      examples: "120.50, 99",
    },
    {
      path: "seller/issuer",
      extraction_instructions: "Not a field of the request.",
      value_type: "string",
      unit: "",
      examples: "",
    },
    {
      path: "seller/name",
      extraction_instructions: "The legal name of the company issuing the invoice, usually in the header.",
      value_type: "string",
      unit: "",
      examples: "Acme GmbH, Globex Inc.",
    },
    {
      path: "seller/name",
      extraction_instructions: "A second answer for the same path (ignored).",
      value_type: "string",
      unit: "",
      examples: "",
    },
  ],
})

describe("describeFields (openai)", () => {
  it("sends the fields and the answer's JSON schema in one structured call", async () => {
    await run(modelFor(server).describeFields(request))
    expect(server.requests).toHaveLength(1)
    const body = server.requests[0]!.body
    expect(schemaName(body)).toBe("describe_fields")
    expect(body.response_format?.type).toBe("json_schema")
    expect(body.response_format?.json_schema?.strict).toBe(true)
    const schema = schemaOf(body)
    expect(schema.required).toEqual(["fields"])
    expect(schema.additionalProperties).toBe(false)
    const item = schema.properties.fields.items
    expect(item.required).toEqual(["path", "extraction_instructions", "value_type", "unit", "examples"])
    expect(item.additionalProperties).toBe(false)
    expect(item.properties.value_type.enum).toEqual(["string", "number"])
    expect(item.properties.path.enum).toEqual(fields.map((f) => f.path))
    const system = body.messages?.find((m) => m.role === "system")?.content ?? ""
    expect(system).toContain("extraction instructions")
    const user = userMessage(body)
    expect(user).toContain("Output schema: Invoice")
    expect(user).toContain('"path": "line_items/[*]/amount"')
    expect(user).toContain('"agent_name": "Line item amount"')
    expect(user).toContain('"description": "Legal name of the seller"')
    expect(user).toContain('"Line item"')
    expect(user).toContain('"EUR"')
    expect(user).toContain("The currency. One of: EUR, USD.")
  })

  it("takes the model's texts for the fields it describes and the drafts for the others", async () => {
    server.respond = improvedAnswer
    const result = await run(modelFor(server).describeFields(request))
    expect(result.fields).toEqual([
      {
        path: "seller/name",
        extractionInstructions: "The legal name of the company issuing the invoice, usually in the header.",
        valueType: "string",
        unit: "",
        examples: "Acme GmbH, Globex Inc.",
      },
      { path: "currency", ...fields[1]!.draft },
      {
        path: "line_items/[*]/amount",
        extractionInstructions: "The net amount of this line item, as a number without currency symbol.",
        // The model said "string"; the field's JSON type decides.
        valueType: "number",
        unit: "EUR",
        examples: "120.50, 99",
      },
    ])
    expect(result.usage.calls).toBe(1)
    expect(result.usage.cacheHits).toBe(0)
    expect(result.usage.promptTokens).toBeGreaterThan(0)
  })

  it("falls back to the draft's instructions when the model's are blank, and keeps string fields strings", async () => {
    server.respond = () => ({
      fields: [
        { path: "currency", extraction_instructions: "   ", value_type: "number", unit: "", examples: "EUR" },
      ],
    })
    const result = await run(modelFor(server).describeFields(request))
    expect(result.fields[1]).toEqual({
      path: "currency",
      extractionInstructions: "The currency. One of: EUR, USD.",
      valueType: "string",
      unit: "",
      examples: "EUR",
    })
    expect(result.fields[2]).toEqual({ path: "line_items/[*]/amount", ...fields[2]!.draft })
  })

  it("keeps the planner's value type for a field that accepts numbers and text", async () => {
    server.respond = () => ({
      fields: [
        { path: "reference", extraction_instructions: "x", value_type: "number", unit: "", examples: "" },
      ],
    })
    const mixed = field({ path: "reference", agentName: "Reference", types: ["string", "integer"] })
    const result = await run(modelFor(server).describeFields({ schemaTitle: "", fields: [mixed] }))
    expect(result.fields[0]!.valueType).toBe("string")
  })

  it("answers an identical request from the cache", async () => {
    server.respond = improvedAnswer
    const cache = memoryResponseCache()
    const model = modelFor(server, { cache })
    const first = await run(model.describeFields(request))
    const second = await run(model.describeFields(request))
    expect(server.requests).toHaveLength(1)
    expect(second.fields).toEqual(first.fields)
    expect(second.usage).toEqual({
      calls: 0,
      cacheHits: 1,
      promptTokens: 0,
      cachedTokens: 0,
      completionTokens: 0,
    })
  })

  it("splits more than 40 fields into several calls and sums their usage", async () => {
    const many = Array.from({ length: 45 }, (_, i) =>
      field({
        path: `values/field_${i}`,
        agentName: `Field ${i}`,
        types: i % 2 === 0 ? ["integer"] : ["string"],
      }),
    )
    server.respond = (body) => {
      const wanted: ReadonlyArray<string> = schemaOf(body).properties.fields.items.properties.path.enum
      return {
        fields: wanted.map((path) => ({
          path,
          extraction_instructions: `Described ${path}.`,
          value_type: "string",
          unit: "",
          examples: "",
        })),
      }
    }
    const result = await run(modelFor(server).describeFields({ schemaTitle: "", fields: many }))
    expect(server.requests).toHaveLength(2)
    const sizes = server.requests.map(
      (r) => schemaOf(r.body).properties.fields.items.properties.path.enum.length,
    )
    expect(sizes.sort((a, b) => a - b)).toEqual([5, 40])
    expect(result.fields.map((f) => f.path)).toEqual(many.map((f) => f.path))
    expect(result.fields[44]!.extractionInstructions).toBe("Described values/field_44.")
    expect(result.fields.map((f) => f.valueType)).toEqual(
      many.map((_, i) => (i % 2 === 0 ? "number" : "string")),
    )
    expect(result.usage.calls).toBe(2)
    const tokens = server.requests.reduce((n, r) => n + (r.usage?.prompt_tokens ?? 0), 0)
    expect(result.usage.promptTokens).toBe(tokens)
  })

  it("asks nothing for no fields", async () => {
    const result = await run(modelFor(server).describeFields({ schemaTitle: "Empty", fields: [] }))
    expect(result).toEqual({
      fields: [],
      usage: { calls: 0, cacheHits: 0, promptTokens: 0, cachedTokens: 0, completionTokens: 0 },
    })
    expect(server.requests).toHaveLength(0)
  })
})

describe("describeFields (local)", () => {
  it("returns the drafts unchanged, in order, without usage", async () => {
    const result = await run(localModel.describeFields(request))
    expect(result.fields).toEqual(fields.map((f) => ({ path: f.path, ...f.draft })))
    expect(result.usage).toEqual({
      calls: 0,
      cacheHits: 0,
      promptTokens: 0,
      cachedTokens: 0,
      completionTokens: 0,
    })
  })
})
