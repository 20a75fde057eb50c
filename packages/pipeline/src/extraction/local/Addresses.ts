/**
 * Postal addresses: a block of consecutive lines with street words, house numbers and a postcode — the
 * lines above the postcode's line that read as address lines, and after it a line or two that name a region
 * (`Selangor`, `Pahang Darul Makmur.`). The value is the block's lines joined by spaces, as printed, without
 * the specks and borders that OCR reads at a line's edges.
 */
import type { Candidate } from "./Candidates.ts"
import { ADDRESS_WORDS, NOT_ADDRESS, STREET_WORDS } from "./Lexicon.ts"
import { inCaseOf, readWords, vocabulary } from "./OcrWords.ts"
import { findOrganisations } from "./Organisations.ts"
import { cleanEdges, spanCandidate } from "./Text.ts"

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
  /(?<![\w\-/.:(])\d{5}(?![\w\-/.:)])|\b[A-Z]{1,2}\d[A-Z\d]? \d[A-Z]{2}\b|(?<![\d\-/.:])\d{4}(?: [A-Z]{2})? (?=[A-Z][a-zA-Z]{2,})/
/** A house number that opens a line: `30,`, `42-46,`, `No.12,`, `Lot 3,`. */
const HOUSE_NUMBER = /^(?:(?:no|lot)\.?\s*)?\d+[A-Z]?(?:[-/]\d+[A-Z]?)*\s*,/i
/** Five or more digits run together with dashes or spaces: a telephone number. */
const PHONE = /\d{2,4}[- ]\d{3,4}[- ]?\d{3,4}|\(\d{2,4}\)\s?\d/

const hasLetters = (s: string) => (s.match(/[A-Za-z]/g)?.length ?? 0) >= Math.min(6, s.length / 2)

const isStop = (line: Line) => NOT_ADDRESS.test(line.body) || PHONE.test(line.body) || line.body.length > 70

export const isPostcodeLine = (line: Line) =>
  POSTCODE.test(line.body) && hasLetters(line.body) && !isStop(line) && !isOrganisation(line)

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
  /[A-Za-z]{3}/.test(line.body) &&
  !/invoice|receipt/i.test(line.body) &&
  line.body.split(/\s+/).length <= 4

/** A line of street words after the postcode (a branch's own street or district: `1320-TMN BATU`). */
const isStreetLine = (line: Line) =>
  !isStop(line) &&
  !isOrganisation(line) &&
  hasLetters(line.body) &&
  STREET_WORDS.test(readStreetWords(line.body))

const ADDRESS_VOCABULARY = vocabulary(ADDRESS_WORDS)
const readStreetWords = (body: string) => readWords(body, ADDRESS_VOCABULARY)
const OPENERS = ["LOT", "NO"]

/**
 * The word that opens an address line before its number, `Lot` or `No`, as OCR misreads it (`L.ot`, `1.ot`,
 * `Loi`, `CLOT`, `Na.`): dots dropped, `1` and `0` read as `L` and `O`, a letter off or one more in front.
 */
const readOpener = (line: string): string => {
  const m =
    /^([A-Za-z0-9][A-Za-z0-9.]{0,4}?)(\.?)(?=\s+\d)/.exec(line) ?? /^([A-Za-z]{2,3})(\.)(?=\d)/.exec(line)
  if (!m || !/[A-Za-z]/.test(m[1]!)) return line
  const read = m[1]!.replace(/\./g, "").toUpperCase().replace(/0/g, "O").replace(/1/g, "L")
  const word = OPENERS.find(
    (w) =>
      read === w ||
      read.slice(1) === w ||
      (read.length === w.length && [...read].filter((c, k) => c !== w[k]).length === 1),
  )
  return word === undefined
    ? line
    : `${inCaseOf(word, m[1]!)}${m[2]}${line.slice(m[1]!.length + m[2]!.length)}`
}

