/**
 * How a period answers an agent that asks how long an agreement lasts: a clause that says how long the
 * agreement or its obligations last states its term; covenants' periods, notices and deadlines do not.
 */
import { type CueContext, CueSum, type Cues, noCues } from "./Cues.ts"

/** A sentence that says how long an agreement or its obligations last. */
const AGREEMENT_TERM =
  /\b(this|the)\s+(letter\s+)?(agreement|undertaking)\b[^.]{0,120}\b(remain|continue|terminat|expir|valid|effective|in (full )?force|be bound|term\b)|\bterm of (this|the)\b|\bthe term (shall|will) be\b|\bobligations?\b[^.]{0,160}\b(remain|continue|surviv|terminat|expir|bound|in effect)|\b(remain|continue) in (full )?(force|effect)\b/
const TERM_HEADING =
  /(?:^|\n)\s*(?:\d+(?:\.\d+)*\.?\s*)?(?:term|duration|term and termination)\.?\s*(?:\n|\.|:)[^\n]{0,300}$/i
/** Words that make a period a deadline: "within …", "… prior to", "… after signing it". */
const DEADLINE_BEFORE = /\b(within|no later than|not later than|at least|have|has)\s+$/i
const DEADLINE_AFTER =
  /^\s*(prior to|before|after (signing|executing|execution|receipt|receiving)|of (joining|receipt))\b/i
/** The agreement's term in so many words: "the term of this Agreement", "this Agreement shall terminate". */
const STATED_TERM =
  /\bterm of (this|the) (letter )?agreement (is|shall|will)\b|\bshall have a term of\b|\bthe term (shall|will) be\b|\b(this|the) (letter )?agreement (shall|will) (terminate|expire|remain|continue)\b/
/** A period counted from the end of the agreement or of talks: how long obligations survive it, not its term. */
const FROM_TERMINATION =
  /^[^.;]{0,25}?\b(after|following|from|of)\s+(the\s+)?(date\s+of\s+)?(any\s+)?(such\s+)?(termination|expiration|expiry)\b/i
/** Periods of covenants, notices and options, which are not the agreement's term. */
const OTHER_PERIOD =
  /\b(solicit|hire|employ(?!ee|er)|recruit|standstill|acquire|purchase|tender offer|proxy|compet|notice|vest|exercisable|option|retention|severance|salary|thereafter|revoke|revocation|following (the |any )?termination|after (the |any )?termination)/

export const termCues = ({ profile, candidate, page, context, labelScore }: CueContext): Cues => {
  if (profile.kind !== "duration" || !/\b(term|duration|last|long|period|valid)/.test(profile.cueText))
    return noCues
  const { text } = page
  const sum = new CueSum()
  const clause = context.toLowerCase()
  // "For a period of" labels every covenant: the clause decides, not the label.
  sum.add(-labelScore / 2)
  // A clause that also speaks of a revocation, a notice or a covenant states the term only in so many words.
  const otherPeriod = OTHER_PERIOD.test(clause) && !STATED_TERM.test(clause)
  if (
    TERM_HEADING.test(text.slice(Math.max(0, candidate.start - 400), candidate.start)) ||
    (AGREEMENT_TERM.test(clause) && !otherPeriod)
  ) {
    sum.add(1.2, "states how long the agreement or its obligations last")
    sum.decisive = true
  } else sum.add(-1.5)
  if (otherPeriod) sum.add(-1, "a restriction period rather than the term")
  // "within seven days", "no later than ninety (90) days prior to": a deadline, not a duration of the agreement.
  if (
    DEADLINE_BEFORE.test(text.slice(Math.max(0, candidate.start - 30), candidate.start)) ||
    DEADLINE_AFTER.test(text.slice(candidate.end, candidate.end + 30))
  ) {
    sum.add(-2, "a deadline rather than the term")
    sum.decisive = false
  }
  if (FROM_TERMINATION.test(text.slice(candidate.end, candidate.end + 80))) {
    sum.add(-2, "counted from the end of the agreement: how long obligations survive it")
    sum.decisive = false
  }
  if (/\bday/.test(candidate.value)) sum.add(-0.6)
  return sum.result()
}
