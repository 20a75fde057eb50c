/**
 * Scoring candidates against an agent: label and sentence overlap with the key terms, distance to
 * them, kind match, position cues and agreement with the examples. Every score keeps its reasons so
 * the reasoning can say what decided it.
 */
import { editDistance } from "@dxs/domain/Grounding"
import type { Candidate, PageAnalysis } from "./Candidates.ts"
import type { CueContext } from "./Cues.ts"
import { dateCues } from "./DateCues.ts"
import { issuerCues } from "./Issuer.ts"
import { type AgentProfile, type Kind, meaningOf, stem, terms, words } from "./KeyTerms.ts"
import { CURRENCY_CODES, CURRENCY_SYMBOLS } from "./Lexicon.ts"
import { moneyCues } from "./MoneyCues.ts"
import { termCues } from "./TermCues.ts"
import { cleanLabel, escapeRegExp, headerAbove, labelBefore, lineAt, sentenceAround } from "./Text.ts"

export interface PageContext {
  readonly text: string
  /** 0-based index among the request's pages. */
  readonly index: number
  readonly pageNumber: number
  readonly pageCount: number
  readonly analysis: PageAnalysis
  /** Offsets of key-term occurrences in the page. */
  readonly termHits: ReadonlyArray<number>
}

export interface Scored {
  readonly candidate: Candidate
  readonly page: PageContext
  readonly score: number
  readonly label: string
  readonly labelTerms: ReadonlyArray<string>
  readonly contextTerms: ReadonlyArray<string>
  readonly cues: ReadonlyArray<string>
  /** Some key term, label or decisive pattern supports it (never answer on kind alone). */
  readonly evidence: boolean
}

/** Where the key terms occur in a page. */
export const termHits = (text: string, profile: AgentProfile): Array<number> => {
  const out: Array<number> = []
  for (const [w, at] of words(text)) if (profile.terms.has(stem(w))) out.push(at)
  return out
}

/** The candidates an agent of this kind can use, with a factor for looser kinds. */
export const pool = (kind: Kind, a: PageAnalysis): ReadonlyArray<readonly [Candidate, number]> => {
  const all = (cs: ReadonlyArray<Candidate>, f = 1) => cs.map((c) => [c, f] as const)
  switch (kind) {
    case "date":
      return all(a.dates)
    case "money":
      return [
        ...all(a.numbers.filter((c) => c.kind === "money")),
        ...all(
          a.numbers.filter((c) => c.kind === "number"),
          0.6,
        ),
      ]
    case "number":
      return [...all(a.numbers.filter((c) => c.kind !== "percentage")), ...all(a.durations, 0.5)]
    case "percentage":
      return all(a.numbers.filter((c) => c.kind === "percentage"))
    case "duration":
      return all(a.durations)
    case "identifier":
      return all(a.identifiers)
    case "jurisdiction":
      return all(a.jurisdictions)
    case "currency":
      return all(a.currencies)
    case "party":
      return [...all(a.parties), ...all(a.organisations, 0.4)]
    case "name":
      return [
        ...all(a.organisations),
        ...all(a.headings),
        ...all(a.brands),
        ...all(a.payees),
        ...all(
          a.labelled.filter((c) => /^[A-Z]/.test(c.value) && c.value.length <= 80),
          0.8,
        ),
      ]
    case "address":
      return [...all(a.addresses), ...all(a.labelled, 0.5)]
    case "text":
      return all(a.labelled)
  }
}

const overlap = (a: ReadonlyArray<string>, set: ReadonlySet<string>) => [
  ...new Set(a.filter((t) => set.has(t))),
]

/** A label's term is one of the key terms, or one OCR misread by a letter (`Data` for `Date`). */
const nearTerm = (t: string, set: ReadonlySet<string>): boolean =>
  set.has(t) || (t.length >= 4 && [...set].some((k) => k.length >= 3 && editDistance(t, k, 1) <= 1))

