/** Currencies: ISO codes, symbols and currency words, reported as ISO codes. */
import type { Candidate } from "./Candidates.ts"
import { CURRENCY_CODES, CURRENCY_SYMBOLS } from "./Lexicon.ts"
import { escapeRegExp } from "./Text.ts"

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
