/**
 * Consistency and resolution of one atomic value without a language model (DESIGN §3 stages 4–5, §8.5).
 *
 * - `localConsistency` compares the extractions of one atomic value across documents: equal values (after
 *   normalisation) agree, a strict majority is consistent and the rest are flagged with a justification.
 * - `localResolve` gives the resolved value with its `resolution_status`: `Resolved` when the extractions
 *   agree (or a resolution directive decides), `Requires attention` when they disagree, `No result` when there
 *   is nothing; the computational resolver combines numbers arithmetically when enabled.
 *
 * Custom instructions are read for a few simple directives (tolerances, "ignore differences", "prefer the
 * highest", "sum", ...); anything else in them needs a language model and is ignored here.
 */
import { canonicalDecimal, collapseWhitespace, normalizeValue, parseNumber, valuesEqual } from "./Values.ts"

// ---------------------------------------------------------------------------------------------------------
// Shared helpers

interface Sourced {
  readonly id: string
  readonly value: string
  readonly label: string
}

/** Extractions whose values are taken as one, in input order; `representative` is the first member. */
interface Group<E extends Sourced> {
  readonly representative: E
  readonly members: Array<E>
}

const groupValues = <E extends Sourced>(
  extractions: ReadonlyArray<E>,
  same: (a: string, b: string) => boolean,
): Array<Group<E>> => {
  const groups: Array<Group<E>> = []
  for (const extraction of extractions) {
    const group = groups.find((candidate) => same(candidate.representative.value, extraction.value))
    if (group) group.members.push(extraction)
    else groups.push({ representative: extraction, members: [extraction] })
  }
  return groups
}

/** The group holding more than half of `total` extractions, if any. */
const strictMajority = <E extends Sourced>(groups: ReadonlyArray<Group<E>>, total: number) =>
  groups.find((group) => group.members.length * 2 > total)

/** A value for messages: numbers as canonical decimals, other values quoted. */
const showValue = (valueType: string, value: string): string => {
  const text = normalizeValue(valueType, value)
  return parseNumber(text) !== undefined && /^-?[\d.]+$/.test(text) ? text : JSON.stringify(text)
}

const labelsOf = (members: ReadonlyArray<Sourced>): string =>
  [
    ...new Set(members.map((member) => collapseWhitespace(member.label)).filter((label) => label !== "")),
  ].join(", ")

const withSources = (value: string, members: ReadonlyArray<Sourced>): string => {
  const labels = labelsOf(members)
  return labels === "" ? value : `${value} (${labels})`
}

const showGroup = <E extends Sourced>(valueType: string, group: Group<E>): string =>
  withSources(showValue(valueType, group.representative.value), group.members)

const listGroups = <E extends Sourced>(valueType: string, groups: ReadonlyArray<Group<E>>): string =>
  groups.map((group) => showGroup(valueType, group)).join("; ")

const plural = (count: number, noun: string): string => `${count} ${noun}${count === 1 ? "" : "s"}`

const agreementSentence = (valueType: string, count: number, value: string): string =>
  `${count === 2 ? "Both extractions agree" : `All ${count} extractions agree`} on ${showValue(valueType, value)}.`

// ---------------------------------------------------------------------------------------------------------
// Consistency

/** The directives of `inconsistency_instructions` that the local check understands. */
export interface ConsistencyDirectives {
  /** Every extraction is consistent ("ignore differences", "always consistent"). */
  readonly ignoreDifferences: boolean
  /** Numbers agree when they differ by at most this fraction of the larger magnitude ("within 5%"). */
  readonly relativeTolerance: number | undefined
  /** Numbers agree when they differ by at most this amount ("differences of up to 10"). */
  readonly absoluteTolerance: number | undefined
  /** The instructions ask to ignore case (the default anyway). */
  readonly ignoreCase: boolean
}

const NUMBER = String.raw`(\d+(?:[.,]\d+)?)`

