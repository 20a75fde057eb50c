/**
 * How a date answers an agent: the date of an agreement (after "dated", "as of", "entered into"; never the
 * date of another agreement it names), the date of a document (its first full date), a due date (labelled
 * as due).
 */
import { type CueContext, CueSum, type Cues, noCues } from "./Cues.ts"
import { asksDocumentDate, firstFullDate } from "./Dates.ts"

const DUE_DATE =
  /\b(due|vervaldatum|verval|uiterste|échéance|echeance|limite|fällig|fälligkeit|zahlungsziel|expir|delivery|shipping|order date|orderdatum|bestelldatum|date de commande|lieferdatum|leverdatum)/
/** Words that mark a due date (label or line). */
const DUE_WORDS = /\b(due|payable|pay by|payment by|zahlbar|fällig|échéance|vervaldatum)\b/

const DEFINITION_WORDS = /\b(means|shall mean|defined|definition)\b/i

const AGREEMENT_DATED = /\b(dated|as of|made|entered into|effective|executed)\b[^.]{0,40}$/i

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
  if (AGREEMENT_DATED.test(text.slice(Math.max(0, candidate.start - 60), candidate.start))) {
    sum.add(0.7, 'after "dated/as of/entered into"')
    sum.decisive = true
  }
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
    firstFullDate(page.text, page.analysis.dates) === candidate
  ) {
    sum.add(1, "the first full date of the document")
    sum.decisive = true
  }
  // A due date asked for: a date whose label and line say nothing of "due" or "payable" is another date.
  if (/\bdue\b/.test(profile.cueText) && !DUE_WORDS.test(`${label} ${line}`))
    sum.add(-3.5, "not labelled as a due date")
  return sum.result()
}
