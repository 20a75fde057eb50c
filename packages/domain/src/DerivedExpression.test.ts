import { describe, expect, it } from "@effect/vitest"
import * as fc from "fast-check"
import {
  type DerivedInput,
  evaluateDerived,
  findReferences,
  NEEDS_LANGUAGE_MODEL,
} from "./DerivedExpression.ts"
import { canonicalDecimal } from "./Values.ts"

const input = (
  agentName: string,
  value: string | null,
  dimensionValues: Record<string, string> = {},
): DerivedInput => ({
  agentName,
  value,
  dimensionValues,
})

const INPUTS: ReadonlyArray<DerivedInput> = [
  input("Net", "1,000"),
  input("Tax", "200"),
  input("Net Amount", "900"),
  input("Zero", "0"),
  input("Missing", null),
  input("Name", "Acme Inc."),
  input("First", "Jane"),
  input("Last", "Doe"),
  input("Sales", "10", { Region: "EU" }),
  input("Sales", "20", { Region: "US" }),
  input("Sales", "30", { Region: "APAC" }),
  input("One", "5", { Region: "EU" }),
]

const run = (prompt: string, options: { isEvaluation?: boolean; valueType?: string } = {}) =>
  evaluateDerived({
    prompt,
    isEvaluation: options.isEvaluation ?? false,
    valueType: options.valueType ?? "number",
    inputs: INPUTS,
  })

describe("findReferences", () => {
  const names = ["Net", "Net Amount", "Tax"]
  it.each<[string, ReadonlyArray<string | null>]>([
    ["@Net + @Tax", ["Net", "Tax"]],
    ["@Net Amount - @Tax", ["Net Amount", "Tax"]],
    ["@net amount*2", ["Net Amount"]],
    ['@"Net Amount" + @[tax]', ["Net Amount", "Tax"]],
    ["@Netto + @Tax", [null, "Tax"]],
    ["@Net-@Tax", ["Net", "Tax"]],
    ["mail me@Net.com", []],
    ["@ alone", []],
  ])("%s", (prompt, expected) => {
    expect(findReferences(prompt, names).map((reference) => reference.agentName)).toEqual(expected)
  })

  it("reports positions and the name as written", () => {
    expect(findReferences("x @net amount y", names)).toEqual([
      { agentName: "Net Amount", written: "net amount", start: 2, end: 13 },
    ])
  })
})

describe("evaluateDerived: expressions", () => {
  it.each<[string, string, string]>([
    ["@Net + @Tax", "1200", "@Net (1000) + @Tax (200) = 1200"],
    ["@Net Amount - @Tax", "700", "@Net Amount (900) - @Tax (200) = 700"],
    ["@net amount * 15%", "135", "@Net Amount (900) * 15% = 135"],
    ["(@Net + @Tax) * 2 / 3", "800", "(@Net (1000) + @Tax (200)) * 2 / 3 = 800"],
    ["@Net - (@Tax - 100)", "900", "@Net (1000) - (@Tax (200) - 100) = 900"],
    ["@Net - @Tax - 100", "700", "@Net (1000) - @Tax (200) - 100 = 700"],
    ["-@Net", "-1000", "-@Net (1000) = -1000"],
    ["@Net * 1.2", "1200", "@Net (1000) * 1.2 = 1200"],
    ["0.1 + 0.2", "0.3", "0.1 + 0.2 = 0.3"],
    ['@"Net Amount" + @[Tax]', "1100", "@Net Amount (900) + @Tax (200) = 1100"],
    ["sum(@Sales)", "60", "sum(@Sales (10, 20, 30)) = 60"],
    ["avg(@Sales)", "20", "avg(@Sales (10, 20, 30)) = 20"],
    ["average(@Sales, @Net)", "265", "avg(@Sales (10, 20, 30), @Net (1000)) = 265"],
    ["max(@Sales) - min(@Sales)", "20", "max(@Sales (10, 20, 30)) - min(@Sales (10, 20, 30)) = 20"],
    ["count(@Sales)", "3", "count(@Sales (10, 20, 30)) = 3"],
    ["count(@Sales, @Missing)", "3", "count(@Sales (10, 20, 30), @Missing (no value)) = 3"],
    ["round(@Net / 3, 2)", "333.33", "round(@Net (1000) / 3, 2) = 333.33"],
    ["round(2.5)", "3", "round(2.5) = 3"],
    ["@Net > @Tax", "1", "@Net (1000) > @Tax (200) = 1 (true)"],
    ["@Net <= @Tax", "0", "@Net (1000) <= @Tax (200) = 0 (false)"],
    ["@Net = 1000", "1", "@Net (1000) == 1000 = 1 (true)"],
    ["@Net != 1000", "0", "@Net (1000) != 1000 = 0 (false)"],
    ["@Net > 5 and @Tax < 100", "0", "@Net (1000) > 5 and @Tax (200) < 100 = 0 (false)"],
    ["@Net > 5 or @Tax < 100", "1", "@Net (1000) > 5 or @Tax (200) < 100 = 1 (true)"],
    ["if(@Net > 500, @Tax, 0)", "200", "if(@Net (1000) > 500, @Tax (200), 0) = 200"],
    ["if(@Net > 5000, @Missing, 7)", "7", "if(@Net (1000) > 5000, @Missing (no value), 7) = 7"],
    ['@Name == "acme inc"', "1", '@Name ("Acme Inc.") == "acme inc" = 1 (true)'],
    ["@One * 2", "10", "@One (5) * 2 = 10"],
    ["2 ^ 3 ^ 2", "512", "2 ^ 3 ^ 2 = 512"],
  ])("%s", (prompt, value, reasoning) => {
    expect(run(prompt)).toEqual({ value, reasoning })
  })
})

