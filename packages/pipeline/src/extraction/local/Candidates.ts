/**
 * Candidate finders: typed values found in one page's text, each with its position and the pattern
 * that found it. Pure; the analysis of a page is cached by text and reference date.
 */
import { createRequire } from "node:module"
import { canonicalDecimal, collapseWhitespace, parseNumber } from "@dxs/domain/Values"
import type * as Chrono from "chrono-node"
import type { Kind } from "./KeyTerms.ts"
import {
  COUNTRIES,
  CURRENCY_CODES,
  CURRENCY_SYMBOLS,
  LEGAL_SUFFIX_PATTERN,
  LOCALE_MONTHS,
  MONTH_PATTERN,
  monthNumber,
  NUMBER_WORD_PATTERN,
  numberWord,
  US_STATES,
} from "./Lexicon.ts"
import { escapeRegExp, lineAt, sentenceAround } from "./Text.ts"

const require = createRequire(import.meta.url)
let chronoModule: typeof Chrono | undefined
/**
 * chrono-node, loaded on first use: its ~270 modules would otherwise be loaded by every process that
 * imports the pipeline (the API server at start-up), though only an extraction reads dates.
 */
const chrono = (): typeof Chrono => {
  chronoModule ??= require("chrono-node") as typeof Chrono
  return chronoModule
}

export interface Candidate {
  readonly kind: Kind
  /** The value as it will be reported (before value-type normalisation). */
  readonly value: string
  /** Offsets of the matched text in the page. */
  readonly start: number
  readonly end: number
  /** Offsets of the value itself inside the match (the whole match when equal). */
  readonly valueStart: number
  readonly valueEnd: number
  /** Which pattern found it, for the reasoning. */
  readonly pattern: string
  /** Prior confidence of the pattern, 0..1. */
  readonly strength: number
  /** Numeric value of money, numbers, percentages. */
  readonly amount?: number
  readonly currency?: string
  /** Relative date ("today", "in 30 days"). */
  readonly relative?: boolean
  /** A scale word stated after a number ("million"): stripped, never applied. */
  readonly unit?: string
  /** Label found by the pattern itself (labelled values). */
  readonly label?: string
}

const pad = (n: number) => String(n).padStart(2, "0")
const isoDate = (y: number, m: number, d: number) => `${y}-${pad(m)}-${pad(d)}`

const validDate = (y: number, m: number, d: number) => {
  if (m < 1 || m > 12 || d < 1 || d > 31 || y < 1800 || y > 2200) return false
  const date = new Date(Date.UTC(y, m - 1, d))
  return date.getUTCDate() === d
}

const parseReference = (referenceDate: string): Date => {
  const m = /^(\d{4})-(\d{2})-(\d{2})/.exec(referenceDate)
  return m
    ? new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), 12))
    : new Date(Date.UTC(2000, 0, 1, 12))
}

/** Which order numeric dates are written in: little-endian when a first part above 12 appears. */
const dateOrder = (text: string): "dmy" | "mdy" => {
  let dmy = 0
  let mdy = 0
  for (const m of text.matchAll(/\b(\d{1,2})[/.-](\d{1,2})[/.-](\d{2,4})\b/g)) {
    if (Number(m[1]) > 12) dmy++
    if (Number(m[2]) > 12) mdy++
  }
  if (dmy > mdy) return "dmy"
  if (mdy > dmy) return "mdy"
  // Dotted dates and European money formats suggest day-first.
  return /\b\d{1,2}\.\d{1,2}\.\d{4}\b/.test(text) || /\d,\d{2}\s?€|€\s?\d+,\d{2}\b/.test(text) ? "dmy" : "mdy"
}

const DAY_OF_MONTH = new RegExp(
  `\\b(\\d{1,2})(?:st|nd|rd|th)?\\s+day\\s+of\\s+(${MONTH_PATTERN})\\s*,?\\s*(?:in\\s+the\\s+year\\s+)?(\\d{4})\\b`,
  "gi",
)

const RELATIVE_DATE = /\b(today|tomorrow|yesterday|now|ago|next|last|this|in\s+\d+|within)\b/i

