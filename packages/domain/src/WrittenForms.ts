/**
 * Written forms: the ways a document states a value that an answer gives normalised. A date `1999-02-06`
 * is stated as "6th of February, 1999", "February 6, 1999", "the sixth day of February 1999" or
 * "06/02/1999" (read day-first or month-first by the document's own dates); a number `1500000` as
 * "1,500,000", "1.500.000", "$1.5 million" or "one million five hundred thousand"; a percentage `12%` as
 * "twelve per cent"; a duration `2 years` as "two (2) years" or "a two-year term", and as "24 months" only
 * when the agent asks for months (a conversion it asked for, not a value the document states).
 *
 * `FORMS` is the one table of these forms; every provider's grounding check (`Grounding.valueInPassage`)
 * and the table-cell citation read it. Each form is a pattern and a reader that turns a match into what it
 * states.
 */
import { parseNumber } from "./Values.ts"

// ---------------------------------------------------------------------------------------------------------
// What text states

export type DateOrder = "day-first" | "month-first"
export type DurationUnit = "day" | "week" | "month" | "year"

export type Stated =
  | { readonly kind: "date"; readonly ordinal: number }
  | {
      readonly kind: "number"
      readonly value: number
      /** A currency code (`USD`, `EUR`…) or a unit (`%`, `kg`…), when the text names one. */
      readonly unit?: string | undefined
    }
  | { readonly kind: "duration"; readonly amount: number; readonly unit: DurationUnit }

/** A stated value with where it is in the text. */
export type Found = Stated & { readonly start: number; readonly end: number }

export interface ReadOptions {
  /** How the document writes numeric dates; both readings of an ambiguous one when unknown. */
  readonly dateOrder?: DateOrder | undefined
}

// ---------------------------------------------------------------------------------------------------------
// Words

/** The English number words up to a hundred (the local extractor reads durations with them too). */
export const NUMBER_WORDS: Readonly<Record<string, number>> = {
  zero: 0,
  one: 1,
  two: 2,
  three: 3,
  four: 4,
  five: 5,
  six: 6,
  seven: 7,
  eight: 8,
  nine: 9,
  ten: 10,
  eleven: 11,
  twelve: 12,
  thirteen: 13,
  fourteen: 14,
  fifteen: 15,
  sixteen: 16,
  seventeen: 17,
  eighteen: 18,
  nineteen: 19,
  twenty: 20,
  thirty: 30,
  forty: 40,
  fifty: 50,
  sixty: 60,
  seventy: 70,
  eighty: 80,
  ninety: 90,
  hundred: 100,
}
const { hundred, ...unitWords } = NUMBER_WORDS
/** Words of a number below a hundred ("a year" is one year). */
const UNITS: Readonly<Record<string, number>> = { ...unitWords, a: 1, an: 1 }
const SCALE_WORDS: Readonly<Record<string, number>> = {
  hundred: hundred!,
  thousand: 1e3,
  million: 1e6,
  billion: 1e9,
  trillion: 1e12,
  dozen: 12,
}
const ORDINAL_WORDS: Readonly<Record<string, number>> = {
  first: 1,
  second: 2,
  third: 3,
  fourth: 4,
  fifth: 5,
  sixth: 6,
  seventh: 7,
  eighth: 8,
  ninth: 9,
  tenth: 10,
  eleventh: 11,
  twelfth: 12,
  thirteenth: 13,
  fourteenth: 14,
  fifteenth: 15,
  sixteenth: 16,
  seventeenth: 17,
  eighteenth: 18,
  nineteenth: 19,
  twentieth: 20,
  thirtieth: 30,
}

const NUMBER_WORD = `(?:${[...Object.keys(UNITS), ...Object.keys(SCALE_WORDS)]
  .filter((w) => w !== "a" && w !== "an")
  .join("|")})`
/** A run of number words: `twenty-four`, `one hundred and five thousand`, `two million`. */
const NUMBER_PHRASE = `${NUMBER_WORD}(?:(?:[\\s-]+|\\s+and\\s+)${NUMBER_WORD})*`
const ORDINAL_WORD = `(?:(?:twenty|thirty)[\\s-](?:${Object.keys(ORDINAL_WORDS).slice(0, 9).join("|")})|${Object.keys(
  ORDINAL_WORDS,
).join("|")})`

