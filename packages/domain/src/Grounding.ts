/**
 * Grounding: whether an answer's verbatim passage is really on the page it cites, and whether its value is
 * really stated in that passage. An answer that is not grounded is never cited as if it were.
 *
 * The passage is looked for in the page text after both are normalised the same way (Unicode compatibility
 * forms, case, whitespace runs, curly and straight quotes, dashes, soft hyphens and words hyphenated at line
 * ends); a passage of 12 or more characters may differ from the page by one edit per 12 characters (OCR
 * noise, a model's small slips). The approximate search is Myers' bit-parallel algorithm from the
 * `approx-string-match` package. What is returned as the grounded passage is always the page's own text.
 */
import search from "approx-string-match"
import { parseDateOrdinal } from "./Resolution.ts"
import { parseNumber } from "./Values.ts"
import {
  type AgreeOptions,
  type DateOrder,
  type DurationUnit,
  passageStates,
  readValue,
  statedIn,
} from "./WrittenForms.ts"

export interface GroundingInput {
  readonly valueType: "string" | "number" | "bool" | "date" | "datetime"
  /** The normalised value (canonical decimal for numbers, ISO dates). */
  readonly value: string
  /** The model's verbatim passage. */
  readonly passage: string
  /** The cited page's full text. */
  readonly pageText: string
  /** The cited page's number, for the reason given when the passage is not on it. */
  readonly pageNumber?: number | undefined
  /** How the document writes numeric dates (`WrittenForms.dateOrderOf` of its text), when it shows it. */
  readonly dateOrder?: DateOrder | undefined
  /** The duration unit the agent asks its values in (`WrittenForms.askedDurationUnit`): conversions count. */
  readonly askedUnit?: DurationUnit | undefined
}

export type Grounding =
  | {
      readonly grounded: true
      /** The passage as found on the page (the page's exact text). */
      readonly passage: string
    }
  | {
      readonly grounded: false
      readonly reason: "passage not on page" | "value not in passage"
      /** One line, usable in a prompt that asks again. */
      readonly detail: string
    }

/** Passages shorter than this must be on the page exactly (after normalisation). */
export const APPROXIMATE_FROM_CHARACTERS = 12
/** One edit tolerated per this many characters of a passage. */
export const CHARACTERS_PER_EDIT = 12

// ---------------------------------------------------------------------------------------------------------
// Normalisation with a map back to the original text

const QUOTES: Readonly<Record<string, string>> = {
  "\u2018": "'",
  "\u2019": "'",
  "\u201a": "'",
  "\u201b": "'",
  "\u2032": "'",
  "`": "'",
  "\u00b4": "'",
  "\u201c": '"',
  "\u201d": '"',
  "\u201e": '"',
  "\u201f": '"',
  "\u2033": '"',
  "\u00ab": '"',
  "\u00bb": '"',
}
const DASHES = /[\u2010-\u2015\u2212\ufe58\ufe63\uff0d]/
const SOFT_HYPHEN = "\u00ad"
const LETTER = /\p{L}/u

interface Normalised {
  readonly text: string
  /** For each character of `text`, where it starts in the original. */
  readonly starts: ReadonlyArray<number>
  /** For each character of `text`, where it ends in the original (exclusive). */
  readonly ends: ReadonlyArray<number>
}

/**
 * Lower-cased NFKC text with whitespace runs as one space, quotes straightened, dashes as `-`, soft hyphens
 * dropped and a word hyphenated across a line break joined (`exam-\nple` → `example`; with
 * `joinAnyBreak`, also `exam- ple`, as a model may copy it).
 */
const normalise = (original: string, joinAnyBreak: boolean): Normalised => {
  // Characters are collected in an array: reading the end of a string being built by `+=` would flatten
  // it at every step.
  const out: Array<string> = []
  const starts: Array<number> = []
  const ends: Array<number> = []
  const push = (s: string, start: number, end: number) => {
    for (const c of s) {
      out.push(c)
      starts.push(start)
      ends.push(end)
    }
  }
  const isSpace = (c: string | undefined) => c !== undefined && /\s/u.test(c)
  let i = 0
  while (i < original.length) {
    const code = original.codePointAt(i)!
    const width = code > 0xffff ? 2 : 1
    const raw = width === 1 ? original[i]! : original.slice(i, i + 2)
    if (code === 0x20 || ((code < 0x20 || code >= 0x80) && isSpace(raw))) {
      let j = i + width
      while (j < original.length && isSpace(original[j])) j++
      if (out.length > 0 && out[out.length - 1] !== " ") push(" ", i, j)
      i = j
      continue
    }
    if (raw === SOFT_HYPHEN) {
      i += width
      continue
    }
    const isDash = raw === "-" || DASHES.test(raw)
    if (isDash && LETTER.test(out[out.length - 1] ?? "")) {
      // A word broken at a line end: the hyphen and the break go, the word is whole again.
      let j = i + width
      while (j < original.length && /[^\S\n\r]/u.test(original[j]!)) j++
      const lineBreak = original[j] === "\n" || original[j] === "\r"
      let k = j
      while (k < original.length && isSpace(original[k])) k++
      if (k > i + width && (lineBreak || joinAnyBreak) && LETTER.test(original[k] ?? "")) {
        i = k
        continue
      }
    }
    const mapped = isDash
      ? "-"
      : code < 0x80 && raw !== "`"
        ? raw.toLowerCase()
        : (QUOTES[raw] ?? raw.normalize("NFKC").toLowerCase())
    push(mapped, i, i + width)
    i += width
  }
  if (out[out.length - 1] === " ") {
    out.pop()
    starts.pop()
    ends.pop()
  }
  return { text: out.join(""), starts, ends }
}

