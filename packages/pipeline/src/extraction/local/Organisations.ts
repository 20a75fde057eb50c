/** Organisations: names that end with a legal suffix. */
import type { Candidate } from "./Candidates.ts"
import { LEGAL_SUFFIX_PATTERN } from "./Lexicon.ts"

/** A short qualifier in parentheses inside a name: a region or a branch (`(M)`, `(KL)`, `(KUCHAI)`). */
const QUALIFIER = "\\([A-Z]{1,8}\\)"
export const SUFFIXES = `${LEGAL_SUFFIX_PATTERN}(?:,?\\s(?:${QUALIFIER}\\s)?(?:${LEGAL_SUFFIX_PATTERN}))*(?![A-Za-z])`
/** Space between the words of a name: a name may wrap onto the next line but never spans a blank line. */
const NAME_SPACE = "(?:[ \\t\\u00a0]*\\n[ \\t\\u00a0]*|[ \\t\\u00a0]+)"
const ORGANISATION = new RegExp(
  `(?<![A-Za-z0-9])(?:(?:[A-Z0-9][A-Za-z0-9&'’.\\-/]*|${QUALIFIER}),?${NAME_SPACE}(?:(?:of|and|&|de|the|for)${NAME_SPACE})?){0,6}${SUFFIXES}`,
  "g",
)

/** A word that is no word of a name: letters and digits mixed at random (`Hok4p98`), as OCR reads specks. */
const SPECK = /^(?=.*\d)(?=.*[a-z])[A-Za-z0-9]+$/

/**
 * The lines of a name that wraps: from the line of its legal suffix, the lines above it that read as the same
 * name (written in the same case, no specks); a line of another kind above a name is not part of it.
 */
const ownLines = (raw: string): string => {
  const lines = raw.split("\n")
  const last = lines[lines.length - 1]!
  const allCaps = !/[a-z]/.test(last)
  let first = lines.length - 1
  while (first > 0) {
    const words = lines[first - 1]!.trim().split(/\s+/)
    const fits = words.every((w) => !SPECK.test(w) && (!allCaps || !/[a-z]/.test(w)))
    if (!fits) break
    first--
  }
  return lines.slice(first).join("\n")
}

/** Trims a matched organisation name to its first capitalised word and a trailing legal suffix. */
const cleanOrganisation = (raw: string): string => {
  let s = ownLines(raw).replace(/\s+/g, " ").trim()
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
    const value = cleanOrganisation(raw)
    if (value.split(/\s+/).length < 2 || !/^[A-Z0-9]/.test(value)) continue
    const offset = raw.indexOf(value.slice(0, 8))
    const start = m.index + Math.max(0, offset)
    const end = m.index + raw.length
    out.push({
      kind: "name",
      value,
      start,
      end,
      valueStart: start,
      valueEnd: end,
      pattern: `organisation name "${value}" (legal suffix)`,
      strength: 0.7,
    })
  }
  return out
}
