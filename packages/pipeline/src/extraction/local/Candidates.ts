/**
 * Candidate values of one page's text, each with its position and the pattern that found it, found by kind
 * of value (one module per kind: dates, amounts, currencies, durations, identifiers, organisations,
 * parties, jurisdictions, addresses, labelled values). Pure; the analysis of a page is cached by text and reference
 * date.
 */
import { findAddresses } from "./Addresses.ts"
import { findNumbers } from "./Amounts.ts"
import { findBrands, findPayees } from "./Brands.ts"
import { findCurrencies } from "./Currencies.ts"
import { findDates } from "./Dates.ts"
import { findDurations } from "./Durations.ts"
import { findHeadingNames } from "./Headings.ts"
import { findIdentifiers } from "./Identifiers.ts"
import { findJurisdictions } from "./Jurisdictions.ts"
import type { Kind } from "./KeyTerms.ts"
import { findLabelled } from "./Labelled.ts"
import { findOrganisations, readLegalSuffixes } from "./Organisations.ts"
import { findParties } from "./Parties.ts"

export interface Candidate {
  readonly kind: Kind
  /** The value as it will be reported (before value-type normalisation). */
  readonly value: string
  /** Offsets of the matched text in the page. */
  readonly start: number
  readonly end: number
  /** Offsets of the value itself inside the match (the whole match when equal). */
  readonly valueStart: number
  readonly valueEnd: number
  /** Which pattern found it, for the reasoning. */
  readonly pattern: string
  /** Prior confidence of the pattern, 0..1. */
  readonly strength: number
  /** Numeric value of money, numbers, percentages. */
  readonly amount?: number
  readonly currency?: string
  /** Relative date ("today", "in 30 days"). */
  readonly relative?: boolean
  /** A scale word stated after a number ("million"): stripped, never applied. */
  readonly unit?: string
  /** Label found by the pattern itself (labelled values). */
  readonly label?: string
}

/**
 * The same candidate: the same value at the same place of the page. Scoring may see a copy of a candidate
 * the page's analysis found (one labelled by its table cell, Tables.ts), which is still that candidate.
 */
export const sameCandidate = (a: Candidate | undefined, b: Candidate): boolean =>
  a !== undefined && (a === b || (a.start === b.start && a.end === b.end && a.value === b.value))

export interface PageAnalysis {
  readonly dates: ReadonlyArray<Candidate>
  readonly numbers: ReadonlyArray<Candidate>
  readonly durations: ReadonlyArray<Candidate>
  readonly identifiers: ReadonlyArray<Candidate>
  readonly organisations: ReadonlyArray<Candidate>
  readonly parties: ReadonlyArray<Candidate>
  readonly jurisdictions: ReadonlyArray<Candidate>
  readonly currencies: ReadonlyArray<Candidate>
  readonly labelled: ReadonlyArray<Candidate>
  readonly addresses: ReadonlyArray<Candidate>
  /** Names without a legal suffix at the head of the page (first page only). */
  readonly headings: ReadonlyArray<Candidate>
  /** Brands the page's web addresses spell, and payees of its bank details. */
  readonly brands: ReadonlyArray<Candidate>
  readonly payees: ReadonlyArray<Candidate>
}

const cache = new Map<string, PageAnalysis>()
const CACHE_SIZE = 64

/** Every candidate of one page (cached: the same page is analysed once for all agents). */
export const analysePage = (text: string, pageIndex: number, referenceDate: string): PageAnalysis => {
  const key = `${referenceDate}\u0000${pageIndex === 0 ? 0 : 1}\u0000${text}`
  const hit = cache.get(key)
  if (hit) {
    cache.delete(key)
    cache.set(key, hit)
    return hit
  }
  const dates = findDates(text, referenceDate)
  const organisations = findOrganisations(readLegalSuffixes(text))
  const analysis: PageAnalysis = {
    dates,
    numbers: findNumbers(text, dates),
    durations: findDurations(text),
    identifiers: findIdentifiers(text, dates),
    organisations,
    parties: findParties(text, pageIndex),
    jurisdictions: findJurisdictions(text),
    currencies: findCurrencies(text),
    labelled: findLabelled(text),
    addresses: findAddresses(text),
    headings: pageIndex === 0 ? findHeadingNames(text) : [],
    brands: findBrands(text, organisations),
    payees: findPayees(text),
  }
  cache.set(key, analysis)
  if (cache.size > CACHE_SIZE) cache.delete(cache.keys().next().value!)
  return analysis
}
