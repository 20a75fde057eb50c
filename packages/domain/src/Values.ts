/**
 * Value normalisation shared by every stage: numbers as canonical decimals (no grouping, no exponent, no
 * trailing zeros, `.` as the decimal mark), strings trimmed with collapsed whitespace, and the equality
 * that consistency checks use.
 */

const CURRENCY_AND_NOISE = /[A-Za-z$€£¥₹₽¢%\s\u00a0\u202f']/g

/**
 * The number a piece of text states: `1,234.50`, `1.234,50`, `1 234,5`, `€ 3,000`, `USD 12`, `(100)` (negative),
 * `-7`, `12%` (12), `1'000`, `1.234.567`. A single `.` is always a decimal mark; a single `,` followed by
 * exactly three digits groups thousands. Undefined when the text is not a single number.
 */
export const parseNumber = (text: string): number | undefined => {
  let s = text.trim()
  if (s === "") return undefined
  let negative = false
  if (/^\(.*\)$/.test(s)) {
    negative = true
    s = s.slice(1, -1)
  }
  s = s.replace(CURRENCY_AND_NOISE, "")
  if (s.startsWith("-") || s.startsWith("−")) {
    negative = !negative
    s = s.slice(1)
  } else if (s.startsWith("+")) s = s.slice(1)
  if (s.endsWith("-")) {
    negative = !negative
    s = s.slice(0, -1)
  }
  if (!/^[0-9.,]+$/.test(s) || !/[0-9]/.test(s)) return undefined
  const lastDot = s.lastIndexOf(".")
  const lastComma = s.lastIndexOf(",")
  let normalised: string
  if (lastDot >= 0 && lastComma >= 0) {
    // Both marks: the later one is the decimal mark.
    const decimal = lastDot > lastComma ? "." : ","
    const group = decimal === "." ? "," : "."
    normalised = s.split(group).join("").replace(decimal, ".")
  } else if (lastComma >= 0 || lastDot >= 0) {
    const mark = lastComma >= 0 ? "," : "."
    const parts = s.split(mark)
    const groupsOfThree =
      parts.length > 1 &&
      parts.slice(1).every((p) => p.length === 3) &&
      parts[0] !== "" &&
      parts[0]!.length <= 3
    if (parts.length > 2) {
      if (!groupsOfThree) return undefined
      normalised = parts.join("")
    } else if (groupsOfThree && mark === ",") {
      normalised = parts.join("") // 1,234 is one thousand two hundred thirty-four
    } else {
      // A single dot is a decimal mark (1.234 is one point two three four), so canonical decimals round-trip.
      normalised = parts.join(".")
    }
  } else normalised = s
  if (!/^\d*\.?\d+$|^\d+\.$/.test(normalised)) return undefined
  const n = Number(normalised)
  if (!Number.isFinite(n)) return undefined
  return negative ? -n : n
}

/**
 * What `toLocaleString("en-US", …)` would make, made once: `toLocaleString` builds a new formatter (its
 * locale data resolved again) at every call, the largest part of checking an answer's number.
 */
const PLAIN_DECIMAL = new Intl.NumberFormat("en-US", { useGrouping: false, maximumFractionDigits: 20 })

/**
 * `1234.5`, `-0.25`, `1000000`: no grouping, no exponent, no trailing zeros, never `-0`; at most 15 significant
 * and 20 fraction digits.
 */
export const canonicalDecimal = (n: number): string => {
  if (!Number.isFinite(n)) return String(n)
  if (Object.is(n, -0) || n === 0) return "0"
  const rounded = Number(n.toPrecision(15))
  let s = PLAIN_DECIMAL.format(Math.abs(rounded))
  if (s.includes(".")) s = s.replace(/0+$/, "").replace(/\.$/, "")
  return rounded < 0 && s !== "0" ? `-${s}` : s
}

export const collapseWhitespace = (text: string): string => text.replace(/\s+/g, " ").trim()

/**
 * A value as stored for its agent's value type: `number` → canonical decimal (the text unchanged when it
 * holds no single number), anything else → trimmed with collapsed whitespace.
 */
export const normalizeValue = (valueType: string, raw: string): string => {
  const text = collapseWhitespace(raw)
  if (valueType === "number") {
    const n = parseNumber(text)
    return n === undefined ? text : canonicalDecimal(n)
  }
  return text
}

const comparable = (text: string): string =>
  collapseWhitespace(text)
    .toLowerCase()
    .replace(/[\s.,;:'"`()[\]{}]/g, "")

/** Whether two values agree: numerically for `number`, else ignoring case, spacing and punctuation. */
export const valuesEqual = (valueType: string, a: string, b: string): boolean => {
  if (valueType === "number") {
    const x = parseNumber(a)
    const y = parseNumber(b)
    if (x !== undefined && y !== undefined)
      return Math.abs(x - y) <= 1e-9 * Math.max(1, Math.abs(x), Math.abs(y))
  }
  return comparable(a) === comparable(b)
}