/** The number a run of number words states (`one hundred and five thousand` → 105000), or undefined. */
export const numberFromWords = (text: string): number | undefined => {
  const words = text
    .toLowerCase()
    .split(/[\s-]+/)
    .filter((w) => w !== "" && w !== "and")
  if (words.length === 0) return undefined
  let total = 0
  let group = 0
  for (const w of words) {
    const unit = UNITS[w]
    const scale = SCALE_WORDS[w]
    if (unit !== undefined) group += unit
    else if (scale === 100 || scale === 12) group = Math.max(group, 1) * scale
    else if (scale !== undefined) {
      total += (group === 0 ? 1 : group) * scale
      group = 0
    } else return undefined
  }
  return total + group
}

const ordinalFromWords = (text: string): number | undefined => {
  const parts = text.toLowerCase().split(/[\s-]+/)
  if (parts.length === 2) {
    const tens = UNITS[parts[0]!]
    const ones = ORDINAL_WORDS[parts[1]!]
    return tens === undefined || ones === undefined ? undefined : tens + ones
  }
  return ORDINAL_WORDS[parts[0]!]
}

// ---------------------------------------------------------------------------------------------------------
// Dates

const MONTH_NAMES = [
  "jan(?:uary)?",
  "feb(?:ruary)?",
  "mar(?:ch)?",
  "apr(?:il)?",
  "may",
  "june?",
  "july?",
  "aug(?:ust)?",
  "sep(?:t(?:ember)?)?",
  "oct(?:ober)?",
  "nov(?:ember)?",
  "dec(?:ember)?",
]
const MONTH = `(?:${MONTH_NAMES.join("|")})`
const monthOf = (name: string): number => {
  const lower = name.toLowerCase()
  return MONTH_NAMES.findIndex((m) => new RegExp(`^(?:${m})$`).test(lower)) + 1
}

const DAYS_IN_MONTH = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]

/** `yyyymmdd` of a real calendar date, else undefined. */
export const dateOrdinal = (year: number, month: number, day: number): number | undefined => {
  if (!Number.isInteger(year) || year < 1000 || year > 9999) return undefined
  if (month < 1 || month > 12 || day < 1 || day > DAYS_IN_MONTH[month - 1]!) return undefined
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0
  if (month === 2 && day === 29 && !leap) return undefined
  return year * 10000 + month * 100 + day
}

const fullYear = (text: string): number => {
  const y = Number(text)
  return text.length === 2 ? (y < 50 ? 2000 + y : 1900 + y) : y
}

const DAY_NUMBER = "(\\d{1,2})(?:\\s*(?:st|nd|rd|th))?"
const DAY = `(?:${DAY_NUMBER}|(${ORDINAL_WORD}))`
const dayOf = (digits: string | undefined, word: string | undefined): number =>
  digits !== undefined ? Number(digits) : (ordinalFromWords(word ?? "") ?? 0)

// ---------------------------------------------------------------------------------------------------------
// Numbers, currencies, units

/** Currency signs and names, each with its code. */
const CURRENCIES: ReadonlyArray<readonly [string, string]> = [
  ["us\\$|usd|\\$|dollars?|u\\.s\\. dollars?", "USD"],
  ["eur|€|euros?", "EUR"],
  ["gbp|£|pounds? sterling|pounds?", "GBP"],
  ["jpy|¥|yen", "JPY"],
  ["chf|swiss francs?", "CHF"],
  ["cad|c\\$|canadian dollars?", "CAD"],
  ["inr|₹|rupees?", "INR"],
]
/** Units and their written names, each with one canonical spelling. */
const UNIT_NAMES: ReadonlyArray<readonly [string, string]> = [
  ["%|per ?cent|percent", "%"],
  ["kg|kilograms?|kilos?", "kg"],
  ["g|grams?", "g"],
  ["t|tonnes?|metric tons?", "t"],
  ["lbs?|pounds? weight", "lb"],
  ["km|kilomet(?:er|re)s?", "km"],
  ["m|met(?:er|re)s?", "m"],
  ["cm|centimet(?:er|re)s?", "cm"],
  ["mm|millimet(?:er|re)s?", "mm"],
  ["mi|miles?", "mi"],
  ["ft|feet|foot", "ft"],
  ["sq\\.? ?ft|square feet|square foot", "sq ft"],
  ["m2|m²|sq\\.? ?m|square met(?:er|re)s?", "m2"],
  ["l|lit(?:er|re)s?", "l"],
  ["ml|millilit(?:er|re)s?", "ml"],
  ["kwh|kilowatt[- ]hours?", "kWh"],
  ["shares?", "shares"],
  ["hours?|hrs?", "hour"],
]
const codeOf = (table: ReadonlyArray<readonly [string, string]>, text: string): string | undefined =>
  table.find(([pattern]) => new RegExp(`^(?:${pattern})$`, "i").test(text.trim()))?.[1]
