import { describe, expect, it } from "vitest"
import { summarize } from "../src/parsing/ParseDocument.ts"

const page = (text: string) => ({ text })

describe("summarize", () => {
  it("keeps a short text whole, whitespace collapsed, with the page count", () => {
    expect(summarize([page("Invoice  no. 12\n\nTotal: 40 EUR"), page("Thank you.")])).toBe(
      "Invoice no. 12 Total: 40 EUR Thank you. (2 pages)",
    )
    expect(summarize([page("One.")])).toBe("One. (1 page)")
    expect(summarize([page(" "), page("")])).toBe("No text found (2 pages)")
  })

  it("cuts a long text at the last sentence end within about 300 characters", () => {
    const first = "This agreement is made between Acme Corporation and Globex Limited on the first of May."
    const second = "It sets out the terms on which Globex supplies widgets to Acme for the next two years."
    const third = "Prices are fixed for the first twelve months and reviewed annually after that date."
    const fourth = "Either party may end it with ninety days of written notice to the other party here."
    const s = summarize([page([first, second, third, fourth].join(" "))])
    expect(s).toBe(`${first} ${second} ${third} (1 page)`)
  })

  it("falls back to a word boundary, then to a hard cut", () => {
    const words = Array.from({ length: 80 }, (_, i) => `word${i}`).join(" ")
    const s = summarize([page(words)], 3)
    expect(s).toMatch(/^word0 word1 .* word\d+… \(3 pages\)$/)
    expect(s.length).toBeLessThanOrEqual(300 + " … (3 pages)".length)
    const blob = "x".repeat(1000)
    expect(summarize([page(blob)])).toBe(`${"x".repeat(300)}… (1 page)`)
  })
})