describe("evaluateDerived: phrasings", () => {
  it.each<[string, string, string]>([
    ["Compute the total: @Net + @Tax", "1200", "@Net (1000) + @Tax (200) = 1200"],
    ["Net over tax: @Net/@Tax", "5", "@Net (1000) / @Tax (200) = 5"],
    ["sum of @Sales", "60", "sum(@Sales (10, 20, 30)) = 60"],
    ["The total of @Net and @Tax", "1200", "@Net (1000) + @Tax (200) = 1200"],
    ["What is the sum of @Net, @Tax and @Zero?", "1200", "@Net (1000) + @Tax (200) + @Zero (0) = 1200"],
    ["average of @Sales", "20", "avg(@Sales (10, 20, 30)) = 20"],
    ["Maximum of @Sales", "30", "max(@Sales (10, 20, 30)) = 30"],
    ["difference between @Net and @Tax", "800", "@Net (1000) - @Tax (200) = 800"],
    ["@Net minus @Tax", "800", "@Net (1000) - @Tax (200) = 800"],
    ["@Net plus @Tax", "1200", "@Net (1000) + @Tax (200) = 1200"],
    ["@Net times @Tax", "200000", "@Net (1000) * @Tax (200) = 200000"],
    ["@Net divided by @Tax", "5", "@Net (1000) / @Tax (200) = 5"],
    ["ratio of @Net to @Tax", "5", "@Net (1000) / @Tax (200) = 5"],
    ["percentage of @Tax in @Net", "20", "@Tax (200) / @Net (1000) * 100 = 20"],
    ["@Tax as a percentage of @Net", "20", "@Tax (200) / @Net (1000) * 100 = 20"],
    ["15 percent of @Net", "150", "15% * @Net (1000) = 150"],
    ["Is @Net greater than @Tax?", "1", "@Net (1000) > @Tax (200) = 1 (true)"],
    ["Is @Tax less than @Zero?", "0", "@Tax (200) < @Zero (0) = 0 (false)"],
    ["@Net is at least @Tax", "1", "@Net (1000) >= @Tax (200) = 1 (true)"],
  ])("%s", (prompt, value, reasoning) => {
    expect(run(prompt)).toEqual({ value, reasoning })
  })
})

