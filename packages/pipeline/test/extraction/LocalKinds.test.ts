import { describe, expect, it } from "vitest"
import { findAddresses } from "../../src/extraction/local/Addresses.ts"
import { findDates } from "../../src/extraction/local/Dates.ts"
import { findHeadingNames } from "../../src/extraction/local/Headings.ts"
import { findOrganisations, readLegalSuffixes } from "../../src/extraction/local/Organisations.ts"
import { cleanEdges } from "../../src/extraction/local/Text.ts"
import type { AgentSpec } from "../../src/llm/LanguageModel.ts"
import { agentSpec, extractFirst } from "./agents.ts"

/** Golden cases of the local extractor by kind of value, on receipts and letterheads as OCR reads them. */

const company = agentSpec("Company", "The name of the shop or company that issued the receipt")
const address = agentSpec("Address", "The address of the shop or company that issued the receipt")
const date = agentSpec("Date", "The date of the receipt", "date")
const total = agentSpec("Total", "The total amount paid", "number")

const extract = (spec: AgentSpec, text: string) => extractFirst(spec, text)

const receipt = [
  "; lola)",
  "Hok4p98",
  "KEDAI MAJU (M) SDN BHD (126926-H)",
  "| 3RD FLR, WISMA MAJU, JALAN IPOH |",
  ": TAMAN SRI SINAR",
  "51200 KUALA LUMPUR : :",
  "GST ID : 002017394688",
  "TEL 03-6243 5520",
  "1x 000000811101 12.50SR",
  "Sub-total 12.50",
  "GST @6% 0.75",
  "Total Sales Incl GST 13.25",
  "Total Rounded 13.25",
  "CASH 20.00",
  "Change 6.75",
  "GST Summary Amount Tax",
  "Total 12.50 0.75",
  "04/05/2018 20:27 1009 001",
  "THANK YOU PLEASE COME AGAIN",
].join("\n")

describe("organisations", () => {
  it.each([
    [
      "a Malaysian private company with its branch",
      "MR. D.I.Y. (M) SDN BHD\nCo-REG:860671-D",
      "MR. D.I.Y. (M) SDN BHD",
    ],
    ["the short form S/B", "99 SPEED MART S/B (519537-X)", "99 SPEED MART S/B"],
    ["a public company (BHD) with a region", "AEON CO. (M) BHD (126926-H)", "AEON CO. (M) BHD"],
    [
      "a name wrapped over two lines",
      "GHEE HIANG\nGH DISTRIBUTOR & MARKETING SDN BHD",
      "GHEE HIANG GH DISTRIBUTOR & MARKETING SDN BHD",
    ],
    ["not an OCR speck line above it", "Hok4p98\nAEON CO. (M) BHD", "AEON CO. (M) BHD"],
    [
      "not a mixed-case line above a name in capitals",
      "Welcome to the Family\nHAXINCONE RESOURCES SDN BHD",
      "HAXINCONE RESOURCES SDN BHD",
    ],
    ["capitals of a US suffix", "PROMARK TECHNOLOGY INC.", "PROMARK TECHNOLOGY INC."],
    ["not the number of a list item", "1. Acme Widgets Inc. shall", "Acme Widgets Inc."],
    [
      "a name wrapped from the end of a line of running text",
      "options granted pursuant to the plan of Boston Private\nFinancial Holdings, Inc. (the Plan)",
      "Boston Private Financial Holdings, Inc.",
    ],
  ])("%s", (_, text, name) => {
    expect(findOrganisations(text).map((c) => c.value)).toContain(name)
  })
  it.each([
    [
      "specks before it on a short line",
      "10 &f 4\nTHE TOAST F&B SDN BHD (965752-T)",
      "THE TOAST F&B SDN BHD",
    ],
    ["the document's title above it", "TAX INVOICE\nKHIAM AIK CHAN SDN BHD", "KHIAM AIK CHAN SDN BHD"],
    ["a lone letter above it", "A\nUNIHAKKA INTERNATIONAL SDN BHD", "UNIHAKKA INTERNATIONAL SDN BHD"],
    [
      "a branch's code and number above it",
      "OUTLET 207\nKedai Maju Trading Sdn Bhd",
      "Kedai Maju Trading Sdn Bhd",
    ],
  ])("leaves out %s", (_, text, name) => {
    expect(findOrganisations(text).map((c) => c.value)).toEqual([name])
  })
  it.each([
    ["R&C VENTURE SON BHD (1191015-W)", "R&C VENTURE SDN BHD"],
    ["MR. D.I.Y. (KUCHAI) SDN EHD", "MR. D.I.Y. (KUCHAI) SDN BHD"],
    ["Guardian Health And Beauty Stn Bhd", "Guardian Health And Beauty Sdn Bhd"],
    ["99 SPEED MART 5/B (519537-X)", "99 SPEED MART S/B"],
  ])("reads back the legal suffix OCR misread in %j", (line, name) => {
    expect(findOrganisations(readLegalSuffixes(line)).map((c) => c.value)).toEqual([name])
  })
  it("keeps words that are two letters from a suffix, and reads no name in a suffix after a letter or two", () => {
    expect(readLegalSuffixes("KEDAI BAN BHD")).toBe("KEDAI BAN BHD")
    expect(findOrganisations("KI SDN BHD (139386 X)")).toEqual([])
  })
})

