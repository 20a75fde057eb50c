import { describe, expect, it } from "@effect/vitest"
import { datesIn, findPassageOnPage, groundAnswer, numbersIn, valueInPassage } from "./Grounding.ts"

const PAGE = [
  "MASTER SERVICES AGREEMENT",
  "This Agreement is entered into as of March 1, 2024 (the “Effective Date”) by and between",
  "Acme Holdings Ltd. and Globex GmbH.",
  "1. Term. The term of this Agreement shall be twenty-four (24) months from the Effective",
  "Date, unless terminated earlier in accordance with Section 9 — Termination.",
  "2. Fees. Customer shall pay a total fee of EUR 1.234,56 per month; late payments bear",
  "interest at 1.5% per month. The annual cap is USD 2,500,000.00 in aggregate.",
  "3. Governing law. This Agreement is governed by the laws of the State of Dela-",
  "ware, without regard to its conflict of laws principles.",
].join("\n")

describe("findPassageOnPage", () => {
  it("answers for the page it is given when it moves between more pages than it remembers", () => {
    // Pages of equal length, so no two are told apart by their size alone.
    const names = ["Globex", "Initec", "Hoolis", "Starko", "Waynex", "Acmeco", "Vandel"]
    const pages = names.map((name, i) => `Page ${i}: the supplier is ${name} Ltd.`)
    for (const round of [0, 1])
      for (const [i, page] of [...pages.entries()].reverse()) {
        expect(findPassageOnPage(page, `the supplier is ${names[i]} Ltd`), `round ${round}`).toBe(
          `the supplier is ${names[i]} Ltd`,
        )
        expect(findPassageOnPage(page, `the supplier is ${names[(i + 1) % 7]} Ltd`)).toBeUndefined()
      }
    // A page longer than those remembered is read as any other.
    const long = `${"filler text. ".repeat(5_000)}The supplier is Globex Ltd.`
    expect(findPassageOnPage(long, "the supplier is Globex Ltd")).toBe("The supplier is Globex Ltd")
    expect(findPassageOnPage(long, "the supplier is Initec Ltd")).toBeUndefined()
  })

  it("finds a verbatim passage and returns the page's own text", () => {
    expect(findPassageOnPage(PAGE, "Acme Holdings Ltd. and Globex GmbH.")).toBe(
      "Acme Holdings Ltd. and Globex GmbH.",
    )
  })

  it("ignores whitespace, line breaks and case", () => {
    expect(findPassageOnPage(PAGE, "from the effective   Date, unless terminated")).toBe(
      "from the Effective\nDate, unless terminated",
    )
  })

  it("treats curly and straight quotes alike", () => {
    expect(findPassageOnPage(PAGE, 'as of March 1, 2024 (the "Effective Date")')).toBe(
      "as of March 1, 2024 (the “Effective Date”)",
    )
  })

  it("treats dashes alike", () => {
    expect(findPassageOnPage(PAGE, "Section 9 - Termination")).toBe("Section 9 — Termination")
  })

  it("joins a word hyphenated at a line end", () => {
    expect(findPassageOnPage(PAGE, "the laws of the State of Delaware, without regard")).toBe(
      "the laws of the State of Dela-\nware, without regard",
    )
    expect(findPassageOnPage(PAGE, "the State of Dela- ware")).toBe("the State of Dela-\nware")
  })

  it("tolerates one edit per 12 characters", () => {
    // 2 slips in 39 characters (3 allowed).
    expect(findPassageOnPage(PAGE, "Customer shal pay a total fee of EUR 1.234.56")).toBe(
      "Customer shall pay a total fee of EUR 1.234,56",
    )
  })

  it("refuses a passage with more edits than that", () => {
    expect(findPassageOnPage(PAGE, "Customer must pay an overall fee of USD 9.999,99")).toBeUndefined()
  })

  it("wants a short passage exactly", () => {
    expect(findPassageOnPage(PAGE, "Globex GmbH")).toBe("Globex GmbH")
    expect(findPassageOnPage(PAGE, "Globax GmbH")).toBeUndefined()
  })

  it("refuses a fabricated passage", () => {
    expect(findPassageOnPage(PAGE, "The total amount due is EUR 9,999.00")).toBeUndefined()
  })

  it("finds a passage that leaves text out with an ellipsis, fragment by fragment in order", () => {
    expect(findPassageOnPage(PAGE, "The term of this Agreement … twenty-four (24) months")).toBe(
      "The term of this Agreement shall be twenty-four (24) months",
    )
    expect(findPassageOnPage(PAGE, "twenty-four (24) months ... The term of this Agreement")).toBeUndefined()
  })

  it("finds nothing for an empty passage", () => {
    expect(findPassageOnPage(PAGE, "  ")).toBeUndefined()
  })
})