/** The word that a "number" label qualifies: "order" of "Order No.", "klant" of "Klantnummer". */
const NUMBER_WORDS: ReadonlySet<string> = new Set([
  "number",
  "no",
  "nr",
  "#",
  "id",
  "numéro",
  "nummer",
  "num",
])
const numberQualifier = (label: string): string | undefined => {
  label = label.replace(/[\s\d]+$/, "")
  const compound = /([a-zà-ÿ]{3,}?)-?(?:nummer|nr)\.?\s*[:#]?\s*$/.exec(label)
  if (compound) return compound[1]
  const m =
    /([a-zà-ÿ]{2,})\.?\s+(?:number|no|nr|n°|nº|#|id|num|nummer)\b\.?\s*[:#]?\s*$/.exec(label) ??
    /\b(?:numéro|n°|nº)\s+(?:de\s+|d['’])?([a-zà-ÿ]{3,})\s*[:#]?\s*$/.exec(label) ??
    /([a-zà-ÿ]{3,})\s+(?:n°|nº|#)\s*[:#]?\s*$/.exec(label)
  return m?.[1]
}

/**
 * The label a value is given in so many words: its column's header, or `Label:` right before it on its
 * line (the last cell of the line when it has several). Undefined for a value in prose.
 */
const explicitLabel = (text: string, candidate: Candidate): string | undefined => {
  const header = headerAbove(text, candidate.valueStart, candidate.valueEnd)
  if (header) return header.label
  const before = text.slice(lineAt(text, candidate.start).start, candidate.start)
  const cell = before.split(/\t|\s{2,}|\|/).pop() ?? ""
  return /^\s*([^:]{1,60}?)\s*:\s*$/.exec(cell)?.[1]
}

/** Values whose label names the quantity they are: a label that names another one is a different value. */
const LABELLED_KINDS: ReadonlySet<Kind> = new Set([
  "money",
  "number",
  "percentage",
  "duration",
  "identifier",
  "date",
])

/** Currency signs that several currencies write (the dollar of the US, Canada, Australia…). */
const SHARED_SIGNS: Readonly<Record<string, ReadonlyArray<string>>> = {
  $: ["USD", "CAD", "AUD", "NZD", "SGD", "HKD", "MXN", "TWD", "ARS", "CLP", "COP", "BRL"],
  dollar: ["USD", "CAD", "AUD", "NZD", "SGD", "HKD", "TWD"],
  dollars: ["USD", "CAD", "AUD", "NZD", "SGD", "HKD", "TWD"],
  "¥": ["JPY", "CNY"],
  kr: ["SEK", "NOK", "DKK", "ISK"],
}

const CURRENCY_IN_TEXT = new RegExp(
  `(?<![A-Za-z])(${[...CURRENCY_SYMBOLS.map(([s]) => s), ...CURRENCY_CODES]
    .sort((a, b) => b.length - a.length)
    .map(escapeRegExp)
    .join("|")})(?![A-Za-z])`,
  "i",
)

/** The currencies a money value may be in: the sign or code written with it, else one in its label. */
const currenciesOf = (
  text: string,
  candidate: Candidate,
  label: string | undefined,
): ReadonlyArray<string> => {
  const written = `${text.slice(candidate.start, candidate.valueStart)} ${text.slice(candidate.valueEnd, candidate.end)}`
  const token = CURRENCY_IN_TEXT.exec(written)?.[1] ?? (label ? CURRENCY_IN_TEXT.exec(label)?.[1] : undefined)
  if (token === undefined) return candidate.currency ? [candidate.currency] : []
  const shared = SHARED_SIGNS[token.toLowerCase()]
  if (shared) return shared
  const code =
    CURRENCY_SYMBOLS.find(([s]) => s.toLowerCase() === token.toLowerCase())?.[1] ?? token.toUpperCase()
  return [code]
}

const DURATION_PER = /\b(day|week|month|year)s?\b/

/** Why the value cannot be in the agent's unit (an amount in another currency, a percentage for days). */
const unitConflict = (
  profile: AgentProfile,
  text: string,
  candidate: Candidate,
  label: string | undefined,
): string | undefined => {
  const unit = profile.unit
  if (unit === undefined) return undefined
  const currencies =
    candidate.kind === "money" || candidate.kind === "number" ? currenciesOf(text, candidate, label) : []
  const per = candidate.kind === "duration" ? DURATION_PER.exec(candidate.value)?.[1] : undefined
  if (candidate.kind === "percentage" && unit.kind !== "percentage") return "a percentage"
  if (per !== undefined && (unit.kind !== "duration" || unit.per !== per)) return `a period in ${per}s`
  if (currencies.length > 0) {
    if (unit.kind !== "money") return `an amount of money (${currencies[0]})`
    if (!currencies.includes(unit.currency))
      return `an amount in ${currencies.join(" or ")}, not in ${unit.currency}`
  }
  return undefined
}

export const scoreCandidate = (
  profile: AgentProfile,
  candidate: Candidate,
  factor: number,
  page: PageContext,
): Scored => {
  const { text } = page
  const cues: Array<string> = []
  // A clause pattern that decides on its own (a term clause, "dated as of", a governing-law clause).
  let decisive = false
  const found =
    candidate.label !== undefined
      ? { label: candidate.label }
      : labelBefore(text, candidate.valueStart, candidate.valueEnd)
  const label = found.label
  const labelTerms = overlap(terms(label), profile.terms)
  const nameHits = new Set(labelTerms.flatMap(meaningOf).filter((t) => profile.nameTerms.has(t))).size
  const lowerLabel = label.toLowerCase()
  let score = candidate.strength * factor
  let labelScore = 0
  if (labelTerms.length > 0) {
    labelScore += profile.nameTerms.size > 0 ? (1.6 * nameHits) / profile.nameTerms.size : 0
    labelScore += 0.8 + 0.2 * Math.min(2, labelTerms.length - 1)
  }
  if (profile.phrases.some((p) => lowerLabel.includes(p))) labelScore += 0.6
  // A label far from the value (prose) counts less than a `Label: value` pair.
  const labelGap = candidate.valueStart - (text.lastIndexOf("\n", candidate.valueStart - 1) + 1)
  if (candidate.label === undefined && labelGap > 60) labelScore *= 0.5
  score += labelScore

  const sentence = sentenceAround(text, candidate.start, candidate.end, 300)
  const context = text.slice(sentence.start, sentence.end)
  const contextTerms = overlap(terms(context), profile.terms)
  const contextScore = Math.min(1, contextTerms.length / Math.min(3, Math.max(1, profile.terms.size)))
  score += 0.9 * contextScore

  // Nearest key term before the value (within 150 characters) or just after it (within 60).
  let best = Number.POSITIVE_INFINITY
  for (const at of page.termHits) {
    const d = at <= candidate.start ? candidate.start - at : at - candidate.end
    const limit = at <= candidate.start ? 150 : 60
    if (d >= 0 && d <= limit) best = Math.min(best, d / limit)
  }
  const proximityHit = Number.isFinite(best)
  if (proximityHit) score += 0.6 * (1 - best)

  if (candidate.kind === profile.kind) score += 1
  else if (factor < 1) cues.push(`${candidate.kind} rather than ${profile.kind}`)

  // Position in the document, 0 (start) to 1 (end).
  const position = (page.index + candidate.start / Math.max(1, text.length)) / Math.max(1, page.pageCount)
  const line = text
    .slice(lineAt(text, candidate.valueStart).start, lineAt(text, candidate.valueStart).end)
    .toLowerCase()
  const cue: CueContext = { profile, candidate, page, label: lowerLabel, line, context, position, labelScore }
  let refusedByRule: string | undefined
  for (const more of [moneyCues(cue), dateCues(cue), termCues(cue)]) {
    score += more.score
    cues.push(...more.cues)
    decisive = more.decisive ?? decisive
    refusedByRule ??= more.refused
  }
  const issuer = issuerCues(profile, candidate, page, position)
  score += issuer.score
  cues.push(...issuer.cues)
  decisive ||= issuer.decisive
  if (profile.kind === "party" && candidate.kind === "party") {
    score += 0.8 * (1 - Math.min(1, position * 4))
    if (position < 0.1) cues.push("near the start of the contract")
  }
  if (profile.kind === "jurisdiction" && /\bgovern|\bconstru|\binterpret/.test(context.toLowerCase())) {
    score += 0.5
    cues.push("a governing-law clause")
    decisive = true
  }
  if (profile.kind === "identifier" && candidate.kind === "identifier") {
    // "Order no." or "Klantnummer" number something else than the "invoice number" asked for.
    const qualifier = numberQualifier(lowerLabel)
    if (qualifier !== undefined) {
      const own = meaningOf(stem(qualifier)).some((t) => profile.nameTerms.has(t))
      if (own) score += 0.4
      else if ([...profile.nameTerms].some((t) => !NUMBER_WORDS.has(t))) {
        score -= 1.6
        cues.push(`the number of something else ("${qualifier}")`)
      }
    }
  }
  if (profile.kind === "currency" && candidate.pattern.endsWith("written with an amount")) {
    score += 0.5
    cues.push("written against an amount")
    decisive = true
  }
  if (profile.exampleShapes.length > 0 && candidate.kind === "identifier") {
    if (profile.exampleShapes.some((re) => re.test(candidate.value))) {
      score += 1
      cues.push("the shape of the examples")
    } else score -= 0.4
  }
  // A value labelled in so many words as something else (a "fee" line for a total), or in another unit
  // than the agent's (an amount in USD for an agent in EUR), does not answer the agent: no value is
  // better than a wrong one.
  const explicit = LABELLED_KINDS.has(profile.kind) ? explicitLabel(text, candidate) : undefined
  const explicitTerms = explicit === undefined ? [] : terms(cleanLabel(explicit))
  const labelledOtherwise =
    explicitTerms.length > 0 && !explicitTerms.some((t) => nearTerm(t, profile.terms))
      ? `labelled "${cleanLabel(explicit!)}", which is not what is asked for`
      : undefined
  const conflict = unitConflict(profile, text, candidate, explicit)
  let refused = labelledOtherwise ?? (conflict ? `${conflict}, not the agent's unit` : undefined)
  if (refused) cues.push(refused)
  if (refusedByRule !== undefined && refused === undefined) refused = refusedByRule
  const evidence =
    refused !== undefined ||
    (candidate.relative === true && labelTerms.length === 0 && proximityHit === false)
      ? false
      : decisive ||
        labelTerms.length > 0 ||
        contextTerms.length > 0 ||
        Number.isFinite(best) ||
        (candidate.strength >= 0.9 && (candidate.kind === "party" || candidate.kind === "jurisdiction"))
  return { candidate, page, score, label, labelTerms, contextTerms, cues, evidence }
}
