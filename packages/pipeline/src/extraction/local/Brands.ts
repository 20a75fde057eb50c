/**
 * Who a document is from, in the document's own words beyond its letterhead:
 * - the brand its web address or e-mail spells (`www.flipkart.com` → `Flipkart`, `azure-interior.com` →
 *   `Azure Interior`, `aws.amazon.com` → `Amazon Web Services, Inc.`): an organisation whose name begins
 *   with the address's name, else the longest run of capitalised words that spells it (or begins it:
 *   `OYO` for `oyorooms.com`). An organisation the document also names without its legal suffix
 *   (`Greetings from Amazon Web Services,`) is given that name, the one it goes by;
 * - the payee of its bank details (`Titulaire du compte : NETPRESSE`, `Account holder: …`), who is paid.
 * Addresses of mail providers and of the software that made the document (`Powered by …`) name nobody.
 */
import type { Candidate } from "./Candidates.ts"
import { SUFFIXES } from "./Organisations.ts"
import { cleanEdges, escapeRegExp, lineAt, spanCandidate } from "./Text.ts"

const HOST =
  /(?<![\w@.-])(?:https?:\/\/)?((?:[a-z0-9-]+\.)+(?:com|net|org|info|biz|io|co|fr|de|nl|be|uk|my|sg|in|au|ca|us|eu|it|es|ch|at|pl|se|no|dk|fi|jp|cn|hk|tk))(?![\w-])|@((?:[a-z0-9-]+\.)+[a-z]{2,})/gi
/** Second-level names under which countries register companies (`.co.uk`, `.com.my`). */
const SECOND_LEVEL = new Set(["co", "com", "org", "net", "gov", "ac", "edu", "ltd", "plc"])
/** Mail providers, social networks, link shorteners and placeholders: their names are nobody's brand. */
const PROVIDERS = new Set(
  [
    "gmail googlemail yahoo hotmail outlook live msn icloud me aol gmx mail protonmail example qq",
    "facebook fb instagram twitter youtube linkedin tiktok whatsapp wa google goo bit tinyurl apple",
  ]
    .join(" ")
    .split(" "),
)
/** A line that names the software or service that made the document, not its issuer. */
const TOOL_LINE = /\b(powered|generated|created|made|produced|printed)\s+(by|with|using)\b/i

/** The registered name of a host: `aws.amazon.com` → `amazon`, `shop.example.com.my` → `example`. */
const registeredName = (host: string): string | undefined => {
  const parts = host.toLowerCase().split(".")
  if (parts.length < 2) return undefined
  const below = parts[parts.length - 2]!
  const name =
    SECOND_LEVEL.has(below) && parts.length >= 3 && parts[parts.length - 1]!.length === 2
      ? parts[parts.length - 3]!
      : below
  return name === "www" ? undefined : name
}

const letters = (s: string) => s.toLowerCase().replace(/[^a-z0-9]/g, "")

/** The registered names of the web and e-mail addresses of a page (not those of tools or mail providers). */
const webNames = (text: string): Array<string> => {
  const out = new Set<string>()
  const lines = text.split("\n")
  for (const [i, line] of lines.entries()) {
    // The tool's address is on its line or the next.
    if (TOOL_LINE.test(line) || (i > 0 && TOOL_LINE.test(lines[i - 1]!))) continue
    for (const m of line.matchAll(HOST)) {
      const host = m[1] ?? m[2]!
      // An address is written in lower case or after `www.`: `Reg.No.` or `ALPHA.COM` are other words.
      if (host !== host.toLowerCase() && !/^(https?:\/\/|www\.)/i.test(m[0]) && m[2] === undefined) continue
      const name = registeredName(host)
      if (name !== undefined && !PROVIDERS.has(name) && letters(name).length >= 3) out.add(letters(name))
    }
  }
  return [...out]
}

/** Whether a name's first words spell the web name, or begin it (`OYO` of `oyorooms`). */
const spells = (words: ReadonlyArray<string>, web: string): number => {
  let acc = ""
  let best = 0
  for (const [k, w] of words.entries()) {
    acc += letters(w)
    if (acc === web) return k + 1
    if (!web.startsWith(acc)) break
    if (acc.length >= 3) best = k + 1
  }
  return best
}