/** Reads the simple directives of custom consistency instructions; empty instructions give the defaults. */
export const consistencyDirectives = (instructions: string): ConsistencyDirectives => {
  const text = collapseWhitespace(instructions).toLowerCase()
  const ignoreDifferences =
    /\b(ignore (all |any )?(the )?differences|always (be )?consistent|never inconsistent|treat (all|every|any)( \w+)* as consistent|all values are consistent)\b/.test(
      text,
    )
  const percent = new RegExp(String.raw`${NUMBER}\s*(?:%|percent\b|per cent\b)`).exec(text)
  const absolute = new RegExp(
    String.raw`(?:up to|tolerance(?: of)?|within|at most|no more than|less than|±|\+/-|plus or minus)\s*(?:of\s+)?[^\d\s]{0,3}\s*${NUMBER}(?!\s*(?:%|percent\b|per cent\b|[\d.,]))`,
  ).exec(text)
  const toNumber = (match: RegExpExecArray | null) => (match ? parseNumber(match[1]!) : undefined)
  const relative = toNumber(percent)
  return {
    ignoreDifferences,
    relativeTolerance: relative === undefined ? undefined : relative / 100,
    absoluteTolerance: toNumber(absolute),
    ignoreCase:
      /\b(ignore|ignoring|regardless of|disregard) (the )?(upper|lower)?\s*(case|capitali[sz]ation)\b|\bcase[- ]insensitive/.test(
        text,
      ),
  }
}

const withinTolerance = (directives: ConsistencyDirectives, a: string, b: string): boolean => {
  const x = parseNumber(a)
  const y = parseNumber(b)
  if (x === undefined || y === undefined) return false
  const difference = Math.abs(x - y)
  const slack = 1e-9 * Math.max(1, Math.abs(x), Math.abs(y))
  if (directives.absoluteTolerance !== undefined && difference <= directives.absoluteTolerance + slack)
    return true
  return (
    directives.relativeTolerance !== undefined &&
    difference <= directives.relativeTolerance * Math.max(Math.abs(x), Math.abs(y)) + slack
  )
}

/** How the instructions changed the comparison, a sentence for justifications ("" when they did not). */
const directivesNote = (directives: ConsistencyDirectives): string => {
  const parts: Array<string> = []
  if (directives.relativeTolerance !== undefined)
    parts.push(`a ${canonicalDecimal(directives.relativeTolerance * 100)}% tolerance`)
  if (directives.absoluteTolerance !== undefined)
    parts.push(`a tolerance of ${canonicalDecimal(directives.absoluteTolerance)}`)
  if (directives.ignoreCase) parts.push("ignoring case")
  return parts.length === 0
    ? ""
    : ` Compared with ${parts.join(" and ")}, as the consistency instructions ask.`
}

export interface ConsistencyInput {
  readonly valueType: string
  /** `inconsistency_instructions`; empty for the default check. */
  readonly instructions: string
  /** `label` says where the value came from (`invoice-a.pdf p.2`), for messages. */
  readonly extractions: ReadonlyArray<{ readonly id: string; readonly value: string; readonly label: string }>
}

export interface ConsistencyVerdict {
  readonly id: string
  readonly consistent: boolean
  readonly justification: string
}

export interface ConsistencyOutcome {
  /** One verdict per extraction, in input order. */
  readonly verdicts: Array<ConsistencyVerdict>
  /** Null when every extraction is consistent, else a sentence listing the distinct values and sources. */
  readonly summary: string | null
}

/**
 * Compares the extractions of one atomic value. Values are grouped by `valuesEqual` (widened by the
 * tolerances of the instructions, each value joining the first group whose first value it matches). One
 * group: all consistent. Several: the strict-majority group is consistent and the others not; without a
 * strict majority none is.
 */
