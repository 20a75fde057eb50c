import { describe, expect, it } from "vitest"
import {
  askedDurationUnit,
  dateOrderOf,
  numberFromWords,
  passageStates,
  readValue,
  type Stated,
} from "./WrittenForms.ts"

const states = (value: string, passage: string, options: Parameters<typeof passageStates>[2] = {}) => {
  const v = readValue(value, options)
  if (v === undefined) throw new Error(`${value} is no written form`)
  return passageStates(v, passage, options)
}

describe("readValue", () => {
  it.each<[string, Stated | undefined]>([
    ["1999-02-06", { kind: "date", ordinal: 19990206 }],
    ["February 6, 1999", { kind: "date", ordinal: 19990206 }],
    ["2 years", { kind: "duration", amount: 2, unit: "year" }],
    ["24 months", { kind: "duration", amount: 24, unit: "month" }],
    ["$1,500,000", { kind: "number", value: 1500000, unit: "USD" }],
    ["1500000", { kind: "number", value: 1500000, unit: undefined }],
    ["12%", { kind: "number", value: 12, unit: "%" }],
    ["5 kg", { kind: "number", value: 5, unit: "kg" }],
    ["Delaware", undefined],
    ["Acme Corp. and Nike Inc.", undefined],
  ])("%s", (value, expected) => {
    const read = readValue(value)
    expect(read).toEqual(expected)
  })
})

describe("dates in their written forms", () => {
  it.each([
    ["1999-02-06", "made and entered into this 6th of February, 1999 by and between"],
    ["1999-02-06", "This Agreement is dated February 6, 1999."],
    ["1999-02-06", "dated Feb. 6th 1999"],
    ["1999-02-06", "on this sixth day of February, 1999"],
    ["1999-02-06", "entered into as of the 6th day of February 1999"],
    ["1999-02-06", "Date: 6-Feb-99"],
    ["1999-02-06", "Date: 1999/02/06"],
    ["2001-04-21", "effective as of the twenty-first day of April, 2001"],
    ["1999-02-06", "Signed 06/02/1999"],
    ["1999-02-06", "Signed 02/06/1999"],
  ])("%s in %j", (value, passage) => {
    expect(states(value, passage)).toBe(true)
  })

  it("reads a numeric date day-first or month-first by the document's evidence", () => {
    expect(states("1999-02-06", "Signed 06/02/1999", { dateOrder: "day-first" })).toBe(true)
    expect(states("1999-02-06", "Signed 06/02/1999", { dateOrder: "month-first" })).toBe(false)
    expect(states("1999-06-02", "Signed 06/02/1999", { dateOrder: "month-first" })).toBe(true)
    // A reading that is impossible one way is read the other way whatever the evidence.
    expect(states("1999-02-25", "Signed 25/02/1999", { dateOrder: "month-first" })).toBe(true)
  })

  it("does not take another date for the value", () => {
    expect(states("1999-02-06", "made this 7th of February, 1999")).toBe(false)
    expect(states("1999-02-06", "made this 6th of February, 2000")).toBe(false)
    expect(states("1999-02-06", "for a term of two (2) years")).toBe(false)
  })

  it("finds the document's date order", () => {
    expect(dateOrderOf("Invoice 25/12/2020, due 10/01/2021")).toBe("day-first")
    expect(dateOrderOf("Invoice 12/25/2020, due 01/10/2021")).toBe("month-first")
    // Asked again of a text it was asked before, after another, it reads that text.
    expect(dateOrderOf("Invoice 25/12/2020, due 10/01/2021")).toBe("day-first")
    expect(dateOrderOf("Invoice 25/12/2020, due 10/01/2021")).toBe("day-first")
    expect(dateOrderOf("signed on 6 February 2020")).toBe("day-first")
    expect(dateOrderOf("signed on February 6, 2020")).toBe("month-first")
    expect(dateOrderOf("made this 6th day of February, 1999")).toBe("day-first")
    expect(dateOrderOf("dated February 6, 1999")).toBe("month-first")
    expect(dateOrderOf("dated 03/04/2020")).toBeUndefined()
  })
})

describe("numbers in their written forms", () => {
  it.each([
    ["1500000", "a fee of $1,500,000 payable"],
    ["1500000", "a fee of 1.500.000 € payable"],
    ["1500000", "a fee of USD 1.5 million payable"],
    ["1500000", "a fee of $1.5m payable"],
    ["1500000", "one million five hundred thousand dollars"],
    ["$1,500,000", "a fee of USD 1,500,000"],
    ["USD 1,500,000", "a fee of one million five hundred thousand dollars"],
    ["12%", "interest of twelve per cent a year"],
    ["0.12", "interest of 12% a year"],
    ["5 kg", "weighs five kilograms"],
    ["-250", "a loss of (250)"],
    ["105000", "one hundred and five thousand"],
    ["24", "twenty-four months"],
    ["1000", "1 000 shares"],
  ])("%s in %j", (value, passage) => {
    expect(states(value, passage)).toBe(true)
  })

  it("does not take another number, currency or unit for the value", () => {
    expect(states("1500000", "a fee of $1,400,000")).toBe(false)
    expect(states("$1,500,000", "a fee of EUR 1,500,000")).toBe(false)
    expect(states("5 kg", "5 km away")).toBe(false)
  })

  it("reads number words", () => {
    expect(numberFromWords("twenty-four")).toBe(24)
    expect(numberFromWords("one hundred and five thousand")).toBe(105000)
    expect(numberFromWords("two million three hundred thousand")).toBe(2300000)
    expect(numberFromWords("a dozen")).toBe(12)
    expect(numberFromWords("Delaware")).toBeUndefined()
  })
})

describe("durations in their written forms", () => {
  it.each([
    ["2 years", "for a period of two (2) years from the Effective Date"],
    ["2 years", "for a period of 2 (two) years"],
    ["1 year", "a one-year term"],
    ["1 year", "for a year after termination"],
    ["18 months", "eighteen months after disclosure"],
    ["30 days", "within thirty (30) calendar days"],
  ])("%s in %j", (value, passage) => {
    expect(states(value, passage)).toBe(true)
  })

  it("converts between units only when the agent asks for that unit", () => {
    expect(states("24 months", "for two (2) years")).toBe(false)
    expect(states("24 months", "for two (2) years", { askedUnit: "month" })).toBe(true)
    expect(states("2 years", "for twenty-four (24) months", { askedUnit: "year" })).toBe(true)
    expect(states("24", "for two (2) years", { askedUnit: "month" })).toBe(true)
    expect(states("24", "for two (2) years")).toBe(false)
    expect(states("25 months", "for two (2) years", { askedUnit: "month" })).toBe(false)
  })

  it("knows which unit an agent asks for", () => {
    expect(askedDurationUnit({ unit: "months" })).toBe("month")
    expect(askedDurationUnit({ instructions: "The term of the agreement in months" })).toBe("month")
    expect(askedDurationUnit({ instructions: "The number of years the agreement lasts" })).toBe("year")
    expect(askedDurationUnit({ instructions: "How long the agreement lasts", unit: "" })).toBeUndefined()
  })
})
