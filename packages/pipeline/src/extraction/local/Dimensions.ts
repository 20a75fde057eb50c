/**
 * Dimensions in page text: which dimension value a candidate belongs to (a mention on the same line or
 * in the same sentence, or the heading of its section), and discovery of a dynamic dimension's values.
 */
import { collapseWhitespace } from "@dxs/domain/Values"
import type { DimensionQuery, PageText } from "../../llm/LanguageModel.ts"
import { splitExamples, stem, terms } from "./KeyTerms.ts"
import { COUNTRIES, CURRENCY_CODES, MONTHS, REGIONS, US_STATES } from "./Lexicon.ts"
import { tableDimensionValues } from "./Tables.ts"
import { escapeRegExp, lineAt, type Span, sentenceAround } from "./Text.ts"

export interface Mention {
  readonly value: string
  readonly start: number
  readonly end: number
}

/** Occurrences of the dimension's values in a text (short upper-case codes match case-sensitively). */
export const mentions = (text: string, values: ReadonlyArray<string>): Array<Mention> => {
  const out: Array<Mention> = []
  for (const value of values) {
    const v = value.trim()
    if (v === "") continue
    const flags = /^[A-Z0-9]{1,4}$/.test(v) ? "g" : "gi"
    const re = new RegExp(`(?<![\\p{L}\\p{N}])${escapeRegExp(v)}(?![\\p{L}\\p{N}])`, `${flags}u`)
    for (const m of text.matchAll(re)) out.push({ value, start: m.index, end: m.index + m[0].length })
  }
  return out.sort((a, b) => a.start - b.start)
}

const nearest = (ms: ReadonlyArray<Mention>, span: Span, at: number): Mention | undefined => {
  const inside = ms.filter((m) => m.start >= span.start && m.end <= span.end)
  if (inside.length === 0) return undefined
  const before = inside.filter((m) => m.end <= at)
  if (before.length > 0) return before[before.length - 1]
  return inside[0]
}

const isHeading = (text: string, m: Mention): boolean => {
  const line = lineAt(text, m.start)
  const body = text.slice(line.start, line.end).trim()
  return body.length <= m.end - m.start + 30 && !/\d[\d.,]*\s*$/.test(body.replace(m.value, ""))
}

/** The dimension value a position belongs to: same line, same sentence, or the section heading above. */
export const associate = (text: string, ms: ReadonlyArray<Mention>, start: number, end: number) => {
  const line = lineAt(text, start)
  const onLine = nearest(ms, line, start)
  if (onLine) return { value: onLine.value, how: "same line" }
  const sentence = sentenceAround(text, start, end, 300)
  const inSentence = nearest(ms, sentence, start)
  if (inSentence) return { value: inSentence.value, how: "same sentence" }
  for (let i = ms.length - 1; i >= 0; i--) {
    const m = ms[i]!
    if (m.end <= start && isHeading(text, m)) return { value: m.value, how: "section heading" }
  }
  return undefined
}

// ---------------------------------------------------------------------------------------------------------
// Discovery of a dynamic dimension's values

const LEXICONS: ReadonlyArray<readonly [RegExp, ReadonlyArray<string>]> = [
  [/\b(region|market|geograph|territor|area|zone)/, [...REGIONS, ...COUNTRIES]],
  [/\b(countr|nation|jurisdiction)/, COUNTRIES],
  [/\b(state)/, US_STATES],
  [/\bcurrenc/, CURRENCY_CODES],
  [/\bmonth/, MONTHS.map((m) => m[0]!.toUpperCase() + m.slice(1))],
]

