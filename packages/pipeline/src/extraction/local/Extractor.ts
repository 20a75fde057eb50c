/**
 * The `local` provider's extraction (DESIGN §8): understand the agent, find typed candidates in the
 * pages, score them against the key terms and position cues, and answer with the best one — or with
 * nothing when the evidence is weak. Deterministic, offline, synchronous.
 */
import { canonicalDecimal, collapseWhitespace, normalizeValue } from "@dxs/domain/Values"
import {
  type DimensionQuery,
  type DiscoverRequest,
  type DiscoverResponse,
  type ExtractedValue,
  type ExtractRequest,
  type ExtractResponse,
  noUsage,
} from "../../llm/LanguageModel.ts"
import { analysePage } from "./Candidates.ts"
import { associate, discoverValues, type Mention, mentions } from "./Dimensions.ts"
import { type AgentProfile, profileAgent, stem, words } from "./KeyTerms.ts"
import { type PageContext, pool, type Scored, scoreCandidate, termHits } from "./Scoring.ts"
import { labelledByTable, rowDimensionValue, tableLabels } from "./Tables.ts"
import { lineAt, passageFor } from "./Text.ts"

/** Below this score the extractor answers nothing: a wrong value is worse than none. */
export const SCORE_THRESHOLD = 2.2

/** Runner-ups closer than this are named in the reasoning. */
const CLOSE = 0.6

/**
 * The extractor's own confidence in its answer: 0.5 at the threshold score, 0.1 more per point above it, at
 * most 0.95; 0.2 less when a different value scored within `CLOSE` of it.
 */
export const localConfidence = (best: Scored, runnerUp: Scored | undefined): number => {
  const base = Math.min(0.95, 0.5 + 0.1 * (best.score - SCORE_THRESHOLD))
  const contested = runnerUp !== undefined && best.score - runnerUp.score < CLOSE
  return Math.round(Math.max(0.05, base - (contested ? 0.2 : 0)) * 1000) / 1000
}

const formatValue = (profile: AgentProfile, valueType: string, s: Scored): string => {
  const c = s.candidate
  if (valueType === "number") {
    if (c.amount !== undefined) return canonicalDecimal(c.amount)
    return normalizeValue("number", c.value)
  }
  if (valueType === "bool") {
    if (/^(yes|y|true|x|✓|☑)$/i.test(c.value)) return "true"
    if (/^(no|n|false)$/i.test(c.value)) return "false"
  }
  if (c.kind === "money" && profile.kind !== "currency")
    return collapseWhitespace(s.page.text.slice(c.start, c.end))
  return collapseWhitespace(c.value)
}

const matchedWords = (text: string, stems: ReadonlyArray<string>): Array<string> => {
  const want = new Set(stems)
  const out: Array<string> = []
  for (const [w] of words(text)) {
    if (want.has(stem(w)) && !out.includes(w)) out.push(w)
  }
  return out
}

const excerpt = (s: Scored): string => {
  const { text } = s.page
  const c = s.candidate
  const line = lineAt(text, c.valueStart)
  const from = Math.max(line.start, Math.min(c.start, c.valueStart - 50))
  const to = Math.min(
    Math.max(line.end, lineAt(text, Math.max(c.valueStart, c.valueEnd - 1)).end),
    c.valueEnd + 30,
  )
  const raw = collapseWhitespace(text.slice(from, to))
  return raw.length > 140 ? `${raw.slice(0, 137)}…` : raw
}

const reasoningFor = (best: Scored, runnerUp: Scored | undefined, value: string, how?: string): string => {
  const parts: Array<string> = []
  if (best.labelTerms.length > 0) {
    const ws = matchedWords(best.label, best.labelTerms)
    parts.push(`label "${best.label}" matches the key terms ${ws.join(", ")}`)
  } else if (best.contextTerms.length > 0) {
    const ws = matchedWords(
      best.page.text.slice(Math.max(0, best.candidate.start - 300), best.candidate.end + 300),
      best.contextTerms,
    )
    parts.push(`its sentence mentions the key terms ${ws.slice(0, 5).join(", ")}`)
  } else parts.push("no key term nearby; decided by the pattern alone")
  parts.push(best.candidate.pattern)
  parts.push(...best.cues)
  if (how) parts.push(how)
  let text = `Found "${excerpt(best)}" on page ${best.page.pageNumber}: ${parts.join("; ")}.`
  if (runnerUp && best.score - runnerUp.score < CLOSE)
    text += ` Runner-up: "${collapseWhitespace(runnerUp.candidate.value)}" on page ${runnerUp.page.pageNumber} (score ${runnerUp.score.toFixed(2)} against ${best.score.toFixed(2)}).`
  else text += ` Value: ${value}.`
  return text
}

