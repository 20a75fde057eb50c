import { describe, expect, it } from "vitest"
import { findDurations } from "../../src/extraction/local/Durations.ts"
import { findIdentifiers } from "../../src/extraction/local/Identifiers.ts"
import { findJurisdictions } from "../../src/extraction/local/Jurisdictions.ts"
import { declaredPersons, signingPersons } from "../../src/extraction/local/Persons.ts"
import { agentSpec, extractFirst } from "./agents.ts"

/** Golden cases of the local extractor by kind of value, on contracts: durations, jurisdictions, persons, dates. */

const term = agentSpec("Term", "How long the agreement lasts (its term or duration)", "string", {
  examples: "2 years",
})
const law = agentSpec("Jurisdiction", "The state or country whose laws govern the agreement")
const parties = agentSpec("Parties", "The parties between whom the agreement is made (companies or persons)")
const effective = agentSpec("Effective date", "The date the agreement is dated or takes effect", "date")

const extract = extractFirst

describe("durations", () => {
  it.each([
    ["two (2) years", "2 years"],
    ["twenty-four (24) months", "24 months"],
    ["a period of eighteen months", "18 months"],
    ["within 90 days", "90 days"],
    ["one-year", "1 year"],
  ])("reads %j", (text, value) => {
    expect(findDurations(text).map((c) => c.value)).toEqual([value])
  })

  it("answers the term the agreement states for itself", () => {
    const text =
      "1. Confidentiality. The Recipient shall keep the Information secret.\n\n2. Term. This Agreement shall terminate two (2) years from the date hereof.\n"
    expect(extract(term, text)?.value).toBe("2 years")
  })

  it.each([
    [
      "how long obligations survive the agreement",
      "The obligations of the Recipient shall remain in effect for three (3) years from the date of termination.",
    ],
    [
      "a covenant's period during and after the term",
      "During the term of this Agreement and for a period of one (1) year thereafter, Employee will not solicit or hire away any employee of the Company.",
    ],
    [
      "a deadline",
      "The Recipient shall return all Information within thirty (30) days after receipt of a request.",
    ],
  ])("answers no term from %s", (_, text) => {
    expect(extract(term, `CONFIDENTIALITY AGREEMENT\n\n${text}\n`)).toBeUndefined()
  })
})

describe("jurisdictions", () => {
  it.each([
    ["This Agreement shall be governed by the laws of the State of Delaware.", "Delaware"],
    ["construed in accordance with the laws of England and Wales", "England and Wales"],
    ["subject to the exclusive jurisdiction of the courts of New York", "New York"],
  ])("reads %j", (text, value) => {
    expect(findJurisdictions(text)[0]?.value).toBe(value)
  })

  it("answers the state of the governing-law clause, not the state a party is organised in", () => {
    const text =
      "This Agreement is made between Acme Inc., a Delaware corporation, and Beta LLC, a Texas limited liability company.\n\n9. Governing Law. This Agreement shall be governed by and construed in accordance with the laws of the State of New York.\n"
    expect(extract(law, text)?.value).toBe("New York")
  })
})

describe("identifiers", () => {
  it("reads a number after its label, its own # after a label that already says number, no group of a phone number", () => {
    const text = "Invoice No: INV-2024-0042\nOrder No : # BLR-77\nTel. +49 6051 916 44 10\n"
    const ids = findIdentifiers(text, [])
    expect(ids.find((c) => c.value === "INV-2024-0042")?.strength).toBeGreaterThan(0.8)
    expect(ids.map((c) => c.value)).toContain("#BLR-77")
    expect(ids.map((c) => c.value)).not.toContain("6051")
  })
})

describe("persons", () => {
  it.each([
    ["I, Mary Minnick, in consideration of severance payments", "Mary Minnick"],
    ["between Acme, Inc. (the “Company”), and Joan Mannick (the “Employee”).", "Joan Mannick"],
    [
      "is entered into as of September 7, 2010 by Benny Ward (“Employee”) in favor of Acme, Inc.",
      "Benny Ward",
    ],
    ["(“Endo”), Todd B.\nSisitsky, an individual (“Sisitsky”), and TPG Global, LLC", "Todd B. Sisitsky"],
    ["and PAUL S. RUTTER (the “Executive”).", "PAUL S. RUTTER"],
  ])("reads the person a contract names as a party in %j", (text, name) => {
    expect(declaredPersons(text)).toEqual([name])
  })

  it("reads no person in a document a contract defines", () => {
    expect(declaredPersons("and the General Release (the “Release”)")).toEqual([])
  })

  it("reads who signs as themselves, not an officer signing for a company", () => {
    const text =
      "ACME CORP.\n\nBy: /s/ Nathaniel F. Bradley\nName: Nathaniel F. Bradley\nTitle: President\n\n/s/ James C. Lee\nName: James C. Lee\n"
    expect(signingPersons(text)).toEqual(["James C. Lee", "James C. Lee"])
  })

  it("answers the company a first-person contract defines and the person who declares it", () => {
    const text =
      "CONFIDENTIALITY AGREEMENT\n\nAs a condition of my employment with Mavenir Systems, Inc., a Delaware corporation (collectively, the “Company”), I, John Q. Smith, agree as follows.\n"
    expect(extract(parties, text)?.value).toBe("Mavenir Systems, Inc., John Q. Smith")
  })

  it("answers both parties of 'between X and Y' when Y is a name of several words", () => {
    const text =
      "This Agreement is made between Yu Zhou and Genexosome Technologies, Inc., a Nevada corporation.\n"
    expect(extract(parties, text)?.value).toBe("Yu Zhou, Genexosome Technologies, Inc.")
  })
})

describe("agreement dates", () => {
  it("answers the date named the Effective Date, not the date of another agreement it names", () => {
    const text =
      "This Consulting Agreement (the “Agreement”) is made as of the 5th day of November 2004 (the “Effective Date”), by and between Richard Harcke and Haynes Wire Company.\n\nThis Agreement is made as a condition of the transactions contemplated by a certain Asset Purchase Agreement dated October 28, 2004, by and among the parties.\n"
    expect(extract(effective, text)?.value).toBe("2004-11-05")
  })

  it("answers no date of the agreement from the date of another agreement or a day without a year", () => {
    const other =
      "This Agreement shall supersede the Mutual Non-Disclosure Agreement entered into between Buyer and Company dated May 9, 2007.\n"
    expect(extract(effective, other)).toBeUndefined()
    const yearless =
      "NON-DISCLOSURE AGREEMENT\n\nThe payment shall be made by December 31 of the calendar year.\n"
    expect(extract(effective, yearless)).toBeUndefined()
  })
})
