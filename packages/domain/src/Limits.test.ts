import { describe, expect, it } from "@effect/vitest"
import * as fc from "fast-check"
import {
  inputIssue,
  jsonTextDepth,
  MAX_ARRAY_LENGTH,
  MAX_NAME_LENGTH,
  MAX_TEXT_LENGTH,
  nameIssue,
  stringContentProblem,
} from "./Limits.ts"

const nested = (depth: number) => `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`

describe("jsonTextDepth", () => {
  it.each([
    ["1", 0],
    ['"x"', 0],
    ["{}", 1],
    ["[[]]", 2],
    ['{"a":[{"b":{}}]}', 4],
    ['{"a":"{{{[[["}', 1],
    ['["\\"[[["]', 1],
    ['["\\\\", [1]]', 2],
  ])("%s is %d deep", (text, depth) => {
    expect(jsonTextDepth(text)).toBe(depth)
  })

  it("stops counting past the limit, however deep the text", () => {
    expect(jsonTextDepth(nested(100_000), 64)).toBe(65)
  })

  it("agrees with the depth of the parsed value", () => {
    const depthOf = (v: unknown): number =>
      v === null || typeof v !== "object"
        ? 0
        : 1 + Math.max(0, ...Object.values(v as Record<string, unknown>).map(depthOf))
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 8 }), (value) => {
        expect(jsonTextDepth(JSON.stringify(value))).toBe(depthOf(value))
      }),
    )
  })
})

describe("stringContentProblem", () => {
  it.each([["a\u0000b"], ["\ud800"], ["x\udc00"], ["\udbff\ud800"]])("refuses %j", (s) => {
    expect(stringContentProblem(s)).toEqual(expect.any(String))
  })
  it.each([["plain"], ["文件.pdf"], ["emoji 😀"], ["e\u0301"], [""]])("accepts %j", (s) => {
    expect(stringContentProblem(s)).toBeUndefined()
  })
})

describe("inputIssue", () => {
  it("names the path of a NUL byte in a value or a key", () => {
    expect(inputIssue({ name: "a\u0000b" })).toEqual({
      path: "name",
      message: expect.stringContaining("NUL"),
    })
    expect(inputIssue({ tags: [{ key: "k", value: "v\u0000" }] })?.path).toBe("tags/0/value")
    expect(inputIssue({ "a/b\u0000": 1 })).toEqual({
      path: "a~1b\u0000",
      message: expect.stringContaining("field name"),
    })
  })

  it("refuses nesting deeper than the limit without recursing", () => {
    const deep = JSON.parse(nested(10_000))
    expect(inputIssue(deep)?.message).toMatch(/deeper than the limit of 64/)
    expect(inputIssue(JSON.parse(nested(64)))).toBeUndefined()
    expect(inputIssue(JSON.parse(nested(65)))).toBeDefined()
  })

  it("refuses over-long strings and arrays, naming the limit", () => {
    expect(inputIssue({ text: "x".repeat(MAX_TEXT_LENGTH) })).toBeUndefined()
    expect(inputIssue({ text: "x".repeat(MAX_TEXT_LENGTH + 1) })).toEqual({
      path: "text",
      message: `must be at most ${MAX_TEXT_LENGTH} characters`,
    })
    expect(inputIssue({ ids: Array(MAX_ARRAY_LENGTH + 1).fill(1) })).toEqual({
      path: "ids",
      message: `must have at most ${MAX_ARRAY_LENGTH} items`,
    })
  })

  it("finds nothing wrong with ordinary JSON", () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 10 }), (value) => {
        const hasBad = JSON.stringify(value).includes("\\u0000") || /\\ud[89a-f]/i.test(JSON.stringify(value))
        if (!hasBad) expect(inputIssue(value)).toBeUndefined()
      }),
    )
  })
})

describe("nameIssue", () => {
  it.each([
    ["", "must not be empty"],
    ["   ", "must not be empty"],
    ["x".repeat(MAX_NAME_LENGTH + 1), `must be at most ${MAX_NAME_LENGTH} characters`],
    ["a\u0000", "must not contain NUL characters (\\u0000)"],
  ])("%j: %s", (name, message) => {
    expect(nameIssue(name)).toEqual({ path: "name", message })
  })
  it("accepts a name of the largest allowed length", () => {
    expect(nameIssue("x".repeat(MAX_NAME_LENGTH))).toBeUndefined()
  })
})
