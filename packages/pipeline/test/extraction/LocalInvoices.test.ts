import { describe, expect, it } from "vitest"
import { findCurrencies } from "../../src/extraction/local/Currencies.ts"
import { findDates } from "../../src/extraction/local/Dates.ts"
import { localExtract } from "../../src/extraction/local/Extractor.ts"
import { findOrganisations } from "../../src/extraction/local/Organisations.ts"
import { headerAbove, trailingLabels } from "../../src/extraction/local/Text.ts"
import type { AgentSpec, ExtractRequest } from "../../src/llm/LanguageModel.ts"
import { agentSpec } from "./agents.ts"

const request = (spec: AgentSpec, text: string): ExtractRequest => ({
  agent: spec,
  document: { id: "doc-1", name: "invoice.pdf" },
  pages: [{ documentId: "doc-1", documentName: "invoice.pdf", pageNumber: 1, text }],
  dimensions: [],
  referenceDate: "2024-05-15",
})

const extract = (spec: AgentSpec, text: string) => localExtract(request(spec, text)).values[0]?.value

const total = agentSpec("Amount", "The total amount of the invoice (amount due, including tax)", "number")
const date = agentSpec("Invoice date", "The date the invoice was issued", "date")
const number = agentSpec("Invoice number", "The invoice number", "string")
const issuer = agentSpec("Issuer", "The company that issued the invoice (the seller)", "string")
const currency = agentSpec("Currency", "The currency of the invoice total as an ISO code", "string")

describe("invoice labels in Dutch, French and German", () => {
  it.each([
    {
      title: "Dutch total, not the subtotal or the amount before tax",
      spec: total,
      text: "Artikel Prijs\nLamp € 59,99\n\nSubtotaal € 59,99\nExclusief BTW € 49,58\nBTW 21% € 10,41\n\nTotaal € 59,99\n",
      value: "59.99",
    },
    {
      title: "French total TTC, not the total HT",
      spec: total,
      text: "Désignation Montant HT\nAnnonce 45,93 €\n\nTotal HT : 46,68 €\nTVA 20% : 9,34 €\nTotal TTC : 56,02 €\n",
      value: "56.02",
    },
    {
      title: "German Gesamtbetrag",
      spec: total,
      text: "Pos. Beschreibung Betrag\n1 Beratung 100,00\n\nZwischensumme 100,00 EUR\nMwSt. 19% 19,00 EUR\nGesamtbetrag 119,00 EUR\n",
      value: "119",
    },
    {
      title: "Dutch Factuurnummer",
      spec: number,
      text: "FACTUUR\n\nKlantnummer: 6669263\nFactuurnummer: 993548900\nFactuurdatum: 19 april 2014\n",
      value: "993548900",
    },
    {
      title: "French 'Facture n°'",
      spec: number,
      text: "ALEXINUX\n27 rue Henri Rolland\n\nFacture n° 2022089083\nDate : 28/11/2022\nNuméro de dossier : 365146\n",
      value: "2022089083",
    },
    {
      title: "German Rechnungsnr., not the Kundennr.",
      spec: number,
      text: "Rechnung\n\nKundennr.: 47774\nRechnungsnr.: 30064443\nRechnungsdatum: 07.05.2014\n",
      value: "30064443",
    },
    {
      title: "the invoice number, not the order number",
      spec: number,
      text: "INVOICE\n\nOrder No: 88120\nInvoice No: 55190\n",
      value: "55190",
    },
    {
      title: "German Rechnungsdatum with a German month name",
      spec: date,
      text: "Rechnung\n\nLieferdatum: 2. März 2021\nRechnungsdatum: 3. März 2021\n",
      value: "2021-03-03",
    },
    {
      title: "French 'Facture … du' date, not the payment deadline",
      spec: date,
      text: "Facture n°562044387 du 02 Juillet 2015\n29.99 € TTC\nDate limite de paiement le 05 Juillet 2015\n",
      value: "2015-07-02",
    },
    {
      title: "Dutch Factuurdatum with a Dutch month name, not the Vervaldatum",
      spec: date,
      text: "FACTUUR\n\nVervaldatum: 12 april 2014\nFactuurdatum: 29 maart 2014\n",
      value: "2014-03-29",
    },
  ])("$title", ({ spec, text, value }) => {
    expect(extract(spec, text)).toBe(value)
  })
})

