/** Durations: how long something lasts, in digits or in words. */
import { canonicalDecimal } from "@dxs/domain/Values"
import type { Candidate } from "./Candidates.ts"
import { NUMBER_WORD_PATTERN, numberWord } from "./Lexicon.ts"

const UNIT = "(year|month|week|day|business day|calendar day)s?"
const DURATION = new RegExp(
  `\\b(?:(?<w>${NUMBER_WORD_PATTERN})\\s*(?:\\((?<wd>\\d+(?:\\.\\d+)?)\\))?|(?<d>\\d+(?:\\.\\d+)?)\\s*(?:\\((?:${NUMBER_WORD_PATTERN})\\))?)[\\s-]*(?:\\(\\d+\\)\\s*)?(?<u>${UNIT})\\b`,
  "gi",
)

/** Durations: `24 months`, `two (2) years`, `one-year`. Value: `2 years`, `1 year`. */
export const findDurations = (text: string): Array<Candidate> => {
  const out: Array<Candidate> = []
  for (const m of text.matchAll(DURATION)) {
    const g = m.groups!
    const n = g.wd ? Number(g.wd) : g.d ? Number(g.d) : numberWord(g.w ?? "")
    if (n === undefined || !Number.isFinite(n) || n <= 0 || n > 1000) continue
    const unit = g.u!.toLowerCase().replace(/s$/, "")
    const end = m.index + m[0].length
    out.push({
      kind: "duration",
      value: `${canonicalDecimal(n)} ${unit}${n === 1 ? "" : "s"}`,
      start: m.index,
      end,
      valueStart: m.index,
      valueEnd: end,
      pattern: `duration "${m[0]}"`,
      strength: 0.8,
      amount: n,
    })
  }
  return out
}
