import { describe, expect, it } from "@effect/vitest"
import * as fc from "fast-check"
import {
  calculationOperation,
  consistencyDirectives,
  groundingAttention,
  localConsistency,
  localResolve,
  parseDateOrdinal,
  type ResolutionInput,
  resolutionPreference,
} from "./Resolution.ts"

const LABELS = ["a.pdf p.1", "b.pdf p.1", "c.pdf p.3", "d.pdf p.2", "e.pdf p.5"]

const extractions = (values: ReadonlyArray<string>) =>
  values.map((value, i) => ({ id: `e${i}`, value, label: LABELS[i] ?? `doc-${i}.pdf` }))

const consistency = (valueType: string, values: ReadonlyArray<string>, instructions = "") =>
  localConsistency({ valueType, instructions, extractions: extractions(values) })

const resolveInput = (
  values: ReadonlyArray<string>,
  overrides: Partial<ResolutionInput> = {},
): ResolutionInput => ({
  valueType: "number",
  unit: "",
  instructions: "",
  enableComplexCalculations: false,
  valueIfNotFound: "",
  extractions: extractions(values).map((e) => ({ ...e, consistent: null })),
  ...overrides,
})

describe("consistencyDirectives", () => {
  it.each<[string, Partial<ReturnType<typeof consistencyDirectives>>]>([
    ["", { ignoreDifferences: false, relativeTolerance: undefined, absoluteTolerance: undefined }],
    ["Values within 5% are consistent.", { relativeTolerance: 0.05, absoluteTolerance: undefined }],
    ["Allow a 5 percent tolerance", { relativeTolerance: 0.05 }],
    ["Differences of up to 10% are fine", { relativeTolerance: 0.1, absoluteTolerance: undefined }],
    ["Differences of up to 10 are fine", { absoluteTolerance: 10, relativeTolerance: undefined }],
    ["Use a tolerance of 0.5", { absoluteTolerance: 0.5 }],
    ["Amounts within EUR 1,000 agree", { absoluteTolerance: 1000 }],
    ["Ignore differences between documents", { ignoreDifferences: true }],
    ["These values are always consistent", { ignoreDifferences: true }],
    ["Ignore case when comparing", { ignoreCase: true }],
  ])("%j", (instructions, expected) => {
    expect(consistencyDirectives(instructions)).toMatchObject(expected)
  })
})