describe("numbersIn", () => {
  it("reads both grouping conventions, currency, percentages, scales and words", () => {
    const numbers = numbersIn("EUR 1.234,56 and USD 2,500,000.00; 1.5% a month, 3 million, twenty-four (24)")
    expect(numbers).toEqual(expect.arrayContaining([1234.56, 2500000, 1.5, 0.015, 3e6, 24]))
  })

  it("reads grouping by spaces and accounting negatives", () => {
    expect(numbersIn("1 234 567 units, (100) loss")).toEqual(expect.arrayContaining([1234567, -100, 100]))
  })
})

describe("datesIn", () => {
  it("reads written and numeric dates", () => {
    expect(datesIn("as of March 1, 2024, then 1st day of April, 2025 and 2026-02-03")).toEqual([
      20260203, 20240301, 20250401,
    ])
  })

  it("gives both readings of an ambiguous day and month", () => {
    expect(datesIn("signed 03/04/2024")).toEqual(expect.arrayContaining([20240304, 20240403]))
  })
})

describe("valueInPassage", () => {
  it("numbers: any number of the passage equal to the value", () => {
    expect(valueInPassage("number", "1234.56", "a total fee of EUR 1.234,56 per month")).toBe(true)
    expect(valueInPassage("number", "2500000", "USD 2,500,000.00 in aggregate")).toBe(true)
    expect(valueInPassage("number", "1.5", "interest at 1.5% per month")).toBe(true)
    expect(valueInPassage("number", "0.015", "interest at 1.5% per month")).toBe(true)
    expect(valueInPassage("number", "24", "twenty-four (24) months")).toBe(true)
    expect(valueInPassage("number", "24", "twenty-four months")).toBe(true)
    expect(valueInPassage("number", "-100", "a loss of (100)")).toBe(true)
    expect(valueInPassage("number", "1250", "a total fee of EUR 1.234,56 per month")).toBe(false)
  })

  it("dates: a date of the passage equal to the value; one stated otherwise is not held against it", () => {
    expect(valueInPassage("date", "2024-03-01", "entered into as of March 1, 2024")).toBe(true)
    expect(valueInPassage("date", "2024-03-01", "dated 01.03.2024")).toBe(true)
    expect(valueInPassage("datetime", "2024-03-01T10:00:00Z", "on 2024-03-01 at 10:00")).toBe(true)
    expect(valueInPassage("date", "2024-03-02", "entered into as of March 1, 2024")).toBe(false)
    expect(valueInPassage("date", "2024-03-01", "on the first day of March of this year")).toBe(true)
  })

  it("bools are accepted", () => {
    expect(valueInPassage("bool", "true", "anything")).toBe(true)
  })

  it("strings: the value's words in the passage, with small slips", () => {
    expect(
      valueInPassage("string", "Acme Holdings Ltd", "by and between Acme Holdings Ltd. and Globex"),
    ).toBe(true)
    expect(valueInPassage("string", "Delaware", "the laws of the State of Delaware")).toBe(true)
    expect(valueInPassage("string", "Globex, Acme Holdings", "between Acme Holdings Ltd. and Globex")).toBe(
      true,
    )
    expect(valueInPassage("string", "Acme Holdngs", "between Acme Holdings Ltd.")).toBe(true)
    expect(valueInPassage("string", "New York", "the laws of the State of Delaware")).toBe(false)
  })
})