/**
 * A line without a speck OCR read as letters at its end, which `cleanEdges` (shared with names) keeps: a
 * letter after the postcode (`43500 L`), or a capital and a small letter (`Co`) after a comma or on a line
 * printed in capitals; a street word's short form (`High St`) stays, and so does a pair of capitals
 * (`Springfield, IL`).
 */
const withoutTrailingSpeck = (body: string): string => {
  const m = /\s+([A-Za-z]{1,2})$/.exec(body)
  if (!m) return body
  const before = body.slice(0, m.index)
  const speck = m[1]!
  const afterPostcode = speck.length === 1 && /(?<![\d\-/.])\d{5}$/.test(before)
  const mixedPair =
    /^[A-Z][a-z]$/.test(speck) &&
    !STREET_WORDS.test(speck) &&
    (before.endsWith(",") || before === before.toUpperCase())
  return afterPostcode || mixedPair ? before : body
}

/** The digit of a postcode that OCR read as a letter or a sign of like shape. */
const DIGIT_OF: Readonly<Record<string, string>> = { S: "5", $: "5", O: "0", I: "1", l: "1", B: "8", Z: "2" }

/**
 * Characters OCR reads for others of like shape where an address never prints them: a unit's `S` read as
 * `$` or `§` before its number (`$117,`, `Lot §319`), a `1` read as `l` or `I` in the number after `No`
 * (`Nol,`), a floor's number read as a letter or lost (`SRD FLR`, `IST FLOOR`, `RD FLR`), and a digit of a
 * postcode before its town read as a letter (`S2100 KEPONG`).
 */
const readSigns = (line: string): string =>
  line
    .replace(/(^|\b(?:lot|unit|no)\.?\s*)[$§](?=\d)/gi, "$1S")
    .replace(/\b(No\.?\s?)([lI]|[lI\d]*\d[lI\d]*)(?=[,\s]|$)/g, (all, no: string, digits: string) =>
      /[lI]/.test(digits) ? `${no}${digits.replace(/[lI]/g, "1")}` : all,
    )
    .replace(/(?<![\w$])(?:[S$](?=RD\b)|[Il|](?=ST\b)|Z(?=ND\b))(?=\w+\s+(?:FLR|FLOOR|FL|LEVEL)\b)/gi, (c) =>
      /[S$]/i.test(c) ? "3" : /z/i.test(c) ? "2" : "1",
    )
    // A floor's ordinal that lost its digit at the line's start: `RD` follows a 3 and `ND` a 2 (a building
    // has few floors).
    .replace(
      /^(RD|ND)(?=\s+(?:FLR|FLOOR|FL|LEVEL)\b)/i,
      (ordinal) => `${/r/i.test(ordinal) ? "3" : "2"}${ordinal}`,
    )
    .replace(
      /(^|[\s,])(?=[\dSOIlBZ$]{5}\s+[A-Z][A-Za-z]{2,})(\d*[SOIlBZ$]\d*)(?=\s)/g,
      (all, before: string, code: string) =>
        (code.match(/\d/g)?.length ?? 0) === 4
          ? `${before}${code.replace(/[^\d]/, (c) => DIGIT_OF[c]!)}`
          : all,
    )

/** Letters OCR reads as digits of like shape in a lot's or a house's suffix (`1851-4` for `1851-A`). */
const LETTER_OF_SUFFIX: Readonly<Record<string, string>> = {
  "4": "A",
  "8": "B",
  "6": "G",
  "0": "O",
  "5": "S",
}

/**
 * Numbers and codes of an address that OCR read with a letter as a digit, told by the address itself or by
 * the way such codes are written:
 * - a pair of lots or houses with one number and two suffixes (`1851-A & 1851-B`): when one suffix is a
 *   letter, the other is one too, so a digit of like shape there is read as its letter (`1851-4 & 1851-B`);
 * - a Malaysian section's street code (`Jalan SS15/4B`, `Jln SS21/35`): the section's two letters S, read
 *   as `5`, `8` or `$`, before its number and the slash.
 */