describe("localConsistency", () => {
  it("treats zero or one extraction as consistent", () => {
    expect(consistency("number", [])).toEqual({ verdicts: [], summary: null })
    expect(consistency("number", ["12"])).toEqual({
      verdicts: [{ id: "e0", consistent: true, justification: "Only one extraction." }],
      summary: null,
    })
  })

  it("agrees on equal values after normalisation", () => {
    const outcome = consistency("number", ["1,200", "1200.00", "$1200"])
    expect(outcome.summary).toBeNull()
    expect(outcome.verdicts).toEqual(
      ["e0", "e1", "e2"].map((id) => ({
        id,
        consistent: true,
        justification: "All 3 extractions agree on 1200.",
      })),
    )
    expect(consistency("string", ["Acme  Inc.", "acme inc"]).verdicts[1]!.justification).toBe(
      'Both extractions agree on "Acme Inc.".',
    )
  })

  it("flags the minority against a strict majority", () => {
    const outcome = consistency("number", ["1200", "1,200", "1300"])
    expect(outcome.verdicts.map((v) => v.consistent)).toEqual([true, true, false])
    expect(outcome.verdicts[2]!.justification).toBe(
      "1300 differs from the majority value 1200 (a.pdf p.1, b.pdf p.1).",
    )
    expect(outcome.verdicts[0]!.justification).toContain("1300 (c.pdf p.3)")
    expect(outcome.summary).toBe(
      "The 3 extractions give 2 different values: 1200 (a.pdf p.1, b.pdf p.1); 1300 (c.pdf p.3). The majority value is 1200.",
    )
  })

  it("flags everything without a strict majority", () => {
    const outcome = consistency("string", ["Acme Inc.", "Beta LLC", "Beta LLC", "Acme Inc"])
    expect(outcome.verdicts.map((v) => v.consistent)).toEqual([false, false, false, false])
    expect(outcome.verdicts[0]!.justification).toBe(
      'No value has a majority: "Acme Inc." is contradicted by "Beta LLC" (b.pdf p.1, c.pdf p.3).',
    )
    expect(outcome.summary).toContain('"Acme Inc." (a.pdf p.1, d.pdf p.2); "Beta LLC" (b.pdf p.1, c.pdf p.3)')
    expect(outcome.summary).toContain("No value has a majority.")
  })

  it.each<[string, ReadonlyArray<string>, ReadonlyArray<boolean>]>([
    ["within 5%", ["100", "104", "120"], [true, true, false]],
    ["5 percent tolerance", ["100", "96"], [true, true]],
    ["differences of up to 10", ["100", "110", "111"], [true, true, false]],
    ["tolerance of 0.5", ["1.2", "1.6"], [true, true]],
    ["tolerance of 0.5", ["1.2", "1.8"], [false, false]],
    ["ignore differences", ["1", "2", "3"], [true, true, true]],
    ["always consistent", ["a", "b"], [true, true]],
    ["ignore case", ["ACME", "acme"], [true, true]],
  ])("honours %j", (instructions, values, expected) => {
    const outcome = consistency("number", values, instructions)
    expect(outcome.verdicts.map((v) => v.consistent)).toEqual(expected)
    expect(outcome.summary === null).toBe(expected.every((c) => c))
  })

  it("mentions the instructions in justifications", () => {
    const outcome = consistency("number", ["100", "104"], "within 5%")
    expect(outcome.verdicts[0]!.justification).toBe(
      "Both extractions agree on 100. Compared with a 5% tolerance, as the consistency instructions ask.",
    )
    expect(consistency("number", ["1", "2"], "Ignore differences").verdicts[0]!.justification).toContain(
      "ignore differences",
    )
  })

  it("gives one verdict per extraction, all consistent exactly when the summary is null", () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom("1", "2", "3", "1.0", "two"), { maxLength: 6 }), (values) => {
        const outcome = consistency("number", values)
        expect(outcome.verdicts.map((v) => v.id)).toEqual(values.map((_, i) => `e${i}`))
        expect(outcome.summary === null).toBe(outcome.verdicts.every((v) => v.consistent))
        const consistentCount = outcome.verdicts.filter((v) => v.consistent).length
        // Either everything agrees, a strict majority is consistent, or nothing is.
        expect(
          consistentCount === values.length || consistentCount === 0 || consistentCount * 2 > values.length,
        ).toBe(true)
      }),
    )
  })

  it("does not depend on the order of the extractions when there is a strict majority", () => {
    fc.assert(
      fc.property(
        fc
          .array(fc.constantFrom("1", "2", "3"), { minLength: 1, maxLength: 7 })
          .chain((values) =>
            fc.tuple(fc.constant(values), fc.shuffledSubarray(values, { minLength: values.length })),
          ),
        ([values, shuffled]) => {
          const verdictOf = (vs: ReadonlyArray<string>) => {
            const outcome = consistency("number", vs)
            return new Map(vs.map((v, i) => [v, outcome.verdicts[i]!.consistent]))
          }
          expect(verdictOf(shuffled)).toEqual(verdictOf(values))
        },
      ),
    )
  })
})

describe("calculationOperation and resolutionPreference", () => {
  it.each([
    ["", "sum"],
    ["Add up the amounts", "sum"],
    ["Total of all invoices", "sum"],
    ["Take the average", "average"],
    ["mean value", "average"],
    ["the highest", "max"],
    ["smallest amount", "min"],
    ["count them", "count"],
  ])("%j → %s", (instructions, operation) => {
    expect(calculationOperation(instructions).operation).toBe(operation)
  })

  it.each([
    ["Prefer the highest value", "highest"],
    ["use the largest", "highest"],
    ["Prefer the lowest", "lowest"],
    ["choose the smallest amount", "lowest"],
    ["Prefer the most common value", "most common"],
    ["prefer the first", "earliest"],
    ["Prefer the earliest date", "earliest"],
    ["prefer the last one", "latest"],
    ["Take the latest", "latest"],
    ["The highest is usually wrong", undefined],
    ["", undefined],
  ])("%j → %s", (instructions, preference) => {
    expect(resolutionPreference(instructions)).toBe(preference)
  })
})

