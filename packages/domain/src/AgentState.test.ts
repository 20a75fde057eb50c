import { describe, expect, it } from "vitest"
import { type AgentProgressCounts, deriveExtractionStatus, isTerminalExtractionStatus } from "./AgentState.ts"

const counts = (overrides: Partial<AgentProgressCounts>): AgentProgressCounts => ({
  missingExtractions: 0,
  inFlight: 0,
  expectedResolutions: 3,
  presentResolutions: 3,
  resolvedValues: 2,
  ...overrides,
})

describe("deriveExtractionStatus", () => {
  it.each([
    ["all present with values", counts({}), "Processed"],
    ["all present, one value", counts({ resolvedValues: 1 }), "Processed"],
    ["all present, no values", counts({ resolvedValues: 0 }), "No Result"],
    ["extractions missing", counts({ missingExtractions: 1 }), "Pending"],
    ["work in flight", counts({ inFlight: 2 }), "Pending"],
    ["a resolution missing", counts({ presentResolutions: 2 }), "Pending"],
    ["never launched", counts({ presentResolutions: 0, resolvedValues: 0 }), "Pending"],
    ["in flight with no values yet", counts({ inFlight: 1, resolvedValues: 0 }), "Pending"],
    [
      "nothing expected, nothing resolved",
      counts({ expectedResolutions: 0, presentResolutions: 0, resolvedValues: 0 }),
      "No Result",
    ],
  ] as const)("%s -> %s", (_, input, status) => {
    expect(deriveExtractionStatus(input)).toBe(status)
  })

  it.each([
    ["Pending", false],
    ["Processed", true],
    ["No Result", true],
  ] as const)("isTerminalExtractionStatus(%s) = %s", (status, terminal) => {
    expect(isTerminalExtractionStatus(status)).toBe(terminal)
  })
})