export const findDates = (text: string, referenceDate: string): Array<Candidate> => {
  const out: Array<Candidate> = []
  const taken: Array<[number, number]> = []
  const overlaps = (s: number, e: number) => taken.some(([a, b]) => s < b && e > a)
  for (const m of text.matchAll(DAY_OF_MONTH)) {
    const d = Number(m[1])
    const mo = monthNumber(m[2]!)
    const y = Number(m[3])
    if (mo === undefined || !validDate(y, mo, d)) continue
    const end = m.index + m[0].length
    out.push({
      kind: "date",
      value: isoDate(y, mo, d),
      start: m.index,
      end,
      valueStart: m.index,
      valueEnd: end,
      pattern: `"day of month" date "${m[0]}"`,
      strength: 0.9,
    })
    taken.push([m.index, end])
  }
  const parser = dateOrder(text) === "dmy" ? chrono().en.GB : chrono().casual
  const results = parser.parse(text, { instant: parseReference(referenceDate), timezone: 0 })
  for (const r of results) {
    const s = r.index
    const e = r.index + r.text.length
    if (overlaps(s, e)) continue
    const c = r.start
    const hasDigitsOrMonth = /\d/.test(r.text) || new RegExp(MONTH_PATTERN, "i").test(r.text)
    const relative = RELATIVE_DATE.test(r.text) && !/\d{4}/.test(r.text)
    // "within 30 days" is a deadline, not a date.
    if (relative && /^within\b/i.test(r.text)) continue
    // "made this ___ day of ___, 20__" (the blanks of a form) and "the last day of employment" are not
    // today and yesterday.
    if (relative && /^(this|last)\s+day\b/i.test(r.text)) continue
    if (!relative) {
      if (!c.isCertain("month") || !c.isCertain("day") || !hasDigitsOrMonth) continue
      // Bare numbers chrono reads as dates ("3/4" of a section, "10.2") are noise.
      if (!c.isCertain("year") && !new RegExp(MONTH_PATTERN, "i").test(r.text)) continue
    } else if (/^(this|next|last|now)\b/i.test(r.text) && !/\b(day|week|month|year)\b/i.test(r.text)) continue
    const y = c.get("year")
    const mo = c.get("month")
    const d = c.get("day")
    if (y === null || mo === null || d === null || !validDate(y, mo, d)) continue
    out.push({
      kind: "date",
      value: isoDate(y, mo, d),
      start: s,
      end: e,
      valueStart: s,
      valueEnd: e,
      pattern: relative ? `relative date "${r.text}"` : `date "${r.text}"`,
      strength: relative ? 0.5 : c.isCertain("year") ? 0.85 : 0.6,
      relative,
    })
    taken.push([s, e])
  }
  // Lines the English parser found no date on may name a month in German, French or Dutch.
  let offset = 0
  for (const line of text.split("\n")) {
    const lineStart = offset
    offset += line.length + 1
    if (!/\d/.test(line) || overlaps(lineStart, lineStart + line.length)) continue
    for (const [locale, months] of LOCALE_MONTHS) {
      if (!months.test(line)) continue
      const found = localeParsers()[locale].parse(line, {
        instant: parseReference(referenceDate),
        timezone: 0,
      })
      for (const r of found) {
        const c = r.start
        const s = lineStart + r.index
        const e = s + r.text.length
        if (overlaps(s, e) || !months.test(r.text)) continue
        if (!c.isCertain("month") || !c.isCertain("day")) continue
        const y = c.get("year")
        const mo = c.get("month")
        const d = c.get("day")
        if (y === null || mo === null || d === null || !validDate(y, mo, d)) continue
        out.push({
          kind: "date",
          value: isoDate(y, mo, d),
          start: s,
          end: e,
          valueStart: s,
          valueEnd: e,
          pattern: `date "${r.text}" (${LOCALE_NAMES[locale]})`,
          strength: c.isCertain("year") ? 0.85 : 0.6,
        })
        taken.push([s, e])
      }
    }
  }
  return out
}

const localeParsers = () => ({ de: chrono().de.strict, fr: chrono().fr.strict, nl: chrono().nl.strict })
const LOCALE_NAMES = { de: "German", fr: "French", nl: "Dutch" } as const

const SYMBOLS = CURRENCY_SYMBOLS.map(([s]) => s).filter((s) => !/^[a-z]/i.test(s) || s.length <= 3)
const CURRENCY_TOKEN = `(?:${[...SYMBOLS.map(escapeRegExp), ...CURRENCY_CODES].join("|")})`
const NUMBER_TOKEN =
  "(?:\\d{1,3}(?:,\\d{3})+(?:\\.\\d+)?|\\d{1,3}(?:\\.\\d{3})+(?:,\\d+)?|\\d{1,3}(?:[ \\u00a0\\u202f']\\d{3})+(?:[.,]\\d{1,2})?|\\d+(?:[.,]\\d+)?)"
