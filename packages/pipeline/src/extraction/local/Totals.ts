/**
 * The total of a document: among the amounts labelled as a total, the one of the strongest label — a
 * rounded or adjusted total, a grand total, an amount due or payable — over a total including tax, over a
 * plain "total"; the largest of them when several share that label's rank. Subtotals, tax lines, counts,
 * cash tendered and change are no totals.
 */
import type { Candidate, PageAnalysis } from "./Candidates.ts"
import { lineAt } from "./Text.ts"

const RANKS: ReadonlyArray<readonly [number, RegExp]> = [
  [
    3,
    /\b(grand\s*total|total\s*(rounded|after\s*(adj\w*|round\w*|disc\w*))|rounded\s*total|amount\s*due|total\s*due|balance\s*due|total\s*payable|amount\s*payable|net+\s*total|total\s*net+|amount\s*to\s*pay|total\s*to\s*pay|te\s*betalen|zu\s*zahlen|gesamtbetrag|endbetrag|net\s*à\s*payer)\b/i,
  ],
  [2, /\b(total\s*\(?\s*(incl\w*|amount|sales|price|ttc|inc\w*)|totaalbedrag|rechnungsbetrag)\b/i],
  [1, /\b(total|totaal|summe|montant)\b/i],
]
const NOT_TOTAL =
  /^\W*(gst|vat|sst|tax)\b|\b(sub-?\s?tota\w*|total\s*(items?|qty|quantity|discounts?|savings?|tax|gst|vat|sst|excl\w*|before)|item\s*count|(gst|tax|vat)\s*summary|excl\w*|before\s*(tax|gst|vat)|cash|change|tender\w*|paid|payment|rounding|qty|quantity)\b/i

/** The label of a value on its line (the text before it), else the line above when the value opens its line. */
const lineLabel = (text: string, at: number): string => {
  const line = lineAt(text, at)
  const before = text.slice(line.start, at)
  if (/[A-Za-z]{2,}/.test(before) || line.start === 0) return before
  const prev = lineAt(text, line.start - 1)
  return text.slice(prev.start, prev.end)
}

const rankOf = (label: string): number => {
  if (NOT_TOTAL.test(label)) return 0
  for (const [rank, re] of RANKS) if (re.test(label)) return rank
  return 0
}

const cache = new WeakMap<PageAnalysis, Candidate | undefined>()

/** The amount the page states as its total, when it labels one. */
export const documentTotal = (text: string, analysis: PageAnalysis): Candidate | undefined => {
  if (cache.has(analysis)) return cache.get(analysis)
  let best: { readonly c: Candidate; readonly rank: number } | undefined
  const seenLines = new Set<number>()
  for (const c of analysis.numbers) {
    if (c.kind !== "money" || c.amount === undefined || c.amount <= 0) continue
    // The first amount of a line is the one its label names (the others are columns beside it).
    const line = lineAt(text, c.valueStart).start
    if (seenLines.has(line)) continue
    seenLines.add(line)
    const rank = rankOf(lineLabel(text, c.start))
    if (rank === 0) continue
    if (!best || rank > best.rank || (rank === best.rank && c.amount >= best.c.amount!)) best = { c, rank }
  }
  cache.set(analysis, best?.c)
  return best?.c
}
