import { describe, expect, it } from "@effect/vitest"
import * as fc from "fast-check"
import {
  confidenceFromLogprobs,
  DEFAULT_GROUNDED_CONFIDENCE,
  extractionConfidence,
  resultConfidence,
} from "./Confidence.ts"

describe("extractionConfidence", () => {
  it("is the model's own confidence for a grounded answer, else the default", () => {
    expect(extractionConfidence({ modelConfidence: 0.93, grounded: true })).toBe(0.93)
    expect(extractionConfidence({ grounded: true })).toBe(DEFAULT_GROUNDED_CONFIDENCE)
    expect(extractionConfidence({ modelConfidence: null, grounded: true })).toBe(DEFAULT_GROUNDED_CONFIDENCE)
  })

  it("is at most 0.2 for an ungrounded answer", () => {
    expect(extractionConfidence({ modelConfidence: 1, grounded: false })).toBe(0.2)
    expect(extractionConfidence({ grounded: false })).toBe(0.15)
    fc.assert(
      fc.property(fc.double({ noNaN: false }), (c) => {
        const x = extractionConfidence({ modelConfidence: c, grounded: false })
        expect(x).toBeGreaterThanOrEqual(0)
        expect(x).toBeLessThanOrEqual(0.2)
      }),
    )
  })

  it("stays within 0..1 whatever the model says", () => {
    expect(extractionConfidence({ modelConfidence: 7, grounded: true })).toBe(1)
    expect(extractionConfidence({ modelConfidence: -1, grounded: true })).toBe(0)
    expect(extractionConfidence({ modelConfidence: Number.NaN, grounded: true })).toBe(0)
  })
})

describe("confidenceFromLogprobs", () => {
  it("is the geometric mean of the token probabilities", () => {
    expect(confidenceFromLogprobs([0, 0])).toBe(1)
    expect(confidenceFromLogprobs([Math.log(0.5), Math.log(0.5)])).toBe(0.5)
    expect(confidenceFromLogprobs([])).toBeUndefined()
  })
})

describe("resultConfidence", () => {
  const e = (confidence: number | null, consistent: boolean | null) => ({ confidence, consistent })

  it("is null without a value", () => {
    expect(resultConfidence({ extractions: [], status: "Resolved" })).toBeNull()
    expect(resultConfidence({ extractions: [e(0.9, null)], status: "No result" })).toBeNull()
  })

  it("is the extraction's own for a single one", () => {
    expect(resultConfidence({ extractions: [e(0.8, null)], status: "Resolved" })).toBe(0.8)
    expect(resultConfidence({ extractions: [e(null, null)], status: "Resolved" })).toBe(
      DEFAULT_GROUNDED_CONFIDENCE,
    )
  })

  it("rises with agreement across documents", () => {
    const one = resultConfidence({ extractions: [e(0.8, true)], status: "Resolved" })!
    const three = resultConfidence({
      extractions: [e(0.8, true), e(0.8, true), e(0.8, true)],
      status: "Resolved",
    })!
    expect(three).toBeGreaterThan(one)
    expect(three).toBeCloseTo(1 - 0.2 * 0.75 ** 2, 2)
    expect(three).toBeLessThanOrEqual(1)
  })

  it("falls with disagreement", () => {
    const agreed = resultConfidence({ extractions: [e(0.8, true), e(0.8, true)], status: "Resolved" })!
    const split = resultConfidence({ extractions: [e(0.8, true), e(0.8, false)], status: "Resolved" })!
    expect(split).toBeLessThan(agreed)
    expect(split).toBeCloseTo(0.8 * 0.75, 3)
  })

  it("is capped for a result that requires attention", () => {
    expect(resultConfidence({ extractions: [e(0.9, null)], status: "Requires attention" })).toBe(0.5)
  })

  it("stays low when its extractions are ungrounded", () => {
    expect(resultConfidence({ extractions: [e(0.15, null)], status: "Requires attention" })).toBe(0.15)
  })

  it("always lies within 0..1", () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            confidence: fc.option(fc.double({ min: 0, max: 1, noNaN: true }), { nil: null }),
            consistent: fc.option(fc.boolean(), { nil: null }),
          }),
          { minLength: 1, maxLength: 20 },
        ),
        fc.constantFrom("Resolved", "Requires attention"),
        (extractions, status) => {
          const c = resultConfidence({ extractions, status })!
          expect(c).toBeGreaterThanOrEqual(0)
          expect(c).toBeLessThanOrEqual(1)
        },
      ),
    )
  })
})
