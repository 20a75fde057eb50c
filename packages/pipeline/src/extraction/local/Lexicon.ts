/**
 * Word lists of the local extractor: stop-words, number words, legal-entity suffixes, US states and
 * common countries, currencies and month names.
 */

import { NUMBER_WORDS } from "@dxs/domain/WrittenForms"

export const STOP_WORDS: ReadonlySet<string> = new Set(
  (
    "a an the of in on at to for from by with and or nor but as is are was were be been being this that these " +
    "those it its into onto than then there their them they he she his her we our you your i me my which who " +
    "whom whose what when where why how all any each every some such no not only own same so too very can will " +
    "shall should would could may might must do does did done has have had having if else about above below " +
    "under over between per via please find extract return give get value document documents text stated " +
    "mentioned listed given provided one ones also just etc e g eg ie i.e e.g"
  ).split(/\s+/),
)

/** Words that survive the stop-word filter even though they look like function words. */
export const KEEP_WORDS: ReadonlySet<string> = new Set(["between", "due", "no", "term"])

/** `two`, `twenty-four`, `thirty six` → number; undefined when not a number word. */
export const numberWord = (text: string): number | undefined => {
  const parts = text.toLowerCase().split(/[\s-]+/)
  let total = 0
  for (const p of parts) {
    const n = NUMBER_WORDS[p]
    if (n === undefined) return undefined
    total += n
  }
  return parts.length > 0 ? total : undefined
}

export const NUMBER_WORD_PATTERN =
  "(?:(?:twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety)(?:[\\s-](?:one|two|three|four|five|six|seven|eight|nine))?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|hundred)"

/**
 * Legal-entity suffixes, as written in mixed case; their all-capital forms are accepted too (a letterhead or
 * a receipt writes `SDN BHD`, `INC.`). Names of words that are also common nouns (Company, Trust, Bank,
 * Partners, Holdings) count only as written here, capitalised.
 */
const LEGAL_SUFFIXES: ReadonlyArray<string> = [
  "Inc\\.?",
  "Incorporated",
  "L\\.?L\\.?C\\.?",
  "Ltd\\.?",
  "Limited",
  "GmbH",
  "AG",
  "S\\.A\\.?",
  "S\\.A\\.S\\.?",
  "SAS",
  "SARL",
  "S\\.?R\\.?L\\.?",
  "S\\.p\\.A\\.?",
  "N\\.V\\.?",
  "B\\.V\\.?",
  "Corp\\.?",
  "Corporation",
  "Co\\.",
  "P\\.?L\\.?C\\.?",
  "plc",
  "L\\.?P\\.?",
  "L\\.?L\\.?P\\.?",
  "LLLP",
  "ASA",
  "AB",
  "Oy",
  "KG",
  "Pty\\.? Ltd\\.?",
  "Pte\\.? Ltd\\.?",
  // Malaysian private and public companies (Sendirian Berhad, Berhad); `S/B` is the short form.
  "Sdn\\.? ?Bhd\\.?",
  "Bhd\\.?",
  "Berhad",
  "S/B",
]
const CAPITALISED_ONLY = ["Company", "Bancorp", "Trust", "Bank", "Partners", "Holdings?"]

export const LEGAL_SUFFIX_PATTERN = `(?:${[
  ...LEGAL_SUFFIXES.flatMap((s) => (s.toUpperCase() === s ? [s] : [s, s.toUpperCase()])),
  ...CAPITALISED_ONLY,
].join("|")})`

export const US_STATES: ReadonlyArray<string> = [
  "Alabama",
  "Alaska",
  "Arizona",
  "Arkansas",
  "California",
  "Colorado",
  "Connecticut",
  "Delaware",
  "District of Columbia",
  "Florida",
  "Georgia",
  "Hawaii",
  "Idaho",
  "Illinois",
  "Indiana",
  "Iowa",
  "Kansas",
  "Kentucky",
  "Louisiana",
  "Maine",
  "Maryland",
  "Massachusetts",
  "Michigan",
  "Minnesota",
  "Mississippi",
  "Missouri",
  "Montana",
  "Nebraska",
  "Nevada",
  "New Hampshire",
  "New Jersey",
  "New Mexico",
  "New York",
  "North Carolina",
  "North Dakota",
  "Ohio",
  "Oklahoma",
  "Oregon",
  "Pennsylvania",
  "Rhode Island",
  "South Carolina",
  "South Dakota",
  "Tennessee",
  "Texas",
  "Utah",
  "Vermont",
  "Virginia",
  "Washington",
  "West Virginia",
  "Wisconsin",
  "Wyoming",
]