export const localConsistency = (input: ConsistencyInput): ConsistencyOutcome => {
  const { valueType, extractions } = input
  if (extractions.length <= 1) {
    return {
      verdicts: extractions.map((e) => ({
        id: e.id,
        consistent: true,
        justification: "Only one extraction.",
      })),
      summary: null,
    }
  }
  const directives = consistencyDirectives(input.instructions)
  if (directives.ignoreDifferences) {
    return {
      verdicts: extractions.map((e) => ({
        id: e.id,
        consistent: true,
        justification: "Consistent: the consistency instructions say to ignore differences.",
      })),
      summary: null,
    }
  }
  const note = directivesNote(directives)
  const groups = groupValues(
    extractions,
    (a, b) => valuesEqual(valueType, a, b) || withinTolerance(directives, a, b),
  )
  const total = extractions.length
  if (groups.length === 1) {
    const justification = `${agreementSentence(valueType, total, groups[0]!.representative.value)}${note}`
    return {
      verdicts: extractions.map((e) => ({ id: e.id, consistent: true, justification })),
      summary: null,
    }
  }
  const majority = strictMajority(groups, total)
  const groupOf = new Map<string, Group<Sourced>>()
  for (const group of groups) for (const member of group.members) groupOf.set(member.id, group)
  const describe = (group: Group<Sourced>) => showGroup(valueType, group)
  const verdicts = extractions.map((extraction): ConsistencyVerdict => {
    const own = groupOf.get(extraction.id)!
    const others = groups.filter((group) => group !== own)
    const value = showValue(valueType, extraction.value)
    if (majority === undefined) {
      return {
        id: extraction.id,
        consistent: false,
        justification: `No value has a majority: ${value} is contradicted by ${others.map(describe).join("; ")}.${note}`,
      }
    }
    if (own === majority) {
      return {
        id: extraction.id,
        consistent: true,
        justification: `${value} is the majority value (${plural(majority.members.length, "extraction")} of ${total}); differing: ${others.map(describe).join("; ")}.${note}`,
      }
    }
    return {
      id: extraction.id,
      consistent: false,
      justification: `${value} differs from the majority value ${describe(majority)}.${note}`,
    }
  })
  const majoritySentence =
    majority === undefined
      ? " No value has a majority."
      : ` The majority value is ${showValue(valueType, majority.representative.value)}.`
  return {
    verdicts,
    summary: `The ${total} extractions give ${groups.length} different values: ${listGroups(valueType, groups)}.${majoritySentence}`,
  }
}

// ---------------------------------------------------------------------------------------------------------
// Resolution

export type LocalResolutionStatus = "Resolved" | "Requires attention" | "No result"

export type CalculationOperation = "sum" | "average" | "max" | "min" | "count"

/**
 * The operation the computational resolver applies, from the resolution instructions; `sum` when they name
 * none. `explicit` tells whether the instructions named it.
 */
export const calculationOperation = (
  instructions: string,
): { readonly operation: CalculationOperation; readonly explicit: boolean } => {
  const text = instructions.toLowerCase()
  const rules: ReadonlyArray<readonly [CalculationOperation, RegExp]> = [
    ["average", /\b(average|avg|mean)\b/],
    ["max", /\b(max|maximum|highest|largest|greatest|biggest)\b/],
    ["min", /\b(min|minimum|lowest|smallest|least)\b/],
    ["count", /\b(count|how many)\b/],
    ["sum", /\b(sum|total|add up|add them|added up|summed)\b/],
  ]
  for (const [operation, pattern] of rules) if (pattern.test(text)) return { operation, explicit: true }
  return { operation: "sum", explicit: false }
}

/** A preference of the resolution instructions that decides between disagreeing values. */
export type ResolutionPreference = "highest" | "lowest" | "most common" | "earliest" | "latest"

const PREFERENCE_WORDS: ReadonlyArray<readonly [ResolutionPreference, string]> = [
  ["highest", "highest|largest|maximum|biggest|greatest|max"],
  ["lowest", "lowest|smallest|minimum|least|min"],
  ["most common", "most common|most frequent|most frequently|majority|most often"],
  ["earliest", "first|earliest|oldest"],
  ["latest", "last|latest|most recent|newest"],
]

/** The preference stated in the resolution instructions ("prefer the highest value", "use the latest"). */
export const resolutionPreference = (instructions: string): ResolutionPreference | undefined => {
  const text = collapseWhitespace(instructions).toLowerCase()
  let best: { preference: ResolutionPreference; index: number } | undefined
  for (const [preference, words] of PREFERENCE_WORDS) {
    const match = new RegExp(
      String.raw`\b(?:prefer(?:ring)?|use|take|choose|pick|select|keep|go with|favou?r)\s+(?:the\s+|a\s+)?(?:${words})\b`,
    ).exec(text)
    if (match && (best === undefined || match.index < best.index)) best = { preference, index: match.index }
  }
  return best?.preference
}

const MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"] as const

const monthOf = (word: string): number | undefined => {
  const index = MONTHS.indexOf(word.slice(0, 3).toLowerCase() as (typeof MONTHS)[number])
  return index < 0 ? undefined : index + 1
}

const dateOrdinal = (year: number, month: number | undefined, day: number): number | undefined =>
  month === undefined || month < 1 || month > 12 || day < 1 || day > 31
    ? undefined
    : year * 10000 + month * 100 + day

/**
 * A calendar date as a sortable number (`yyyymmdd`): `2024-03-01`, `2024/03/01`, `01.03.2024` (day first),
 * `03/01/2024` (month first, unless the first part exceeds 12), `March 1, 2024`, `1 March 2024`; a time
 * after the date is ignored. Undefined when the text is not a date.
 */
export const parseDateOrdinal = (text: string): number | undefined => {
  const s = collapseWhitespace(text).replace(/[T ]\d{1,2}:\d{2}.*$/, "")
  let m = /^(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})$/.exec(s)
  if (m) return dateOrdinal(Number(m[1]), Number(m[2]), Number(m[3]))
  m = /^(\d{1,2})\.(\d{1,2})\.(\d{4})$/.exec(s)
  if (m) return dateOrdinal(Number(m[3]), Number(m[2]), Number(m[1]))
  m = /^(\d{1,2})[/-](\d{1,2})[/-](\d{4})$/.exec(s)
  if (m) {
    const first = Number(m[1])
    const second = Number(m[2])
    return first > 12 ? dateOrdinal(Number(m[3]), second, first) : dateOrdinal(Number(m[3]), first, second)
  }
  m = /^([A-Za-z]{3,})\.?\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+(\d{4})$/.exec(s)
  if (m) return dateOrdinal(Number(m[3]), monthOf(m[1]!), Number(m[2]))
  m = /^(\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?([A-Za-z]{3,})\.?,?\s+(\d{4})$/.exec(s)
  if (m) return dateOrdinal(Number(m[3]), monthOf(m[2]!), Number(m[1]))
  return undefined
}

/** Sort keys for the values when they are all dates, or else all numbers; undefined otherwise. */
const orderKeys = (
  values: ReadonlyArray<string>,
  order: "dates first" | "numbers first",
): { readonly keys: ReadonlyArray<number>; readonly kind: "dates" | "numbers" } | undefined => {
  const asDates = values.map(parseDateOrdinal)
  const asNumbers = values.map(parseNumber)
  const dates = asDates.every((key) => key !== undefined) ? (asDates as Array<number>) : undefined
  const numbers = asNumbers.every((key) => key !== undefined) ? (asNumbers as Array<number>) : undefined
  if (order === "dates first") {
    if (dates) return { keys: dates, kind: "dates" }
    if (numbers) return { keys: numbers, kind: "numbers" }
  } else {
    if (numbers) return { keys: numbers, kind: "numbers" }
    if (dates) return { keys: dates, kind: "dates" }
  }
  return undefined
}

export interface ResolutionInput {
  readonly valueType: string
  readonly unit: string
  /** `resolution_instructions`; empty for the default resolution. */
  readonly instructions: string
  readonly enableComplexCalculations: boolean
  /** Shown instead of a value when there is none; `n/a` when empty. */
  readonly valueIfNotFound: string
  /** `consistent` is the verdict of the consistency check, null when not evaluated. */
  readonly extractions: ReadonlyArray<{
    readonly id: string
    readonly value: string
    readonly label: string
    readonly consistent: boolean | null
  }>
}

export interface ResolutionOutcome {
  readonly value: string | null
  readonly status: LocalResolutionStatus
  readonly justification: string
  /** The extractions the value was taken from (its references). */
  readonly usedExtractionIds: Array<string>
}

type ResolutionExtraction = ResolutionInput["extractions"][number]

