/**
 * Parties a contract names without "between": the organisation it defines as "the Company" (or the Employer,
 * the Purchaser …) in its opening, and persons named in its own words as parties — "I, Mary Minnick, …", "… and
 * Joan Mannick (the “Employee”)", "by Benny Ward (“Employee”) in favor of …", "Todd B. Sisitsky, an
 * individual (“Sisitsky”)" — or signing it as themselves (a signature with no title under it, unlike an
 * officer signing for a company).
 */
import type { Candidate } from "./Candidates.ts"

/** A person's name: first name (or initials), an optional middle initial, a last name, an optional suffix. */
const PERSON =
  "(?:(?:Mr|Mrs|Ms|Dr)\\.\\s+)?(?:(?:[A-Z]\\.\\s?){1,2}[A-Z][a-z’'-]+|[A-Z][a-z’'-]+(?:\\s+[A-Z]\\.)?(?:\\s+[A-Z][a-z’'-]+){1,2}|[A-Z][A-Z’'-]+(?:\\s+[A-Z]\\.)?(?:\\s+[A-Z][A-Z’'-]+){1,2})(?:,?\\s+(?:Jr|Sr|III|II|IV)\\b\\.?)?"
const SPACE = "[ \\t]*\\n?[ \\t]*"
/** "I, NAME," and "NAME (the “Employee”)" after "and", "by", "between", "with" or a comma. */
const DECLARED = new RegExp(
  `\\bI,\\s+(${PERSON}),|(?:\\b(?:and|by|between|with)|,)\\s+(${PERSON})(?:,\\s+an individual[^(“"\\n]{0,60})?${SPACE}\\((?:the\\s+|hereinafter\\s+(?:referred\\s+to\\s+as\\s+)?(?:the\\s+)?)?[“"]`,
  "g",
)
/** Words that capitalised in a contract are no names. */
const NOT_NAMES =
  /\b(agreement|company|corporation|party|parties|employee|executive|the|this|section|exhibit|schedule|confidential|information|state|county|inc|llc|ltd|bank|release|program|plan|policy|mutual|general|incentive|compensation|trust|fund|act|rules|code|group|services|holdings)\b/i

const names = (found: ReadonlyArray<string>): Array<string> =>
  found.map((n) => n.replace(/\s+/g, " ").replace(/,$/, "").trim()).filter((n) => !NOT_NAMES.test(n))

/** Persons a page declares parties in so many words. */
export const declaredPersons = (text: string): Array<string> =>
  names([...text.matchAll(DECLARED)].map((m) => m[1] ?? m[2]!))

const SIGNATURE = new RegExp(`^[ \\t]*(?:/s/|Name:|EMPLOYEE:|EXECUTIVE:)[ \\t]*(${PERSON})[ \\t]*$`, "gm")
/** A title under a signature: an officer signing for a company, not a party signing as itself. */
const TITLE_BELOW = /^(?:[^\n]*\n){0,3}?[ \t]*(?:Title|Its)\s*:/i

/** Persons who sign a page as themselves. */
export const signingPersons = (text: string): Array<string> =>
  names(
    [...text.matchAll(SIGNATURE)]
      .filter((m) => !/\bBy:\s*$/i.test(text.slice(Math.max(0, m.index - 6), m.index)))
      .filter((m) => !TITLE_BELOW.test(text.slice(m.index + m[0].length + 1)))
      .map((m) => m[1]!),
  )

const known = (list: ReadonlyArray<string>, name: string): boolean => {
  const key = name.toLowerCase().replace(/[^a-z]/g, "")
  return list.some((n) => {
    const k = n.toLowerCase().replace(/[^a-z]/g, "")
    return k.includes(key) || key.includes(k)
  })
}

/**
 * The party candidates of a page with the persons it declares parties added to their lists, and, when a list
 * has a single name, the persons signing the page as themselves.
 */
export const withPersons = (candidates: ReadonlyArray<Candidate>, text: string): Array<Candidate> => {
  const declared = declaredPersons(text)
  const signing = signingPersons(text)
  return candidates.map((c) => {
    const list = c.value.split(/,\s+(?=[A-Z])(?!(?:Inc|Ltd|LLC|L\.P|LP|Corp|N\.A|Jr|Sr|III|II|IV)\b)/)
    const more = [...declared, ...(list.length === 1 ? signing : [])].filter((n, k, all) => {
      return !known(list, n) && all.findIndex((o) => known([o], n)) === k
    })
    if (more.length === 0) return c
    const value = [...list, ...more.slice(0, 3)].join(", ")
    return { ...c, value, pattern: `${c.pattern}, with the persons it names as parties` }
  })
}

/** The roles a contract defines its organisation parties by. */
const ROLE =
  /^(?:the\s+)?(?:Company|Employer|Corporation|Bank|Parent|Purchaser|Buyer|Seller|Recipient|Discloser|Disclosing Party|Receiving Party|Client|Consultant|Contractor|Licensor|Licensee|Partnership)$/i
const DEFINED_AS = /^[^()]{0,200}?\((?:[^()]*?)[“"]([A-Z][^“”"]{1,30})[”"]\)/

/** The organisations of a contract's opening that it defines by a party's role (`Ann Taylor, Inc. (the “Company”)`). */
export const definedOrganisations = (
  text: string,
  organisations: ReadonlyArray<Candidate>,
): Array<Candidate> =>
  organisations.filter((o) => {
    const term = DEFINED_AS.exec(text.slice(o.end, o.end + 300))?.[1]
    return term !== undefined && ROLE.test(term)
  })