describe("dates with German, French and Dutch month names", () => {
  it.each([
    { text: "Rechnungsdatum 7. Mai 2014", value: "2014-05-07", locale: "German" },
    { text: "Datum: 1. Dezember 2020", value: "2020-12-01", locale: "German" },
    { text: "Facture du 02 juillet 2015", value: "2015-07-02", locale: "French" },
    { text: "Paris, le 1er août 2020", value: "2020-08-01", locale: "French" },
    { text: "Factuurdatum 29 maart 2014", value: "2014-03-29", locale: "Dutch" },
    { text: "Orderdatum: 3 mei 2019", value: "2019-05-03", locale: "Dutch" },
  ])("$text", ({ text, value, locale }) => {
    const dates = findDates(`Header\n${text}\n`, "2024-01-01")
    expect(dates.map((d) => d.value)).toEqual([value])
    expect(dates[0]!.pattern).toContain(locale)
  })

  it("leaves lines the English parser read to the English parser", () => {
    const dates = findDates("Invoice date: 19 April 2014\n", "2024-01-01")
    expect(dates.map((d) => [d.value, d.pattern.includes("(")])).toEqual([["2014-04-19", false]])
  })
})

describe("labels after their values and table headers above them", () => {
  it.each([
    {
      title: "value/label pairs of a form (label below each value)",
      spec: number,
      text: "Artikel Aantal Prijs\n\n993548900\nFactuurnummer:\n6669263\nKlantnummer:\n19 april 2014\nFactuurdatum:\n\nLamp 1 € 59,99\n",
      value: "993548900",
    },
    {
      title: "date of a value/label form",
      spec: date,
      text: "Artikel Aantal Prijs\n\n993548900\nFactuurnummer:\n6669263\nKlantnummer:\n19 april 2014\nFactuurdatum:\n18 april 2014\nOrderdatum:\n",
      value: "2014-04-19",
    },
    {
      title: "a column of labels after a column of values",
      spec: date,
      text: "INVOICE\n# 1001\n\nJan 1, 2022\n\nJan 31, 2022\n\n$127.50\n\nDate:\n\nDue Date:\n\nBalance Due:\n",
      value: "2022-01-01",
    },
    {
      title: "the amount of a label column",
      spec: total,
      text: "Service A 12 $10.00 $120.00\n\n$120.00\n\n$7.50\n\n$127.50\n\nSubtotal:\n\nTax (6.25%):\n\nTotal:\n",
      value: "127.5",
    },
    {
      title: "a table header row above its value row",
      spec: number,
      text: "Customer Invoice Date\nC-5521 F-2024-118 12/03/2024\n",
      value: "F-2024-118",
    },
    {
      title: "the last cell under the last word of a header of more words than cells",
      spec: number,
      text: "Klant Order Factuur datum Factuur\nSCONL0303 SCONL0004 VF1005193039\n",
      value: "VF1005193039",
    },
    {
      title: "a number after a label that says number, with its own # sign",
      spec: number,
      text: "Order ID: OD3041750\nInvoice No : # BLR_WFLD2015100\nInvoice Date: 20-10-2015\n",
      value: "#BLR_WFLD2015100",
    },
  ])("$title", ({ spec, text, value }) => {
    expect(extract(spec, text)).toBe(value)
  })

  it.each([
    { text: "Acme Corp\nInvoice Number:\nINV-1\nDate:\n\n2024-01-01\n", value: "INV-1", label: undefined },
    { text: "Invoice Number:\nINV-1\nDate:\n2024-01-01\n", value: "INV-1", label: undefined },
    { text: "INV-1\nInvoice Number:\n2024-01-01\nDate:\n", value: "INV-1", label: "Invoice Number" },
  ])("links a trailing label only when the block opens with a value: $text", ({ text, value, label }) => {
    expect(trailingLabels(text).get(text.indexOf(value))?.label).toBe(label)
  })

  it("needs as many header cells as row cells", () => {
    const text = "Number Date\nA-1 B-2 2024-01-01\n"
    expect(headerAbove(text, text.indexOf("B-2"))).toBeUndefined()
    const aligned = "Number  Issue date\nA-1     2024-01-01\n"
    expect(headerAbove(aligned, aligned.indexOf("2024"))?.label).toBe("Issue date")
  })
})