describe("the issuer's name", () => {
  it("is the name line above the shop's registration number or address when no name has a legal suffix", () => {
    const pizza =
      "TAX INVOICE\nDOMINO'S PIZZA\nGST REF NO : 001694261248\n30, Jln Kebudayaan 7\n81300 Skudai, Johor\nTotal 6.70\n"
    expect(extract(company, pizza)?.value).toBe("DOMINO'S PIZZA")
    const denki = "Best Denki Malaysia (308282-4)\nLot LG 26, Subang Parade\n47500 Subang Jaya, Selangor\n"
    expect(extract(company, denki)?.value).toBe("Best Denki Malaysia")
  })
  it("is the organisation with a legal suffix rather than a name line above it", () => {
    const text =
      "CITY MILK\nR&C VENTURE SDN BHD (1191015-W)\nLOT-18A-2, BERJAYA TIMES SQUARE,\n50250 KUALA LUMPUR.\n"
    expect(extract(company, text)?.value).toContain("R&C VENTURE SDN BHD")
    expect(findHeadingNames(text)).toEqual([])
  })
  it("is never a name after the transaction's first detail (a customer's on a delivery note)", () => {
    const text =
      "KI SDN BHD (139386 X)\nLot 3, Jalan Pelabur 23/1,\n40300 Shah Alam, Selangor.\nCash Inv No.: 7721711\nMAKASSAR FRESH MARKET SDN BHD\nGROUND FLOOR, NO. 4 & 6,\nTotal 5.90\n"
    expect(extract(company, text)).toBeUndefined()
  })
})

