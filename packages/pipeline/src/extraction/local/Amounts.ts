/** Amounts: money, plain numbers and percentages, in both thousand-separator conventions. */
import { canonicalDecimal, parseNumber } from "@dxs/domain/Values"
import type { Candidate } from "./Candidates.ts"
import type { Kind } from "./KeyTerms.ts"
import { CURRENCY_CODES, CURRENCY_SYMBOLS } from "./Lexicon.ts"
import { escapeRegExp } from "./Text.ts"

const SYMBOLS = CURRENCY_SYMBOLS.map(([s]) => s).filter((s) => !/^[a-z]/i.test(s) || s.length <= 3)
const CURRENCY_TOKEN = `(?:${[...SYMBOLS.map(escapeRegExp), ...CURRENCY_CODES].join("|")})`
const NUMBER_TOKEN =
  "(?:\\d{1,3}(?:,\\d{3})+(?:\\.\\d+)?|\\d{1,3}(?:\\.\\d{3})+(?:,\\d+)?|\\d{1,3}(?:[ \\u00a0\\u202f']\\d{3})+(?:[.,]\\d{1,2})?|\\d+(?:[.,]\\d+)?)"
const MONEY_OR_NUMBER = new RegExp(
  `(?<cur1>${CURRENCY_TOKEN})?[\\s_]?(?<neg>[-−](?=\\d))?(?<num>${NUMBER_TOKEN})(?![\\d/])(?:\\s?(?<pct>%|percent\\b|per cent\\b)|\\s?(?<cur2>${CURRENCY_TOKEN})(?![A-Za-z])|\\s?(?<unit>thousand|million|billion|k|m|bn)\\b)?`,
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
