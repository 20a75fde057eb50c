import { describe, expect, it } from "vitest"
import { confidenceText, isLowConfidence, overrideValue } from "../src/values.ts"

describe("overrideValue (the result editor's value)", () => {
  it("reads numbers as the server does: 1.234,56 is one thousand two hundred thirty-four and 56 hundredths", () => {
    expect(overrideValue("1.234,56", "number")).toBe(1234.56)
    expect(overrideValue("1,234.56", "number")).toBe(1234.56)
    expect(overrideValue(" 42 ", "number")).toBe(42)
  })

  it("sends null for an empty field and the text when it is not a number or the agent is not numeric", () => {
    expect(overrideValue("  ", "number")).toBeNull()
    expect(overrideValue("about ten", "number")).toBe("about ten")
    expect(overrideValue("1.234,56", "string")).toBe("1.234,56")
  })
})

describe("confidence as shown", () => {
  it("is a whole percentage, low at or below one half", () => {
    expect(confidenceText(0.824)).toBe("82%")
    expect(confidenceText(1)).toBe("100%")
    expect(confidenceText(null)).toBeNull()
    expect(isLowConfidence(0.5)).toBe(true)
    expect(isLowConfidence(0.51)).toBe(false)
    expect(isLowConfidence(null)).toBe(false)
  })
})