const alternatives = (table: ReadonlyArray<readonly [string, string]>) => table.map(([p]) => p).join("|")

const CURRENCY = `(?:${alternatives(CURRENCIES)})`
const UNIT = `(?:${alternatives(UNIT_NAMES)})`
const SCALE = "(?:billion|million|mio|thousand)"
/** Scale abbreviations, written right after the digits (`$2m`, `5k`, `1.2bn`). */
const SHORT_SCALE = "(?:bn|mn|m|k)"
const scaleOf = (text: string | undefined): number => {
  if (text === undefined) return 1
  const t = text.toLowerCase()
  return t.startsWith("b") ? 1e9 : t === "thousand" || t === "k" ? 1e3 : 1e6
}
/** Digits with either grouping convention (`1,234.5`, `1.234,5`, `1 234`, `1'234`). */
const NUMERAL = "\\d{1,3}(?:[ \\u00a0\\u202f'’](?=\\d{3}\\b)\\d{3})+(?:[.,]\\d+)?|\\d[\\d.,'’]*\\d|\\d"

// ---------------------------------------------------------------------------------------------------------
// Durations

const DURATION_UNIT = "(?:business\\s+|calendar\\s+)?(day|week|month|year)s?"
const MONTHS_IN: Readonly<Record<DurationUnit, number | undefined>> = {
  day: undefined,
  week: undefined,
  month: 1,
  year: 12,
}
const DAYS_IN: Readonly<Record<DurationUnit, number | undefined>> = {
  day: 1,
  week: 7,
  month: undefined,
  year: undefined,
}

/** The amount of a duration in another unit, when one converts exactly into the other. */
export const convertDuration = (amount: number, from: DurationUnit, to: DurationUnit): number | undefined => {
  if (from === to) return amount
  const byMonths = [MONTHS_IN[from], MONTHS_IN[to]]
  if (byMonths[0] !== undefined && byMonths[1] !== undefined) return (amount * byMonths[0]) / byMonths[1]
  const byDays = [DAYS_IN[from], DAYS_IN[to]]
  if (byDays[0] !== undefined && byDays[1] !== undefined) return (amount * byDays[0]) / byDays[1]
  return undefined
}

// ---------------------------------------------------------------------------------------------------------
// The table

interface Form {
  /** What the form looks like (documentation and tests). */
  readonly example: string
  readonly pattern: RegExp
  readonly read: (m: RegExpExecArray, options: ReadOptions) => ReadonlyArray<Stated>
}

const date = (year: number, month: number, day: number): Array<Stated> => {
  const ordinal = dateOrdinal(year, month, day)
  return ordinal === undefined ? [] : [{ kind: "date", ordinal }]
}

const numericDate = (first: string, second: string, year: string, options: ReadOptions): Array<Stated> => {
  const a = Number(first)
  const b = Number(second)
  const y = fullYear(year)
  if (a > 12 || (b <= 12 && options.dateOrder === "day-first")) return date(y, b, a)
  if (b > 12 || options.dateOrder === "month-first") return date(y, a, b)
  // Ambiguous and no evidence: both readings.
  return [...date(y, a, b), ...date(y, b, a)]
}

const numberRead = (digits: string | undefined, words: string | undefined): number | undefined => {
  if (digits !== undefined) return parseNumber(digits.replace(/’/g, "'"))
  return words === undefined ? undefined : numberFromWords(words)
}

const B = "(?<![\\p{L}\\p{N}])"
const E = "(?![\\p{L}\\p{N}])"

