/** Organisations: names that end with a legal suffix. */
import type { Candidate } from "./Candidates.ts"
import { LEGAL_SUFFIX_PATTERN } from "./Lexicon.ts"
import { inCaseOf, vocabulary, vocabularyWord } from "./OcrWords.ts"
import { cleanEdges, spanCandidate } from "./Text.ts"

/** A short qualifier in parentheses inside a name: a region or a branch (`(M)`, `(KL)`, `(KUCHAI)`). */
const QUALIFIER = "\\([A-Z]{1,8}\\)"
export const SUFFIXES = `${LEGAL_SUFFIX_PATTERN}(?:,?\\s(?:${QUALIFIER}\\s)?(?:${LEGAL_SUFFIX_PATTERN}))*(?![A-Za-z])`
export const TRAILING_SUFFIXES = new RegExp(`[\\s,]*(?:${QUALIFIER}\\s)?${SUFFIXES}$`)
/** Space between the words of a name: a name may wrap onto the next line but never spans a blank line. */
const NAME_SPACE = "(?:[ \\t\\u00a0]*\\n[ \\t\\u00a0]*|[ \\t\\u00a0]+)"
const ORGANISATION = new RegExp(
  `(?<![A-Za-z0-9])(?:(?:[A-Z0-9][A-Za-z0-9&'’.\\-/]*|${QUALIFIER}),?${NAME_SPACE}(?:(?:of|and|&|de|the|for)${NAME_SPACE})?){0,6}${SUFFIXES}`,
  "g",
)

/**
 * A word that is no word of a name: letters and digits mixed at random (`Hok4p98`, `AOE036`), as OCR reads
 * specks.
 */
const SPECK = /^(?=.*\d)(?=.*[a-z])[A-Za-z0-9]+$|^(?=.*\d)(?=[A-Z0-9]*[A-Z]\d)[A-Z0-9]{5,}$/
/** The title of a document or a greeting above the name of its issuer: never part of the name. */
const TITLE = /\b(invoice|receipt|bill|welcome|simplified|tax|cash|sales|order|tel|gst|date)\b/i

/** A person or a person's office above a company's name in an address block (`Mr. Thomas Hook`, `President and CEO`). */
const PERSON_OR_ROLE =
  /^(?:(?:Mr|Mrs|Ms|Dr)\.?\s|(?:Attn|Attention)\b)|\b(?:President|CEO|Chief|Director|Directors|Officer|Vice|Manager|Secretary|Treasurer|Counsel|Chairman)\b/i
/** A line that ends with a legal suffix is another organisation's name. */
const ENDS_WITH_SUFFIX = new RegExp(`(?<![A-Za-z])${LEGAL_SUFFIX_PATTERN}\\W*$`)

/**
 * The lines of a name that wraps: from the line of its legal suffix, the whole lines above it that read as
 * the same name (written in the same case, no specks, no title, more than a letter or two, not ending in a
 * number as a branch's or an outlet's code does); a line of another kind above a name, or the end of a line
 * that begins with something else, is not part of it.
 */
const ownLines = (raw: string, wholeFirstLine: boolean): string => {
  const lines = raw.split("\n")
  const last = lines[lines.length - 1]!
  const allCaps = !/[a-z]/.test(last)
  let first = lines.length - 1
  while (first > (wholeFirstLine ? 0 : 1)) {
    const line = lines[first - 1]!.trim()
    const words = line.split(/\s+/)
    const fits =
      !TITLE.test(line) &&
      !PERSON_OR_ROLE.test(line) &&
      !ENDS_WITH_SUFFIX.test(line) &&
      line.replace(/[^A-Za-z]/g, "").length > 2 &&
      !/^\d+$/.test(words[words.length - 1]!) &&
      words.every((w) => !SPECK.test(w) && (!allCaps || !/[a-z]/.test(w)))
    if (!fits) break
    first--
  }
  return lines.slice(first).join("\n")
}

/** Any letter may be misread in a pair this particular. */
const SUFFIX_WORDS = vocabulary(["SDN", "BHD"], false)

/**
 * The text with OCR's misreadings of the Malaysian suffixes read back letter for letter, so offsets stay:
 * `SON BHD`, `Stn Bhd`, `SDN EHD` are `SDN BHD`; `5/B` after a name in capitals is `S/B`.
 */
export const readLegalSuffixes = (text: string): string =>
  text
    .replace(/(?<![A-Za-z0-9])([A-Za-z0-9]{3})(\.?\s?)([A-Za-z0-9]{3})(?![A-Za-z0-9])/g, (all, a, gap, b) =>
      vocabularyWord(a, SUFFIX_WORDS) === "SDN" && vocabularyWord(b, SUFFIX_WORDS) === "BHD"
        ? `${inCaseOf("SDN", a)}${gap}${inCaseOf("BHD", b)}`
        : all,
    )
    .replace(/(?<=[A-Z]{2,} )(?:5\/[B8]|S\/8)(?=\s*(?:\(|$))/gm, "S/B")

/** Trims a matched organisation name to its first capitalised word and a trailing legal suffix. */
const cleanOrganisation = (raw: string, wholeFirstLine: boolean): string => {
  let s = ownLines(raw, wholeFirstLine).replace(/\s+/g, " ").trim()
  // A sentence that ends before the name ("… Confidential Information. The Company") is not part of it.
  s = s.replace(/^.*\b[A-Za-z][a-z]{3,}\.\s+(?=[A-Z])/, "")
  s = s.replace(
    /^(?:The\s+)?(?:(?:This|That|Such|Each|Any|Said|Our|Its|Their|Whereas|Between|And|By|Of)\s+)+/i,
    "",
  )
  // A logo's text above the name it abbreviates ("Free" over "Free SAS"): one name, not the two run together.
  s = s.replace(/^((?:\S+\s+){0,2}\S+)\s+\1(?=\s)/, "$1")
  // The number of a list item is not part of the name ("1. Acme Inc." is "Acme Inc.").
  return s.replace(/^\(?\d{1,2}[.)]\s+/, "").replace(/,$/, "")
}

/** Organisation names ending with a legal suffix (Inc., LLC, Ltd, GmbH, S.A., Corp …). */
export const findOrganisations = (text: string): Array<Candidate> => {
  const out: Array<Candidate> = []
  for (const m of text.matchAll(ORGANISATION)) {
    const raw = m[0]
    // A name begun at the end of a line of running text wraps from it; one begun after something else on a
    // short line (a receipt's specks, a logo's letters) begins on the next line.
    const lineStart = text.lastIndexOf("\n", m.index - 1) + 1
    const lineEnd = text.indexOf("\n", m.index)
    const wholeFirstLine =
      cleanEdges(text.slice(lineStart, m.index)) === "" ||
      (lineEnd < 0 ? text.length : lineEnd) - lineStart >= 40
    const value = cleanOrganisation(raw, wholeFirstLine)
    if (value.split(/\s+/).length < 2 || !/^[A-Z0-9]/.test(value)) continue
    // A legal suffix after a letter or two of a name OCR broke up (`KI SDN BHD`) names nobody.
    if (value.replace(TRAILING_SUFFIXES, "").replace(/[^A-Za-z]/g, "").length < 3) continue
    const offset = raw.indexOf(value.slice(0, 8))
    const start = m.index + Math.max(0, offset)
    const end = m.index + raw.length
    out.push(spanCandidate("name", value, start, end, `organisation name "${value}" (legal suffix)`, 0.7))
  }
  return out
}
