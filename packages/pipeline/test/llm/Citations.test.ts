/**
 * Every provider's answers go through `groundCitation`: a value an agent asks for in a normalised form
 * (an ISO date, a number, a duration) is grounded by the passage that writes it otherwise.
 */
import { describe, expect, it } from "vitest"
import { groundCitation } from "../../src/llm/Citations.ts"
import type { PageText } from "../../src/llm/LanguageModel.ts"

const page = (pageNumber: number, text: string): PageText => ({
  documentId: "d",
  documentName: "nda.pdf",
  pageNumber,
  text,
})

const NDA = [
  page(
    1,
    "MUTUAL NON-DISCLOSURE AGREEMENT\nThis Agreement is made this 6th of February, 1999 by and between",
  ),
  page(2, "This Agreement shall remain in effect for a period of two (2) years from the Effective Date."),
]

describe("groundCitation with written forms", () => {
  it("grounds a string agent's ISO date by its ordinal written form", () => {
    const c = groundCitation(NDA, 1, "made this 6th of February, 1999", "1999-02-06", "string")
    expect(c).toMatchObject({ grounded: true, pageNumber: 1 })
    expect(groundCitation(NDA, 1, "made this 6th of February, 1999", "1999-02-16", "string").grounded).toBe(
      false,
    )
  })

  it("grounds a duration in words and digits, and a conversion only when the agent asks for it", () => {
    const passage = "a period of two (2) years"
    expect(groundCitation(NDA, 2, passage, "2 years", "string").grounded).toBe(true)
    expect(groundCitation(NDA, 2, passage, "24 months", "string").grounded).toBe(false)
    expect(
      groundCitation(NDA, 2, passage, "24 months", "string", {
        extractionInstructions: "The term of the agreement in months",
      }).grounded,
    ).toBe(true)
    expect(groundCitation(NDA, 2, passage, "24", "number", { unit: "months" }).grounded).toBe(true)
  })

  it("reads numeric dates in the order the document's other dates show", () => {
    const dayFirst = [page(1, "Invoice date 25/01/2024\nDelivered on 03/02/2024")]
    const monthFirst = [page(1, "Invoice date 01/25/2024\nDelivered on 03/02/2024")]
    const passage = "Delivered on 03/02/2024"
    expect(groundCitation(dayFirst, 1, passage, "2024-02-03", "string").grounded).toBe(true)
    expect(groundCitation(dayFirst, 1, passage, "2024-03-02", "string").grounded).toBe(false)
    expect(groundCitation(monthFirst, 1, passage, "2024-03-02", "string").grounded).toBe(true)
    expect(groundCitation(monthFirst, 1, passage, "2024-02-03", "string").grounded).toBe(false)
  })
})
