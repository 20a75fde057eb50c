/**
 * Postal addresses: a block of consecutive lines with street words, house numbers and a postcode — the
 * lines above the postcode's line that read as address lines, and after it a line or two that name a region
 * (`Selangor`, `Pahang Darul Makmur.`). The value is the block's lines joined by spaces, as printed, without
 * the specks and borders that OCR reads at a line's edges.
 */
import type { Candidate } from "./Candidates.ts"
import { NOT_ADDRESS, STREET_WORDS } from "./Lexicon.ts"
import { findOrganisations } from "./Organisations.ts"
import { cleanEdges } from "./Text.ts"

export interface Line {
  readonly start: number
  readonly end: number
  /** The line without what OCR reads at its edges. */
  readonly body: string
  /** Blank lines right before it. */
  readonly gap: number
}

export const linesOf = (text: string, limit: number): Array<Line> => {
  const out: Array<Line> = []
  let offset = 0
  let gap = 0
  for (const raw of text.split("\n")) {
    const start = offset
    offset += raw.length + 1
    const body = cleanEdges(raw)
    if (body === "") {
      gap++
      continue
    }
    out.push({ start, end: start + raw.length, body, gap })
    gap = 0
    if (out.length >= limit) break
  }
  return out
}

/** Postcodes: five digits (Malaysia, the US, Germany, France…), a UK postcode, or four digits before a town. */
const POSTCODE =
  /(?<![\d\-/.:])\d{5}(?![\d\-/.:])|\b[A-Z]{1,2}\d[A-Z\d]? \d[A-Z]{2}\b|(?<![\d\-/.:])\d{4}(?: [A-Z]{2})? (?=[A-Z][a-zA-Z]{2,})/
/** A house number that opens a line: `30,`, `42-46,`, `No.12,`, `Lot 3,`. */
const HOUSE_NUMBER = /^(?:(?:no|lot)\.?\s*)?\d+[A-Z]?(?:[-/]\d+[A-Z]?)*\s*,/i
/** Five or more digits run together with dashes or spaces: a telephone number. */
const PHONE = /\d{2,4}[- ]\d{3,4}[- ]?\d{3,4}|\(\d{2,4}\)\s?\d/

const hasLetters = (s: string) => (s.match(/[A-Za-z]/g)?.length ?? 0) >= Math.min(6, s.length / 2)

const isStop = (line: Line) => NOT_ADDRESS.test(line.body) || PHONE.test(line.body) || line.body.length > 70

export const isPostcodeLine = (line: Line) =>
  POSTCODE.test(line.body) && hasLetters(line.body) && !isStop(line)

export const isAddressLine = (line: Line) =>
  !isStop(line) &&
  (HOUSE_NUMBER.test(line.body) ||
    (hasLetters(line.body) && (STREET_WORDS.test(line.body) || /,$/.test(line.body))))

/** A line of letters between two address lines is one too (a district whose name OCR misread). */
const isBetweenAddressLines = (above: Line | undefined, line: Line) =>
  above !== undefined &&
  !isStop(line) &&
  hasLetters(line.body) &&
  isAddressLine(above) &&
  !isOrganisation(line)

/** A region or town alone on its line after the postcode: a few words of letters, nothing else. */
const isRegionLine = (line: Line) =>
  !isStop(line) &&
  line.body.length <= 32 &&
  /^[A-Za-z][A-Za-z .,'-]*$/.test(line.body) &&
  line.body.split(/\s+/).length <= 4

const isOrganisation = (line: Line) => findOrganisations(line.body).length > 0

/** Address blocks of a page, in page order (among its first 60 lines). */
export const findAddresses = (text: string): Array<Candidate> => {
  const lines = linesOf(text, 60)
  const out: Array<Candidate> = []
  let i = 0
  while (i < lines.length) {
    if (!isPostcodeLine(lines[i]!)) {
      i++
      continue
    }
    let first = i
    const free = (k: number) => out.length === 0 || lines[k]!.start >= out[out.length - 1]!.end
    while (first > 0 && i - first < 4 && lines[first]!.gap <= 1 && free(first - 1)) {
      const above = lines[first - 1]!
      if (isOrganisation(above)) break
      if (!isAddressLine(above) && !isBetweenAddressLines(lines[first - 2], above)) break
      first--
    }
    let last = i
    while (
      last + 1 < lines.length &&
      last - i < 2 &&
      lines[last + 1]!.gap === 0 &&
      (isRegionLine(lines[last + 1]!) || isPostcodeLine(lines[last + 1]!))
    )
      last++
    const block = lines.slice(first, last + 1)
    const value = block.map((l) => l.body).join(" ")
    const streets = block.some((l) => STREET_WORDS.test(l.body) || HOUSE_NUMBER.test(l.body))
    const start = block[0]!.start
    const end = block[block.length - 1]!.end
    out.push({
      kind: "address",
      value,
      start,
      end,
      valueStart: start,
      valueEnd: end,
      pattern: `address block of ${block.length} line${block.length === 1 ? "" : "s"} (${streets ? "street words and a postcode" : "a postcode"})`,
      strength: streets ? 0.9 : 0.6,
    })
    i = last + 1
  }
  return out
}