const MONEY_OR_NUMBER = new RegExp(
  `(?<cur1>${CURRENCY_TOKEN})?\\s?(?<neg>[-−])?\\s?(?<num>${NUMBER_TOKEN})(?![\\d/])(?:\\s?(?<pct>%|percent\\b|per cent\\b)|\\s?(?<cur2>${CURRENCY_TOKEN})(?![A-Za-z])|\\s?(?<unit>thousand|million|billion|k|m|bn)\\b)?`,
  "g",
)

/** Money, plain numbers and percentages (both thousand-separator conventions). */
export const findNumbers = (text: string, dates: ReadonlyArray<Candidate>): Array<Candidate> => {
  const out: Array<Candidate> = []
  for (const m of text.matchAll(MONEY_OR_NUMBER)) {
    const g = m.groups!
    const num = g.num!
    let start = m.index
    let end = start + m[0].length
    const numStart = m.index + m[0].indexOf(num)
    const numEnd = numStart + num.length
    // Parts of words, dates, codes and phone numbers are not amounts.
    const prev = text[numStart - 1] ?? " "
    const next = text[numEnd] ?? " "
    if (/[A-Za-z_/]/.test(prev) && !g.cur1) continue
    if (/[A-Za-z_]/.test(next) && !g.pct && !g.cur2 && !g.unit) continue
    if (/[-/.]\d/.test(text.slice(numEnd, numEnd + 2)) || /\d[-/]$/.test(text.slice(numStart - 2, numStart)))
      continue
    if (dates.some((d) => numStart < d.end && numEnd > d.start)) continue
    const amount = parseNumber(num)
    if (amount === undefined) continue
    const signed = g.neg ? -amount : amount
    const curToken = g.cur1 ?? g.cur2
    const currency = curToken
      ? (CURRENCY_SYMBOLS.find(([s]) => s === curToken)?.[1] ?? curToken.toUpperCase())
      : undefined
    if (g.unit && /^(m|k)$/i.test(g.unit) && !curToken) {
      // "5 m" is more often metres than millions: keep the number, not the unit.
      end = numEnd
    }
    if (!g.cur1) start = g.neg ? m.index + m[0].indexOf(g.neg) : numStart
    if (g.pct) {
      out.push({
        kind: "percentage",
        value: `${canonicalDecimal(signed)}%`,
        start,
        end,
        valueStart: numStart,
        valueEnd: numEnd,
        pattern: `percentage "${text.slice(start, end)}"`,
        strength: 0.9,
        amount: signed,
      })
      continue
    }
    const twoDecimals = /[.,]\d{2}$/.test(num)
    const kind: Kind = currency || twoDecimals ? "money" : "number"
    out.push({
      kind,
      value: canonicalDecimal(signed),
      start,
      end,
      valueStart: numStart,
      valueEnd: numEnd,
      pattern: currency ? `money pattern "${text.slice(start, end).trim()}"` : `number "${num}"`,
      strength: currency ? 0.9 : twoDecimals ? 0.7 : 0.5,
      amount: signed,
      ...(currency ? { currency } : {}),
      ...(g.unit && end > numEnd ? { unit: g.unit } : {}),
    })
  }
  return out
}

const UNIT = "(year|month|week|day|business day|calendar day)s?"
const DURATION = new RegExp(
  `\\b(?:(?<w>${NUMBER_WORD_PATTERN})\\s*(?:\\((?<wd>\\d+(?:\\.\\d+)?)\\))?|(?<d>\\d+(?:\\.\\d+)?)\\s*(?:\\((?:${NUMBER_WORD_PATTERN})\\))?)[\\s-]*(?:\\(\\d+\\)\\s*)?(?<u>${UNIT})\\b`,
  "gi",
)

/** Durations: `24 months`, `two (2) years`, `one-year`. Value: `2 years`, `1 year`. */
export const findDurations = (text: string): Array<Candidate> => {
  const out: Array<Candidate> = []
  for (const m of text.matchAll(DURATION)) {
    const g = m.groups!
    const n = g.wd ? Number(g.wd) : g.d ? Number(g.d) : numberWord(g.w ?? "")
    if (n === undefined || !Number.isFinite(n) || n <= 0 || n > 1000) continue
    const unit = g.u!.toLowerCase().replace(/s$/, "")
    const end = m.index + m[0].length
    out.push({
      kind: "duration",
      value: `${canonicalDecimal(n)} ${unit}${n === 1 ? "" : "s"}`,
      start: m.index,
      end,
      valueStart: m.index,
      valueEnd: end,
      pattern: `duration "${m[0]}"`,
      strength: 0.8,
      amount: n,
    })
  }
  return out
}

