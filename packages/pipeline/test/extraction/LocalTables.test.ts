import { layoutTable, type Table } from "@dxs/domain/Tables"
import { describe, expect, it } from "vitest"
import { localDiscover, localExtract } from "../../src/extraction/local/Extractor.ts"
import type { AgentSpec, DimensionQuery, ExtractRequest, PageText } from "../../src/llm/LanguageModel.ts"
import { agentSpec } from "./agents.ts"

/**
 * The local extractor reading tables: a PDF whose table was drawn column by column has its cells' text far
 * from each other in the page text; the page's tables put each value beside its label again.
 */

const agent = (name: string, valueType: AgentSpec["valueType"], instructions = ""): AgentSpec =>
  agentSpec(name, instructions, valueType)

const table = (rows: Array<Array<string>>): Table =>
  layoutTable(rows.map((r) => r.map((text) => ({ text }))))!

const page = (text: string, tables: ReadonlyArray<Table> = []): PageText => ({
  documentId: "doc",
  documentName: "invoice.pdf",
  pageNumber: 1,
  text,
  tables,
})

const request = (
  spec: AgentSpec,
  pages: ReadonlyArray<PageText>,
  dimensions: ReadonlyArray<DimensionQuery> = [],
): ExtractRequest => ({
  agent: spec,
  document: { id: "doc", name: "invoice.pdf" },
  pages,
  dimensions,
  referenceDate: "2024-05-15",
})

// A two-column table drawn column by column: every label first, then every amount.
const totals = table([
  ["Description", "Amount"],
  ["Consulting", "1,000.00 EUR"],
  ["VAT", "190.00 EUR"],
  ["Total due", "1,190.00 EUR"],
])
const columnWise =
  "Fabrikam GmbH\nInvoice INV-77\n\nDescription\nConsulting\nVAT\nTotal due\nAmount\n1,000.00 EUR\n190.00 EUR\n1,190.00 EUR"

describe("the local extractor in tables", () => {
  it("reads a value by its row's label and its column's header when the text has them apart", () => {
    const spec = agent("Total due", "number", "The total amount due")
    const [value] = localExtract(request(spec, [page(columnWise, [totals])])).values
    expect(value?.value).toBe("1190")
    expect(value?.reasoning).toContain('in a table cell under "Total due Amount"')
    expect(columnWise).toContain(value!.relevantPassage)
  })

  it("reads a key–value table: the label cell beside the value", () => {
    const form = table([
      ["Invoice number", "INV-77"],
      ["Invoice date", "5 March 2024"],
      ["Payment terms", "30 days"],
    ])
    const text = "Invoice number\nInvoice date\nPayment terms\nINV-77\n5 March 2024\n30 days"
    const [value] = localExtract(request(agent("Invoice date", "date"), [page(text, [form])])).values
    expect(value?.value).toBe("2024-03-05")
    expect(value?.reasoning).toContain('beside "Invoice date"')
  })

  it("reads one value per line item, each row naming its dimension value, and discovers the items", () => {
    const items = table([
      ["Product", "Quantity", "Price"],
      ["Widget", "2", "20.00"],
      ["Gadget", "5", "45.00"],
      ["Total", "", "65.00"],
    ])
    const text = "Product\nWidget\nGadget\nTotal\nQuantity\n2\n5\nPrice\n20.00\n45.00\n65.00"
    const product: DimensionQuery = {
      dimensionId: "product",
      name: "Product",
      description: "",
      exampleValues: "",
      kind: "dynamic",
      values: [],
    }
    const discovered = localDiscover({
      agent: agent("Quantity", "number"),
      dimension: product,
      document: { id: "doc", name: "invoice.pdf" },
      pages: [page(text, [items])],
    }).values
    expect(discovered).toEqual(["Widget", "Gadget"])
    const values = localExtract(
      request(
        agent("Quantity", "number", "The quantity ordered"),
        [page(text, [items])],
        [{ ...product, values: discovered }],
      ),
    ).values
    expect(values.map((v) => [v.dimensionValues.product, v.value])).toEqual([
      ["Widget", "2"],
      ["Gadget", "5"],
    ])
  })

  it("keeps an issuer's own cues for a name in a table cell: its web address's brand, its bank details' payee", () => {
    const issuer = agent("Issuer", "string", "The company that issued the invoice (the seller)")
    const hotel = table([
      ["Hotel Details", "Check In", "Rooms"],
      ["Lumo 4189 Resort Harbour,", "31/12/2017", "1"],
    ])
    const receipt =
      "PAYMENT RECEIPT\n\nGuest Name: Sanjay\n\nHotel Details\nLumo 4189 Resort Harbour,\n\nCheck In\n31/12/2017\n\n" +
      "Rooms\n1\n\nGrand Total Rs 1939\n\nContact: support@lumorooms.com"
    expect(localExtract(request(issuer, [page(receipt, [hotel])])).values[0]?.value).toBe("Lumo")

    const payment = table([
      ["CB", "Pay online with the link in the e-mail."],
      ["Virement", "BRED BANQUE POPULAIRE – Titulaire du compte : NORDPRESSE"],
    ])
    const invoice =
      "ALEXINUX\nde Lattre Alexis\n27 rue Henri Rolland\n69100 Villeurbanne\n\nFacture n° 2022089083\n\n" +
      "Total TTC : 56,02 €\n\nModes de règlement\nCB Pay online with the link in the e-mail.\n" +
      "Virement BRED BANQUE POPULAIRE – Titulaire du compte : NORDPRESSE\n"
    expect(localExtract(request(issuer, [page(invoice, [payment])])).values[0]?.value).toBe("NORDPRESSE")
  })

  it("does not take a tax column for the total an agent asks for including tax", () => {
    const amount = agent("Amount", "number", "The total amount of the invoice (amount due, including tax)")
    const vat = table([
      ["BTW %", "Bedrag excl. BTW", "BTW bedrag", "Totaal"],
      ["21 %", "41,31", "8,68", "49,99"],
    ])
    const text =
      "Factuur 2023-114\n\nBTW %\nBedrag excl. BTW\nBTW bedrag\nTotaal\n21 % 41,31 8,68 49,99\n\n" +
      "Prijzen zijn inclusief BTW Factuur totaal EUR 49,99"
    expect(localExtract(request(amount, [page(text, [vat])])).values[0]?.value).toBe("49.99")
  })
})
