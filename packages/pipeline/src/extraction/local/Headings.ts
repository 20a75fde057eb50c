/**
 * Names without a legal suffix at the head of a page — a shop's or a brand's name on a receipt or a
 * letterhead (`DOMINO'S PIZZA`, `Best Denki Malaysia (308282-4)`): a line that reads as a name, right above
 * its address or its registration or tax number, or followed by its registration number on its own line.
 */
import { isAddressLine, isPostcodeLine, type Line, linesOf } from "./Addresses.ts"
import type { Candidate } from "./Candidates.ts"
import { NOT_ADDRESS } from "./Lexicon.ts"
import { SUFFIXES } from "./Organisations.ts"
import { spanCandidate } from "./Text.ts"

/** A company's registration or tax number on its own line: `(Co No. 315481-T)`, `REG. NO:00148397-H`, `(002049088-U)`. */
const REGISTRATION_LINE =
  /^\(?\s*(?:co\.?\s*(?:no|reg)|company\s*(?:no|reg)|reg(?:istration)?\.?\s*no|ro[cb]|brn|gst|sst|tax\s*id|vat)\b|^\(?\s*[A-Z]?\d{5,}[- ]?[A-Z0-9]?\s*\)?$/i
/** A registration number after a name on its line: `Best Denki Malaysia (308282-4)`. */
const TRAILING_REGISTRATION = /\s*\(\s*[A-Z]?\d{5,}[- ]?[A-Z0-9]?\s*\)\s*$/
/** A document's title or a greeting, not a name. */
const TITLE =
  /\b(invoice|receipt|bill|welcome|thank|simplified|tax|cash|sales|order|official|copy|duplicate|customer|member|table)\b/i

const ENDS_WITH_SUFFIX = new RegExp(`(?<![A-Za-z])${SUFFIXES}\\W*$`)

/** How many lines of a page's head are looked at. */
const HEAD_LINES = 12

/** A line that reads as a name: a few words that start with capitals, letters mostly, no title. */
const readsAsName = (body: string): boolean => {
  const words = body.split(/\s+/)
  const letters = body.replace(/[^A-Za-z]/g, "").length
  return (
    body.length <= 50 &&
    words.length <= 6 &&
    (words.length >= 2 ? letters >= 3 : letters >= 4) &&
    letters >= 0.7 * body.replace(/\s/g, "").length &&
    words.every((w) => /^[A-Z0-9&(]/.test(w)) &&
    !TITLE.test(body) &&
    !NOT_ADDRESS.test(body)
  )
}

const introducesName = (next: Line | undefined): boolean =>
  next !== undefined &&
  next.gap <= 1 &&
  (REGISTRATION_LINE.test(next.body) || isAddressLine(next) || isPostcodeLine(next))

/** The first name line of a page's head (none when the head names an organisation with a legal suffix). */
export const findHeadingNames = (text: string): Array<Candidate> => {
  const lines = linesOf(text, HEAD_LINES)
  for (const [i, line] of lines.entries()) {
    const body = line.body.replace(TRAILING_REGISTRATION, "")
    const numbered = body !== line.body
    // A line with a legal suffix is an organisation's, read or rejected as one.
    if (!readsAsName(body) || isAddressLine(line) || isPostcodeLine(line) || ENDS_WITH_SUFFIX.test(body))
      continue
    if (!numbered && !introducesName(lines[i + 1])) continue
    const start = line.start + text.slice(line.start, line.end).indexOf(body)
    const above = numbered || REGISTRATION_LINE.test(lines[i + 1]!.body) ? "registration number" : "address"
    return [
      spanCandidate(
        "name",
        body,
        start,
        start + body.length,
        `heading name "${body}" (above its ${above})`,
        0.5,
      ),
    ]
  }
  return []
}