const IDENTIFIER =
  /(?<![\w/#-])#?[A-Za-z0-9][A-Za-z0-9/_.#-]*\d[A-Za-z0-9/_.#-]*|(?<![\w/#-])#?[A-Za-z0-9]*\d[A-Za-z0-9/_.#-]*/g
const ID_CUE =
  /(?:\b(no|nr|num|number|nummer|numéro|numero|id|ref|reference|code)\b|n°|nº|#)\.?\s*[:.#]?\s*$|(?:nummer|nr)\.?\s*[:.#]?\s*$/i

/** Alphanumeric tokens with digits (invoice numbers, references), stronger after "no."/"#"/"ID". */
export const findIdentifiers = (text: string, dates: ReadonlyArray<Candidate>): Array<Candidate> => {
  const out: Array<Candidate> = []
  for (const m of text.matchAll(IDENTIFIER)) {
    const token = m[0].replace(/[.\-/]+$/, "")
    if (token.length < 3 && !/[A-Za-z]/.test(token)) continue
    if (token.length < 2) continue
    const start = m.index
    if (dates.some((d) => start < d.end && start + token.length > d.start) && !/[A-Za-z]/.test(token))
      continue
    // Amounts with decimals are not identifiers.
    if (/^\d{1,3}([.,]\d{3})*[.,]\d{2}$/.test(token)) continue
    // A group of a number written in spaced groups (phone, VAT, bank numbers) is no identifier.
    if (
      /^\d+$/.test(token) &&
      (/\d[ \u00a0]$/.test(text.slice(start - 2, start)) ||
        /^[ \u00a0]\d/.test(text.slice(start + token.length, start + token.length + 2)))
    )
      continue
    const before = text.slice(Math.max(lineAt(text, start).start, start - 30), start)
    const cued = ID_CUE.test(before)
    out.push({
      kind: "identifier",
      value: token,
      start,
      end: start + token.length,
      valueStart: start,
      valueEnd: start + token.length,
      pattern: cued
        ? `identifier "${token}" after "${before.trim().split(/\s+/).slice(-2).join(" ")}"`
        : `identifier "${token}"`,
      strength: cued ? 0.85 : /[A-Za-z]/.test(token) && /\d/.test(token) ? 0.5 : 0.35,
    })
  }
  return out
}

const SUFFIXES = `${LEGAL_SUFFIX_PATTERN}(?:,?\\s(?:${LEGAL_SUFFIX_PATTERN}))*(?![A-Za-z])`
/** Space between the words of a name: a name may wrap onto the next line but never spans a blank line. */
const NAME_SPACE = "(?:[ \\t\\u00a0]*\\n[ \\t\\u00a0]*|[ \\t\\u00a0]+)"
const ORGANISATION = new RegExp(
  `(?<![A-Za-z0-9])(?:[A-Z][A-Za-z0-9&'’.\\-]*,?${NAME_SPACE}(?:(?:of|and|&|de|the|for)${NAME_SPACE})?){0,6}${SUFFIXES}`,
  "g",
)

/** Trims a matched organisation name to its first capitalised word and a trailing legal suffix. */
const cleanOrganisation = (raw: string): string => {
  let s = raw.replace(/\s+/g, " ").trim()
  s = s.replace(
    /^(?:The\s+)?(?:(?:This|That|Such|Each|Any|Said|Our|Its|Their|Whereas|Between|And|By|Of)\s+)+/i,
    "",
  )
  // A logo's text above the name it abbreviates ("Free" over "Free SAS"): one name, not the two run together.
  s = s.replace(/^((?:\S+\s+){0,2}\S+)\s+\1(?=\s)/, "$1")
  return s.replace(/,$/, "")
}

/** Organisation names ending with a legal suffix (Inc., LLC, Ltd, GmbH, S.A., Corp …). */
export const findOrganisations = (text: string): Array<Candidate> => {
  const out: Array<Candidate> = []
  for (const m of text.matchAll(ORGANISATION)) {
    const raw = m[0]
    const value = cleanOrganisation(raw)
    if (value.split(/\s+/).length < 2 || !/^[A-Z0-9]/.test(value)) continue
    const offset = raw.indexOf(value.slice(0, 8))
    const start = m.index + Math.max(0, offset)
    const end = m.index + raw.length
    out.push({
      kind: "name",
      value,
      start,
      end,
      valueStart: start,
      valueEnd: end,
      pattern: `organisation name "${value}" (legal suffix)`,
      strength: 0.7,
    })
  }
  return out
}

const PARTY_STOP =
  /\s*(?:,\s*(?:a|an|the|having|with|whose|located|organi[sz]ed|incorporated|residing|who|which|its|on behalf)\b|\(|,\s*(?:and|&)\s|\s+and\s+its\b|\s+\((?:the|hereinafter|collectively|each)\b|\s+(?:a|an)\s+(?:[A-Z][a-z]+\s+)?(?:corporation|company|limited|partnership|individual|national|bank)\b|\s+(?:having|with|whose|located|residing)\b|\s+(?:hereinafter|collectively)\b|;|:|(?<!\b[A-Z])\.\s|\n\s*\n|$)/
const NAME_START = /^\s*(?:(?:the\s+)?(?:undersigned|company|employee|executive|recipient)\s*,?\s*)?/i

/** Words that stand for a party without naming it. */
const ROLE_WORDS =
  /^(?:this|that|each|such|any|said|party|parties|company|corporation|employee|employer|executive|consultant|contractor|buyer|seller|purchaser|recipient|discloser|disclosing party|receiving party|me|you|us|we|it|him|her|them|agreement|affiliates?|bank|distributor|investor|holder|undersigned|licensor|licensee|customer|supplier|vendor|client|parent|subsidiary|representatives?)\b[.,]?$/i

const CONNECTORS = new Set([
  "the",
  "and",
  "&",
  "of",
  "de",
  "du",
  "la",
  "le",
  "for",
  "von",
  "van",
  "der",
  "den",
  "y",
])

/**
 * Not a party's name: role words only ("Buyer and the Company"), or a phrase in running text (more than
 * one lower-case word beside the connectors of names: "I have had since the commencement of …").
 */
const notAName = (name: string): boolean => {
  const words = name
    .split(/[\s,.;]+/)
    .map((w) => w.replace(/^[“"(]+|[”")]+$/g, ""))
    .filter((w) => w !== "")
  const content = words.filter((w) => !CONNECTORS.has(w.toLowerCase()))
  if (content.length === 0 || content.every((w) => ROLE_WORDS.test(w))) return true
  return content.filter((w) => /^[a-z]/.test(w)).length > 1
}

/** A logo's placeholder text ("Logo") before the name it stands over. */
const withoutLogo = (name: string): string => name.replace(/^logo\s+(?=[A-Z0-9])/i, "")

/** The name at the start of a clause of a "between X and Y" sentence. */
const leadingName = (clause: string): { readonly name: string; readonly offset: number } | undefined => {
  const lead = NAME_START.exec(clause)?.[0].length ?? 0
  const rest = clause.slice(lead)
  const restTrimmed = withoutLogo(rest.replace(/^[\s“"]+/, ""))
  const skip = lead + rest.length - restTrimmed.length
  const suffixed = new RegExp(
    `^(?:[A-Z][A-Za-z0-9&'’.\\-]*,?\\s+(?:(?:of|and|&|de|the|for)\\s+)?){0,7}?${SUFFIXES}`,
  ).exec(restTrimmed)
  let name: string
  if (suffixed) name = suffixed[0]
  else {
    const stop = PARTY_STOP.exec(restTrimmed)
    name = restTrimmed.slice(0, stop ? stop.index : restTrimmed.length)
  }
  name = collapseWhitespace(name)
    .replace(/[,;:”"]+$/, "")
    .trim()
  if (name.length < 2 || name.length > 80 || !/^[A-Z0-9]/.test(name)) return undefined
  name = name.replace(/,?\s+(?:M\.D|Ph\.D|Esq|J\.D)\.?$/, "")
  if (ROLE_WORDS.test(name.replace(/^the\s+/i, "")) || notAName(name)) return undefined
  const words = name.split(/\s+/)
  if (words.length > 9) return undefined
  return { name, offset: skip }
}

/**
 * Parties of a contract: "by and between X and Y", "between X, …, and Y", or a "PARTIES:" block.
 * Searched near the start of the document; one list candidate per pattern occurrence.
 */
export const findParties = (text: string, pageIndex: number): Array<Candidate> => {
  const out: Array<Candidate> = []
  const window = pageIndex === 0 ? text.slice(0, 6000) : text.slice(0, 1500)
  for (const m of window.matchAll(/\b(?:by\s+and\s+)?between\s*:?\s+/gi)) {
    const afterStart = m.index + m[0].length
    const sentence = sentenceAround(window, afterStart, afterStart, 900)
    const after = window.slice(afterStart, Math.max(afterStart, sentence.end))
    const first = leadingName(after)
    if (!first) continue
    // The second party follows the first " and " that is outside parentheses and starts a name.
    let depth = 0
    let second: { readonly name: string; readonly offset: number } | undefined
    let secondAt = -1
    for (let i = first.offset + first.name.length; i < after.length; i++) {
      const c = after[i]
      if (c === "(" || c === "“") depth++
      else if ((c === ")" || c === "”") && depth > 0) depth--
      else if (depth === 0 && /^,?\s+and\s+/i.test(after.slice(i, i + 7)) && /[\s,]/.test(c ?? "")) {
        const andMatch = /^,?\s+and\s+/i.exec(after.slice(i))!
        const candidate = leadingName(after.slice(i + andMatch[0].length))
        if (candidate) {
          second = candidate
          secondAt = i + andMatch[0].length + candidate.offset
          break
        }
      }
    }
    const names = [first.name]
    let end = afterStart + first.offset + first.name.length
    if (second && second.name.toLowerCase() !== first.name.toLowerCase()) {
      names.push(second.name)
      end = afterStart + secondAt + second.name.length
    }
    out.push({
      kind: "party",
      value: names.join(", "),
      start: m.index,
      end,
      valueStart: afterStart + first.offset,
      valueEnd: end,
      pattern: `"${m[0].trim()} … and …" pattern`,
      strength: names.length === 2 ? 0.95 : 0.6,
      label: "parties",
    })
  }
  const heading = /^\s*PARTIES\s*:?\s*$/m.exec(window)
  if (heading) {
    const block = window.slice(heading.index + heading[0].length, heading.index + heading[0].length + 600)
    const names: Array<string> = []
    let last = 0
    const parts = block.split(/\n\s*(?:and|AND)?\s*\n/).filter((p) => p.trim() !== "")
    for (const part of parts.slice(0, 2)) {
      const n = leadingName(part.replace(/^\s+/, ""))
      if (n) {
        const cut = n.name.replace(/\s*\(.*$/, "")
        names.push(cut)
        last = block.indexOf(cut, last) + cut.length
      }
    }
    if (names.length >= 2) {
      const start = heading.index
      out.push({
        kind: "party",
        value: names.join(", "),
        start,
        end: heading.index + heading[0].length + last,
        valueStart: heading.index + heading[0].length,
        valueEnd: heading.index + heading[0].length + last,
        pattern: `"PARTIES:" block`,
        strength: 0.9,
        label: "parties",
      })
    }
  }
  if (pageIndex === 0 && !out.some((c) => c.value.includes(", ") && c.strength >= 0.9)) {
    // Letter agreements name no "between": the first organisations of the letterhead and address block.
    const head = text.slice(0, 2500)
    const orgs = findOrganisations(head)
    const names: Array<string> = []
    let last: (typeof orgs)[number] | undefined
    for (const o of orgs) {
      const value = withoutLogo(o.value)
      if (names.some((n) => n.toLowerCase() === value.toLowerCase()) || notAName(value)) continue
      names.push(value)
      last = o
      if (names.length === 2) break
    }
    if (names.length === 2 && last) {
      const first = orgs[0]!
      out.push({
        kind: "party",
        value: names.join(", "),
        start: first.start,
        end: last.end,
        valueStart: first.start,
        valueEnd: last.end,
        pattern: "the first two organisation names of the document",
        strength: 0.5,
        label: "parties",
      })
    }
  }
  return out
}

const STATE_NAMES = [...US_STATES].sort((a, b) => b.length - a.length)
const PLACE_NAMES = [...STATE_NAMES, ...COUNTRIES].sort((a, b) => b.length - a.length)
const PLACE = `(?:${PLACE_NAMES.map(escapeRegExp).join("|")})`
const LAW_PATTERNS: ReadonlyArray<readonly [RegExp, string, number]> = [
  [
    new RegExp(
      `\\b(?:governed\\s+by|construed\\s+(?:and\\s+enforced\\s+)?(?:in\\s+accordance\\s+with|under)|interpreted\\s+(?:in\\s+accordance\\s+with|under)|subject\\s+to)[^.;]{0,120}?\\blaws?\\s+of\\s+(?:the\\s+)?(?:State\\s+of\\s+|Commonwealth\\s+of\\s+)?(${PLACE})`,
      "gi",
    ),
    "governed by the laws of",
    1,
  ],
  [
    new RegExp(`\\blaws?\\s+of\\s+the\\s+(?:State|Commonwealth)\\s+of\\s+(${PLACE})`, "gi"),
    "laws of the State of",
    0.85,
  ],
  [new RegExp(`\\b(?:internal\\s+)?laws?\\s+of\\s+(?:the\\s+)?(${PLACE})`, "gi"), "laws of", 0.75],
  [new RegExp(`\\b(${PLACE})\\s+law\\b`, "g"), "X law", 0.6],
  [
    new RegExp(`\\bcourts?\\s+(?:located\\s+)?(?:of|in)\\s+(?:the\\s+)?(?:State\\s+of\\s+)?(${PLACE})`, "gi"),
    "courts of",
    0.45,
  ],
]

const canonicalPlace = (raw: string): string => {
  const lower = raw.toLowerCase().replace(/\s+/g, " ")
  return PLACE_NAMES.find((p) => p.toLowerCase() === lower)?.replace(/^the /, "") ?? raw
}

/** Jurisdictions: "governed by the laws of the State of X", "laws of X", "X law", "courts of X". */
export const findJurisdictions = (text: string): Array<Candidate> => {
  const out: Array<Candidate> = []
  const seen = new Set<number>()
  for (const [re, name, strength] of LAW_PATTERNS) {
    for (const m of text.matchAll(re)) {
      const place = m[1]!
      const valueStart = m.index + m[0].lastIndexOf(place)
      if (seen.has(valueStart)) continue
      // Case-insensitive patterns must still meet a capitalised place name.
      if (!/^[A-Z]/.test(place)) continue
      seen.add(valueStart)
      out.push({
        kind: "jurisdiction",
        value: canonicalPlace(place),
        start: m.index,
        end: valueStart + place.length,
        valueStart,
        valueEnd: valueStart + place.length,
        pattern: `"${name}" pattern`,
        strength,
      })
    }
  }
  return out
}

const CURRENCY_ANYWHERE = new RegExp(
  `(?<![A-Za-z])(${[...CURRENCY_CODES, ...CURRENCY_SYMBOLS.map(([s]) => s).filter((s) => !/^[a-z]/i.test(s))].map(escapeRegExp).join("|")})(?![A-Za-z])`,
  "g",
)
/** Currency words ("euros", "US dollars"), anywhere. */
const CURRENCY_WORDS = new RegExp(
  `(?<![\\p{L}])(${CURRENCY_SYMBOLS.map(([s]) => s)
    .filter((s) => /^[a-z]{4,}$/.test(s))
    .join("|")})(?![\\p{L}])`,
  "giu",
)
/** Abbreviations made of letters ("Rs", "kr", "Fr.") count only next to an amount. */
const LETTER_SYMBOLS = CURRENCY_SYMBOLS.map(([s]) => s).filter(
  (s) => /^[A-Za-z]/.test(s) && !/^[a-z]{4,}$/.test(s) && !CURRENCY_CODES.includes(s),
)
const LETTER_SYMBOL_BEFORE = new RegExp(
  `(?<![\\p{L}])(${LETTER_SYMBOLS.map(escapeRegExp).join("|")})(?![\\p{L}])(?=[ \\u00a0]?[-−]?[ \\u00a0]?\\d)`,
  "gu",
)
const AMOUNT_AFTER = /^[ \u00a0]?[-−]?[ \u00a0]?\d/
const AMOUNT_BEFORE = /\d[ \u00a0]?$/
/** Currencies written with a dollar sign, which a "$" means when the page states one of their codes. */
const DOLLAR_CODES = ["USD", "CAD", "AUD", "NZD", "SGD", "HKD"]

/**
 * Currency codes, symbols and words, reported as ISO codes. A symbol or code written against an amount
 * is stronger; "$" means the dollar whose code the page states (else USD).
 */
export const findCurrencies = (text: string): Array<Candidate> => {
  const out: Array<Candidate> = []
  const stated = DOLLAR_CODES.filter(
    (c) => c !== "USD" && new RegExp(`(?<![A-Za-z])${c}(?![A-Za-z])`).test(text),
  )
  const dollar = stated.length === 1 && !/(?<![A-Za-z])USD(?![A-Za-z])|US\$/.test(text) ? stated[0]! : "USD"
  const push = (token: string, at: number, code: string, base: number) => {
    const end = at + token.length
    const attached =
      AMOUNT_AFTER.test(text.slice(end, end + 4)) || AMOUNT_BEFORE.test(text.slice(Math.max(0, at - 2), at))
    out.push({
      kind: "currency",
      value: code,
      start: at,
      end,
      valueStart: at,
      valueEnd: end,
      pattern: attached ? `currency "${token}" written with an amount` : `currency "${token}"`,
      strength: attached ? 0.9 : base,
    })
  }
  for (const m of text.matchAll(CURRENCY_ANYWHERE)) {
    const token = m[1]!
    const code =
      token === "$" ? dollar : (CURRENCY_SYMBOLS.find(([s]) => s === token)?.[1] ?? token.toUpperCase())
    push(token, m.index, code, /^[A-Z]{3}$/.test(token) ? 0.8 : 0.7)
  }
  for (const m of text.matchAll(LETTER_SYMBOL_BEFORE)) {
    const token = m[1]!
    push(token, m.index, CURRENCY_SYMBOLS.find(([s]) => s === token)![1], 0.7)
  }
  for (const m of text.matchAll(CURRENCY_WORDS)) {
    const token = m[1]!
    const code = CURRENCY_SYMBOLS.find(([s]) => s === token.toLowerCase())![1]
    push(token, m.index, code === "USD" ? dollar : code, 0.6)
  }
  return out.sort((a, b) => a.start - b.start)
}

const LABELLED =
  /^[ \t]*([A-Za-z#][A-Za-z0-9 #&/()'’.-]{0,48}?)[ \t]*(?::|\.{3,}|…+|\t+|[ ]{2,})[ \t]*([^\s].{0,120}?)[ \t]*$/gm

/** `Label: value`, `Label ..... value`, `Label    value` rows, and a short label line above a value line. */
export const findLabelled = (text: string): Array<Candidate> => {
  const out: Array<Candidate> = []
  for (const m of text.matchAll(LABELLED)) {
    const label = m[1]!.trim()
    const value = m[2]!.trim()
    if (label.length < 2 || value.length === 0) continue
    const valueStart = m.index + m[0].lastIndexOf(m[2]!.trimEnd())
    out.push({
      kind: "text",
      value: collapseWhitespace(value),
      start: m.index + m[0].indexOf(label),
      end: valueStart + value.length,
      valueStart,
      valueEnd: valueStart + value.length,
      pattern: `labelled value "${label}"`,
      strength: 0.6,
      label,
    })
  }
  // A label alone on its line (ending with ":"), the value on the next line.
  for (const m of text.matchAll(
    /^[ \t]*([A-Za-z#][A-Za-z0-9 #&/()'’.-]{1,48}):[ \t]*\n[ \t]*([^\n]{1,120})$/gm,
  )) {
    const label = m[1]!.trim()
    const value = m[2]!.trim()
    const valueStart = m.index + m[0].lastIndexOf(value)
    out.push({
      kind: "text",
      value: collapseWhitespace(value),
      start: m.index + m[0].indexOf(label),
      end: valueStart + value.length,
      valueStart,
      valueEnd: valueStart + value.length,
      pattern: `labelled value "${label}" (next line)`,
      strength: 0.6,
      label,
    })
  }
  return out
}

export interface PageAnalysis {
  readonly dates: ReadonlyArray<Candidate>
  readonly numbers: ReadonlyArray<Candidate>
  readonly durations: ReadonlyArray<Candidate>
  readonly identifiers: ReadonlyArray<Candidate>
  readonly organisations: ReadonlyArray<Candidate>
  readonly parties: ReadonlyArray<Candidate>
  readonly jurisdictions: ReadonlyArray<Candidate>
  readonly currencies: ReadonlyArray<Candidate>
  readonly labelled: ReadonlyArray<Candidate>
}

const cache = new Map<string, PageAnalysis>()
const CACHE_SIZE = 64

/** Every candidate of one page (cached: the same page is analysed once for all agents). */
export const analysePage = (text: string, pageIndex: number, referenceDate: string): PageAnalysis => {
  const key = `${referenceDate}\u0000${pageIndex === 0 ? 0 : 1}\u0000${text}`
  const hit = cache.get(key)
  if (hit) {
    cache.delete(key)
    cache.set(key, hit)
    return hit
  }
  const dates = findDates(text, referenceDate)
  const analysis: PageAnalysis = {
    dates,
    numbers: findNumbers(text, dates),
    durations: findDurations(text),
    identifiers: findIdentifiers(text, dates),
    organisations: findOrganisations(text),
    parties: findParties(text, pageIndex),
    jurisdictions: findJurisdictions(text),
    currencies: findCurrencies(text),
    labelled: findLabelled(text),
  }
  cache.set(key, analysis)
  if (cache.size > CACHE_SIZE) cache.delete(cache.keys().next().value!)
  return analysis
}