describe("evaluateDerived: no value", () => {
  it.each<[string, string]>([
    ["@Net + @Missing", "@Net (1000) + @Missing (no value): @Missing has no value, so there is no result."],
    ["@Net / @Zero", "@Net (1000) / @Zero (0): division by zero, so there is no result."],
    [
      "@Net + @Unknown",
      "@Net (1000) + @Unknown (unknown): @Unknown is not one of the agents this prompt references.",
    ],
    ["@Name + 1", '@Name ("Acme Inc.") + 1: @Name is not a number ("Acme Inc.").'],
    ["@Name", '@Name ("Acme Inc."): the result "Acme Inc." is not a number, and this agent needs one.'],
    [
      "round(@Net, 0.5)",
      "round(@Net (1000), 0.5): round() needs a whole number of digits between -15 and 15.",
    ],
    ["if(@Net, 1)", "if(@Net (1000), 1): if() takes 3 arguments."],
  ])("%s", (prompt, reasoning) => {
    expect(run(prompt)).toEqual({ value: null, reasoning })
  })

  it("explains a list used as a single number", () => {
    const outcome = run("@Sales * 2")
    expect(outcome.value).toBeNull()
    expect(outcome.reasoning).toBe(
      "@Sales (10, 20, 30) * 2: @Sales has 3 values, one per dimension instance (Region: EU; Region: US; Region: APAC); combine them with sum(), avg(), min(), max() or count() before using it as a single number.",
    )
  })

  it("names the dimension instance without a value", () => {
    const outcome = evaluateDerived({
      prompt: "sum(@Sales)",
      isEvaluation: false,
      valueType: "number",
      inputs: [input("Sales", "1", { Region: "EU" }), input("Sales", null, { Region: "US" })],
    })
    expect(outcome).toEqual({
      value: null,
      reasoning: "sum(@Sales (1, no value)): @Sales has no value for Region: US, so there is no result.",
    })
  })

  it.each(["Summarize the contract @Name", "mail me@Net.com", "@Net in words", "Explain why @Net is high"])(
    "says when %j needs a language model",
    (prompt) => {
      expect(run(prompt)).toEqual({ value: null, reasoning: NEEDS_LANGUAGE_MODEL })
    },
  )

  it("says so for an empty prompt", () => {
    expect(run("  ")).toEqual({ value: null, reasoning: "The prompt is empty." })
  })
})

describe("evaluateDerived: text and evaluation agents", () => {
  it.each<[string, string | null, string]>([
    ["@First @Last", "Jane Doe", '@First ("Jane") @Last ("Doe") = "Jane Doe"'],
    ["@Name, @Net", "Acme Inc., 1000", '@Name ("Acme Inc."), @Net (1000) = "Acme Inc., 1000"'],
    ["@Net @Tax", "1000 200", '@Net (1000) @Tax (200) = "1000 200"'],
    ["@Net - @Tax", "800", "@Net (1000) - @Tax (200) = 800"],
    ["@Name", "Acme Inc.", '@Name ("Acme Inc.") = "Acme Inc."'],
    ['if(@Net > 5, "high", "low")', "high", 'if(@Net (1000) > 5, "high", "low") = "high"'],
    [
      "@First @Missing",
      null,
      '@First ("Jane") @Missing (no value): @Missing has no value, so there is no result.',
    ],
  ])("string agent: %s", (prompt, value, reasoning) => {
    expect(run(prompt, { valueType: "string" })).toEqual({ value, reasoning })
  })

  it("scores comparisons of evaluation agents as 1 or 0", () => {
    expect(run("Score: @Net > @Tax", { isEvaluation: true })).toEqual({
      value: "1",
      reasoning: "@Net (1000) > @Tax (200) = 1 (true)",
    })
    expect(run('if(@Name == "Acme Inc.", 100, 0)', { isEvaluation: true, valueType: "string" }).value).toBe(
      "100",
    )
  })

  it("cannot score a criterion that is not arithmetic", () => {
    const outcome = run("Score 0-100: how well does the contract protect the buyer given @Net", {
      isEvaluation: true,
    })
    expect(outcome.value).toBeNull()
    expect(outcome.reasoning).toContain(NEEDS_LANGUAGE_MODEL)
    expect(run('if(@Net > 5, "high", "low")', { isEvaluation: true }).value).toBeNull()
  })
})

