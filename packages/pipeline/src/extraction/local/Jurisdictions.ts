/** Jurisdictions: the state or country whose laws govern, from governing-law and venue clauses. */
import type { Candidate } from "./Candidates.ts"
import { COUNTRIES, US_STATES } from "./Lexicon.ts"
import { escapeRegExp } from "./Text.ts"

const STATE_NAMES = [...US_STATES].sort((a, b) => b.length - a.length)
const PLACE_NAMES = [...STATE_NAMES, ...COUNTRIES].sort((a, b) => b.length - a.length)
const PLACE = `(?:${PLACE_NAMES.map(escapeRegExp).join("|")})`
const LAW_PATTERNS: ReadonlyArray<readonly [RegExp, string, number]> = [
  [
    new RegExp(
      `\\b(?:governed\\s+by|construed\\s+(?:and\\s+enforced\\s+)?(?:in\\s+accordance\\s+with|under)|interpreted\\s+(?:in\\s+accordance\\s+with|under)|subject\\s+to)[^.;]{0,120}?\\blaws?\\s+of\\s+(?:the\\s+)?(?:State\\s+of\\s+|Commonwealth\\s+of\\s+)?(${PLACE})`,
      "gi",
    ),
    "governed by the laws of",
    1,
  ],
  [
    new RegExp(`\\blaws?\\s+of\\s+the\\s+(?:State|Commonwealth)\\s+of\\s+(${PLACE})`, "gi"),
    "laws of the State of",
    0.85,
  ],
  [new RegExp(`\\b(?:internal\\s+)?laws?\\s+of\\s+(?:the\\s+)?(${PLACE})`, "gi"), "laws of", 0.75],
  [new RegExp(`\\b(${PLACE})\\s+law\\b`, "g"), "X law", 0.6],
  [
    new RegExp(`\\bcourts?\\s+(?:located\\s+)?(?:of|in)\\s+(?:the\\s+)?(?:State\\s+of\\s+)?(${PLACE})`, "gi"),
    "courts of",
    0.45,
  ],
]

const canonicalPlace = (raw: string): string => {
  const lower = raw.toLowerCase().replace(/\s+/g, " ")
  return PLACE_NAMES.find((p) => p.toLowerCase() === lower)?.replace(/^the /, "") ?? raw
}

/** Jurisdictions: "governed by the laws of the State of X", "laws of X", "X law", "courts of X". */
export const findJurisdictions = (text: string): Array<Candidate> => {
  const out: Array<Candidate> = []
  const seen = new Set<number>()
  for (const [re, name, strength] of LAW_PATTERNS) {
    for (const m of text.matchAll(re)) {
      const place = m[1]!
      const valueStart = m.index + m[0].lastIndexOf(place)
      if (seen.has(valueStart)) continue
      // Case-insensitive patterns must still meet a capitalised place name.
      if (!/^[A-Z]/.test(place)) continue
      seen.add(valueStart)
      out.push({
        kind: "jurisdiction",
        value: canonicalPlace(place),
        start: m.index,
        end: valueStart + place.length,
        valueStart,
        valueEnd: valueStart + place.length,
        pattern: `"${name}" pattern`,
        strength,
      })
    }
  }
  return out
}
