/** Organisations: names that end with a legal suffix. */
import type { Candidate } from "./Candidates.ts"
import { LEGAL_SUFFIX_PATTERN } from "./Lexicon.ts"

export const SUFFIXES = `${LEGAL_SUFFIX_PATTERN}(?:,?\\s(?:${LEGAL_SUFFIX_PATTERN}))*(?![A-Za-z])`
/** Space between the words of a name: a name may wrap onto the next line but never spans a blank line. */
const NAME_SPACE = "(?:[ \\t\\u00a0]*\\n[ \\t\\u00a0]*|[ \\t\\u00a0]+)"
const ORGANISATION = new RegExp(
  `(?<![A-Za-z0-9])(?:[A-Z][A-Za-z0-9&'’.\\-]*,?${NAME_SPACE}(?:(?:of|and|&|de|the|for)${NAME_SPACE})?){0,6}${SUFFIXES}`,
  "g",
)

/** Trims a matched organisation name to its first capitalised word and a trailing legal suffix. */
const cleanOrganisation = (raw: string): string => {
  let s = raw.replace(/\s+/g, " ").trim()
  s = s.replace(
    /^(?:The\s+)?(?:(?:This|That|Such|Each|Any|Said|Our|Its|Their|Whereas|Between|And|By|Of)\s+)+/i,
    "",
  )
  // A logo's text above the name it abbreviates ("Free" over "Free SAS"): one name, not the two run together.
  s = s.replace(/^((?:\S+\s+){0,2}\S+)\s+\1(?=\s)/, "$1")
  return s.replace(/,$/, "")
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
