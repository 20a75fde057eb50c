import { propertiesOf } from "@dxs/domain/JsonSchema"
import { describe, expect, it } from "vitest"
import { targetSchemaCheck } from "../src/TargetSchema.ts"

describe("targetSchemaCheck", () => {
  const schema = {
    $defs: { Code: { type: "string", pattern: "^[A-Z]{3}$" } },
    type: "object",
    properties: {
      "a/b~c d%": { $ref: "#/$defs/Code" },
      total: { type: "number", minimum: 0 },
      when: { type: "string", format: "date" },
    },
    required: ["total"],
  }
  const at = (s: typeof schema, name: string) => propertiesOf(s, s)[name]

  it("checks values at positions named by any property name, following $refs, with formats", () => {
    const check = targetSchemaCheck(schema)
    expect(check(at(schema, "a/b~c d%"), "EUR")).toEqual([])
    expect(check(at(schema, "a/b~c d%"), "euro")).toEqual(['must match pattern "^[A-Z]{3}$"'])
    expect(check(at(schema, "total"), -1)).toEqual(["must be >= 0"])
    expect(check(at(schema, "when"), "2024-02-30")).toEqual(['must match format "date"'])
    expect(check(schema, {})).toEqual(["must have required property 'total'"])
    expect(check(schema, { total: 1 })).toEqual([])
  })

  it("works on each copy of a schema (as read per request), and with the schema's own absolute $id", () => {
    const copy = structuredClone(schema)
    expect(targetSchemaCheck(copy)(at(copy, "total"), -1)).toHaveLength(1)
    const named = { ...structuredClone(schema), $id: "https://example.com/invoice.json" }
    expect(targetSchemaCheck(named)(at(named, "a/b~c d%"), "euro")).toHaveLength(1)
    expect(targetSchemaCheck(named)(named, { total: 2 })).toEqual([])
  })
})
