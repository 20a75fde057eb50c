/**
 * Understanding an agent: the key terms of its name and instructions (lower-cased, lightly stemmed,
 * stop-words out, synonyms of common fields added) and the kind of value it expects.
 */
import type { AgentSpec } from "../../llm/LanguageModel.ts"
import {
  CURRENCY_CODES,
  currencyCode,
  FOREIGN_MEANING,
  FOREIGN_PHRASES,
  KEEP_WORDS,
  STOP_WORDS,
  TRANSLATIONS,
} from "./Lexicon.ts"

export type Kind =
  | "date"
  | "money"
  | "number"
  | "percentage"
  | "duration"
  | "identifier"
  | "name"
  | "party"
  | "jurisdiction"
  | "address"
  | "currency"
  | "text"

/** Light stemming: plural, -ing, -ed and a final -e go, so `dated`, `dates` and `date` meet. */
export const stem = (word: string): string => {
  let w = word.toLowerCase().replace(/['’]s$/, "")
  if (w.length > 4 && w.endsWith("ies")) w = `${w.slice(0, -3)}y`
  else if (w.length > 4 && w.endsWith("sses")) w = w.slice(0, -2)
  else if (w.length > 3 && w.endsWith("s") && !/(ss|us|is)$/.test(w)) w = w.slice(0, -1)
  if (w.length > 5 && w.endsWith("ing")) w = w.slice(0, -3)
  else if (w.length > 4 && w.endsWith("ed")) w = w.slice(0, -2)
  if (w.length > 3 && w.endsWith("e")) w = w.slice(0, -1)
  return w
}

/** The words of a text, lower-cased, as `[word, start]` pairs. */
export const words = (text: string): Array<readonly [string, number]> => {
  const out: Array<readonly [string, number]> = []
  for (const m of text.matchAll(/[A-Za-zÀ-ÿ][A-Za-zÀ-ÿ'’]*|#/g)) out.push([m[0].toLowerCase(), m.index])
  return out
}

/** Stemmed content words of a text (stop-words out). */
export const terms = (text: string): Array<string> =>
  words(text)
    .map(([w]) => w)
    .filter((w) => KEEP_WORDS.has(w) || (!STOP_WORDS.has(w) && (w.length > 1 || w === "#")))
    .map(stem)

/** The English stems a label stem stands for: itself, or the meaning of a foreign label. */
export const meaningOf = (t: string): ReadonlyArray<string> => MEANINGS.get(t) ?? [t]

const MEANINGS: ReadonlyMap<string, ReadonlyArray<string>> = new Map(
  Object.entries(FOREIGN_MEANING).map(([word, english]) => [
    stem(word),
    [stem(word), ...english.split(" ").map(stem)],
  ]),
)

/** Synonym groups of common fields: any trigger phrase in the agent brings in the whole group. */
const SYNONYMS: ReadonlyArray<{
  readonly triggers: ReadonlyArray<string>
  readonly phrases: ReadonlyArray<string>
}> = [
  {
    triggers: ["total", "amount due", "balance due", "grand total", "amount", "balance", "invoice amount"],
    phrases: [
      "total",
      "amount due",
      "balance due",
      "grand total",
      "total due",
      "amount payable",
      "total amount",
    ],
  },
  {
    triggers: ["effective date", "commencement date", "effective", "commencement", "start date"],
    phrases: [
      "effective date",
      "commencement date",
      "dated as of",
      "effective as of",
      "entered into",
      "made as of",
    ],
  },
  {
    triggers: ["governing law", "jurisdiction", "applicable law", "governed"],
    phrases: ["governing law", "jurisdiction", "laws of the state of", "governed by", "construed", "laws"],
  },
  {
    triggers: ["term", "duration", "length", "period"],
    phrases: ["term", "duration", "period"],
  },
  {
    triggers: ["party", "parties", "between", "counterparty", "counterparties"],
    phrases: ["party", "parties", "between", "by and between"],
  },
  {
    triggers: ["invoice number", "invoice no", "invoice #", "invoice id", "bill number"],
    phrases: [
      "invoice number",
      "invoice no",
      "invoice #",
      "invoice nr",
      "invoice id",
      "bill number",
      "number",
      "no",
      "#",
    ],
  },
  {
    triggers: ["issuer", "vendor", "supplier", "seller", "issued by"],
    phrases: ["issuer", "vendor", "supplier", "seller", "from", "issued by", "sold by", "service provider"],
  },
  {
    triggers: ["invoice date", "date of issue", "issue date", "billing date"],
    phrases: ["invoice date", "date of issue", "issue date", "issued", "billing date", "date"],
  },
  {
    triggers: ["currency"],
    phrases: ["currency", "amount", "total"],
  },
]

/** What an agent's `unit` says its values are: an amount in a currency, a percentage, or a period. */
export type UnitSpec =
  | { readonly kind: "money"; readonly currency: string }
  | { readonly kind: "percentage" }
  | { readonly kind: "duration"; readonly per: "day" | "week" | "month" | "year" }

/** The unit's meaning, when it names a currency, a percentage or a period; else undefined ("million", "kg"). */
export const unitSpec = (unit: string): UnitSpec | undefined => {
  const u = unit.trim()
  if (u === "") return undefined
  const currency = currencyCode(u)
  if (currency !== undefined) return { kind: "money", currency }
  if (/^(%|percent|per ?cent|percentage|pct)$/i.test(u)) return { kind: "percentage" }
  const period = /^(?:(?:business|calendar|working)\s+)?(day|week|month|year)s?$/i.exec(u)
  if (period) return { kind: "duration", per: period[1]!.toLowerCase() as "day" | "week" | "month" | "year" }
  return undefined
}

export interface AgentProfile {
  /** Stems of the agent's own words (name weighs more than instructions). */
  readonly nameTerms: ReadonlySet<string>
  /** All key stems: name, instructions and synonyms. */
  readonly terms: ReadonlySet<string>
  /** Multi-word phrases (lower-case) whose presence in a label is strong evidence. */
  readonly phrases: ReadonlyArray<string>
  readonly kind: Kind
  /** The agent asks for several names joined into one value (parties). */
  readonly wantsList: boolean
  /** Shapes of the examples (identifier patterns), if any. */
  readonly exampleShapes: ReadonlyArray<RegExp>
  /** Lower-cased text of name and instructions, for cue checks. */
  readonly cueText: string
  readonly asksForSubtotal: boolean
  readonly asksForTax: boolean
  /** What the agent's unit says its values are, when it says. */
  readonly unit: UnitSpec | undefined
}

/** A regular expression of an example's shape: letters, digits and separators kept as classes. */
export const shapeOf = (example: string): RegExp => {
  const parts = example
    .trim()
    .split("")
    .map((c) => (/[A-Z]/.test(c) ? "A" : /[a-z]/.test(c) ? "a" : /\d/.test(c) ? "9" : c))
  let source = ""
  let i = 0
  while (i < parts.length) {
    const c = parts[i]!
    let j = i
    while (j < parts.length && parts[j] === c) j++
    if (c === "A") source += "[A-Z]+"
    else if (c === "a") source += "[a-z]+"
    else if (c === "9") source += "\\d+"
    else source += c.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&").repeat(j - i)
    i = j
  }
  return new RegExp(`^${source}$`)
}

const CUE_ORDER: ReadonlyArray<readonly [Kind, RegExp]> = [
  ["currency", /\bcurrenc(y|ies)\b/],
  ["jurisdiction", /\b(jurisdiction|governing law|governed|applicable law|laws?|venue)\b/],
  ["date", /\b(date|dated|day|when)\b/],
  ["percentage", /\b(percent|percentage|rate|ratio)\b|%/],
  ["duration", /\b(term|duration|period|length|how long|months|years)\b/],
  ["identifier", /\b(number|no|nr|#|id|identifier|reference|ref|code)\b|#/],
  ["money", /\b(amount|total|price|cost|fee|fees|payment|balance|sum|revenue|salary|value|paid|payable)\b/],
  ["address", /\baddress\b/],
  ["party", /\b(party|parties|between|counterpart(y|ies)|signator(y|ies))\b/],
  [
    "name",
    /\b(name|company|issuer|vendor|supplier|seller|customer|buyer|client|employer|employee|organi[sz]ation|entity|who|person)\b/,
  ],
  ["number", /\b(count|quantity|qty|how many|number of)\b/],
]

const cueKind = (text: string, valueType: AgentSpec["valueType"]): Kind | undefined => {
  for (const [kind, re] of CUE_ORDER) {
    if (!re.test(text)) continue
    if (kind === "identifier" && (valueType === "number" || /\bnumber of\b/.test(text))) return "number"
    if (kind === "jurisdiction" && /\blaw ?firm\b/.test(text)) continue
    return kind
  }
  return undefined
}

const exampleKind = (examples: ReadonlyArray<string>): Kind | undefined => {
  const e = examples[0]
  if (e === undefined) return undefined
  if (/^\d{4}-\d{2}-\d{2}$/.test(e) || /^\d{1,2}[/.]\d{1,2}[/.]\d{2,4}$/.test(e)) return "date"
  if (/^\d+(\.\d+)?\s*(year|month|week|day)s?$/i.test(e)) return "duration"
  if (/^-?\d+([.,]\d+)?\s*%$/.test(e)) return "percentage"
  if (/^[A-Z]{3}$/.test(e) && CURRENCY_CODES.includes(e)) return "currency"
  if (/[$€£¥₹]/.test(e)) return "money"
  if (/\d/.test(e) && /[A-Za-z]/.test(e) && !/\s/.test(e)) return "identifier"
  return undefined
}

/** Splits the free-form `examples` field into individual examples. */
export const splitExamples = (examples: string): Array<string> =>
  examples
    .split(/\n|;|\|/)
    .flatMap((e) => (/^\s*[^,]+(,\s*[^,\d][^,]*)+$/.test(e) ? e.split(",") : [e]))
    .map((e) => e.trim().replace(/^["'“”]+|["'“”]+$/g, ""))
    .filter((e) => e !== "")

export const profileAgent = (agent: AgentSpec): AgentProfile => {
  const name = agent.name.toLowerCase()
  const instructions = agent.extractionInstructions.toLowerCase()
  const cueText = `${name} ${instructions}`.replace(/[_]+/g, " ")
  const examples = splitExamples(agent.examples)
  const unit = unitSpec(agent.unit)

  let kind: Kind
  if (agent.valueType === "date" || agent.valueType === "datetime") kind = "date"
  else {
    const cued =
      cueKind(name.replace(/[_]+/g, " "), agent.valueType) ?? cueKind(instructions, agent.valueType)
    const fromExamples = exampleKind(examples)
    kind = fromExamples ?? cued ?? (agent.valueType === "number" ? "number" : "text")
    if (fromExamples === "identifier" && cued !== undefined && cued !== "identifier") kind = cued
    if (agent.valueType === "number") {
      if (!["money", "number", "percentage", "duration"].includes(kind)) kind = "number"
      // A unit that names a currency, a percentage or a period says what kind of number is asked for.
      if (unit !== undefined) kind = unit.kind
    }
    if (agent.valueType === "bool") kind = "text"
  }

  const nameTerms = new Set(terms(name.replace(/[_]+/g, " ")))
  const all = new Set([...nameTerms, ...terms(instructions)])
  const phrases: Array<string> = []
  for (const group of SYNONYMS) {
    if (group.triggers.some((t) => cueText.includes(t))) {
      for (const p of group.phrases) {
        phrases.push(p)
        for (const t of terms(p)) all.add(t)
      }
    }
  }
  for (const [re, foreign] of FOREIGN_PHRASES) {
    if (!re.test(cueText) && !phrases.some((p) => re.test(p))) continue
    for (const p of foreign) {
      phrases.push(p)
      for (const t of terms(p)) all.add(t)
    }
  }
  if (kind === "date") all.add(stem("date"))
  // The same labels in the other supported languages.
  for (const t of [...all]) for (const f of TRANSLATIONS[t] ?? []) all.add(stem(f))
  return {
    nameTerms,
    terms: all,
    phrases: phrases.filter((p) => p.includes(" ")),
    kind,
    wantsList: kind === "party" || /\b(parties|names|list)\b/.test(cueText),
    exampleShapes: kind === "identifier" ? examples.map(shapeOf) : [],
    cueText,
    asksForSubtotal: /\bsub-?total|net amount|before tax|excl/.test(cueText),
    // "Including tax" qualifies a total; it does not ask for the tax.
    asksForTax: /\b(tax|vat|gst)\b/.test(
      cueText.replace(/\b(incl\w*|with|after|plus)\.?\s+(the\s+|all\s+)?(tax|taxes|vat|gst)\b/g, ""),
    ),
    unit,
  }
}
