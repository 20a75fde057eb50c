import { describe, expect, it } from "vitest"
import { localExtract } from "../../src/extraction/local/Extractor.ts"
import type { AgentSpec, DimensionQuery, ExtractRequest, ValueType } from "../../src/llm/LanguageModel.ts"
import { agentSpec } from "./agents.ts"

const agent = (name: string, valueType: ValueType = "string", extra: Partial<AgentSpec> = {}): AgentSpec =>
  agentSpec(name, "", valueType, extra)

const request = (
  spec: AgentSpec,
  pages: ReadonlyArray<string>,
  dimensions: ReadonlyArray<DimensionQuery> = [],
  referenceDate = "2024-05-15",
): ExtractRequest => ({
  agent: spec,
  document: { id: "doc-1", name: "document.pdf" },
  pages: pages.map((text, i) => ({
    documentId: "doc-1",
    documentName: "document.pdf",
    pageNumber: i + 1,
    text,
  })),
  dimensions,
  referenceDate,
})

const invoiceUs = [
  "ACME Supplies, Inc.\n123 Main Street\nSpringfield, IL 62701\n\nINVOICE\n\nInvoice No: INV-2024-0042\nInvoice Date: March 5, 2024\nBill To: Globex Corporation\n",
  "Description                 Qty     Unit price     Amount\nWidgets                      10        $100.00   $1,000.00\nInstallation                  1        $234.00     $234.00\n\nSubtotal                                          $1,234.00\nSales tax (8%)                                       $98.72\nTotal Due:                                        $1,332.72\n\nPayment terms: Net 30\n",
]

const invoiceEu = `Müller Bürobedarf GmbH
Hauptstraße 5, 10115 Berlin

Rechnung / Invoice
Invoice number: RE-7781
Date: 28.11.2022

Item                       Amount
Paper A4 (5 boxes)         1.050,00 €
Toner                        208,40 €
Subtotal                   1.258,40 €
VAT 19%                      239,10 €
Grand total                1.497,50 €
`

const contract = `MUTUAL NON-DISCLOSURE AGREEMENT

This Mutual Non-Disclosure Agreement (the "Agreement") is dated as of March 3, 2021 and is entered into by and between Northwind Traders, Inc., a Delaware corporation ("Northwind"), and Contoso Ltd, a company organised under the laws of England ("Contoso").

1. Purpose. The parties wish to evaluate a possible business relationship.

2. Term. This Agreement shall remain in effect for a period of two (2) years from the date hereof.

3. Non-solicitation. For a period of twelve (12) months after the date hereof, neither party shall solicit employees of the other.

4. Governing Law. This Agreement shall be governed by and construed in accordance with the laws of the State of Delaware, without regard to its conflict of laws principles.
`

const employmentNda = `CONFIDENTIALITY AGREEMENT

This Confidentiality Agreement is made and entered into on the 1st day of June, 2019 by and between Jane Q. Smith ("Employee") and Fabrikam Corp. ("Company").

The obligations of Employee under this Agreement shall continue for three years after the date of this Agreement.

This Agreement is governed by the laws of the State of New York.
`

const cases: ReadonlyArray<{
  readonly title: string
  readonly agent: AgentSpec
  readonly pages: ReadonlyArray<string>
  readonly value: string
  readonly page: number
}> = [
  {
    title: "invoice number after 'Invoice No:'",
    agent: agent("Invoice number"),
    pages: invoiceUs,
    value: "INV-2024-0042",
    page: 1,
  },
  {
    title: "invoice date",
    agent: agent("Invoice date", "date"),
    pages: invoiceUs,
    value: "2024-03-05",
    page: 1,
  },
  {
    title: "total (US separators), not the subtotal",
    agent: agent("Total amount", "number"),
    pages: invoiceUs,
    value: "1332.72",
    page: 2,
  },
  {
    title: "subtotal when asked for",
    agent: agent("Subtotal", "number"),
    pages: invoiceUs,
    value: "1234",
    page: 2,
  },
  {
    title: "total (European separators) with a EUR unit",
    agent: agent("Total", "number", { unit: "EUR" }),
    pages: [invoiceEu],
    value: "1497.5",
    page: 1,
  },
  {
    title: "invoice number (European invoice)",
    agent: agent("Invoice number", "string", { examples: "INV-001" }),
    pages: [invoiceEu],
    value: "RE-7781",
    page: 1,
  },
  {
    title: "day-first numeric date",
    agent: agent("Invoice date", "date"),
    pages: [invoiceEu],
    value: "2022-11-28",
    page: 1,
  },
  { title: "VAT rate as a percentage", agent: agent("VAT rate"), pages: [invoiceEu], value: "19%", page: 1 },
  { title: "currency as ISO code", agent: agent("Currency"), pages: [invoiceEu], value: "EUR", page: 1 },
  {
    title: "effective date 'dated as of'",
    agent: agent("Effective date", "date"),
    pages: [contract],
    value: "2021-03-03",
    page: 1,
  },
  {
    title: "effective date 'the 1st day of June, 2019'",
    agent: agent("Effective date", "date"),
    pages: [employmentNda],
    value: "2019-06-01",
    page: 1,
  },
  {
    title: "governing law",
    agent: agent("Governing law"),
    pages: [contract],
    value: "Delaware",
    page: 1,
  },
  {
    title: "jurisdiction (two-word state)",
    agent: agent("Jurisdiction"),
    pages: [employmentNda],
    value: "New York",
    page: 1,
  },
  { title: "term 'two (2) years'", agent: agent("Term"), pages: [contract], value: "2 years", page: 1 },
  {
    title: "term of the obligations",
    agent: agent("Term", "string", { examples: "2 years" }),
    pages: [employmentNda],
    value: "3 years",
    page: 1,
  },
  {
    title: "parties 'by and between'",
    agent: agent("Parties"),
    pages: [contract],
    value: "Northwind Traders, Inc., Contoso Ltd",
    page: 1,
  },
  {
    title: "parties: a person and a company",
    agent: agent("Parties"),
    pages: [employmentNda],
    value: "Jane Q. Smith, Fabrikam Corp.",
    page: 1,
  },
]