/** The best candidate and the best one with a different value. */
const pick = (scored: ReadonlyArray<Scored>): readonly [Scored | undefined, Scored | undefined] => {
  let best: Scored | undefined
  for (const s of scored) if (s.evidence && (!best || s.score > best.score)) best = s
  if (!best) return [undefined, undefined]
  let runnerUp: Scored | undefined
  for (const s of scored)
    if (s.evidence && s.candidate.value !== best.candidate.value && (!runnerUp || s.score > runnerUp.score))
      runnerUp = s
  return [best, runnerUp]
}

/** A value seen several times (a jurisdiction stated twice) earns a little more confidence. */
const withRepetition = (scored: ReadonlyArray<Scored>): Array<Scored> => {
  const counts = new Map<string, number>()
  for (const s of scored)
    if (s.evidence) counts.set(s.candidate.value, (counts.get(s.candidate.value) ?? 0) + 1)
  return scored.map((s) => {
    const n = counts.get(s.candidate.value) ?? 1
    return n > 1 ? { ...s, score: s.score + Math.min(0.6, 0.2 * (n - 1)) } : s
  })
}

const cartesian = (dims: ReadonlyArray<DimensionQuery>): Array<Array<string>> =>
  dims.reduce<Array<Array<string>>>(
    (acc, d) => acc.flatMap((combo) => d.values.map((v) => [...combo, v])),
    [[]],
  )

export const localExtract = (request: ExtractRequest): ExtractResponse => {
  const { agent } = request
  const profile = profileAgent(agent)
  const pages: Array<PageContext> = request.pages.map((p, index) => ({
    text: p.text,
    index,
    pageNumber: p.pageNumber,
    pageCount: request.pages.length,
    analysis: analysePage(p.text, index, request.referenceDate),
    termHits: termHits(p.text, profile),
  }))
  // A candidate in a table cell is labelled by its table, and a line item's row names its dimension value (Tables.ts).
  const cellsOfPage = pages.map((page) => tableLabels(page.text, request.pages[page.index]!.tables ?? []))
  const scored = withRepetition(
    pages.flatMap((page) => {
      const cells = cellsOfPage[page.index]!
      return pool(profile.kind, page.analysis).map(([c, f]) =>
        scoreCandidate(profile, labelledByTable(c, cells), f, page),
      )
    }),
  )

  const fixed: Record<string, string> = {}
  for (const d of request.dimensions)
    if (d.kind === "document" || d.kind === "tag") fixed[d.dimensionId] = d.values[0] ?? request.document.name
  const split = request.dimensions.filter((d) => d.kind === "static" || d.kind === "dynamic")

  const answer = (
    candidates: ReadonlyArray<Scored>,
    dims: Record<string, string>,
    howOf: (s: Scored) => string | undefined = () => undefined,
  ) => {
    const [best, runnerUp] = pick(candidates)
    if (!best || best.score < SCORE_THRESHOLD) return undefined
    const value = formatValue(profile, agent.valueType, best)
    if (value === "") return undefined
    const passage = passageFor(best.page.text, best.candidate.valueStart, best.candidate.valueEnd)
    const result: ExtractedValue = {
      dimensionValues: { ...fixed, ...dims },
      value,
      relevantPassage: best.page.text.slice(passage.start, passage.end),
      reasoning: reasoningFor(best, runnerUp, value, howOf(best)),
      pageNumber: best.page.pageNumber,
      modelConfidence: localConfidence(best, runnerUp),
    }
    return result
  }

  if (split.length === 0) {
    const one = answer(scored, {})
    return { values: one ? [one] : [], usage: noUsage }
  }

  // Per page and dimension, where each dimension value is mentioned.
  const mentionIndex = new Map<string, Array<Mention>>()
  const mentionsOf = (page: PageContext, d: DimensionQuery) => {
    const key = `${page.index}:${d.dimensionId}`
    let ms = mentionIndex.get(key)
    if (!ms) {
      ms = mentions(page.text, d.values)
      mentionIndex.set(key, ms)
    }
    return ms
  }
  const located = scored.map((s) => {
    const where = split.map(
      (d) =>
        rowDimensionValue(s.candidate, cellsOfPage[s.page.index]!, d.values) ??
        associate(s.page.text, mentionsOf(s.page, d), s.candidate.valueStart, s.candidate.valueEnd),
    )
    return { s, where }
  })
  const values: Array<ExtractedValue> = []
  for (const combo of cartesian(split)) {
    const matching = located.filter(({ where }) => where.every((w, i) => w?.value === combo[i]))
    const dims: Record<string, string> = {}
    split.forEach((d, i) => {
      dims[d.dimensionId] = combo[i]!
    })
    const howOf = (s: Scored) =>
      matching
        .find((m) => m.s === s)
        ?.where.map((w, i) => `${split[i]!.name} "${combo[i]}" on the ${w?.how}`)
        .join(", ")
    const one = answer(
      matching.map((m) => m.s),
      dims,
      howOf,
    )
    if (one) values.push(one)
  }
  return { values, usage: noUsage }
}

export const localDiscover = (request: DiscoverRequest): DiscoverResponse => ({
  values: discoverValues(request.dimension, request.pages),
  usage: noUsage,
})
