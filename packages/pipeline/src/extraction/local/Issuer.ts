/**
 * Who issued a document — the seller of an invoice, the shop of a receipt — stands at the head of its first
 * page, with its address under its name, before any block of the customer's. An agent that asks for the
 * issuer's name or address takes the first organisation or address block of the head, never one in a
 * bill-to or ship-to block.
 */
import type { Candidate } from "./Candidates.ts"
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
  if (customer(candidate)) return { score: -2.5, cues: ["in the customer's address block"], decisive: false }
  const own =
    profile.kind === "address" ? candidate.kind === "address" : candidate.pattern.startsWith("organisation")
  if (!own || page.index !== 0 || position >= HEAD) return none
  const before = rivals(profile, page).filter((c) => c.start < candidate.start && !customer(c)).length
  if (before > 0) return { score: 0.3, cues: [], decisive: false }
  const what = profile.kind === "address" ? "address block" : "organisation"
  return {
    score: 1.2,
    cues: [`the first ${what} at the head of the document, where the issuer stands`],
    decisive: true,
  }
}