export const COUNTRIES: ReadonlyArray<string> = [
  "England and Wales",
  "England",
  "Scotland",
  "United Kingdom",
  "United States",
  "Ireland",
  "Canada",
  "Ontario",
  "British Columbia",
  "Quebec",
  "Germany",
  "France",
  "Netherlands",
  "the Netherlands",
  "Belgium",
  "Luxembourg",
  "Switzerland",
  "Austria",
  "Italy",
  "Spain",
  "Portugal",
  "Sweden",
  "Norway",
  "Denmark",
  "Finland",
  "Poland",
  "Israel",
  "India",
  "China",
  "Hong Kong",
  "Japan",
  "Singapore",
  "Australia",
  "New South Wales",
  "New Zealand",
  "Brazil",
  "Mexico",
  "Cayman Islands",
  "Bermuda",
  "British Virgin Islands",
]

/** Regions and country groups, for dimension discovery. */
export const REGIONS: ReadonlyArray<string> = [
  "EU",
  "EMEA",
  "APAC",
  "LATAM",
  "US",
  "USA",
  "UK",
  "North America",
  "South America",
  "Latin America",
  "Europe",
  "Asia",
  "Asia Pacific",
  "Africa",
  "Middle East",
  "Oceania",
]

export const MONTHS: ReadonlyArray<string> = [
  "january",
  "february",
  "march",
  "april",
  "may",
  "june",
  "july",
  "august",
  "september",
  "october",
  "november",
  "december",
]

/** Month-name prefix (three letters, English) → month number. */
export const monthNumber = (name: string): number | undefined => {
  const i = MONTHS.findIndex((m) => m.startsWith(name.toLowerCase().slice(0, 3)))
  return i >= 0 ? i + 1 : undefined
}

export const MONTH_PATTERN =
  "(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)\\.?"

/** ISO currency codes recognised next to amounts. */
export const CURRENCY_CODES: ReadonlyArray<string> = [
  "USD",
  "EUR",
  "GBP",
  "CHF",
  "JPY",
  "CNY",
  "INR",
  "PLN",
  "CAD",
  "AUD",
  "NZD",
  "SEK",
  "NOK",
  "DKK",
  "CZK",
  "HUF",
  "RUB",
  "BRL",
  "MXN",
  "ZAR",
  "SGD",
  "HKD",
  "MYR",
  "IDR",
  "THB",
  "PHP",
]

/** Currency symbols and local words → ISO code. */
export const CURRENCY_SYMBOLS: ReadonlyArray<readonly [string, string]> = [
  ["US$", "USD"],
  ["CA$", "CAD"],
  ["C$", "CAD"],
  ["A$", "AUD"],
  ["S$", "SGD"],
  ["RM", "MYR"],
  ["Rp", "IDR"],
  ["$", "USD"],
  ["€", "EUR"],
  ["£", "GBP"],
  ["¥", "JPY"],
  ["₹", "INR"],
  ["Rs.", "INR"],
  ["Rs", "INR"],
  ["zł", "PLN"],
  ["PLN", "PLN"],
  ["Fr.", "CHF"],
  ["kr", "SEK"],
  ["euro", "EUR"],
  ["euros", "EUR"],
  ["dollars", "USD"],
  ["dollar", "USD"],
  ["rupees", "INR"],
  ["rupee", "INR"],
  ["sterling", "GBP"],
]

export const currencyCode = (token: string): string | undefined => {
  const upper = token.toUpperCase()
  if (CURRENCY_CODES.includes(upper)) return upper
  const found = CURRENCY_SYMBOLS.find(([s]) => s.toLowerCase() === token.toLowerCase())
  return found?.[1]
}

/** Month names of the other supported languages (German, French, Dutch), for the locale date parsers. */
export const LOCALE_MONTHS: ReadonlyArray<readonly ["de" | "fr" | "nl", RegExp]> = [
  ["de", /\b(januar|jänner|februar|märz|maerz|mai|juni|juli|oktober|dezember)\b/i],
  [
    "fr",
    /(^|[^\p{L}])(janvier|février|fevrier|mars|avril|mai|juin|juillet|août|aout|septembre|octobre|novembre|décembre|decembre)(?![\p{L}])/iu,
  ],
  ["nl", /\b(januari|februari|maart|april|mei|juni|juli|augustus|september|oktober|november|december)\b/i],
]

/**
 * Invoice vocabulary of other languages (Dutch, French, German), by the English stem it translates:
 * an agent that speaks of an invoice number also finds `Factuurnummer`, `Facture n°` or `Rechnungsnr.`.
 */
export const TRANSLATIONS: Readonly<Record<string, ReadonlyArray<string>>> = {
  invoic: ["factuur", "facture", "rechnung", "fattura", "factura"],
  number: ["nummer", "nr", "numéro", "numero"],
  dat: ["datum", "factuurdatum", "rechnungsdatum", "facturatiedatum"],
  total: ["totaal", "montant", "gesamtbetrag", "summe", "endbetrag", "rechnungsbetrag", "bedrag", "betrag"],
  amount: ["bedrag", "montant", "betrag", "totaal", "gesamtbetrag"],
  issuer: ["verkoper", "leverancier", "vendeur", "fournisseur", "verkäufer", "lieferant", "van", "provider"],
  seller: ["verkoper", "vendeur", "verkäufer"],
  supplier: ["leverancier", "fournisseur", "lieferant"],
}

