/**
 * Dates: "the 5th day of May, 2021", every form chrono-node reads (day-first or month-first by the page's own
 * evidence), and German, French and Dutch month names.
 */
import { createRequire } from "node:module"
import type * as Chrono from "chrono-node"
import type { Candidate } from "./Candidates.ts"
import { LOCALE_MONTHS, MONTH_PATTERN, monthNumber } from "./Lexicon.ts"

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
  // Dotted dates, European money formats and the currencies and taxes of countries that write the day first
  // suggest day-first.
  return /\b\d{1,2}\.\d{1,2}\.\d{4}\b/.test(text) ||
    /\d,\d{2}\s?€|€\s?\d+,\d{2}\b/.test(text) ||
    DAY_FIRST_LOCALE.test(text)
    ? "dmy"
    : "mdy"
}

/** Currencies and sales taxes of countries that write the day first (the pound, the euro, the ringgit, GST, VAT). */
const DAY_FIRST_LOCALE =
  /(?<![A-Za-z])(?:RM|MYR|EUR|GBP|INR|SGD|AUD|NZD|GST|VAT|TVA|BTW|MwSt|IVA)(?![A-Za-z])|[€£₹]/

/** Kinds of dates an agent may name that are not the date of the document itself. */
const OTHER_DATE =
  /\b(effective|commencement|due|expir\w*|birth|delivery|ship\w*|order|start|end|termination|payment|deadline|renewal|signature|signed|closing)\b/

/** An agent that asks for the date of a document (a receipt's, a letter's), not for a due or effective date. */
export const asksDocumentDate = (cueText: string): boolean =>
  /\bdate\b/.test(cueText) && !OTHER_DATE.test(cueText)

/** A time of day after a date on its line (`19:29`, `Time: 11:12:56AM`): the moment a receipt was printed. */
const TIME_AFTER = /^[^\n]{0,12}?\b\d{1,2}:\d{2}\b/

/**
 * The date of a page: its first date stated in full (day, month and year) with a time of day after it — a
 * receipt prints its transaction's date and time on one line, its other dates (opening hours, validity,
 * order dates) without — else its first date stated in full, which dates a letter or a note.
 */
export const firstFullDate = (text: string, dates: ReadonlyArray<Candidate>): Candidate | undefined => {
  if (documentDates.has(dates)) return documentDates.get(dates)
  let first: Candidate | undefined
  let timed: Candidate | undefined
  for (const d of dates) {
    if (d.relative || d.strength < 0.85) continue
    if (first === undefined || d.start < first.start) first = d
    const withTime =
      TIME_AFTER.test(text.slice(d.valueStart, d.valueEnd)) || TIME_AFTER.test(text.slice(d.end))
    if (withTime && (timed === undefined || d.start < timed.start)) timed = d
  }
  documentDates.set(dates, timed ?? first)
  return timed ?? first
}

const documentDates = new WeakMap<ReadonlyArray<Candidate>, Candidate | undefined>()

const DAY_OF_MONTH = new RegExp(
  `\\b(\\d{1,2})(?:st|nd|rd|th)?\\s+day\\s+of\\s+(${MONTH_PATTERN})\\s*,?\\s*(?:in\\s+the\\s+year\\s+)?(\\d{4})\\b`,
  "gi",
)

/** Day, month and year in figures with one separator (`22/04/2018`, `24-01-16`, `2016-07-31`), not inside a code. */
const NUMERIC_DATE =
  /(?<![\dA-Za-z])(?:(\d{1,2})([/.-])(\d{1,2})\2(\d{4}|\d{2})|(\d{4})([/.-])(\d{1,2})\6(\d{1,2}))(?!\d)/g
const MONTH_NAME = new RegExp(`\\b${MONTH_PATTERN}`, "i")

/**
 * Whether what chrono read at `[start, end)` is written as a date: a month's name, or figures in one of the
 * numeric forms. Chrono also reads opening hours (`- 2230 HRS`) and parts of article codes (`12/3-32`).
 */
const writtenAsDate = (text: string, start: number, end: number): boolean => {
  const written = text.slice(start, end)
  if (MONTH_NAME.test(written)) return true
  for (const m of text.slice(Math.max(0, start - 1), end).matchAll(NUMERIC_DATE)) if (m[0] !== "") return true
  return false
}

/** Numeric dates chrono does not see, such as one run into the next word (`21/05/2018Time: 11:12`). */
const numericDates = (
  line: string,
  order: "dmy" | "mdy",
): Array<{ index: number; text: string; iso: string }> => {
  const out: Array<{ index: number; text: string; iso: string }> = []
  for (const m of line.matchAll(NUMERIC_DATE)) {
    const year = (y: string) => (y.length === 2 ? 2000 + Number(y) : Number(y))
    const [y, mo, d] =
      m[5] !== undefined
        ? [Number(m[5]), Number(m[7]), Number(m[8])]
        : order === "dmy"
          ? [year(m[4]!), Number(m[3]), Number(m[1])]
          : [year(m[4]!), Number(m[1]), Number(m[3])]
    if (validDate(y, mo, d)) out.push({ index: m.index, text: m[0], iso: isoDate(y, mo, d) })
  }
  return out
}

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
  const order = dateOrder(text)
  const parser = order === "dmy" ? chrono().en.GB : chrono().casual
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
      if (!writtenAsDate(text, s, e)) continue
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
    for (const d of numericDates(line, order)) {
      const s = lineStart + d.index
      const e = s + d.text.length
      out.push({
        kind: "date",
        value: d.iso,
        start: s,
        end: e,
        valueStart: s,
        valueEnd: e,
        pattern: `date "${d.text}"`,
        strength: 0.85,
      })
      taken.push([s, e])
    }
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
