/**
 * Positions in page text: lines, sentences, labels and the verbatim passage around a value.
 */

export const escapeRegExp = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

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
  /(?:\b(?:Inc|Co|Corp|Ltd|No|Nos|Mr|Mrs|Ms|Dr|St|Jr|Sr|vs|etc|Sec|Art|approx|U\.S|e\.g|i\.e|N\.A|L\.P|S\.A|N\.V|B\.V|P\.C)|\b[A-Z]|\d)$/

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
): { readonly label: string; readonly start: number } => {
  const line = lineAt(text, start)
  const before = text.slice(line.start, start)
  const cleaned = cleanLabel(before)
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