/** Short items of a page: table row labels, list items, headings and `Dimension: value` values. */
const items = (
  text: string,
  dimensionTerms: ReadonlySet<string>,
): Array<{ value: string; at: number; strong: boolean }> => {
  const out: Array<{ value: string; at: number; strong: boolean }> = []
  let offset = 0
  for (const raw of text.split("\n")) {
    const at = offset
    offset += raw.length + 1
    const line = raw.trim()
    if (line === "") continue
    const lead = raw.length - raw.trimStart().length
    // `Region: EU` — the dimension named as the label.
    const labelled = /^([^:]{1,40}):\s*(.{1,60})$/.exec(line)
    if (labelled && terms(labelled[1]!).some((t) => dimensionTerms.has(t))) {
      for (const part of labelled[2]!.split(/\s*(?:,|;|\band\b)\s*/)) {
        const v = part.trim()
        if (v !== "") out.push({ value: v, at: at + lead + line.indexOf(v), strong: true })
      }
      continue
    }
    const bullet = /^(?:[-•*·–]|\d{1,2}[.)])\s+(.{1,60})$/.exec(line)
    if (bullet) {
      const v = bullet[1]!
        .split(/\s*(?::|\s[-–]\s)/)[0]!
        .replace(/[.]\s*$/, "")
        .trim()
      out.push({ value: v, at: at + lead + line.indexOf(v), strong: false })
      continue
    }
    // Table row label: text, then a gap or a colon, then a number.
    const row = /^([A-Za-z][^\t:]{0,40}?)(?:\s*:\s*|\t+|\s{2,})[-(]?[$€£]?\s?\d/.exec(line)
    if (row) {
      out.push({ value: row[1]!.trim(), at: at + lead, strong: false })
      continue
    }
    if (line.length <= 40 && !/[.;,]$/.test(line))
      out.push({ value: line.replace(/:$/, ""), at: at + lead, strong: false })
  }
  return out
}

/** Distinct values of a dimension that the pages mention, in order of first appearance. */
export const discoverValues = (dimension: DimensionQuery, pages: ReadonlyArray<PageText>): Array<string> => {
  const examples = splitExamples(dimension.exampleValues)
    .flatMap((e) => e.split(/\s*,\s*/))
    .filter((e) => e !== "")
  const known = [...new Set([...examples, ...dimension.values])]
  const cue = `${dimension.name} ${dimension.description}`.toLowerCase()
  const lexicon = LEXICONS.filter(([re]) => re.test(cue)).flatMap(([, l]) => l)
  const dimensionTerms = new Set(terms(dimension.name).map(stem))
  const shapes = examples.map((e) => shapeClass(e))
  const found: Array<{ value: string; at: number }> = []
  pages.forEach((page, pageIndex) => {
    const base = pageIndex * 1e9
    for (const m of mentions(page.text, [...known, ...lexicon]))
      found.push({ value: m.value, at: base + m.start })
    // The line items of a table whose column is headed by the dimension (Tables.ts).
    for (const v of tableDimensionValues(dimension, page)) found.push({ value: v.value, at: base + v.at })
    for (const item of items(page.text, dimensionTerms)) {
      const value = collapseWhitespace(item.value)
      if (value.length === 0 || value.length > 40) continue
      const ok =
        item.strong ||
        known.some((k) => k.toLowerCase() === value.toLowerCase()) ||
        (shapes.length > 0 && shapes.includes(shapeClass(value)) && !/^\d+([.,]\d+)?$/.test(value))
      if (ok) found.push({ value, at: base + item.at })
    }
  })
  found.sort((a, b) => a.at - b.at)
  const out: Array<string> = []
  const seen = new Set<string>()
  for (const f of found) {
    // Report a known value in its known spelling.
    const canonical = known.find((k) => k.toLowerCase() === f.value.toLowerCase()) ?? f.value
    const key = canonical.toLowerCase()
    if (seen.has(key)) continue
    seen.add(key)
    out.push(canonical)
  }
  return out
}

/** A coarse shape of a value: `EU` → `C2`, `Q1 2023` → `A9 9`, `North America` → `W W`. */
const shapeClass = (value: string): string =>
  value
    .trim()
    .replace(/\d+/g, "9")
    .replace(/\b[A-Z][a-z]+\b/g, "W")
    .replace(/[A-Z]{2,}/g, (m) => `C${m.length}`)
    .replace(/[A-Z]/g, "A")
    .replace(/[a-z]+/g, "a")