/** Compound and multi-word labels of other languages, added with the field they name. */
export const FOREIGN_PHRASES: ReadonlyArray<readonly [RegExp, ReadonlyArray<string>]> = [
  [
    /\binvoice (number|no|nr|#|id)\b/,
    [
      "factuurnummer",
      "factuurnr",
      "rechnungsnummer",
      "rechnungsnr",
      "numéro de facture",
      "facture n°",
      "n° de facture",
    ],
  ],
  [
    /\binvoice date|date of issue|issue date\b/,
    ["factuurdatum", "rechnungsdatum", "date de facture", "date facture", "datum", "facture du"],
  ],
  [
    /\b(total|amount due|balance due|invoice amount)\b/,
    [
      "te betalen",
      "totaal",
      "totaalbedrag",
      "à payer",
      "net à payer",
      "total ttc",
      "montant ttc",
      "somme à payer",
      "gesamtbetrag",
      "rechnungsbetrag",
      "zu zahlen",
      "endbetrag",
    ],
  ],
]

/** What the foreign labels stand for in English words, so that `Factuurnummer` names an invoice number. */
export const FOREIGN_MEANING: Readonly<Record<string, string>> = {
  factuur: "invoice",
  facture: "invoice",
  rechnung: "invoice",
  fattura: "invoice",
  factura: "invoice",
  nummer: "number",
  nr: "number",
  numéro: "number",
  numero: "number",
  datum: "date",
  factuurdatum: "invoice date",
  rechnungsdatum: "invoice date",
  facturatiedatum: "invoice date",
  factuurnummer: "invoice number",
  factuurnr: "invoice number",
  rechnungsnummer: "invoice number",
  rechnungsnr: "invoice number",
  totaal: "total",
  totaalbedrag: "total amount",
  montant: "amount",
  bedrag: "amount",
  betrag: "amount",
  gesamtbetrag: "total amount",
  rechnungsbetrag: "invoice amount",
  endbetrag: "total amount",
  summe: "total",
  verkoper: "seller",
  vendeur: "seller",
  verkäufer: "seller",
  leverancier: "supplier",
  fournisseur: "supplier",
  lieferant: "supplier",
}

/** Words of street addresses (English, Malay, German, French, Dutch): a line with one reads as an address line. */
export const STREET_WORDS =
  /\b(street|st|road|rd|avenue|ave|lane|drive|boulevard|blvd|highway|hwy|square|floor|flr|level|suite|unit|block|blk|blok|building|bldg|tower|plaza|centre|center|mall|complex|park|estate|industrial|lot|p\.?o\.? box|jalan|jln|lorong|lrg|taman|tmn|bandar|kampung|kg|persiaran|lebuh|lebuhraya|wisma|bangunan|kawasan|mukim|batu|pusat|straße|strasse|str|platz|weg|allee|gasse|rue|chemin|straat|laan|plein|gracht|kade|postfach)\b\.?/i

/**
 * The words of addresses OCR is corrected to when it misreads them by a letter (`JUN` for `JLN`, `TANAN` for
 * `TAMAN`, `Malaysla` for `Malaysia`): street words and their short forms, the words of floors and buildings,
 * points of the compass, and the names of states, regions and countries (Malaysian, Singaporean and English
 * ones, as receipts print them), and words of place names one letter from them (`RAYA`, `LAMAN`), which stay.
 * Place names that are no such word are never corrected.
 */
export const ADDRESS_WORDS: ReadonlyArray<string> = [
  ...["street", "road", "avenue", "drive", "boulevard", "highway", "square", "floor", "level", "suite"],
  ...["block", "building", "plaza", "centre", "center", "complex", "estate", "industrial", "shopping"],
  ...["ground", "first", "second", "third", "basement", "lot", "no", "flr", "blk", "jln", "tmn", "lrg"],
  ...["jalan", "lorong", "taman", "bandar", "kampung", "persiaran", "lebuh", "lebuhraya", "wisma"],
  ...["bangunan", "kawasan", "perindustrian", "mukim", "batu", "pusat", "seksyen", "medan", "baru"],
  ...["jaya", "seri", "sri", "utama", "indah", "utara", "selatan", "timur", "barat", "tengah", "darul"],
  ...["ehsan", "takzim", "makmur", "ridzuan", "selangor", "johor", "kedah", "kelantan", "melaka"],
  ...["negeri", "sembilan", "pahang", "perak", "perlis", "penang", "pulau", "pinang", "sabah", "sarawak"],
  ...["terengganu", "kuala", "lumpur", "putrajaya", "labuan", "wilayah", "persekutuan", "malaysia"],
  ...["singapore", "raya", "laman"],
]

/** Labels of the lines that follow an address and are no part of it (telephone, tax and company numbers). */
export const NOT_ADDRESS =
  /\b(tel|telephone|phone|fax|mobile|hp|gst|vat|sst|tax|reg|registration|co\.? ?no|company no|roc|brn|invoice|receipt|bill|cashier|date|time|e-?mail|www|http|website|order|table|counter|pos)\b|@/i