describe("groundAnswer", () => {
  it("grounds an answer whose passage is on the page and states the value", () => {
    expect(
      groundAnswer({
        valueType: "number",
        value: "1234.56",
        passage: "Customer shall pay a total fee of EUR 1.234,56 per month",
        pageText: PAGE,
        pageNumber: 2,
      }),
    ).toEqual({ grounded: true, passage: "Customer shall pay a total fee of EUR 1.234,56 per month" })
  })

  it("refuses a passage that is not on the page, saying so in one line", () => {
    const g = groundAnswer({
      valueType: "number",
      value: "9999",
      passage: "The total amount due is EUR 9,999.00",
      pageText: PAGE,
      pageNumber: 3,
    })
    expect(g).toEqual({
      grounded: false,
      reason: "passage not on page",
      detail: 'the passage "The total amount due is EUR 9,999.00" is not on page 3',
    })
  })

  it("refuses a value that is not in its passage", () => {
    const g = groundAnswer({
      valueType: "date",
      value: "2025-03-01",
      passage: "entered into as of March 1, 2024",
      pageText: PAGE,
    })
    expect(g.grounded).toBe(false)
    if (!g.grounded) {
      expect(g.reason).toBe("value not in passage")
      expect(g.detail).toBe(
        'the value "2025-03-01" is not stated in the passage "entered into as of March 1, 2024" on the cited page',
      )
      expect(g.detail).not.toContain("\n")
    }
  })

  it("refuses an empty passage", () => {
    const g = groundAnswer({ valueType: "string", value: "x", passage: "", pageText: PAGE, pageNumber: 1 })
    expect(g.grounded).toBe(false)
    if (!g.grounded) expect(g.reason).toBe("passage not on page")
  })

  it("shortens a long passage in its reason", () => {
    const g = groundAnswer({ valueType: "string", value: "x", passage: "y ".repeat(200), pageText: PAGE })
    expect(g.grounded).toBe(false)
    if (!g.grounded) expect(g.detail.length).toBeLessThan(140)
  })
})

describe("normalised values of string agents", () => {
  const NDA = "THIS AGREEMENT is made this 6th of February, 1999 by and between Nike, Inc. and Eric Sprunk."

  it("grounds an ISO date by the date as the passage writes it", () => {
    expect(
      groundAnswer({ valueType: "string", value: "1999-02-06", passage: NDA, pageText: NDA }),
    ).toMatchObject({ grounded: true })
    expect(
      groundAnswer({ valueType: "string", value: "1999-02-07", passage: NDA, pageText: NDA }),
    ).toMatchObject({ grounded: false, reason: "value not in passage" })
  })

  it("reads a numeric date by the document's date order", () => {
    const page = "Signed on 06/02/1999."
    const ground = (value: string, dateOrder: "day-first" | "month-first") =>
      groundAnswer({ valueType: "string", value, passage: page, pageText: page, dateOrder }).grounded
    expect(ground("1999-02-06", "day-first")).toBe(true)
    expect(ground("1999-02-06", "month-first")).toBe(false)
    expect(ground("1999-06-02", "month-first")).toBe(true)
  })

  it("grounds amounts, percentages and durations in their written forms", () => {
    expect(valueInPassage("string", "$1,500,000", "a fee of one million five hundred thousand dollars")).toBe(
      true,
    )
    expect(valueInPassage("string", "12%", "twelve per cent")).toBe(true)
    expect(valueInPassage("string", "2 years", "for a period of two (2) years")).toBe(true)
    expect(valueInPassage("number", "1500000", "USD 1.5 million")).toBe(true)
  })

  it("grounds a converted duration only when the agent asks for that unit", () => {
    const passage = "This Agreement shall remain in effect for two (2) years."
    expect(valueInPassage("string", "24 months", passage)).toBe(false)
    expect(valueInPassage("string", "24 months", passage, { askedUnit: "month" })).toBe(true)
    expect(valueInPassage("number", "24", passage, { askedUnit: "month" })).toBe(true)
    expect(
      groundAnswer({
        valueType: "string",
        value: "24 months",
        passage,
        pageText: passage,
        askedUnit: "month",
      }),
    ).toMatchObject({ grounded: true })
  })
})