describe("evaluateDerived: properties", () => {
  const pair = (a: number, b: number) => [input("A", String(a)), input("B", String(b))]

  it("computes like plain arithmetic and shows the substituted expression", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: -1e6, max: 1e6 }),
        fc.integer({ min: -1e6, max: 1e6 }),
        fc.constantFrom<[string, (a: number, b: number) => number]>(
          ["+", (a, b) => a + b],
          ["-", (a, b) => a - b],
          ["*", (a, b) => a * b],
          [">", (a, b) => Number(a > b)],
          ["<=", (a, b) => Number(a <= b)],
          ["==", (a, b) => Number(a === b)],
        ),
        (a, b, [operator, apply]) => {
          const outcome = evaluateDerived({
            prompt: `@A ${operator} @B`,
            isEvaluation: false,
            valueType: "number",
            inputs: pair(a, b),
          })
          const expected = canonicalDecimal(apply(a, b))
          expect(outcome.value).toBe(expected)
          expect(outcome.reasoning.startsWith(`@A (${a}) ${operator} @B (${b}) = ${expected}`)).toBe(true)
        },
      ),
    )
  })

  it("divides, or explains division by zero", () => {
    fc.assert(
      fc.property(fc.integer({ min: -1000, max: 1000 }), fc.integer({ min: -20, max: 20 }), (a, b) => {
        const outcome = evaluateDerived({
          prompt: "@A / @B",
          isEvaluation: false,
          valueType: "number",
          inputs: pair(a, b),
        })
        if (b === 0) expect(outcome).toMatchObject({ value: null })
        else expect(outcome.value).toBe(canonicalDecimal(a / b))
      }),
    )
  })

  type Tree = { n: number } | { op: "+" | "-" | "*"; left: Tree; right: Tree } | { neg: Tree }
  const tree: fc.Arbitrary<Tree> = fc.letrec<{ tree: Tree }>((tie) => ({
    tree: fc.oneof(
      { depthSize: "small", withCrossShrink: true },
      fc.integer({ min: 0, max: 50 }).map((n) => ({ n })),
      fc.record({
        op: fc.constantFrom("+" as const, "-" as const, "*" as const),
        left: tie("tree"),
        right: tie("tree"),
      }),
      fc.record({ neg: tie("tree") }),
    ),
  })).tree
  const text = (t: Tree): string =>
    "n" in t ? String(t.n) : "neg" in t ? `-(${text(t.neg)})` : `(${text(t.left)} ${t.op} ${text(t.right)})`
  const value = (t: Tree): number =>
    "n" in t
      ? t.n
      : "neg" in t
        ? -value(t.neg)
        : t.op === "+"
          ? value(t.left) + value(t.right)
          : t.op === "-"
            ? value(t.left) - value(t.right)
            : value(t.left) * value(t.right)

  it("evaluates nested arithmetic, and its reasoning re-evaluates to the same value", () => {
    fc.assert(
      fc.property(tree, (t) => {
        const outcome = evaluateDerived({
          prompt: text(t),
          isEvaluation: false,
          valueType: "number",
          inputs: [],
        })
        expect(outcome.value).toBe(canonicalDecimal(value(t)))
        const shown = outcome.reasoning.slice(0, outcome.reasoning.lastIndexOf(" = "))
        expect(
          evaluateDerived({ prompt: shown, isEvaluation: false, valueType: "number", inputs: [] }).value,
        ).toBe(outcome.value)
      }),
    )
  })

  it("matches the longest agent name whatever the case", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 100 }),
        fc.integer({ min: 0, max: 100 }),
        fc.boolean(),
        (a, b, upper) => {
          const name = upper ? "NET AMOUNT" : "net amount"
          const outcome = evaluateDerived({
            prompt: `@${name} + @Net`,
            isEvaluation: false,
            valueType: "number",
            inputs: [input("Net", String(a)), input("Net Amount", String(b))],
          })
          expect(outcome.value).toBe(String(a + b))
        },
      ),
    )
  })
})
