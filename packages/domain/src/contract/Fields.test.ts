import { Either, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { EmailInput, IsoDateInput, isEmail, NotBlank, wholeNumberValue } from "./Fields.ts"
import { ResolutionStatusInput } from "./Result.ts"

const accepts = <A, I>(schema: Schema.Schema<A, I>, value: unknown) =>
  Either.isRight(Schema.decodeUnknownEither(schema)(value))

describe("the contract's input rules", () => {
  it("e-mail addresses: something@domain.tld without spaces", () => {
    expect(isEmail("ana@example.com")).toBe(true)
    expect(isEmail("ana@example")).toBe(false)
    expect(isEmail("ana @example.com")).toBe(false)
    expect(accepts(EmailInput, "ana@example.com")).toBe(true)
    expect(accepts(EmailInput, "nobody")).toBe(false)
  })

  it("names: something besides white space", () => {
    expect(accepts(NotBlank, "Revenue")).toBe(true)
    expect(accepts(NotBlank, "  ")).toBe(false)
  })

  it("dates: YYYY-MM-DD and a real calendar day", () => {
    expect(accepts(IsoDateInput, "2024-02-29")).toBe(true)
    expect(accepts(IsoDateInput, "2024-13-01")).toBe(false)
    expect(accepts(IsoDateInput, "29.02.2024")).toBe(false)
  })

  it("whole numbers in a body: integers within the range", () => {
    const days = wholeNumberValue(1)
    expect(accepts(days, 30)).toBe(true)
    expect(accepts(days, 0)).toBe(false)
    expect(accepts(days, 1.5)).toBe(false)
    expect(accepts(days, 2_147_483_648)).toBe(false)
  })

  it("resolution_status: one of the enumeration's values", () => {
    expect(accepts(ResolutionStatusInput, "Requires attention")).toBe(true)
    expect(accepts(ResolutionStatusInput, "requires attention")).toBe(false)
  })
})