describe("the issuer", () => {
  it.each([
    {
      title: "the organisation at the top of the first page",
      text: "Nordlicht Software GmbH\nHafenstraße 1\n20457 Hamburg\n\nRechnung\n\nAn:\nKunde AG\nBahnhofstraße 9\n\nRechnungsnr.: 2024-77\nGesamtbetrag 119,00 EUR\n",
      value: "Nordlicht Software GmbH",
    },
    {
      title: "not the customer of the address block at the top",
      text: "Kopie factuur\n\nStrategic Corp\nT.a.v. J. Jansen\nFakestreet 46\n3500 MJ Utrecht\n\nFactuur totaal EUR 49,99\n",
      value: undefined,
    },
  ])("$title", ({ text, value }) => {
    expect(extract(issuer, text)).toBe(value)
  })

  it.each([
    {
      title: "the brand its web address spells, over the seller it names",
      text: "Sold By : Northwind Retail Pvt. Ltd.,\nInvoice No: 77\nTotal 319.00\nFastkart.com Customer Care || www.fastkart.com/support\nAt Fastkart we deliver.\n",
      value: "Fastkart",
    },
    {
      title: "the organisation its web address spells, by the name it goes by without its legal suffix",
      text: "Invoice\nContoso Cloud Services, Inc.\n1 Main Street\nGreetings from Contoso Cloud Services, we bill you.\nvisit cloud.contoso.com/contact\n",
      value: "Contoso Cloud Services",
    },
    {
      title: "the organisation its web address spells, with its suffix when never written without",
      text: "Rechnung\niViveLabs Ltd.\nGlobex Hosting AG - Ufer 4 - 63571 Gelnhausen\nIm Internet: www.globexhosting.de\n",
      value: "Globex Hosting AG",
    },
    {
      title: "the name that begins its e-mail address",
      text: "PAYMENT RECEIPT\nZENTRO 4189 Resort Chennai\nPayment received by ZENTRO\nEmail: contactus@zentrorooms.com\n",
      value: "ZENTRO",
    },
    {
      title: "the payee of its bank details",
      text: "ALEXINUX\n27 rue Henri Rolland\n\nFacture n° 2022089083\nTotal TTC : 56,02 €\nVirement – Titulaire du compte : NORDPRESSE\n",
      value: "NORDPRESSE",
    },
  ])("is $title", ({ text, value }) => {
    expect(extract(issuer, text)).toBe(value)
  })

  it("is no brand of a mail provider, a social network or the software that made the document", () => {
    const text =
      "Globex Trading Ltd\n5 High Street\nLike us on Facebook.com/GlobexShop\nPowered by Genius POS\nwww.geniuspos.com\nmail: globex@gmail.com\nGenius Gmail Facebook\n"
    expect(extract(issuer, text)).toBe("Globex Trading Ltd")
  })

  it("does not run a name across a blank line or start it inside a word", () => {
    const text = "iViveLabs Ltd.\n\nQualityHosting AG - Uferweg 40-42 - D-63571 Gelnhausen\n"
    expect(findOrganisations(text).map((c) => c.value)).toEqual(["QualityHosting AG"])
  })
})

describe("the currency", () => {
  it.each([
    { text: "Totaal € 717,97\n", value: "EUR" },
    { text: "Grand Total Rs 1939\n", value: "INR" },
    { text: "Total due: £1,250.00\n", value: "GBP" },
    { text: "Total CHF 89.90\n", value: "CHF" },
    { text: "Factuur totaal EUR 49,99\n", value: "EUR" },
    { text: "Total due: $4.11\n", value: "USD" },
    { text: "All amounts in CAD.\nTotal due: $4.11\n", value: "CAD" },
    { text: "Le capital est de 3.441.812 euros.\nMontant TTC 29.99\n", value: "EUR" },
  ])("$text", ({ text, value }) => {
    expect(extract(currency, text)).toBe(value)
  })

  it("reads letter abbreviations only next to an amount", () => {
    expect(findCurrencies("Rs 1939").map((c) => c.value)).toEqual(["INR"])
    expect(findCurrencies("Mrs Rs Smith").map((c) => c.value)).toEqual([])
  })
})