export const FORMS: ReadonlyArray<Form> = [
  {
    example: "1999-02-06, 1999/02/06, 1999.02.06",
    pattern: new RegExp(`${B}(\\d{4})([-/.])(\\d{1,2})\\2(\\d{1,2})${E}`, "gu"),
    read: (m) => date(Number(m[1]), Number(m[3]), Number(m[4])),
  },
  {
    example: "06/02/1999, 6-2-99, 6.2.1999 (day or month first by the document's dates)",
    pattern: new RegExp(`${B}(\\d{1,2})([-/.])(\\d{1,2})\\2(\\d{4}|\\d{2})${E}`, "gu"),
    read: (m, o) => numericDate(m[1]!, m[3]!, m[4]!, o),
  },
  {
    example: "February 6, 1999; Feb. 6th 1999; February sixth, 1999",
    pattern: new RegExp(`${B}(${MONTH})\\.?\\s+${DAY},?\\s+(\\d{4})${E}`, "giu"),
    read: (m) => date(Number(m[4]), monthOf(m[1]!), dayOf(m[2], m[3])),
  },
  {
    example: "6 February 1999; 6th of February, 1999; the sixth day of February, 1999; 6-Feb-99",
    pattern: new RegExp(
      `${B}${DAY}(?:\\s+day)?(?:\\s+of|\\s*-)?\\s*(${MONTH})\\.?(?:,?\\s+|-)(\\d{4}|(?<=-)\\d{2})${E}`,
      "giu",
    ),
    read: (m) => date(fullYear(m[4]!), monthOf(m[3]!), dayOf(m[1], m[2])),
  },
  {
    example: "two (2) years; 24 months; a one-year term; eighteen months",
    pattern: new RegExp(
      `${B}(?:(${NUMBER_PHRASE}|an?)\\s*(?:\\((\\d+(?:\\.\\d+)?)\\))?|(\\d+(?:\\.\\d+)?)\\s*(?:\\((?:${NUMBER_PHRASE})\\))?)[\\s-]*${DURATION_UNIT}${E}`,
      "giu",
    ),
    read: (m) => {
      const amount = m[2] !== undefined ? Number(m[2]) : (numberRead(m[3], m[1]) ?? Number.NaN)
      if (!Number.isFinite(amount) || amount <= 0) return []
      return [{ kind: "duration", amount, unit: m[4]!.toLowerCase() as DurationUnit }]
    },
  },
  {
    example: "$1,500,000; USD 1.5 million; 1.500.000 €; (250); -7; 12%; 5 kg; 1,000 shares; $2m",
    pattern: new RegExp(
      `${B}(${CURRENCY})?\\s?(\\()?([-−])?(${NUMERAL})(\\))?(?:\\s?(${SCALE})${E}|(${SHORT_SCALE})${E})?(?:\\s?(${CURRENCY}|${UNIT})${E})?`,
      "giu",
    ),
    read: (m) => {
      const n = parseNumber(m[4]!.replace(/’/g, "'"))
      if (n === undefined) return []
      const negative = (m[2] !== undefined && m[5] !== undefined) !== (m[3] !== undefined)
      const signed = negative ? -n : n
      const after = m[8] === undefined ? undefined : (codeOf(CURRENCIES, m[8]) ?? codeOf(UNIT_NAMES, m[8]))
      const unit = m[1] !== undefined ? codeOf(CURRENCIES, m[1]) : after
      if (m[7] === undefined) return [{ kind: "number", value: signed * scaleOf(m[6]), unit }]
      // `5m` is five million after a currency, else five million or five metres.
      const scaled: Stated = { kind: "number", value: signed * scaleOf(m[7]), unit }
      return m[1] !== undefined || m[7].toLowerCase() !== "m"
        ? [scaled]
        : [scaled, { kind: "number", value: signed, unit: "m" }]
    },
  },
  {
    example: "one million five hundred thousand dollars; twelve per cent; twenty-four",
    pattern: new RegExp(`${B}(${NUMBER_PHRASE})(?:\\s+(${CURRENCY}|${UNIT})${E})?`, "giu"),
    read: (m) => {
      const value = numberFromWords(m[1]!)
      if (value === undefined) return []
      const unit = m[2] === undefined ? undefined : (codeOf(CURRENCIES, m[2]) ?? codeOf(UNIT_NAMES, m[2]))
      return [{ kind: "number", value, unit }]
    },
  },
]

/** Everything the text states in any of the forms, in the order found. */
export const statedIn = (text: string, options: ReadOptions = {}): Array<Found> => {
  const found: Array<Found> = []
  for (const form of FORMS) {
    const pattern = new RegExp(form.pattern.source, form.pattern.flags)
    for (let m = pattern.exec(text); m !== null; m = pattern.exec(text)) {
      if (m[0] === "") {
        pattern.lastIndex += 1
        continue
      }
      for (const s of form.read(m, options)) found.push({ ...s, start: m.index, end: m.index + m[0].length })
    }
  }
  return found
}

/**
 * What a normalised value states when the whole of it is one written form (`1999-02-06`, `2 years`,
 * `USD 1,500`, `12%`); undefined for any other text.
 */
export const readValue = (value: string, options: ReadOptions = {}): Stated | undefined => {
  const text = value.trim()
  const whole = statedIn(text, options).filter((f) => f.start === 0 && f.end === text.length)
  const found = whole.find((f) => f.kind === "date") ?? whole.find((f) => f.kind === "duration") ?? whole[0]
  if (found === undefined) return undefined
  const { start: _start, end: _end, ...stated } = found
  return stated
}