describe("localExtract", () => {
  it.each(cases)("$title", ({ agent: spec, pages, value, page }) => {
    const response = localExtract(request(spec, pages))
    expect(response.usage).toEqual({
      calls: 0,
      cacheHits: 0,
      promptTokens: 0,
      cachedTokens: 0,
      completionTokens: 0,
    })
    expect(response.values).toHaveLength(1)
    const v = response.values[0]!
    expect(v.value).toBe(value)
    expect(v.pageNumber).toBe(page)
    expect(v.dimensionValues).toEqual({})
    // The passage is verbatim text of the cited page.
    expect(pages[v.pageNumber - 1]!.includes(v.relevantPassage)).toBe(true)
    expect(v.relevantPassage.length).toBeGreaterThan(0)
    expect(v.reasoning).toContain(`on page ${page}`)
  })

  it("says in the reasoning which label and pattern decided", () => {
    const v = localExtract(request(agent("Total amount", "number"), invoiceUs)).values[0]!
    expect(v.reasoning).toMatch(/label "Total Due"/)
    expect(v.reasoning).toMatch(/total/)
    expect(v.reasoning).toMatch(/money pattern/)
    expect(v.relevantPassage).toContain("Total Due:")
  })

  it("anchors relative dates at the reference date", () => {
    const pages = ["Payment reminder\n\nThe amount is due today.\nA second notice follows in 30 days."]
    const today = localExtract(request(agent("Due date", "date"), pages, [], "2024-02-20")).values
    expect(today.map((v) => v.value)).toEqual(["2024-02-20"])
    const later = localExtract(
      request(agent("Second notice date", "date"), ["Second notice: in 30 days"], [], "2024-02-20"),
    ).values
    expect(later.map((v) => v.value)).toEqual(["2024-03-21"])
  })

  it("keeps the stated number and strips unit words", () => {
    const pages = ["Annual report\n\nRevenue: 12.5 million\nEmployees: 1,204\n"]
    expect(
      localExtract(request(agent("Revenue", "number", { unit: "million" }), pages)).values[0]?.value,
    ).toBe("12.5")
    expect(localExtract(request(agent("Number of employees", "number"), pages)).values[0]?.value).toBe("1204")
  })

  it("returns no value when nothing fits (a wrong value is worse than none)", () => {
    const pages = ["Meeting notes\n\nWe discussed the roadmap and agreed to meet again next quarter."]
    for (const spec of [
      agent("Total amount", "number"),
      agent("Invoice number"),
      agent("Governing law"),
      agent("Parties"),
      agent("Term"),
    ])
      expect(localExtract(request(spec, pages)).values).toEqual([])
    expect(localExtract(request(agent("Total", "number"), [])).values).toEqual([])
  })

  it("answers a due date only from a date labelled as due", () => {
    const due = agent("Due date", "string", { extractionInstructions: "The date by which payment is due" })
    expect(localExtract(request(due, invoiceUs)).values).toEqual([])
    const withDue = [invoiceUs[0]!.replace("Bill To:", "Due Date: April 4, 2024\nBill To:"), invoiceUs[1]!]
    expect(localExtract(request(due, withDue)).values[0]?.value).toBe("2024-04-04")
    // The invoice date is still found for an invoice-date agent.
    expect(localExtract(request(agent("Invoice date"), withDue)).values[0]?.value).toBe("2024-03-05")
  })

  it("reads neither the blanks of a form nor 'the last day of' as a relative date", () => {
    const effective = agent("Effective date", "date")
    const form = [
      // a form's blanks are drawn lines, absent from the text
      "CONFIDENTIALITY AGREEMENT\n\nThis Agreement is made and effective this day of , 20 , between Northwind Traders, Inc. and the Employee.",
    ]
    expect(localExtract(request(effective, form, [], "2024-01-01")).values).toEqual([])
    const lastDay = [
      "SEVERANCE AGREEMENT\n\nThis Agreement becomes effective on the last day of the Employee's employment.",
    ]
    expect(localExtract(request(effective, lastDay, [], "2024-01-01")).values).toEqual([])
  })

  it("does not take a revocation period or another deadline for the agreement's term", () => {
    const term = agent("Term", "string", { extractionInstructions: "How long the agreement lasts" })
    const release = [
      "SEPARATION AGREEMENT AND RELEASE\n\nEmployee may revoke this Agreement within seven (7) days after signing it, and this Agreement shall not become effective until that period has passed. Employee shall return the laptop no later than ten (10) days prior to the separation date.",
    ]
    expect(localExtract(request(term, release)).values).toEqual([])
    // A stated term is still the term when the same sentence allows termination on notice.
    const stated = [
      "MUTUAL NONDISCLOSURE AGREEMENT\n\nThe term of this Agreement shall be for a period of two (2) years unless terminated earlier upon thirty (30) days written notice by either party.",
    ]
    expect(localExtract(request(term, stated)).values[0]?.value).toBe("2 years")
  })

  it("names parties, not the roles or sentences that stand in for them", () => {
    const parties = agent("Parties")
    const letter = [
      "Logo Fabrikam Capital LLC\n\nJune 3, 2019\n\nContoso Retail Inc.\n12 Harbour Road\n\nLadies and Gentlemen: In connection with the proposed transaction, the Buyer and the Company. agree as follows.",
    ]
    expect(localExtract(request(parties, letter)).values[0]?.value).toBe(
      "Fabrikam Capital LLC, Contoso Retail Inc.",
    )
    const between = [
      "NON-DISCLOSURE AGREEMENT\n\nThis Agreement is between Contoso Ltd (the Company) and Buyer and the Company. Both agree.",
    ]
    expect(localExtract(request(parties, between)).values[0]?.value).toBe("Contoso Ltd")
  })

  it("reads a logo over the legal name as one organisation", () => {
    const issuer = agent("Issuer", "string", {
      extractionInstructions: "The company that issued the invoice (the seller)",
    })
    const pages = [
      "Brightwave\nBrightwave SAS\n12 rue des Lilas, 75011 Paris\n\nFACTURE\nInvoice No: F-2031\nTotal: 39.99 EUR\n",
    ]
    expect(localExtract(request(issuer, pages)).values[0]?.value).toBe("Brightwave SAS")
  })

  it("reports the page the value is on across several pages", () => {
    const pages = [
      "Cover page\n\nQuarterly statement for Globex Corporation",
      "Account summary\n\nOpening balance: 10.00\nPayments received: 5.00",
      "Closing summary\n\nAmount due: 2,468.10\nThank you for your business.",
    ]
    const v = localExtract(request(agent("Amount due", "number"), pages)).values[0]!
    expect(v).toMatchObject({ value: "2468.1", pageNumber: 3, relevantPassage: "Amount due: 2,468.10" })
  })

  it("splits by a static dimension: one value per dimension value found near its mention", () => {
    const region: DimensionQuery = {
      dimensionId: "dim-region",
      name: "Region",
      description: "",
      exampleValues: "",
      kind: "static",
      values: ["EU", "US", "APAC"],
    }
    const document: DimensionQuery = {
      dimensionId: "dim-doc",
      name: "Document",
      description: "",
      exampleValues: "",
      kind: "document",
      values: ["report.pdf"],
    }
    const pages = ["Results 2023\n\nRevenue EU: 1,200\nRevenue US: 3,400\nHeadcount: 55"]
    const values = localExtract(request(agent("Revenue", "number"), pages, [region, document])).values
    expect(values.map((v) => [v.dimensionValues, v.value])).toEqual([
      [{ "dim-region": "EU", "dim-doc": "report.pdf" }, "1200"],
      [{ "dim-region": "US", "dim-doc": "report.pdf" }, "3400"],
    ])
    for (const v of values) expect(pages[0]!.includes(v.relevantPassage)).toBe(true)
  })

  it("finds dimension values in section headings and table rows", () => {
    const quarter: DimensionQuery = {
      dimensionId: "q",
      name: "Quarter",
      description: "",
      exampleValues: "",
      kind: "dynamic",
      values: ["Q1", "Q2"],
    }
    const pages = ["Q1\nTotal sales: 100.00\n\nQ2\nTotal sales: 250.00\n"]
    const values = localExtract(request(agent("Total sales", "number"), pages, [quarter])).values
    expect(values.map((v) => [v.dimensionValues.q, v.value])).toEqual([
      ["Q1", "100"],
      ["Q2", "250"],
    ])
  })

  const invoiceTotal = agent("Invoice total", "number", {
    unit: "EUR",
    extractionInstructions: "The total amount of the invoice including VAT",
  })
  const services = [
    "SERVICES AGREEMENT\n\nThis Services Agreement is made between Northwind Traders, Inc. and Contoso Ltd.\n\n" +
      "1. Services. Contoso shall provide hosting and support services.\n\n" +
      "2. Fees. Annual fee: 120,000 USD payable quarterly.\n\n" +
      "3. Term. This Agreement shall remain in effect for three (3) years.",
  ]

  it("takes no fee in another currency for an invoice total in EUR: no value rather than a wrong one", () => {
    expect(localExtract(request(invoiceTotal, services)).values).toEqual([])
  })

  it("takes no amount whose currency contradicts the agent's unit", () => {
    const total = agent("Total", "number", { unit: "EUR" })
    expect(localExtract(request(total, ["Invoice 17\nTotal: 120,000 USD"])).values).toEqual([])
    expect(localExtract(request(total, ["Invoice 17\nTotal (USD): 120,000.00"])).values).toEqual([])
    expect(localExtract(request(total, ["Invoice 17\nTotal: $1,190.00"])).values).toEqual([])
    // The same amount in the agent's currency, or with no currency written, is taken.
    expect(localExtract(request(total, ["Invoice 17\nTotal: 1.190,00 EUR"])).values[0]?.value).toBe("1190")
    expect(localExtract(request(total, ["Invoice 17\nTotal: €1,190.00"])).values[0]?.value).toBe("1190")
    expect(localExtract(request(total, ["Invoice 17\nTotal: 1,190.00"])).values[0]?.value).toBe("1190")
    // A document in two currencies: the amount in the agent's currency.
    const both = ["Invoice 17\nTotal: 1,300.00 USD\nTotal: 1,190.00 EUR"]
    expect(localExtract(request(total, both)).values[0]?.value).toBe("1190")
  })

  it("takes no amount labelled as something else than what is asked for", () => {
    expect(
      localExtract(request(invoiceTotal, ["Annual fee: 120,000 EUR payable quarterly."])).values,
    ).toEqual([])
    const statement = ["Statement\n\nDeposit held: 10.00\nPayments received: 5.00\nLate fee: 2.50"]
    expect(localExtract(request(agent("Amount due", "number"), statement)).values).toEqual([])
    // The total of an invoice is still found, whatever else the invoice lists.
    const invoice = [
      "Invoice 17\n\nConsulting: 1,000.00 EUR\nAdministration fee: 0.00 EUR\nVAT 19%: 190.00 EUR\nTotal incl. VAT: 1,190.00 EUR",
    ]
    expect(localExtract(request(invoiceTotal, invoice)).values[0]?.value).toBe("1190")
  })

  it("takes no value of another kind than the agent's unit says: a percentage for days, days for money", () => {
    const paymentDays = agent("Payment deadline", "number", {
      unit: "days",
      extractionInstructions: "How many days the customer has to pay",
    })
    const terms = ["Payment terms\n\nPayment deadline: 2% discount if paid early"]
    expect(localExtract(request(paymentDays, terms)).values).toEqual([])
    const withDays = ["Payment terms\n\nPayment deadline: 30 days net, 2% discount if paid early"]
    expect(localExtract(request(paymentDays, withDays)).values[0]?.value).toBe("30")
    const months = ["Payment terms\n\nPayment deadline: 2 months"]
    expect(localExtract(request(paymentDays, months)).values).toEqual([])
    const rate = agent("Late payment interest", "number", { unit: "%" })
    expect(localExtract(request(rate, ["Late payment interest: 8% a year"])).values[0]?.value).toBe("8")
    expect(localExtract(request(rate, ["Late payment interest: EUR 40 a month"])).values).toEqual([])
  })

  it("is deterministic", () => {
    const specs = [agent("Total amount", "number"), agent("Parties"), agent("Effective date", "date")]
    for (const spec of specs) {
      const a = localExtract(request(spec, [...invoiceUs, contract]))
      const b = localExtract(request(spec, [...invoiceUs, contract]))
      expect(b).toEqual(a)
    }
  })
})
