/**
 * Positions in page text: lines, sentences, labels and the verbatim passage around a value.
 */
import type { Candidate } from "./Candidates.ts"
import type { Kind } from "./KeyTerms.ts"

export const escapeRegExp = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

/** A candidate whose value is the whole of the text it was found in, `[start, end)`. */
export const spanCandidate = (
  kind: Kind,
  value: string,
  start: number,
  end: number,
  pattern: string,
  strength: number,
): Candidate => ({ kind, value, start, end, valueStart: start, valueEnd: end, pattern, strength })

export interface Span {
  readonly start: number
  readonly end: number
}

export const lineAt = (text: string, index: number): Span => {
  const start = text.lastIndexOf("\n", index - 1) + 1
  const nl = text.indexOf("\n", index)
  return { start, end: nl < 0 ? text.length : nl }
}

const ABBREVIATIONS =
  /(?:\b(?:Inc|INC|Co|CO|Corp|CORP|Ltd|LTD|No|Nos|Mr|Mrs|Ms|Dr|St|Jr|Sr|vs|etc|Sec|Art|approx|U\.S|e\.g|i\.e|N\.A|L\.P|S\.A|N\.V|B\.V|P\.C)|\b[A-Z]|\d)$/

/** Whether a sentence ends at `text[i]` (a `.`, `!`, `?` or `;` followed by a break). */
const endsSentence = (text: string, i: number): boolean => {
  const c = text[i]
  if (c === "\n") return text[i + 1] === "\n" || /^\n\s*\n/.test(text.slice(i, i + 4))
  if (c !== "." && c !== "!" && c !== "?" && c !== ";") return false
  const next = text.slice(i + 1, i + 3)
  if (!/^(\s|$|["”’)])/.test(next)) return false
  if (c === "." && ABBREVIATIONS.test(text.slice(Math.max(0, i - 6), i))) {
    // "Inc." and friends end a sentence only before a blank line.
    return /^\s*\n\s*\n/.test(text.slice(i + 1, i + 6))
  }
  return true
}

/** The sentence (or blank-line separated block) around `[start, end)`, clipped to `max` characters. */
export const sentenceAround = (text: string, start: number, end: number, max = 500): Span => {
  let s = start
  const lowest = Math.max(0, start - max)
  while (s > lowest && !endsSentence(text, s - 1)) s--
  let e = end
  const highest = Math.min(text.length, end + max)
  while (e < highest && !endsSentence(text, e)) e++
  if (e < text.length && text[e] !== "\n") e++
  return trimSpan(text, { start: s, end: e })
}

export const trimSpan = (text: string, span: Span): Span => {
  let { start, end } = span
  while (start < end && /\s/.test(text[start]!)) start++
  while (end > start && /\s/.test(text[end - 1]!)) end--
  return { start, end }
}

/**
 * The passage cited for a value at `[start, end)`: its line when the line is short (a labelled value,
 * a table row), else its sentence; always a verbatim slice of `text` that contains the value.
 */
export const passageFor = (text: string, start: number, end: number): Span => {
  const line = lineAt(text, start)
  const lineEnd = Math.max(line.end, lineAt(text, Math.max(start, end - 1)).end)
  const lineSpan = trimSpan(text, { start: line.start, end: lineEnd })
  if (lineSpan.end - lineSpan.start <= 160 && !isProseLine(text, line)) return lineSpan
  const sentence = sentenceAround(text, start, end)
  const clipped: Span = {
    start: Math.max(sentence.start, Math.min(start, end - 600)),
    end: Math.min(sentence.end, Math.max(end, start + 600)),
  }
  return trimSpan(text, clipped)
}

/** A line that continues into the next one (wrapped prose rather than a label/value row). */
const isProseLine = (text: string, line: Span): boolean => {
  const body = text.slice(line.start, line.end).trim()
  if (body.length < 60) return false
  const next = text.slice(line.end + 1, line.end + 2)
  return !/[.:;!?]$/.test(body) && /[a-z(]/.test(next)
}

/**
 * The label of a value at `start`: the text before it on its line (when short), or the previous line
 * when the value opens its line and that line looks like a label.
 */
export const labelBefore = (
  text: string,
  start: number,
  end = start + 1,
): { readonly label: string; readonly start: number } => {
  const line = lineAt(text, start)
  const before = text.slice(line.start, start)
  const cleaned = cleanLabel(before)
  const header = headerAbove(text, start, end)
  if (header) return header
  if (cleaned === "") {
    const trailing = trailingLabels(text).get(line.start)
    if (trailing) return trailing
  }
  if (cleaned !== "") {
    // Long prose before the value: keep the last few words only.
    if (before.length > 60) {
      const tail = before.slice(-60)
      return { label: cleanLabel(tail), start: start - tail.length }
    }
    return { label: cleaned, start: line.start }
  }
  // The value opens its line: a short line above acts as its label.
  let prevEnd = line.start - 1
  while (prevEnd > 0 && text[prevEnd - 1] === "\n") prevEnd--
  if (prevEnd <= 0) return { label: "", start }
  const prev = lineAt(text, prevEnd - 1)
  const prevText = text.slice(prev.start, prev.end).trim()
  if (prevText.length > 0 && prevText.length <= 50 && !/\d{3,}/.test(prevText))
    return { label: cleanLabel(prevText), start: prev.start }
  return { label: "", start }
}

/** A label without filler: leader dots, colons, bullets, trailing currency signs. */
export const cleanLabel = (text: string): string =>
  text
    .replace(/[.·…_]{2,}/g, " ")
    .replace(/[:|\t]+/g, " ")
    .replace(/[$€£¥₹]/g, " ")
    .replace(/\s+/g, " ")
    .trim()

// ---------------------------------------------------------------------------------------------------------
// Labels that are not before their value: form cells whose label follows the value in the text, label
// columns that follow a column of values, and table headers above a row of values.

interface Row {
  readonly start: number
  readonly end: number
  readonly body: string
  /** `label`: a short line ending with ":"; `value`: a short line; `other`: prose and long rows. */
  readonly type: "label" | "value" | "other"
  /** Index of its block (lines between blank lines). */
  readonly block: number
}

const LABEL_LINE = /^[\p{L}#][^:\n]{0,40}:$/u

const rowsOf = (text: string): Array<Row> => {
  const rows: Array<Row> = []
  let block = 0
  let offset = 0
  let blank = true
  for (const raw of text.split("\n")) {
    const start = offset
    offset += raw.length + 1
    const body = raw.trim()
    if (body === "") {
      if (!blank) block++
      blank = true
      continue
    }
    blank = false
    const type = LABEL_LINE.test(body)
      ? "label"
      : body.length <= 60 && !body.endsWith(":")
        ? "value"
        : "other"
    rows.push({ start, end: start + raw.length, body, type, block })
  }
  return rows
}

/**
 * Value lines whose label stands after them, keyed by the value line's start:
 * - a block that alternates value and label lines, opens with a value and closes with a label, each value
 *   carrying digits (`993548900` / `Invoice number:` / `19 April 2014` / `Invoice date:`);
 * - a column of two or more labels, each closing its block, after as many value lines
 *   (`Jan 1, 2022` … `$127.50` then `Date:` … `Balance Due:`).
 */
export const trailingLabels = (text: string): ReadonlyMap<number, { label: string; start: number }> => {
  const hit = trailingCache.get(text)
  if (hit) return hit
  const rows = rowsOf(text)
  const links = new Map<number, { label: string; start: number }>()
  const linked = new Set<number>()
  const link = (value: Row, label: Row, i: number, j: number) => {
    links.set(value.start, { label: cleanLabel(label.body), start: label.start })
    linked.add(i)
    linked.add(j)
  }
  // Alternating value/label blocks.
  let i = 0
  while (i < rows.length) {
    const opensBlock = i === 0 || rows[i - 1]!.block !== rows[i]!.block || rows[i - 1]!.type === "other"
    if (!opensBlock || rows[i]!.type !== "value") {
      i++
      continue
    }
    let j = i
    while (
      j + 1 < rows.length &&
      rows[j + 1]!.block === rows[i]!.block &&
      rows[j + 1]!.type === (rows[j]!.type === "value" ? "label" : "value")
    )
      j++
    // The run must end with a label: drop a trailing value.
    const last = rows[j]!.type === "label" ? j : j - 1
    const pairs = (last - i + 1) / 2
    if (pairs >= 1 && Number.isInteger(pairs)) {
      let digits = true
      for (let k = i; k <= last; k += 2) if (!/\d/.test(rows[k]!.body)) digits = false
      if (digits) for (let k = i; k <= last; k += 2) link(rows[k]!, rows[k + 1]!, k, k + 1)
    }
    i = j + 1
  }
  // A column of labels after a column of values.
  i = 0
  while (i < rows.length) {
    const closes = (k: number) =>
      rows[k]!.type === "label" &&
      !linked.has(k) &&
      (k + 1 === rows.length || rows[k + 1]!.block !== rows[k]!.block || rows[k + 1]!.type === "label")
    if (!closes(i)) {
      i++
      continue
    }
    let j = i
    while (j + 1 < rows.length && closes(j + 1)) j++
    const count = j - i + 1
    if (count >= 2 && i - count >= 0) {
      const values = rows.slice(i - count, i)
      const ok =
        values.every((v, k) => v.type === "value" && !linked.has(i - count + k)) &&
        values.filter((v) => /\d/.test(v.body)).length * 2 >= count
      if (ok) for (let k = 0; k < count; k++) link(values[k]!, rows[i + k]!, i - count + k, i + k)
    }
    i = j + 1
  }
  trailingCache.set(text, links)
  if (trailingCache.size > 32) trailingCache.delete(trailingCache.keys().next().value!)
  return links
}

const trailingCache = new Map<string, ReadonlyMap<number, { label: string; start: number }>>()

/** Cells of a table row: split at tabs or runs of spaces, else at single spaces. */
const cellsOf = (line: string, offset: number, wide: boolean): Array<Span> => {
  const out: Array<Span> = []
  const re = wide ? /\S+(?:[ ]\S+)*/g : /\S+/g
  for (const m of line.matchAll(re))
    out.push({ start: offset + m.index, end: offset + m.index + m[0].length })
  return out
}

/**
 * The header cell above a value at `[at, end)` in a table: the previous line has as many cells as the value's
 * row, the header's cells carry no digits and most of the row's cells do. A header of more words than the row
 * has cells (a header of several words, or a column empty in this row) still has its first and last words
 * above the row's first and last cells. A value that spans several cells (a date and its time) is in no
 * column.
 */
export const headerAbove = (
  text: string,
  at: number,
  end = at + 1,
): { label: string; start: number } | undefined => {
  const line = lineAt(text, at)
  if (line.start < 2) return undefined
  const prev = lineAt(text, line.start - 1)
  const rowText = text.slice(line.start, line.end)
  const headText = text.slice(prev.start, prev.end)
  for (const wide of [true, false]) {
    if (wide && !/\S(?:\t|[ ]{2,})\S/.test(rowText)) continue
    const row = cellsOf(rowText, line.start, wide)
    const head = cellsOf(headText, prev.start, wide)
    if (row.length < 2 || row.length > head.length || (wide && row.length !== head.length)) continue
    const heads = head.map((c) => text.slice(c.start, c.end))
    if (heads.some((h) => /\d/.test(h) || !/\p{L}/u.test(h))) continue
    const cells = row.map((c) => text.slice(c.start, c.end))
    if (cells.filter((c) => /\d/.test(c)).length * 2 < cells.length) continue
    const k = row.findIndex((c) => at >= c.start && at < c.end)
    if (k < 0 || end > row[k]!.end) continue
    const h = row.length === head.length || k === 0 ? k : k === row.length - 1 ? head.length - 1 : -1
    if (h < 0) continue
    return { label: cleanLabel(heads[h]!), start: head[h]!.start }
  }
  return undefined
}

/** Marks OCR reads at a line's edges: the page's border (`|`), specks, stray punctuation. */
const EDGE_MARKS = "|:;~=_—–»«©®°¢%*\\\\[\\]{}()<>!'\"‘’“”.,/-"
const LEADING_MARKS = new RegExp(`^\\s*(?:[${EDGE_MARKS}]+\\s+)+`)
const TRAILING_MARKS = new RegExp(`(?:\\s+[${EDGE_MARKS}]+)+\\s*$`)

/**
 * A line without what OCR reads at its edges: marks set apart by a space (`| 3RD FLR`, `LUMPUR : :`), a short
 * lower-case speck before a capital or at the end (`oo JLN`, `Johor oo`), text beyond a border near either
 * end (`SC | BN`, `Co | 81100`).
 * Punctuation attached to a word stays (`JOHOR.`, `23/1,`).
 */
export const cleanEdges = (line: string): string =>
  line
    .replace(/\s+\|\s*\S{0,3}\s*$/, "")
    .replace(/^\s*\S{0,3}\s*\|\s+/, "")
    .replace(LEADING_MARKS, "")
    .replace(TRAILING_MARKS, "")
    .replace(/^[“"'‘’]?[a-z]{1,3}\s+(?=[A-Z]|\d+[A-Z]{2})/, "")
    .replace(/(?<=\S)\s+[a-z]{1,2}$/, "")
    .replace(/^[|[\]{}]+(?=\S)/, "")
    .replace(/(?<=\S)[|[\]{}]+$/, "")
    .trim()
