/** How an amount answers an agent that asks for a total: subtotals, amounts before tax and tax lines are not. */
import { sameCandidate } from "./Candidates.ts"
import { type CueContext, CueSum, type Cues, noCues } from "./Cues.ts"
import { documentTotal } from "./Totals.ts"

const SUBTOTAL = /\b(sub-?\s?total|subtotaal|sous-total|zwischensumme)\b/
/** Amounts before tax: "Exclusief BTW", "Total HT", "Netto", "ohne MwSt." */
const UNTAXED =
  /\b(excl|excluding|exclusief|exkl|before tax|pre-tax|net amount|untaxed|hors taxes?|ht|netto|nettobetrag|ohne mwst)\b/
const TOTAL_LINE =
  /\b(total|totaal|totaalbedrag|gesamtbetrag|endbetrag|rechnungsbetrag|summe|te betalen|zu zahlen|ttc)\b|à payer/

export const moneyCues = ({ profile, candidate, page, label, line, position }: CueContext): Cues => {
  if (profile.kind !== "money") return noCues
  const sum = new CueSum()
  const where = `${label} ${line}`
  if (SUBTOTAL.test(where) && !profile.asksForSubtotal) sum.add(-1.5, "a subtotal, not the total")
  else if (UNTAXED.test(label) && !profile.asksForSubtotal && !profile.asksForTax)
    sum.add(-1, "an amount before tax")
  if (
    /\b(vat|tax|gst|tva|btw|mwst)\b/.test(label) &&
    !profile.asksForTax &&
    !/\b(incl\w*|with)\b/.test(label)
  )
    sum.add(-1, "a tax line")
  if (TOTAL_LINE.test(where) && profile.terms.has("total"))
    sum.add(0.6 * position, position > 0.5 ? "a total line late in the document" : undefined)
  if (
    profile.terms.has("total") &&
    !profile.asksForSubtotal &&
    !profile.asksForTax &&
    sameCandidate(documentTotal(page.text, page.analysis), candidate)
  ) {
    sum.add(1.5, "the document's total: the amount of the strongest total label, the largest of its rank")
    sum.decisive = true
  }
  return sum.result()
}