const OPERATION_TITLES: Readonly<Record<CalculationOperation, string>> = {
  sum: "Sum",
  average: "Average",
  max: "Maximum",
  min: "Minimum",
  count: "Count",
}

/** The computational resolver: one operation over every extraction that holds a number. */
const calculate = (
  input: ResolutionInput,
  extractions: ReadonlyArray<ResolutionExtraction>,
): ResolutionOutcome | undefined => {
  const numeric = extractions.flatMap((extraction) => {
    const n = parseNumber(extraction.value)
    return n === undefined ? [] : [{ extraction, n }]
  })
  if (numeric.length === 0) return undefined
  const skipped = extractions.filter((extraction) => parseNumber(extraction.value) === undefined)
  const { operation } = calculationOperation(input.instructions)
  const terms = numeric.map(({ extraction, n }) => withSources(canonicalDecimal(n), [extraction]))
  const numbers = numeric.map(({ n }) => n)
  const sum = numbers.reduce((a, b) => a + b, 0)
  let result: number
  let arithmetic: string
  switch (operation) {
    case "sum":
      result = sum
      arithmetic = `${terms.join(" + ")} = ${canonicalDecimal(result)}`
      break
    case "average":
      result = sum / numbers.length
      arithmetic = `(${terms.join(" + ")}) / ${numbers.length} = ${canonicalDecimal(result)}`
      break
    case "max":
    case "min": {
      result = operation === "max" ? Math.max(...numbers) : Math.min(...numbers)
      const chosen = numeric.find(({ n }) => n === result)!
      arithmetic = `${operation}(${terms.join(", ")}) = ${withSources(canonicalDecimal(result), [chosen.extraction])}`
      break
    }
    case "count":
      result = numbers.length
      arithmetic = `${terms.join(", ")} → ${result}`
      break
  }
  const unit = collapseWhitespace(input.unit)
  if (unit !== "") arithmetic = `${arithmetic} ${unit}`
  const left =
    skipped.length === 0
      ? ""
      : ` Left out, not a number: ${skipped.map((e) => withSources(showValue(input.valueType, e.value), [e])).join("; ")}.`
  return {
    value: canonicalDecimal(result),
    status: "Resolved",
    justification: `${OPERATION_TITLES[operation]} of ${plural(numbers.length, "value")}: ${arithmetic}.${left}`,
    usedExtractionIds: numeric.map(({ extraction }) => extraction.id),
  }
}

/** The group a preference picks, with the reason, or undefined when it cannot decide. */
const applyPreference = (
  preference: ResolutionPreference,
  valueType: string,
  groups: ReadonlyArray<Group<ResolutionExtraction>>,
): { readonly group: Group<ResolutionExtraction>; readonly reason: string } | undefined => {
  if (preference === "most common") {
    const most = Math.max(...groups.map((group) => group.members.length))
    const tops = groups.filter((group) => group.members.length === most)
    return tops.length === 1 ? { group: tops[0]!, reason: "the most common value" } : undefined
  }
  const values = groups.map((group) => normalizeValue(valueType, group.representative.value))
  const highest = preference === "highest" || preference === "latest"
  const ordered = orderKeys(
    values,
    preference === "highest" || preference === "lowest" ? "numbers first" : "dates first",
  )
  if (ordered === undefined) {
    if (preference === "highest" || preference === "lowest") return undefined
    // Neither dates nor numbers: by the order of the extractions.
    const all = groups.flatMap((group) => group.members.map((member) => ({ group, member })))
    const pick = preference === "earliest" ? all[0]! : all[all.length - 1]!
    return { group: pick.group, reason: `the ${preference === "earliest" ? "first" : "last"} value in order` }
  }
  let index = 0
  ordered.keys.forEach((key, i) => {
    if (highest ? key > ordered.keys[index]! : key < ordered.keys[index]!) index = i
  })
  const word = ordered.kind === "dates" ? (highest ? "latest" : "earliest") : highest ? "highest" : "lowest"
  return { group: groups[index]!, reason: `the ${word} ${ordered.kind === "dates" ? "date" : "value"}` }
}