// ---------------------------------------------------------------------------------------------------------
// Evidence and asked conversions

const NAMED_DAY_FIRST = new RegExp(
  `${B}\\d{1,2}(?:st|nd|rd|th)?\\s+(?:day\\s+)?(?:of\\s+)?${MONTH}${E}`,
  "giu",
)
const NAMED_MONTH_FIRST = new RegExp(`${B}${MONTH}\\.?\\s+\\d{1,2}(?:st|nd|rd|th)?,?\\s+\\d{4}`, "giu")

/**
 * How the document writes numeric dates, from its unambiguous ones (`25/12/2020` is day-first,
 * `12/25/2020` month-first), else from how it writes dates with month names (`6 February` against
 * `February 6`); undefined when it says nothing either way.
 */
export const dateOrderOf = (text: string): DateOrder | undefined => {
  let dayFirst = 0
  let monthFirst = 0
  for (const m of text.matchAll(/(?<!\d)(\d{1,2})[-/.](\d{1,2})[-/.](?:\d{4}|\d{2})(?!\d)/g)) {
    const a = Number(m[1])
    const b = Number(m[2])
    if (a > 12 && b <= 12) dayFirst += 1
    if (b > 12 && a <= 12) monthFirst += 1
  }
  if (dayFirst !== monthFirst) return dayFirst > monthFirst ? "day-first" : "month-first"
  const named = { day: 0, month: 0 }
  for (const _ of text.matchAll(NAMED_DAY_FIRST)) named.day += 1
  for (const _ of text.matchAll(NAMED_MONTH_FIRST)) named.month += 1
  if (named.day === named.month) return undefined
  return named.day > named.month ? "day-first" : "month-first"
}

/**
 * The duration unit an agent asks its values in (its `unit`, or "in months", "number of years", "as days"
 * in its instructions): a value in that unit is grounded by a passage stating the same duration in
 * another unit. Undefined when it asks for none.
 */
export const askedDurationUnit = (agent: {
  readonly unit?: string | undefined
  readonly instructions?: string | undefined
}): DurationUnit | undefined => {
  const fromUnit = /^\s*(day|week|month|year)s?\s*$/i.exec(agent.unit ?? "")?.[1]
  if (fromUnit !== undefined) return fromUnit.toLowerCase() as DurationUnit
  const asked =
    /\b(?:in|as|into|number of|count of|expressed in|converted to)\s+(?:calendar\s+)?(day|week|month|year)s\b/i.exec(
      agent.instructions ?? "",
    )?.[1]
  return asked === undefined ? undefined : (asked.toLowerCase() as DurationUnit)
}

// ---------------------------------------------------------------------------------------------------------
// Agreement

const sameNumber = (a: number, b: number): boolean =>
  Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a), Math.abs(b))

/** Units agree when either is not named or both name the same one. */
const sameUnit = (a: string | undefined, b: string | undefined) =>
  a === undefined || b === undefined || a === b

export interface AgreeOptions extends ReadOptions {
  /** The duration unit the agent asks for (`askedDurationUnit`): conversions into it count. */
  readonly askedUnit?: DurationUnit | undefined
}

/** Whether something the passage states is the value: the same date, number or duration. */
export const agrees = (value: Stated, stated: Stated, options: AgreeOptions = {}): boolean => {
  if (value.kind === "date") return stated.kind === "date" && stated.ordinal === value.ordinal
  if (value.kind === "duration") {
    if (stated.kind !== "duration") return false
    if (stated.unit === value.unit) return sameNumber(stated.amount, value.amount)
    if (options.askedUnit !== value.unit) return false
    const converted = convertDuration(stated.amount, stated.unit, value.unit)
    return converted !== undefined && sameNumber(converted, value.amount)
  }
  if (stated.kind === "number")
    return (
      sameUnit(value.unit, stated.unit) &&
      (sameNumber(stated.value, value.value) ||
        // 12% is also 0.12, and a value given as 0.12 may be stated as 12%.
        (stated.unit === "%" && value.unit === undefined && sameNumber(stated.value / 100, value.value)))
    )
  if (stated.kind === "duration" && value.unit === undefined) {
    if (sameNumber(stated.amount, value.value)) return true
    if (options.askedUnit === undefined) return false
    const converted = convertDuration(stated.amount, stated.unit, options.askedUnit)
    return converted !== undefined && sameNumber(converted, value.value)
  }
  return false
}

/** Whether the passage states the value in any written form. */
export const passageStates = (value: Stated, passage: string, options: AgreeOptions = {}): boolean =>
  statedIn(passage, options).some((s) => agrees(value, s, options))
