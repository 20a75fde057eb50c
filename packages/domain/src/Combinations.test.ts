import { describe, expect, it } from "@effect/vitest"
import * as fc from "fast-check"
import { cartesian, dimensionKey } from "./Combinations.ts"

describe("cartesian", () => {
  it.each<[string, ReadonlyArray<ReadonlyArray<string>>, Array<Array<string>>]>([
    ["no lists", [], [[]]],
    ["one list", [["a", "b"]], [["a"], ["b"]]],
    [
      "two lists, first varies slowest",
      [
        ["a", "b"],
        ["1", "2", "3"],
      ],
      [
        ["a", "1"],
        ["a", "2"],
        ["a", "3"],
        ["b", "1"],
        ["b", "2"],
        ["b", "3"],
      ],
    ],
    ["an empty list", [["a"], []], []],
    ["an empty first list", [[], ["a"]], []],
    ["singletons", [["a"], ["b"], ["c"]], [["a", "b", "c"]]],
  ])("%s", (_, lists, expected) => {
    expect(cartesian(lists)).toEqual(expected)
  })

  it("has the product of the lengths as size, each combination picking one element per list", () => {
    fc.assert(
      fc.property(fc.array(fc.array(fc.integer(), { maxLength: 4 }), { maxLength: 4 }), (lists) => {
        const result = cartesian(lists)
        expect(result.length).toBe(lists.reduce((n, list) => n * list.length, 1))
        for (const combination of result) {
          expect(combination.length).toBe(lists.length)
          combination.forEach((element, i) => {
            expect(lists[i]).toContain(element)
          })
        }
      }),
    )
  })

  it("yields distinct index tuples", () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 3 }), { maxLength: 4 }), (lengths) => {
        const lists = lengths.map((length, i) => Array.from({ length }, (_, j) => `${i}:${j}`))
        const keys = cartesian(lists).map(dimensionKey)
        expect(new Set(keys).size).toBe(keys.length)
      }),
    )
  })
})

describe("dimensionKey", () => {
  it.each<[ReadonlyArray<string>, string]>([
    [[], "[]"],
    [["a"], '["a"]'],
    [["b", "a"], '["b","a"]'],
    [['x"y'], '["x\\"y"]'],
  ])("%j → %s", (ids, expected) => {
    expect(dimensionKey(ids)).toBe(expected)
  })

  it("keeps the order given and round-trips through JSON", () => {
    fc.assert(
      fc.property(fc.array(fc.string()), (ids) => {
        expect(JSON.parse(dimensionKey(ids))).toEqual(ids)
      }),
    )
  })
})