/** How many pages `normalisedPage` keeps, and the longest it keeps (a few megabytes held at most). */
const REMEMBERED_PAGES = 4
const REMEMBERED_PAGE_CHARACTERS = 50_000

const rememberedPages: Array<readonly [text: string, normalised: Normalised]> = []

/**
 * A page normalised, remembered for the next answers: the answers of one request are checked one after
 * another against the same pages (normalising a page is most of looking a passage up on it).
 */
const normalisedPage = (text: string): Normalised => {
  for (const [known, normalised] of rememberedPages) if (known === text) return normalised
  const normalised = normalise(text, false)
  if (text.length > REMEMBERED_PAGE_CHARACTERS) return normalised
  rememberedPages.unshift([text, normalised])
  if (rememberedPages.length > REMEMBERED_PAGES) rememberedPages.pop()
  return normalised
}

// ---------------------------------------------------------------------------------------------------------
// Passage on page

const allowedEdits = (length: number): number =>
  length < APPROXIMATE_FROM_CHARACTERS ? 0 : Math.max(1, Math.floor(length / CHARACTERS_PER_EDIT))

/** Where `fragment` (normalised) is in the normalised page at or after `from`: exactly, else approximately. */
const findFragment = (
  page: string,
  fragment: string,
  from: number,
): { readonly start: number; readonly end: number } | undefined => {
  const exact = page.indexOf(fragment, from)
  if (exact >= 0) return { start: exact, end: exact + fragment.length }
  const edits = allowedEdits(fragment.length)
  if (edits === 0) return undefined
  const rest = page.slice(from)
  const matches = search(rest, fragment, edits)
  let best: { start: number; end: number; errors: number } | undefined
  // The fewest edits, then the first place, then the longest span there.
  for (const m of matches)
    if (
      best === undefined ||
      m.errors < best.errors ||
      (m.errors === best.errors && (m.start < best.start || (m.start === best.start && m.end > best.end)))
    )
      best = m
  return best === undefined ? undefined : { start: from + best.start, end: from + best.end }
}

/** The page's own text for the normalised span [start, end), without surrounding whitespace. */
const originalSpan = (pageText: string, page: Normalised, start: number, end: number): string =>
  pageText.slice(page.starts[start]!, page.ends[end - 1]!).trim()

/**
 * The page's text that the passage quotes, or undefined when it is not on the page. A passage that leaves
 * text out with an ellipsis (`…` or `...`) is found fragment by fragment, in order; the whole span is given.
 */
export const findPassageOnPage = (pageText: string, passage: string): string | undefined => {
  const quoted = normalise(passage, true).text
  if (quoted === "") return undefined
  const page = normalisedPage(pageText)
  const whole = findFragment(page.text, quoted, 0)
  if (whole !== undefined) return originalSpan(pageText, page, whole.start, whole.end)
  const fragments = quoted
    .split(/\.{3,}/)
    .map((f) => f.trim())
    .filter((f) => f !== "")
  if (fragments.length < 2) return undefined
  let from = 0
  let first: number | undefined
  for (const fragment of fragments) {
    const found = findFragment(page.text, fragment, from)
    if (found === undefined) return undefined
    first ??= found.start
    from = found.end
  }
  return originalSpan(pageText, page, first!, from)
}

// ---------------------------------------------------------------------------------------------------------
// Value in passage

/**
 * Every number the text states, in any written form of `WrittenForms` (digits with either grouping
 * convention, currency, signs, percentages (`12%` also as 0.12), a scale after them (`1.5 million`), number
 * words (`twenty-four`), the amounts of durations), each also without its sign.
 */
export const numbersIn = (text: string): Array<number> =>
  statedIn(text).flatMap((s) => {
    if (s.kind === "duration") return [s.amount]
    if (s.kind !== "number") return []
    return s.unit === "%" ? [s.value, Math.abs(s.value), s.value / 100] : [s.value, Math.abs(s.value)]
  })

/**
 * Every calendar date (`yyyymmdd`) the text states in any written form of `WrittenForms`; a numeric date
 * is read by `dateOrder` when given, else both ways when ambiguous.
 */
export const datesIn = (text: string, dateOrder?: DateOrder | undefined): Array<number> =>
  statedIn(text, { dateOrder }).flatMap((s) => (s.kind === "date" ? [s.ordinal] : []))

const STOP_WORDS = new Set([
  "a",
  "an",
  "and",
  "as",
  "at",
  "by",
  "for",
  "from",
  "in",
  "of",
  "on",
  "or",
  "the",
  "to",
  "with",
])