describe("parseDateOrdinal", () => {
  it.each([
    ["2024-03-01", 20240301],
    ["2024/3/1", 20240301],
    ["01.03.2024", 20240301],
    ["03/01/2024", 20240301],
    ["25/12/2023", 20231225],
    ["March 1, 2024", 20240301],
    ["1st March 2024", 20240301],
    ["2024-03-01T10:00:00Z", 20240301],
    ["1200", undefined],
    ["2024-13-01", undefined],
    ["Acme", undefined],
  ])("%s → %s", (text, expected) => {
    expect(parseDateOrdinal(text)).toBe(expected)
  })
})

describe("localResolve", () => {
  it("gives No result without extractions", () => {
    expect(localResolve(resolveInput([]))).toEqual({
      value: null,
      status: "No result",
      justification: 'No extraction found a value; "n/a" is shown instead.',
      usedExtractionIds: [],
    })
    expect(localResolve(resolveInput([" "], { valueIfNotFound: "none" })).justification).toContain('"none"')
  })

  it("resolves agreeing extractions to the normalised value", () => {
    expect(localResolve(resolveInput(["1,200.00", "1200", "$1,200"]))).toEqual({
      value: "1200",
      status: "Resolved",
      justification: "All 3 extractions agree on 1200.",
      usedExtractionIds: ["e0", "e1", "e2"],
    })
    expect(localResolve(resolveInput(["  Acme   Inc. "], { valueType: "string" }))).toMatchObject({
      value: "Acme Inc.",
      status: "Resolved",
      justification: 'Resolved from the only extraction: "Acme Inc." (a.pdf p.1).',
    })
  })

  it.each<[string, ReadonlyArray<string>, string, ReadonlyArray<string>]>([
    ["strict majority", ["100", "250", "100.0"], "100", ["e0", "e2"]],
    ["no majority: the first value", ["250", "100"], "250", ["e0"]],
    ["tie of groups: the first value", ["1", "2", "2", "1"], "1", ["e0", "e3"]],
  ])("requires attention on disagreement (%s)", (_, values, value, used) => {
    const outcome = localResolve(resolveInput(values))
    expect(outcome).toMatchObject({ value, status: "Requires attention", usedExtractionIds: used })
    expect(outcome.justification).toMatch(/alternatives: /)
  })

  it("lists the alternatives", () => {
    expect(localResolve(resolveInput(["100", "250", "100"])).justification).toBe(
      "The 3 extractions give 2 different values: 100 (a.pdf p.1, c.pdf p.3); 250 (b.pdf p.1). Showing the majority value 100; alternatives: 250 (b.pdf p.1).",
    )
  })

  it("resolves differences the consistency check accepted", () => {
    const input = resolveInput(["100", "104"])
    const outcome = localResolve({
      ...input,
      extractions: input.extractions.map((e) => ({ ...e, consistent: true })),
    })
    expect(outcome).toMatchObject({ value: "100", status: "Resolved", usedExtractionIds: ["e0"] })
  })

  it.each<[string, string, ReadonlyArray<string>, string]>([
    ["sum by default", "", ["100", "250", "50"], "400"],
    ["sum", "Sum the amounts", ["100", "250", "50"], "400"],
    ["average", "average", ["100", "250", "50"], "133.333333333333"],
    ["max", "take the highest", ["100", "250", "50"], "250"],
    ["min", "lowest", ["100", "250", "50"], "50"],
    ["count", "count", ["100", "250", "50"], "3"],
    ["decimals", "total", ["0.1", "0.2"], "0.3"],
  ])("computes %s", (_, instructions, values, value) => {
    const outcome = localResolve(resolveInput(values, { instructions, enableComplexCalculations: true }))
    expect(outcome).toMatchObject({
      value,
      status: "Resolved",
      usedExtractionIds: values.map((_, i) => `e${i}`),
    })
  })

  it("shows the arithmetic", () => {
    expect(
      localResolve(resolveInput(["100", "250", "50"], { enableComplexCalculations: true })).justification,
    ).toBe("Sum of 3 values: 100 (a.pdf p.1) + 250 (b.pdf p.1) + 50 (c.pdf p.3) = 400.")
    const outcome = localResolve(
      resolveInput(["100", "n/a", "50"], {
        enableComplexCalculations: true,
        instructions: "mean",
        unit: "EUR",
      }),
    )
    expect(outcome).toMatchObject({ value: "75", usedExtractionIds: ["e0", "e2"] })
    expect(outcome.justification).toBe(
      'Average of 2 values: (100 (a.pdf p.1) + 50 (c.pdf p.3)) / 2 = 75 EUR. Left out, not a number: "n/a" (b.pdf p.1).',
    )
  })

  it("does not calculate for string agents", () => {
    const outcome = localResolve(
      resolveInput(["1", "2"], { valueType: "string", enableComplexCalculations: true }),
    )
    expect(outcome.status).toBe("Requires attention")
  })

  it.each<[string, string, ReadonlyArray<string>, string]>([
    ["Prefer the highest value", "number", ["100", "250", "50"], "250"],
    ["Prefer the lowest value", "number", ["100", "250", "50"], "50"],
    ["Prefer the most common value", "number", ["1", "2", "2", "3"], "2"],
    ["Prefer the first", "string", ["b", "a", "c"], "b"],
    ["Prefer the last", "string", ["b", "a", "c"], "c"],
    ["Prefer the earliest date", "string", ["2024-05-01", "March 3, 2023", "2023-12-31"], "March 3, 2023"],
    ["Prefer the latest date", "string", ["2024-05-01", "March 3, 2023", "2023-12-31"], "2024-05-01"],
    ["Use the latest", "number", ["2021", "2023", "2022"], "2023"],
  ])("honours %j", (instructions, valueType, values, value) => {
    const outcome = localResolve(resolveInput(values, { instructions, valueType }))
    expect(outcome).toMatchObject({ value, status: "Resolved" })
    expect(outcome.justification).toContain("The resolution instructions prefer")
  })

  it("says when a preference cannot decide", () => {
    const outcome = localResolve(
      resolveInput(["a", "b"], { valueType: "string", instructions: "prefer the highest" }),
    )
    expect(outcome).toMatchObject({ value: "a", status: "Requires attention" })
    expect(outcome.justification).toContain("could not be applied")
    expect(localResolve(resolveInput(["1", "2"], { instructions: "prefer the most common" })).status).toBe(
      "Requires attention",
    )
  })

  it("resolves exactly when every value agrees, and uses only extractions of the chosen value", () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom("1", "1.0", "2", "3"), { minLength: 1, maxLength: 6 }),
        (values) => {
          const outcome = localResolve(resolveInput(values))
          const distinct = new Set(values.map(Number)).size
          expect(outcome.status).toBe(distinct === 1 ? "Resolved" : "Requires attention")
          expect(outcome.usedExtractionIds.length).toBeGreaterThan(0)
          for (const id of outcome.usedExtractionIds) {
            expect(Number(values[Number(id.slice(1))])).toBe(Number(outcome.value))
          }
        },
      ),
    )
  })

  it("sums like plain arithmetic", () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: -1e6, max: 1e6 }), { minLength: 1, maxLength: 8 }),
        (numbers) => {
          const outcome = localResolve(resolveInput(numbers.map(String), { enableComplexCalculations: true }))
          expect(outcome.value).toBe(String(numbers.reduce((a, b) => a + b, 0)))
          expect(outcome.status).toBe("Resolved")
        },
      ),
    )
  })
})

describe("groundingAttention", () => {
  const resolved = { status: "Resolved", justification: "Resolved from the only extraction: 12." }

  it("requires attention for a value that rests only on ungrounded extractions", () => {
    expect(groundingAttention(resolved, [{ grounded: false }])).toEqual({
      status: "Requires attention",
      justification:
        "Resolved from the only extraction: 12. The extraction it rests on is not grounded: the quoted passage is not on the cited page or does not state the value.",
    })
    expect(groundingAttention(resolved, [{ grounded: false }, { grounded: false }]).status).toBe(
      "Requires attention",
    )
  })

  it("keeps the outcome when one extraction it rests on is grounded, or when there is none", () => {
    expect(groundingAttention(resolved, [{ grounded: false }, { grounded: true }])).toBe(resolved)
    expect(groundingAttention(resolved, [])).toBe(resolved)
    const noResult = { status: "No result", justification: "" }
    expect(groundingAttention(noResult, [{ grounded: false }])).toBe(noResult)
  })
})
