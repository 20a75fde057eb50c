/**
 * How a date answers an agent: the date of an agreement (after "dated", "as of", "entered into"; never the
 * date of another agreement it names), the date of a document (its first full date), a due date (labelled
 * as due).
 */
import { sameCandidate } from "./Candidates.ts"
import { type CueContext, CueSum, type Cues, noCues } from "./Cues.ts"
import { asksDocumentDate, firstFullDate } from "./Dates.ts"
import { sentenceAround } from "./Text.ts"

const DUE_DATE =
  /\b(due|vervaldatum|verval|uiterste|échéance|echeance|limite|fällig|fälligkeit|zahlungsziel|expir|delivery|shipping|order date|orderdatum|bestelldatum|date de commande|lieferdatum|leverdatum)/
/** Words that mark a due date (label or line). */
const DUE_WORDS = /\b(due|payable|pay by|payment by|zahlbar|fällig|échéance|vervaldatum)\b/

const DEFINITION_WORDS = /\b(means|shall mean|defined|definition)\b/i

const AGREEMENT_DATED = /\b(dated|as of|made|entered into|effective|executed)\b[^.]{0,40}$/i
/**
 * The date of another agreement the text names right before it: "the Mutual Non-Disclosure Agreement dated as
 * of …", "a certain Asset Purchase Agreement dated …", "that certain Agreement and Plan of Merger dated …".
 */
const OTHER_AGREEMENT_DATED =
  /\b(?:the|that|a|an|certain|such|said|any|its|their|our|your|prior|existing|original|attached)\s+(?:certain\s+)?(?:[\w’'&-]+,?\s+){1,9}?(?:agreement|nda|contract|amendment|plan)\b[^;]{0,100}?\b(?:dated|effective|entered into|executed)\b[^;]{0,20}$/i
const PERIOD_BOUND = /\b(through|until|till|ending on|ends on|no later than|prior to|before|after)\s+$/i
/** A name given to the date right after it: `(the “Effective Date”)`, `(the "Separation Date")`. */
const NAMED_DATE = /^[,\s]*\(\s*(?:the|this)?\s*[“"']([^”"']{3,40})[”"']\s*\)/i

const agreementDate = (c: CueContext, sum: CueSum): void => {
  const { profile, candidate, page, label, position, context } = c
  const { text } = page
  if (candidate.relative) sum.add(-1)
  if (DUE_DATE.test(label) && !DUE_DATE.test(profile.cueText))
    sum.add(-1, "another date (due, order or delivery date) than the one asked for")
  if (!/effectiv|commenc/.test(profile.cueText)) return
  sum.add(
    0.8 * (1 - Math.min(1, position * 3)),
    position < 0.1 ? "near the start of the document" : undefined,
  )
  // An agreement is dated in full: a day and month without a year is a deadline or a yearly date.
  if (!candidate.relative && candidate.strength < 0.85) sum.add(-2, "no year")
  const sentence = sentenceAround(text, candidate.start, candidate.end, 300)
  const named = NAMED_DATE.exec(text.slice(candidate.end, candidate.end + 60))?.[1]
  if (OTHER_AGREEMENT_DATED.test(text.slice(sentence.start, candidate.start))) {
    sum.add(-2)
    sum.refused = "the date of another agreement the text names"
  } else if (named !== undefined && /effective|commencement/i.test(named)) {
    sum.add(1, `named the "${named}"`)
    sum.decisive = true
  } else if (named !== undefined && /\bdate\b/i.test(named)) sum.add(-1, `named the "${named}", another date`)
  else if (AGREEMENT_DATED.test(text.slice(Math.max(0, candidate.start - 60), candidate.start))) {
    sum.add(0.7, 'after "dated/as of/entered into"')
    sum.decisive = true
  }
  // The end or the start of a period ("through December 31, 2012") dates no agreement.
  if (PERIOD_BOUND.test(text.slice(Math.max(0, candidate.start - 30), candidate.start)))
    sum.add(-1.5, "the bound of a period")
  // Dates in definitions, signatures and notice clauses rarely date the agreement.
  if (DEFINITION_WORDS.test(context)) sum.add(-0.3)
}

export const dateCues = (c: CueContext): Cues => {
  const { profile, candidate, page, label, line } = c
  if (profile.kind !== "date") return noCues
  const sum = new CueSum()
  if (/\b(effectiv|commencement|agreement|dat)\b/.test([...profile.terms].join(" "))) agreementDate(c, sum)
  if (
    page.index === 0 &&
    asksDocumentDate(profile.cueText) &&
    sameCandidate(firstFullDate(page.text, page.analysis.dates), candidate)
  ) {
    sum.add(1, "the first full date of the document")
    sum.decisive = true
  }
  // A due date asked for: a date whose label and line say nothing of "due" or "payable" is another date.
  if (/\bdue\b/.test(profile.cueText) && !DUE_WORDS.test(`${label} ${line}`))
    sum.add(-3.5, "not labelled as a due date")
  return sum.result()
}