const wordsOf = (text: string): Array<string> => normalise(text, true).text.match(/[\p{L}\p{N}]+/gu) ?? []

/** Edit distance of two short words, or more than `limit` (computed no further). */
export const editDistance = (a: string, b: string, limit: number): number => {
  if (Math.abs(a.length - b.length) > limit) return limit + 1
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const current = [i]
    let rowMin = i
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      const cell = Math.min(previous[j - 1]! + cost, previous[j]! + 1, current[j - 1]! + 1)
      current.push(cell)
      rowMin = Math.min(rowMin, cell)
    }
    if (rowMin > limit) return limit + 1
    previous = current
  }
  return previous[b.length]!
}

/** Share of a string value's words that must be in its passage (all of them for values of up to 4 words). */
export const STRING_WORD_SHARE = 0.8

/**
 * Whether a string value is stated in the passage: its characters, ignoring case, spacing and punctuation,
 * within the passage at the passage tolerance, or else its words (stop words aside) in the passage, each
 * within one edit per 6 characters.
 */
const stringInPassage = (value: string, passage: string): boolean => {
  const squeeze = (s: string) => wordsOf(s).join("")
  const wanted = squeeze(value)
  if (wanted === "") return true
  const text = squeeze(passage)
  if (text.includes(wanted)) return true
  const edits = allowedEdits(wanted.length)
  if (edits > 0 && search(text, wanted, edits).length > 0) return true
  const valueWords = wordsOf(value).filter((w) => !STOP_WORDS.has(w))
  if (valueWords.length === 0) return true
  const passageWords = wordsOf(passage)
  const present = valueWords.filter((w) => {
    const limit = Math.floor(w.length / 6)
    return passageWords.some((p) => p === w || (limit > 0 && editDistance(w, p, limit) <= limit))
  }).length
  return valueWords.length <= 4
    ? present === valueWords.length
    : present / valueWords.length >= STRING_WORD_SHARE
}

const sameNumber = (a: number, b: number): boolean =>
  Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a), Math.abs(b))

/** Whether a value that is one written form (a date, a number, an amount, a duration) is stated in the passage. */
const formInPassage = (value: string, passage: string, options: AgreeOptions): boolean => {
  const read = readValue(value, options)
  return read !== undefined && passageStates(read, passage, options)
}

/**
 * Whether the value is stated in the passage, by its value type; a value in a normalised form (an ISO date,
 * a canonical number, `2 years`) is stated by any written form of it (`WrittenForms`), whatever its type.
 */
export const valueInPassage = (
  valueType: GroundingInput["valueType"],
  value: string,
  passage: string,
  options: AgreeOptions = {},
): boolean => {
  if (value.trim() === "" || valueType === "bool") return true
  if (valueType === "number") {
    const n = parseNumber(value)
    if (n === undefined) return stringInPassage(value, passage) || formInPassage(value, passage, options)
    return (
      numbersIn(passage).some((m) => sameNumber(m, n) || sameNumber(m, Math.abs(n))) ||
      formInPassage(value, passage, options)
    )
  }
  if (valueType === "date" || valueType === "datetime") {
    const d = parseDateOrdinal(value)
    if (d === undefined) return stringInPassage(value, passage) || formInPassage(value, passage, options)
    const dates = datesIn(passage, options.dateOrder)
    // A passage that states its date relative to another ("the date hereof") cannot be checked here: only
    // a date that contradicts the value counts against it.
    return dates.length === 0 || dates.includes(d)
  }
  // A value that is one written form is stated by that date, number or duration, not by its characters
  // wherever they are (`1999-02-06` is not stated by "06/02/1999" read month-first).
  const read = readValue(value, options)
  return read === undefined ? stringInPassage(value, passage) : passageStates(read, passage, options)
}

// ---------------------------------------------------------------------------------------------------------
// The check

const QUOTE_CHARACTERS = 80

const shown = (text: string): string => {
  const collapsed = text.replace(/\s+/g, " ").trim()
  return JSON.stringify(
    collapsed.length <= QUOTE_CHARACTERS ? collapsed : `${collapsed.slice(0, QUOTE_CHARACTERS - 1)}…`,
  )
}

/** Whether the answer's passage is on its cited page, and its value in that passage. */
export const groundAnswer = (input: GroundingInput): Grounding => {
  const page = input.pageNumber === undefined ? "the cited page" : `page ${input.pageNumber}`
  if (input.passage.trim() === "")
    return {
      grounded: false,
      reason: "passage not on page",
      detail: `no passage was quoted from ${page}; quote the text that states the value verbatim`,
    }
  const found = findPassageOnPage(input.pageText, input.passage)
  if (found === undefined)
    return {
      grounded: false,
      reason: "passage not on page",
      detail: `the passage ${shown(input.passage)} is not on ${page}`,
    }
  if (
    !valueInPassage(input.valueType, input.value, found, {
      dateOrder: input.dateOrder,
      askedUnit: input.askedUnit,
    })
  )
    return {
      grounded: false,
      reason: "value not in passage",
      detail: `the value ${shown(input.value)} is not stated in the passage ${shown(found)} on ${page}`,
    }
  return { grounded: true, passage: found }
}