/** A run of capitalised words, not part of a web or e-mail address. */
const CAPITALISED = /(?<![\w.@/&'’-])[A-Z][\w&'’-]*(?:[ ][A-Z][\w&'’-]*){0,3}(?![\w@]|\.[a-z])/g

/** Whether `[start, end)` is all of its line but OCR's edge marks. */
const isWholeLine = (text: string, start: number, end: number): boolean => {
  const line = lineAt(text, start)
  return cleanEdges(text.slice(line.start, line.end)) === text.slice(start, end)
}

const TRAILING_SUFFIX = new RegExp(`[\\s,]*${SUFFIXES}$`)

/**
 * The name an organisation goes by in the document: its name without the legal suffix when the document
 * also writes it so on its own (not followed by the suffix, not inside an address), else its full name.
 */
const nameGoneBy = (text: string, organisation: string): string => {
  const bare = organisation.replace(TRAILING_SUFFIX, "")
  if (bare === organisation || bare.length < 3) return organisation
  const alone = new RegExp(
    `(?<![\\w.@/-])${escapeRegExp(bare)}(?![\\w@-]|\\.[a-z]|,?\\s*${SUFFIXES}|[ \\t]+[A-Z])`,
    "g",
  )
  return alone.test(text) ? bare : organisation
}

const brandCandidate = (value: string, start: number, end: number, web: string): Candidate =>
  spanCandidate(
    "name",
    value,
    start,
    end,
    `brand "${value}", which the document's own web address (${web}) spells`,
    0.8,
  )

/** The brands a page's web addresses spell: organisations first, else runs of capitalised words. */
export const findBrands = (text: string, organisations: ReadonlyArray<Candidate>): Array<Candidate> => {
  const out: Array<Candidate> = []
  for (const web of webNames(text)) {
    const own = organisations.filter((o) => spells(o.value.split(/\s+/), web) > 0)
    if (own.length > 0) {
      for (const o of own) out.push(brandCandidate(nameGoneBy(text, o.value), o.start, o.end, web))
      continue
    }
    let best: { value: string; at: number } | undefined
    for (const m of text.matchAll(CAPITALISED)) {
      const words = m[0].split(" ")
      for (let first = 0; first < words.length; first++) {
        const k = spells(words.slice(first), web)
        if (k === 0) continue
        const at = m.index + words.slice(0, first).join(" ").length + (first > 0 ? 1 : 0)
        // A name line that begins with the brand is the brand's full name (`DOMINO'S PIZZA`).
        const wholeLine = first === 0 && isWholeLine(text, m.index, m.index + m[0].length)
        const value = wholeLine ? m[0] : words.slice(first, first + k).join(" ")
        // The first mention: a brand's later runs carry a branch's name after it.
        best ??= { value, at }
        break
      }
    }
    if (best) out.push(brandCandidate(best.value, best.at, best.at + best.value.length, web))
  }
  return out
}

const PAYEE_LABEL =
  /\b(account holder|account name|beneficiary|payee|titulaire du compte|kontoinhaber|rekeninghouder|ten name van|t\.n\.v\.)\s*[:.]?[ \t]*/gi
const NAME_RUN = /^[A-Z][\w&'’.-]*(?:[ ][A-Z&][\w&'’.-]*){0,5}/

/** The payee named in a page's bank details. */
export const findPayees = (text: string): Array<Candidate> => {
  const out: Array<Candidate> = []
  for (const m of text.matchAll(PAYEE_LABEL)) {
    const start = m.index + m[0].length
    const run = NAME_RUN.exec(text.slice(start, start + 80))
    if (!run) continue
    const value = run[0].replace(/[.,]$/, "")
    out.push(
      spanCandidate(
        "name",
        value,
        start,
        start + value.length,
        `payee "${value}" of the bank details ("${m[1]}")`,
        0.7,
      ),
    )
  }
  return out
}