/**
 * Resolves one atomic value from its extractions (blank values count as not found). With the computational
 * resolver enabled on a `number` agent the numbers are combined by the operation of the instructions (sum
 * by default). Otherwise agreeing extractions resolve; disagreeing ones require attention with the
 * strict-majority value (else the first extraction's), unless a preference of the instructions ("prefer the
 * highest/lowest/most common/first/latest") decides between them.
 */
export const localResolve = (input: ResolutionInput): ResolutionOutcome => {
  const { valueType } = input
  const extractions = input.extractions.filter((extraction) => collapseWhitespace(extraction.value) !== "")
  if (extractions.length === 0) {
    const shown = collapseWhitespace(input.valueIfNotFound) || "n/a"
    return {
      value: null,
      status: "No result",
      justification: `No extraction found a value; ${JSON.stringify(shown)} is shown instead.`,
      usedExtractionIds: [],
    }
  }
  if (input.enableComplexCalculations && valueType === "number") {
    const calculated = calculate(input, extractions)
    if (calculated) return calculated
  }
  const groups = groupValues(extractions, (a, b) => valuesEqual(valueType, a, b))
  const resolvedFrom = (group: Group<ResolutionExtraction>) => ({
    value: normalizeValue(valueType, group.representative.value),
    usedExtractionIds: group.members.map((member) => member.id),
  })
  if (groups.length === 1) {
    const group = groups[0]!
    return {
      ...resolvedFrom(group),
      status: "Resolved",
      justification:
        extractions.length === 1
          ? `Resolved from the only extraction: ${showGroup(valueType, group)}.`
          : agreementSentence(valueType, extractions.length, group.representative.value),
    }
  }
  const total = extractions.length
  const disagreement = `The ${total} extractions give ${groups.length} different values: ${listGroups(valueType, groups)}.`
  const majority = strictMajority(groups, total)
  const preference = resolutionPreference(input.instructions)
  const preferred = preference === undefined ? undefined : applyPreference(preference, valueType, groups)
  if (preferred) {
    return {
      ...resolvedFrom(preferred.group),
      status: "Resolved",
      justification: `${disagreement} The resolution instructions prefer the ${preference} value, so ${preferred.reason} ${showGroup(valueType, preferred.group)} was chosen.`,
    }
  }
  const unapplied =
    preference === undefined
      ? ""
      : ` The instruction to prefer the ${preference} value could not be applied: the values are not all numbers or dates.`
  if (extractions.every((extraction) => extraction.consistent === true)) {
    // The consistency check (for example with a tolerance) accepted the differences.
    const group = majority ?? groups[0]!
    return {
      ...resolvedFrom(group),
      status: "Resolved",
      justification: `${disagreement} The consistency check judged them all consistent, so ${majority ? "the majority value" : "the first extraction's value"} ${showGroup(valueType, group)} was taken.${unapplied}`,
    }
  }
  const group = majority ?? groups[0]!
  const choice = majority
    ? `Showing the majority value ${showValue(valueType, group.representative.value)}`
    : `No value has a majority; showing the first extraction's value ${showValue(valueType, group.representative.value)}`
  const alternatives = groups.filter((candidate) => candidate !== group)
  return {
    ...resolvedFrom(group),
    status: "Requires attention",
    justification: `${disagreement} ${choice}; alternatives: ${listGroups(valueType, alternatives)}.${unapplied}`,
  }
}

/**
 * A resolved value that rests only on extractions that are not grounded (their passage is not on the cited
 * page, or does not state the value) requires attention, whatever the resolver decided: nothing in the
 * documents is known to support it. `used` are the extractions the value was taken from.
 */
export const groundingAttention = (
  outcome: { readonly status: string; readonly justification: string },
  used: ReadonlyArray<{ readonly grounded: boolean }>,
): { readonly status: string; readonly justification: string } => {
  if (outcome.status !== "Resolved" || used.length === 0 || used.some((e) => e.grounded)) return outcome
  const which =
    used.length === 1 ? "The extraction it rests on is" : `All ${used.length} extractions it rests on are`
  return {
    status: "Requires attention",
    justification: `${outcome.justification} ${which} not grounded: the quoted passage is not on the cited page or does not state the value.`,
  }
}
