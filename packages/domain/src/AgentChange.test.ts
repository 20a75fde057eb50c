import { describe, expect, it } from "vitest"
import {
  type AgentExtractionConfig,
  type AgentPatch,
  changedClearingFields,
  clearsExtractions,
  extractionClearingFields,
} from "./AgentChange.ts"

const before: AgentExtractionConfig = {
  extraction_instructions: "Find the total amount due",
  value_type: "number",
  examples: "1,234.56",
  unit: "EUR",
  resolution_instructions: "",
  inconsistency_instructions: "",
  enable_complex_calculations_in_resolution: false,
  enable_web_search: false,
}

describe("clearsExtractions (launch rule 7)", () => {
  it("lists the eight fields of the spec", () => {
    expect(extractionClearingFields).toEqual([
      "extraction_instructions",
      "value_type",
      "examples",
      "unit",
      "resolution_instructions",
      "inconsistency_instructions",
      "enable_complex_calculations_in_resolution",
      "enable_web_search",
    ])
  })

  it.each<[string, AgentPatch, boolean]>([
    ["changed instructions", { extraction_instructions: "Find the net amount" }, true],
    ["changed value type", { value_type: "string" }, true],
    ["changed examples", { examples: "" }, true],
    ["changed unit", { unit: "USD" }, true],
    ["changed resolution instructions", { resolution_instructions: "Prefer the latest" }, true],
    ["changed inconsistency instructions", { inconsistency_instructions: "Ignore rounding" }, true],
    ["enabled complex calculations", { enable_complex_calculations_in_resolution: true }, true],
    ["enabled web search", { enable_web_search: true }, true],
    ["same instructions", { extraction_instructions: "Find the total amount due" }, false],
    ["same flags", { enable_web_search: false, enable_complex_calculations_in_resolution: false }, false],
    ["same everything", { ...before }, false],
    ["rename", { name: "Total" }, false],
    ["value if not found", { value_if_not_found: "none" }, false],
    ["dimensions", { dimensions: [{ dimension_id: "d1" }] }, false],
    ["derived prompt", { derived_prompt: "@A + @B" }, false],
    ["not supplied", { unit: undefined }, false],
    ["empty patch", {}, false],
    ["same name with one real change", { name: "Total", unit: "EUR", examples: "12" }, true],
  ])("%s -> %s", (_, patch, clears) => {
    expect(clearsExtractions(before, patch)).toBe(clears)
  })

  it("reports each changed field once, in spec order", () => {
    expect(
      changedClearingFields(before, {
        enable_web_search: true,
        unit: "USD",
        name: "x",
        examples: "1,234.56",
        extraction_instructions: "Other",
      }),
    ).toEqual(["extraction_instructions", "unit", "enable_web_search"])
  })
})