describe("addresses", () => {
  it("reads the block from its first street line to the region after the postcode, without OCR's edge marks", () => {
    const text =
      "GARDENIA BAKERIES (KL) SDN BHD (139386 X)\nLot 3, Jalan Pelabur 23/1,\n40300 Shah Alam,\nSelangor.\nTel: 03- 55423228\n"
    expect(findAddresses(text).map((c) => c.value)).toEqual([
      "Lot 3, Jalan Pelabur 23/1, 40300 Shah Alam, Selangor.",
    ])
  })
  it("keeps a district line between two address lines, stops at a telephone line and at the name above", () => {
    expect(findAddresses(receipt)[0]?.value).toBe(
      "3RD FLR, WISMA MAJU, JALAN IPOH TAMAN SRI SINAR 51200 KUALA LUMPUR",
    )
  })
  it.each([
    [
      "JUN JEJAKA, TAMAN MALURI\nCHERAS, 55100 KUALA LUMPUR",
      "JLN JEJAKA, TAMAN MALURI CHERAS, 55100 KUALA LUMPUR",
    ],
    ["Jin Puteri 1/6,\n47100 Puchong,\nSelangor", "Jln Puteri 1/6, 47100 Puchong, Selangor"],
    [
      "JALAN ANGSA,\nTANAN BERKELEY\n41150 KLANG, SELANGOR",
      "JALAN ANGSA, TAMAN BERKELEY 41150 KLANG, SELANGOR",
    ],
    ["Jalan Raja Chulan,\n50200 Kuala Lumpur, Malaysla.", "Jalan Raja Chulan, 50200 Kuala Lumpur, Malaysia."],
    ["L.ot 3, Jalan Pelabur 23/1,\n40300 Shah Alam", "Lot 3, Jalan Pelabur 23/1, 40300 Shah Alam"],
    [
      "CLOT 2110&2111 JALAN PERMAS UTARA\n81750 JOHOR BAHRU",
      "LOT 2110&2111 JALAN PERMAS UTARA 81750 JOHOR BAHRU",
    ],
    ["NO .2, JALAN METRO PERDANA,\n52100 KUALA LUMPUR", "NO.2, JALAN METRO PERDANA, 52100 KUALA LUMPUR"],
    [
      "Lot 3, Jalan Pelabur 23/1,\n40300 Shah Alam, *Selangor.",
      "Lot 3, Jalan Pelabur 23/1, 40300 Shah Alam, Selangor.",
    ],
    [
      "2nd Floor, Wisma Cosway,\n50200 Kuala Lumpur, Malaysia,",
      "2nd Floor, Wisma Cosway, 50200 Kuala Lumpur, Malaysia.",
    ],
    // A letter S read as a sign before a unit's number; 1 read as l after `No`.
    [
      "Lot §319, 2nd Floor,\nNol, Lebuh Bandar Utama,47800 P.Jaya",
      "Lot S319, 2nd Floor, No1, Lebuh Bandar Utama,47800 P.Jaya",
    ],
    // A floor's number and a postcode's digit read as letters.
    [
      "SRD FLR, AEON TAMAN MALURI SC\nJLN JEJAKA,\nCHERAS, 55100 KUALA LUMPUR",
      "3RD FLR, AEON TAMAN MALURI SC JLN JEJAKA, CHERAS, 55100 KUALA LUMPUR",
    ],
    ["IST FLOOR, WISMA MAJU,\n50200 Kuala Lumpur", "1ST FLOOR, WISMA MAJU, 50200 Kuala Lumpur"],
    ["RD FLR, AEON TAMAN MALURI SC\n55100 KUALA LUMPUR", "3RD FLR, AEON TAMAN MALURI SC 55100 KUALA LUMPUR"],
    ["33 JLN BANGAU 1,\nS2100 KEPONG, KL", "33 JLN BANGAU 1, 52100 KEPONG, KL"],
    ["Unit SRD, Jalan Besar,\n52100 Kepong", "Unit SRD, Jalan Besar, 52100 Kepong"],
    // A lot's suffix read as a digit beside its pair's letter; a section's street code's S read as 5 or 8.
    [
      "LOT 1851-4 & 1851-B, JALAN KPB 6,\n43300 SERI KEMBANGAN",
      "LOT 1851-A & 1851-B, JALAN KPB 6, 43300 SERI KEMBANGAN",
    ],
    [
      "LOT 1851-A & 1851-8, JALAN KPB 6,\n43300 SERI KEMBANGAN",
      "LOT 1851-A & 1851-B, JALAN KPB 6, 43300 SERI KEMBANGAN",
    ],
    [
      "LOT 12-3 & 12-4, JALAN BESAR,\n43300 SERI KEMBANGAN",
      "LOT 12-3 & 12-4, JALAN BESAR, 43300 SERI KEMBANGAN",
    ],
    [
      "Jalan 8521/60, Damansara Utama,\n47400 Petaling Jaya",
      "Jalan SS21/60, Damansara Utama, 47400 Petaling Jaya",
    ],
    ["No.128G JLN S521/35\n47400 SELANGOR", "No.128G JLN SS21/35 47400 SELANGOR"],
    ["No. 5, Jalan 5/55,\n47400 Petaling Jaya", "No. 5, Jalan 5/55, 47400 Petaling Jaya"],
    // Specks read as letters at a line's end: after the postcode, after a comma, a mixed-case pair on a
    // line of capitals; a street word's short form stays.
    ["NO. 135, JALAN BANGI, 43500 L\nSEMENYIH, SELANGOR", "NO. 135, JALAN BANGI, 43500 SEMENYIH, SELANGOR"],
    [
      "S117, Second Floor,\nAeon Tebrau City, Co\n1, Jalan Desa Tebrau,\n81100 Johor Bahru, Johor.",
      "S117, Second Floor, Aeon Tebrau City, 1, Jalan Desa Tebrau, 81100 Johor Bahru, Johor.",
    ],
    [
      "3RD FLR, AEON TAMAN MALURI SC Co\nJLN JEJAKA, TAMAN MALURI\nCHERAS, 55100 KUALA LUMPUR",
      "3RD FLR, AEON TAMAN MALURI SC JLN JEJAKA, TAMAN MALURI CHERAS, 55100 KUALA LUMPUR",
    ],
    ["12 High St\nLondon SW1A 1AA", "12 High St London SW1A 1AA"],
    [
      "10 Main Street, Springfield, IL\n62701 Springfield",
      "10 Main Street, Springfield, IL 62701 Springfield",
    ],
  ])("reads back what OCR misread in the words of an address: %j", (text, value) => {
    expect(findAddresses(text)[0]?.value).toBe(value)
  })
  it("reads a unit's letter S that OCR read as a dollar sign", () => {
    expect(findAddresses("$117, Second Floor,\nAeon Tebrau City,\n81100 Johor Bahru, Johor.")[0]?.value).toBe(
      "S117, Second Floor, Aeon Tebrau City, 81100 Johor Bahru, Johor.",
    )
  })
  it("keeps the words of places that are a letter from an address word of another shape", () => {
    const text = "No.145G, Jalan Rimbunan Raya 1,\nLaman Rimbunan Kepong,\n52100 Kuala Lumpur\n"
    expect(findAddresses(text)[0]?.value).toBe(
      "No.145G, Jalan Rimbunan Raya 1, Laman Rimbunan Kepong, 52100 Kuala Lumpur",
    )
  })
  it("takes a street line after the postcode into the block, never the document's title", () => {
    const branch =
      "LOT P.T. 2811, JALAN ANGSA,\n41150 KLANG, SELANGOR\n1320~-THN BATU\nGST ID. NO : 000181747712\n"
    expect(findAddresses(branch)[0]?.value).toBe(
      "LOT P.T. 2811, JALAN ANGSA, 41150 KLANG, SELANGOR 1320-TMN BATU",
    )
    const title = "12, Jalan Tampoi 7/4,\nTampoi,81200 Johor Bahru,Johor\nTAXINVOICE\nInvoice # : OR1805\n"
    expect(findAddresses(title)[0]?.value).toBe("12, Jalan Tampoi 7/4, Tampoi,81200 Johor Bahru,Johor")
  })
  it("reads an address printed without a postcode under the name at the head, and no postcode in a registration number", () => {
    const text =
      "R&C VENTURE SDN BHD (1191015-W)\nLOT-18A-2, BERJAYA TIMES SQUARE,\nKUALA LUMPUR.\n(GST NO: 001557721088)\nTax Invoice\n"
    expect(findAddresses(text).map((c) => c.value)).toEqual([
      "LOT-18A-2, BERJAYA TIMES SQUARE, KUALA LUMPUR.",
    ])
    expect(findAddresses("FOUR QUARTERS SUN BHD (10753G9-P)\nTAX INVOICE\n")).toEqual([])
  })
  it("finds no address in prose without a postcode or street", () => {
    expect(findAddresses("The parties agree as follows.\nTerm: 2 years\n")).toEqual([])
  })
  it.each([
    ["| 3RD FLR, AEON TAMAN MALURI SC | BN", "3RD FLR, AEON TAMAN MALURI SC"],
    ["oo JLN JEJAKA, TAMAN MALURI |", "JLN JEJAKA, TAMAN MALURI"],
    ["CHERAS, 55100 KUALA LUMPUR : :", "CHERAS, 55100 KUALA LUMPUR"],
    ["81100 Johor Bahru, Johor.", "81100 Johor Bahru, Johor."],
    ["Co | 81100 Johor Bahru", "81100 Johor Bahru"],
  ])("cleans the edges of %j", (line, clean) => {
    expect(cleanEdges(line)).toBe(clean)
  })
})

