import { describe, expect, it } from "@effect/vitest"
import * as fc from "fast-check"
import { canonicalDecimal, normalizeValue, parseNumber, valuesEqual } from "./Values.ts"

describe("parseNumber", () => {
  it.each([
    ["1,234.50", 1234.5],
    ["1.234,50", 1234.5],
    ["1 234,5", 1234.5],
    ["€ 3,000", 3000],
    ["USD 12", 12],
    ["$1,000,000.00", 1000000],
    ["(100)", -100],
    ["-7", -7],
    ["12%", 12],
    ["0.123", 0.123],
    ["1.234", 1.234],
    ["1.234.567", 1234567],
    ["1,234", 1234],
    ["3,5", 3.5],
    ["1'000", 1000],
    ["42", 42],
    ["3.5", 3.5],
  ])("%s → %d", (text, expected) => {
    expect(parseNumber(text)).toBe(expected)
  })

  it.each(["", "abc", "1,2,3", "12-34-56", "1.2.3"])("%s is not a number", (text) => {
    expect(parseNumber(text)).toBeUndefined()
  })
})

describe("canonicalDecimal", () => {
  it.each([
    [1234.5, "1234.5"],
    [1e21, "1000000000000000000000"],
    [-0, "0"],
    [0.1 + 0.2, "0.3"],
    [-12.5, "-12.5"],
    [1e-7, "0.0000001"],
    [-1e-300, "0"],
  ])("%d → %s", (n, expected) => {
    expect(canonicalDecimal(n)).toBe(expected)
  })

  it("round-trips through parseNumber", () => {
    fc.assert(
      fc.property(fc.integer({ min: -1e15, max: 1e15 }), fc.integer({ min: 0, max: 6 }), (units, scale) => {
        const n = units / 10 ** scale
        const s = canonicalDecimal(n)
        expect(s).toMatch(/^-?\d+(\.\d+)?$/)
        expect(Math.abs(parseNumber(s)! - n)).toBeLessThanOrEqual(Math.abs(n) * 1e-14)
      }),
    )
  })
})

describe("normalizeValue and valuesEqual", () => {
  it("normalises numbers and strings by value type", () => {
    expect(normalizeValue("number", " $1,200.00 ")).toBe("1200")
    expect(normalizeValue("number", "about twelve")).toBe("about twelve")
    expect(normalizeValue("string", "  Acme   Corp ")).toBe("Acme Corp")
  })

  it("compares numbers numerically and strings loosely", () => {
    expect(valuesEqual("number", "1,200", "1200.00")).toBe(true)
    expect(valuesEqual("number", "1200", "1201")).toBe(false)
    expect(valuesEqual("string", "Acme Corp.", "acme corp")).toBe(true)
    expect(valuesEqual("string", "Acme", "Apex")).toBe(false)
  })
})
