/**
 * Parties of a contract, organisations or persons: "by and between X and Y", a "PARTIES:" block, or the
 * letterhead and address block of a letter agreement.
 */
import { collapseWhitespace } from "@dxs/domain/Values"
import type { Candidate } from "./Candidates.ts"
import { findOrganisations, SUFFIXES, TRAILING_SUFFIXES } from "./Organisations.ts"
import { definedOrganisations, withPersons } from "./Persons.ts"
import { sentenceAround } from "./Text.ts"

const PARTY_STOP =
  /\s*(?:,\s*(?:a|an|the|having|with|whose|located|organi[sz]ed|incorporated|residing|who|which|its|on behalf)\b|\(|,\s*(?:and|&)\s|\s+and\s+its\b|\s+\((?:the|hereinafter|collectively|each)\b|\s+(?:a|an)\s+(?:[A-Z][a-z]+\s+)?(?:corporation|company|limited|partnership|individual|national|bank)\b|\s+(?:having|with|whose|located|residing)\b|\s+(?:hereinafter|collectively)\b|;|:|(?<!\b[A-Z])\.\s|\n\s*\n|$)/
const NAME_START = /^\s*(?:(?:the\s+)?(?:undersigned|company|employee|executive|recipient)\s*,?\s*)?/i

/** Words that stand for a party without naming it. */
const ROLE_WORDS =
  /^(?:this|that|each|such|any|said|party|parties|company|corporation|employee|employer|executive|consultant|contractor|buyer|seller|purchaser|recipient|discloser|disclosing party|receiving party|me|you|us|we|it|him|her|them|agreement|affiliates?|bank|distributor|investor|holder|undersigned|licensor|licensee|customer|supplier|vendor|client|parent|subsidiary|representatives?)\b[.,]?$/i

const CONNECTORS = new Set([
  "the",
  "and",
  "&",
  "of",
  "de",
  "du",
  "la",
  "le",
  "for",
  "von",
  "van",
  "der",
  "den",
  "y",
])

/**
 * Not a party's name: role words only ("Buyer and the Company"), or a phrase in running text (more than
 * one lower-case word beside the connectors of names: "I have had since the commencement of …").
 */
const notAName = (name: string): boolean => {
  const words = name
    .split(/[\s,.;]+/)
    .map((w) => w.replace(/^[“"(]+|[”")]+$/g, ""))
    .filter((w) => w !== "")
  const content = words.filter((w) => !CONNECTORS.has(w.toLowerCase()))
  if (content.length === 0 || content.every((w) => ROLE_WORDS.test(w))) return true
  return content.filter((w) => /^[a-z]/.test(w)).length > 1
}

/** A logo's placeholder text ("Logo") before the name it stands over. */
const withoutLogo = (name: string): string => name.replace(/^logo\s+(?=[A-Z0-9])/i, "")

/** The name at the start of a clause of a "between X and Y" sentence. */
const leadingName = (clause: string): { readonly name: string; readonly offset: number } | undefined => {
  const lead = NAME_START.exec(clause)?.[0].length ?? 0
  const rest = clause.slice(lead)
  const restTrimmed = withoutLogo(rest.replace(/^[\s“"]+/, ""))
  const skip = lead + rest.length - restTrimmed.length
  const suffixed = new RegExp(
    `^(?:(?:[A-Z]|[a-z]+[A-Z])[A-Za-z0-9&'’.\\-]*,?\\s+(?:(?:of|and|&|de|the|for)\\s+)?){0,7}?${SUFFIXES}`,
  ).exec(restTrimmed)
  let name: string
  if (suffixed) name = suffixed[0]
  else {
    const stop = PARTY_STOP.exec(restTrimmed)
    name = restTrimmed.slice(0, stop ? stop.index : restTrimmed.length)
  }
  name = collapseWhitespace(name)
    .replace(/[,;:”"]+$/, "")
    .trim()
  // "X and Y" is two parties, not one name, when what follows "and" is a name of two words or more
  // ("Yu Zhou and Genexosome Technologies, Inc."; "Sears, Roebuck and Co." stays one).
  const and = /\s+and\s+/.exec(name)
  if (
    and &&
    name
      .slice(and.index + and[0].length)
      .replace(TRAILING_SUFFIXES, "")
      .trim()
      .split(/\s+/).length >= 2
  )
    name = name.slice(0, and.index).replace(/,$/, "")
  if (name.length < 2 || name.length > 80 || !/^(?:[A-Z0-9]|[a-z]+[A-Z])/.test(name)) return undefined
  name = name.replace(/,?\s+(?:M\.D|Ph\.D|Esq|J\.D)\.?$/, "")
  if (ROLE_WORDS.test(name.replace(/^the\s+/i, "")) || notAName(name)) return undefined
  const words = name.split(/\s+/)
  if (words.length > 9) return undefined
  return { name, offset: skip }
}

/**
 * Parties of a contract: "by and between X and Y", "between X, …, and Y", or a "PARTIES:" block.
 * Searched near the start of the document; one list candidate per pattern occurrence.
 */
export const findParties = (text: string, pageIndex: number): Array<Candidate> => {
  const out: Array<Candidate> = []
  const window = pageIndex === 0 ? text.slice(0, 6000) : text.slice(0, 1500)
  for (const m of window.matchAll(/\b(?:by\s+and\s+)?between\s*:?\s+/gi)) {
    const afterStart = m.index + m[0].length
    const sentence = sentenceAround(window, afterStart, afterStart, 900)
    const after = window.slice(afterStart, Math.max(afterStart, sentence.end))
    const first = leadingName(after)
    if (!first) continue
    // The second party follows the first " and " that is outside parentheses and starts a name.
    let depth = 0
    let second: { readonly name: string; readonly offset: number } | undefined
    let secondAt = -1
    for (let i = first.offset + first.name.length; i < after.length; i++) {
      const c = after[i]
      if (c === "(" || c === "“") depth++
      else if ((c === ")" || c === "”") && depth > 0) depth--
      else if (depth === 0 && /^,?\s+and\s+/i.test(after.slice(i, i + 7)) && /[\s,]/.test(c ?? "")) {
        const andMatch = /^,?\s+and\s+/i.exec(after.slice(i))!
        const candidate = leadingName(after.slice(i + andMatch[0].length))
        if (candidate) {
          second = candidate
          secondAt = i + andMatch[0].length + candidate.offset
          break
        }
      }
    }
    const names = [first.name]
    let end = afterStart + first.offset + first.name.length
    if (second && second.name.toLowerCase() !== first.name.toLowerCase()) {
      names.push(second.name)
      end = afterStart + secondAt + second.name.length
    }
    out.push({
      kind: "party",
      value: names.join(", "),
      start: m.index,
      end,
      valueStart: afterStart + first.offset,
      valueEnd: end,
      pattern: `"${m[0].trim()} … and …" pattern`,
      strength: names.length === 2 ? 0.95 : 0.6,
      label: "parties",
    })
  }
  const heading = /^\s*PARTIES\s*:?\s*$/m.exec(window)
  if (heading) {
    const block = window.slice(heading.index + heading[0].length, heading.index + heading[0].length + 600)
    const names: Array<string> = []
    let last = 0
    const parts = block.split(/\n\s*(?:and|AND)?\s*\n/).filter((p) => p.trim() !== "")
    for (const part of parts.slice(0, 2)) {
      const n = leadingName(part.replace(/^\s+/, ""))
      if (n) {
        const cut = n.name.replace(/\s*\(.*$/, "")
        names.push(cut)
        last = block.indexOf(cut, last) + cut.length
      }
    }
    if (names.length >= 2) {
      const start = heading.index
      out.push({
        kind: "party",
        value: names.join(", "),
        start,
        end: heading.index + heading[0].length + last,
        valueStart: heading.index + heading[0].length,
        valueEnd: heading.index + heading[0].length + last,
        pattern: `"PARTIES:" block`,
        strength: 0.9,
        label: "parties",
      })
    }
  }
  if (pageIndex === 0 && !out.some((c) => c.value.includes(", ") && c.strength >= 0.9)) {
    // Letter agreements name no "between": the first organisations of the letterhead and address block.
    const head = text.slice(0, 2500)
    const orgs = findOrganisations(head)
    const names: Array<string> = []
    let last: (typeof orgs)[number] | undefined
    for (const o of orgs) {
      const value = withoutLogo(o.value)
      if (names.some((n) => n.toLowerCase() === value.toLowerCase()) || notAName(value)) continue
      names.push(value)
      last = o
      if (names.length === 2) break
    }
    if (names.length === 2 && last) {
      const first = orgs[0]!
      out.push({
        kind: "party",
        value: names.join(", "),
        start: first.start,
        end: last.end,
        valueStart: first.start,
        valueEnd: last.end,
        pattern: "the first two organisation names of the document",
        strength: 0.5,
        label: "parties",
      })
    }
  }
  if (pageIndex === 0 && out.length === 0) {
    // A contract in the first person ("As a condition of my employment with Acme, Inc. (the “Company”)").
    const defined = definedOrganisations(text, findOrganisations(text.slice(0, 3000)))
    const names = [...new Set(defined.map((o) => o.value))].slice(0, 2)
    const first = defined[0]
    if (first)
      out.push({
        kind: "party",
        value: names.join(", "),
        start: first.start,
        end: first.end,
        valueStart: first.start,
        valueEnd: first.end,
        pattern: "the organisation the contract defines by a party's role",
        strength: 0.7,
        label: "parties",
      })
  }
  return withPersons(out, pageIndex === 0 ? text : window)
}