describe("a receipt read by kind of value", () => {
  it("answers its issuer, the issuer's address, its date and its total", () => {
    expect(extract(company, receipt)?.value).toBe("KEDAI MAJU (M) SDN BHD")
    expect(extract(address, receipt)?.value).toBe(
      "3RD FLR, WISMA MAJU, JALAN IPOH TAMAN SRI SINAR 51200 KUALA LUMPUR",
    )
    // Day first: the receipt is priced with GST, as countries that write the day first do.
    expect(extract(date, receipt)?.value).toBe("2018-05-04")
    // The rounded total, not the subtotal, the tax, the cash tendered or the tax summary's total.
    expect(extract(total, receipt)?.value).toBe("13.25")
  })
  it("says which rule decided", () => {
    expect(extract(total, receipt)?.reasoning).toContain("the document's total")
    expect(extract(date, receipt)?.reasoning).toContain("the first full date of the document")
    expect(extract(company, receipt)?.reasoning).toContain(
      "the first organisation at the head of the document",
    )
  })
  it("takes the issuer's address, not the customer's", () => {
    const invoice =
      "ACME SUPPLIES SDN BHD\nNo. 5, Jalan Kilang 2,\n46000 Petaling Jaya, Selangor\nTAX INVOICE\nBill To: BETA TRADING SDN BHD\n12, Jalan Besar,\n50000 Kuala Lumpur\nTotal Due: RM 80.00\n"
    expect(extract(address, invoice)?.value).toBe("No. 5, Jalan Kilang 2, 46000 Petaling Jaya, Selangor")
    expect(extract(company, invoice)?.value).toBe("ACME SUPPLIES SDN BHD")
    expect(extract(total, invoice)?.value).toBe("80")
  })
  it.each([
    [
      "a dash between the label and the amount is no minus sign",
      "Sub-Total : 15.80\nGrand Total - 6.70\nChange Due - 43.30\n",
      "6.7",
    ],
    [
      "an amount run into its currency by OCR",
      "Total Incl. GST <RM_34.80\nCASH RM 100.00\nGST @6% included in total RM 1.97\n",
      "34.8",
    ],
    [
      "a total with tax in parentheses over a larger total OCR misread",
      "Eat-In Total (inci GST) 11.10\nTotal Founded 13.10\nCash Tendered 21.10\n",
      "11.1",
    ],
  ])("reads the total: %s", (_, lines, value) => {
    expect(extract(total, `KEDAI MAJU SDN BHD\n${lines}THANK YOU\n`)?.value).toBe(value)
  })
  it("answers no customer's address after the transaction's first detail label", () => {
    const note =
      "GARDENIA BAKERIES (KL) SDN BHD\nLot 3, Jalan Pelabur 23/1,\n40.300 Shah Alam\nCash Inv No.: 7721711\nMAKASSAR FRESH MARKET SDN BHD\nGROUND FLOOR, NO. 4 & 6,\nJALAN SS 15/48,\n47500 SUBANG JAYA, SELANGOR\n" +
      "Description U.P Iss Exc D Sale Amt(RM)\nO.C. WHITE 2.13 2 0 0 -4.26\nWW MEAL 2.78 4 3 0 -2.78\n".repeat(
        4,
      ) +
      "Total 5.90\n"
    expect(extract(address, note)?.value ?? "").not.toContain("SUBANG JAYA")
  })
  it("reads an ambiguous date month first without day-first evidence, day first with it", () => {
    const us = "Corner Store\nDate 04/05/2018\nTotal $5.00\n"
    const my = "Kedai Runcit\nDate 04/05/2018\nTotal RM5.00\n"
    expect(findDates(us, "2024-01-01")[0]?.value).toBe("2018-04-05")
    expect(findDates(my, "2024-01-01")[0]?.value).toBe("2018-05-04")
  })
  it("reads no date in opening hours or article codes", () => {
    const text = "SUN-THU: 1000 HRS - 2230 HRS\nWG12/3-32/ - 36/3460\nMC22-32 - 10/120\n"
    expect(findDates(text, "2024-01-01")).toEqual([])
  })
  it("takes the date printed with the time of the sale over an earlier date", () => {
    const text = "KEDAI MAJU SDN BHD\nOrderNo#1106368 06/07/18\nTotal RM 5.00\n06/07/16 13:54 i~11056244\n"
    expect(extract(date, text)?.value).toBe("2016-07-06")
  })
  it("reads a date run into the next word and a label OCR misread by a letter", () => {
    expect(extract(date, "Kedai\nDate: 21/05/2018Time: 11:12:56AM\nTotal RM 8.00\n")?.value).toBe(
      "2018-05-21",
    )
    expect(extract(date, "Kedai\nData : 25/09/2017 01:48:57 PM\nTotal RM 8.00\n")?.value).toBe("2017-09-25")
  })
  it("puts a date written over several words under no column of the line above", () => {
    const text = "UNIHAKKA INTERNATIONAL SDN BHD\n22 May 2018 18:51\nTotal RM 11.40\n"
    expect(extract(date, text)?.value).toBe("2018-05-22")
  })
  it("answers no due date from a receipt's only date", () => {
    expect(extract(agentSpec("Due date", "When payment is due", "date"), receipt)).toBeUndefined()
  })
})
