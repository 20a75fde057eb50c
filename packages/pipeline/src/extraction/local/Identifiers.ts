/** Identifiers: invoice, receipt and order numbers and other references, by their shape and their labels. */
import type { Candidate } from "./Candidates.ts"
import { lineAt } from "./Text.ts"

const IDENTIFIER =
  /(?<![\w/#-])#?[A-Za-z0-9][A-Za-z0-9/_.#-]*\d[A-Za-z0-9/_.#-]*|(?<![\w/#-])#?[A-Za-z0-9]*\d[A-Za-z0-9/_.#-]*/g
const ID_CUE =
  /(?:\b(no|nr|num|number|nummer|numéro|numero|id|ref|reference|code)\b|n°|nº|#)\.?\s*[:.#]?\s*$|(?:nummer|nr)\.?\s*[:.#]?\s*$/i

const OWN_HASH = /\b(no|nr|number|id)\.?\s*:\s*#[ \t]?$/i

/** Alphanumeric tokens with digits (invoice numbers, references), stronger after "no."/"#"/"ID". */
export const findIdentifiers = (text: string, dates: ReadonlyArray<Candidate>): Array<Candidate> => {
  const out: Array<Candidate> = []
  for (const m of text.matchAll(IDENTIFIER)) {
    const token = m[0].replace(/[.\-/]+$/, "")
    if (token.length < 3 && !/[A-Za-z]/.test(token)) continue
    if (token.length < 2) continue
    const start = m.index
    if (dates.some((d) => start < d.end && start + token.length > d.start) && !/[A-Za-z]/.test(token))
      continue
    // Amounts with decimals are not identifiers.
    if (/^\d{1,3}([.,]\d{3})*[.,]\d{2}$/.test(token)) continue
    // A group of a number written in spaced groups (phone, VAT, bank numbers) is no identifier.
    if (
      /^\d+$/.test(token) &&
      (/\d[ \u00a0]$/.test(text.slice(start - 2, start)) ||
        /^[ \u00a0]\d/.test(text.slice(start + token.length, start + token.length + 2)))
    )
      continue
    const before = text.slice(Math.max(lineAt(text, start).start, start - 30), start)
    const cued = ID_CUE.test(before)
    // `No : # BLR-77`: after a label that already says "number", a `#` set before the value is its own prefix.
    const hash = OWN_HASH.test(before) ? before.length - before.lastIndexOf("#") : 0
    const value = hash > 0 ? `#${token}` : token
    out.push({
      kind: "identifier",
      value,
      start: start - hash,
      end: start + token.length,
      valueStart: start - hash,
      valueEnd: start + token.length,
      pattern: cued
        ? `identifier "${value}" after "${before.trim().split(/\s+/).slice(-2).join(" ")}"`
        : `identifier "${value}"`,
      strength: cued ? 0.85 : /[A-Za-z]/.test(token) && /\d/.test(token) ? 0.5 : 0.35,
    })
  }
  return out
}
