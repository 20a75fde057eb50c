/**
 * Who issued a document — the seller of an invoice, the shop of a receipt — stands at the head of its first
 * page, with its address under its name, before any block of the customer's. An agent that asks for the
 * issuer's name or address takes the first organisation or address block of the head, never one in a
 * bill-to or ship-to block.
 */
import { type Candidate, sameCandidate } from "./Candidates.ts"
import type { AgentProfile } from "./KeyTerms.ts"
import type { PageContext } from "./Scoring.ts"
import { lineAt } from "./Text.ts"

const ISSUER_CUE =
  /\b(issuer|issued|vendor|supplier|seller|billed by|sold by|shop|store|merchant|restaurant)\b/
const CUSTOMER_CUE = /\b(customer|buyer|client|bill(ed)? to|ship(ped)? to|recipient|consignee)\b/

/** Markers of the customer's address block (bill-to, attention of) in the languages supported. */
const CUSTOMER_BLOCK =
  /\b(bill(ed)? to|ship(ped)? to|sold to|invoice to|deliver(ed)? to|customer|buyer|attn|attention|t\.a\.v|factuuradres|afleveradres|rechnungsadresse|lieferadresse|rechnungsempfänger|kunde|klant|adresse de facturation|adresse de livraison|destinataire|facturé à|livré à)\b/i

/** The two lines before a position, its own line and the next one. */
const linesAround = (text: string, at: number): string => {
  const line = lineAt(text, at)
  let from = line.start
  for (let k = 0; k < 2 && from > 0; k++) from = lineAt(text, from - 1).start
  const next = text.indexOf("\n", line.end + 1)
  return text.slice(from, next < 0 ? text.length : next)
}

/** How far into the page the head reaches (a share of its text). */
const HEAD = 0.35

/** A label of the transaction's details (`Date:`, `Cash Inv No.:`, `Cashier:`), near the start of its line. */
const DETAIL_LABEL =
  /^[^\n]{0,20}?\b(date|inv(oice)?\.?\s*no|receipt\s*no|bill\s*no|cashier|order\s*no)\b\.?\s*[:#]/im

/**
 * Where the head of a page ends for the issuer: the issuer is named, and its address given, before the
 * transaction's details, so a name or an address after the first detail label (a customer's on a delivery
 * note) is no longer at the head; nor is a name after the first date (a receipt may print the date of the
 * sale between the shop's name and its address).
 */
const headEndFor = (kind: AgentProfile["kind"], page: PageContext): number => {
  const { text } = page
  const detail = DETAIL_LABEL.exec(text)?.index ?? text.length
  const dates = kind === "name" ? page.analysis.dates.map((d) => d.start) : []
  return Math.min(HEAD * text.length, detail, ...dates)
}

export interface IssuerCues {
  readonly score: number
  readonly cues: ReadonlyArray<string>
  readonly decisive: boolean
}

const none: IssuerCues = { score: 0, cues: [], decisive: false }

/** The candidates of the page of the kind an issuer agent reads: organisations for a name, blocks for an address. */
const rivals = (profile: AgentProfile, page: PageContext): ReadonlyArray<Candidate> =>
  profile.kind === "address" ? page.analysis.addresses : page.analysis.organisations

export const issuerCues = (
  profile: AgentProfile,
  candidate: Candidate,
  page: PageContext,
  position: number,
): IssuerCues => {
  if (profile.kind !== "name" && profile.kind !== "address") return none
  if (!ISSUER_CUE.test(profile.cueText) || CUSTOMER_CUE.test(profile.cueText)) return none
  const { text } = page
  const customer = (c: Candidate) => CUSTOMER_BLOCK.test(linesAround(text, c.valueStart))
  // The document's own web address and bank details name who issued it wherever they stand.
  if (profile.kind === "name" && page.analysis.brands.some((c) => sameCandidate(c, candidate)))
    return { score: 3, cues: ["the brand of the document's own web address, the issuer's"], decisive: true }
  if (customer(candidate)) return { score: -2.5, cues: ["in the customer's address block"], decisive: false }
  if (profile.kind === "name" && page.analysis.brands.length > 0)
    return { score: -1, cues: ["not the brand of the document's own web address"], decisive: false }
  if (profile.kind === "name" && page.analysis.payees.some((c) => sameCandidate(c, candidate)))
    return { score: 1.6, cues: ["the payee of the document's bank details, who issued it"], decisive: true }
  const heading = profile.kind === "name" && page.analysis.headings.some((c) => sameCandidate(c, candidate))
  const own =
    profile.kind === "address"
      ? candidate.kind === "address"
      : candidate.pattern.startsWith("organisation") || heading
  const headEnd = headEndFor(profile.kind, page)
  if (!own || page.index !== 0 || position >= HEAD || candidate.start >= headEnd) return none
  const atHead = (c: Candidate) => c.start < headEnd && !customer(c)
  // A name without a legal suffix stands for the issuer only where the head names no organisation.
  if (heading && rivals(profile, page).some(atHead)) return none
  const before = rivals(profile, page).filter((c) => c.start < candidate.start && !customer(c)).length
  if (before > 0) return { score: 0.3, cues: [], decisive: false }
  const what = profile.kind === "address" ? "address block" : heading ? "name" : "organisation"
  return {
    score: 1.2,
    cues: [`the first ${what} at the head of the document, where the issuer stands`],
    decisive: true,
  }
}