const readCodes = (value: string): string =>
  value
    .replace(
      /\b(\d+)-([A-Z\d])(\s*&\s*)\1-([A-Z\d])\b/g,
      (all, lot: string, a: string, and: string, b: string) => {
        const letter = (own: string, other: string) =>
          /[A-Z]/.test(other) && /\d/.test(own) ? (LETTER_OF_SUFFIX[own] ?? own) : own
        return /[A-Z]/.test(a) === /[A-Z]/.test(b)
          ? all
          : `${lot}-${letter(a, b)}${and}${lot}-${letter(b, a)}`
      },
    )
    .replace(
      /\b(jalan|jln)(\s+)[S58$]{2}(?=\d{1,2}\/)/gi,
      (_, street: string, space: string) => `${street}${space}SS`,
    )

/**
 * An address block's lines as one value: each line's opener and its words of the address vocabulary read
 * back from OCR's misreadings, marks glued to the start of a word (`*Selangor`) dropped, no space before a
 * comma or a full stop (`NO .2`), which print never has, and no comma at its end.
 */
const blockValue = (block: ReadonlyArray<Line>): string =>
  readCodes(block.map((l) => readStreetWords(readOpener(readSigns(withoutTrailingSpeck(l.body))))).join(" "))
    .replace(/(^|\s)[*«»~|]+(?=[A-Za-z])/g, "$1")
    .replace(/~/g, "")
    .replace(/\s+([,.])(?=[\s\d]|$)/g, "$1")
    // An address ends with a full stop or nothing: a comma at its end is OCR's reading of a full stop.
    .replace(/,$/, ".")

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
      last - i < 3 &&
      lines[last + 1]!.gap === 0 &&
      (isRegionLine(lines[last + 1]!) || isPostcodeLine(lines[last + 1]!) || isStreetLine(lines[last + 1]!))
    )
      last++
    out.push(addressBlock(lines.slice(first, last + 1), "a postcode"))
    i = last + 1
  }
  if (!out.some((c) => c.start < (lines[HEAD_LINES]?.start ?? text.length))) {
    const under = blockUnderName(lines)
    if (under) out.unshift(addressBlock(under, "under the name at the head"))
  }
  return out
}

const addressBlock = (block: ReadonlyArray<Line>, how: string): Candidate => {
  const streets = block.some((l) => STREET_WORDS.test(l.body) || HOUSE_NUMBER.test(l.body))
  const start = block[0]!.start
  const end = block[block.length - 1]!.end
  const lines = `${block.length} line${block.length === 1 ? "" : "s"}`
  const pattern = `address block of ${lines} (${streets ? "street words and " : ""}${how})`
  return spanCandidate(
    "address",
    blockValue(block),
    start,
    end,
    pattern,
    streets && how === "a postcode" ? 0.9 : 0.6,
  )
}

/** How many lines of a page's head an address without a postcode is looked for in. */
const HEAD_LINES = 12

/**
 * An address printed without a postcode (`LOT-18A-2, BERJAYA TIMES SQUARE,` / `KUALA LUMPUR.`): the lines
 * right under the first organisation's name at the head, up to a telephone, tax or registration line, when
 * they have street words or a house number.
 */
const blockUnderName = (lines: ReadonlyArray<Line>): ReadonlyArray<Line> | undefined => {
  const name = lines.slice(0, HEAD_LINES).findIndex(isOrganisation)
  if (name < 0) return undefined
  const block: Array<Line> = []
  for (const line of lines.slice(name + 1, name + 5)) {
    if (line.gap > 1 || isStop(line) || isOrganisation(line)) break
    if (!isAddressLine(line) && !isRegionLine(line)) break
    block.push(line)
  }
  const streets = block.some((l) => STREET_WORDS.test(l.body) || HOUSE_NUMBER.test(l.body))
  return streets ? block : undefined
}
