/**
 * Where an answer's passage is, and whether the answer is grounded: its passage is text of a page the
 * model was given and its value is stated in that passage. Every extraction answer, from any provider,
 * goes through `groundCitation` before it is kept; an ungrounded one is never cited as if it were.
 */
import { findPassageOnPage, type Grounding, groundAnswer, valueInPassage } from "@dxs/domain/Grounding"
import { parseNumber } from "@dxs/domain/Values"
import {
  type AgreeOptions,
  askedDurationUnit,
  dateOrderOf,
  passageStates,
  readValue,
} from "@dxs/domain/WrittenForms"
import type { PageText, ValueType } from "./LanguageModel.ts"

const STOP_WORDS = new Set(
  "the and for are was were with from that this which into per its has have had not but all any our their".split(
    " ",
  ),
)

const tokens = (text: string): Array<string> =>
  (text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).filter(
    (t) => (t.length > 2 || /\d/.test(t)) && !STOP_WORDS.has(t),
  )

/** Lines of a page, long lines split into sentences; each a verbatim (trimmed) piece of the page text. */
const segments = (pageText: string): Array<string> =>
  pageText
    .split(/\r?\n/)
    .flatMap((line) => (line.length > 400 ? line.split(/(?<=[.!?;])\s+/) : [line]))
    .map((s) => s.trim())
    .filter((s) => s !== "")

/**
 * Whether a line states the value literally: a number equal to it, a date's year, or the text itself. A
 * line cited in place of a passage not found must do that and satisfy the domain's rule as well. Stricter
 * than the domain's `valueInPassage` on purpose (which lets a line without any date through for a date
 * value): here it picks a line out of a whole page, not checks a passage the answer quoted.
 */
const statesValue = (
  segment: string,
  value: string,
  valueType: ValueType,
  options: AgreeOptions,
): boolean => {
  if (valueType === "number") {
    const wanted = parseNumber(value)
    if (wanted !== undefined)
      for (const chunk of segment.match(/\d[\d.,'\u00a0\u202f]*/g) ?? []) {
        const n = parseNumber(chunk.replace(/[.,]$/, ""))
        if (n !== undefined && Math.abs(n - wanted) <= 1e-9 * Math.max(1, Math.abs(n))) return true
      }
    return false
  }
  if (valueType === "date" || valueType === "datetime") {
    const year = /^\d{4}/.exec(value)?.[0]
    return year !== undefined && segment.includes(year)
  }
  if (value.length === 0) return false
  if (segment.toLowerCase().includes(value.toLowerCase())) return true
  // A normalised date, amount or duration of a string agent, as the line writes it.
  const read = readValue(value, options)
  return read !== undefined && passageStates(read, segment, options)
}

const citedFirst = (pages: ReadonlyArray<PageText>, pageNumber: number | undefined): Array<PageText> => {
  const cited =
    (pageNumber === undefined ? undefined : pages.find((p) => p.pageNumber === pageNumber)) ??
    (pageNumber === undefined
      ? pages[0]!
      : pages.reduce((best, p) =>
          Math.abs(p.pageNumber - pageNumber) < Math.abs(best.pageNumber - pageNumber) ? p : best,
        ))
  return [cited, ...pages.filter((p) => p !== cited)]
}

type Located = { readonly pageNumber: number; readonly passage: string }

/**
 * The passage as the page text has it: verbatim, else as the domain's grounding finds it (spacing, quotes,
 * dashes, case, small slips, ellipses); cited page first.
 */
const findPassage = (ordered: ReadonlyArray<PageText>, passage: string): Located | undefined => {
  const quoted = passage.trim()
  if (quoted === "") return undefined
  for (const p of ordered) if (p.text.includes(quoted)) return { pageNumber: p.pageNumber, passage: quoted }
  for (const p of ordered) {
    const found = findPassageOnPage(p.text, quoted)
    if (found !== undefined) return { pageNumber: p.pageNumber, passage: found }
  }
  return undefined
}

/**
 * The line that best matches the passage's words and the value (the cited page first); with
 * `mustStateValue`, only lines that state the value.
 */
const bestLine = (
  ordered: ReadonlyArray<PageText>,
  passage: string,
  value: string,
  valueType: ValueType,
  mustStateValue: boolean,
  options: AgreeOptions = {},
): Located | undefined => {
  const wanted = new Set(tokens(passage.trim()))
  let best: { pageNumber: number; passage: string; score: number } | undefined
  for (const p of ordered) {
    for (const segment of segments(p.text)) {
      const states = statesValue(segment, value, valueType, options)
      if (mustStateValue && !(states && valueInPassage(valueType, value, segment, options))) continue
      const segmentTokens = new Set(tokens(segment))
      let shared = 0
      for (const t of wanted) if (segmentTokens.has(t)) shared += 1
      const base = (wanted.size === 0 ? 0 : shared / wanted.size) + (states ? 1 : 0)
      if (base <= 0) continue
      // The cited page wins ties; a shorter segment wins among equals (more precise citation).
      const score = base + (p === ordered[0] ? 0.05 : 0) - segment.length / 1e7
      if (best === undefined || score > best.score)
        best = { pageNumber: p.pageNumber, passage: segment, score }
    }
  }
  return best === undefined ? undefined : { pageNumber: best.pageNumber, passage: best.passage }
}

/**
 * Where a value's passage really is: the cited page's text when the passage is verbatim in it, else another
 * given page holding it verbatim, else the same text found loosely (spacing, quotes, case), else the line that
 * best matches the passage and the value (the cited page first). Undefined when no page text supports it:
 * the value is then dropped, never cited to text that does not exist.
 */
export const locatePassage = (
  pages: ReadonlyArray<PageText>,
  pageNumber: number | undefined,
  passage: string,
  value: string,
  valueType: ValueType,
): Located | undefined => {
  if (pages.length === 0) return undefined
  const ordered = citedFirst(pages, pageNumber)
  return findPassage(ordered, passage) ?? bestLine(ordered, passage, value, valueType, false)
}

const markdownRow = /^\s*\|.*\|\s*$/u

/**
 * A passage quoted from the Markdown tables of the prompt (`| a | b |` rows) as the page text holds it:
 * its cells joined by " | " (Word, web pages, e-mail), or by spaces (PDF lines); the quote itself when
 * neither is on a page, or when it is no table row.
 */
export const asPageText = (passage: string, pages: ReadonlyArray<PageText>): string => {
  const lines = passage.split("\n").filter((l) => l.trim() !== "")
  if (lines.length === 0 || !lines.every((l) => markdownRow.test(l))) return passage
  const rows = lines
    .filter((l) => !/^\s*\|?[\s:|-]*-{3,}[\s:|-]*$/u.test(l))
    .map((l) =>
      l
        .trim()
        .replace(/^\|/u, "")
        .replace(/(?<!\\)\|$/u, "")
        .split(/(?<!\\)\|/u)
        .map((c) => c.replace(/\\\|/gu, "|").replace(/<br>/gu, " ").trim()),
    )
  const variants = [
    rows.map((cells) => cells.join(" | ").trim()).join("\n"),
    rows.map((cells) => cells.filter((c) => c !== "").join(" ")).join("\n"),
  ]
  return (
    variants.find((v) => v !== "" && pages.some((p) => findPassageOnPage(p.text, v) !== undefined)) ?? passage
  )
}

/**
 * The order of dates of a request's pages, read once for all its answers (each answer is checked against the
 * same pages array), not once per answer.
 */
const dateOrders = new WeakMap<ReadonlyArray<PageText>, ReturnType<typeof dateOrderOf>>()
const dateOrderOfPages = (pages: ReadonlyArray<PageText>) => {
  if (dateOrders.has(pages)) return dateOrders.get(pages)
  const order = dateOrderOf(pages.map((p) => p.text).join("\n"))
  dateOrders.set(pages, order)
  return order
}

/** What the agent asks for that decides which written forms state its value. */
export interface AgentExpectation {
  readonly unit?: string | undefined
  readonly extractionInstructions?: string | undefined
}

/**
 * How the written forms are read for this answer: numeric dates in the order the document's pages show
 * (`dateOrderOf`), durations converted into the unit the agent asks for (`askedDurationUnit`).
 */
const writtenFormOptions = (pages: ReadonlyArray<PageText>, agent: AgentExpectation): AgreeOptions => ({
  dateOrder: dateOrderOfPages(pages),
  askedUnit: askedDurationUnit({ unit: agent.unit, instructions: agent.extractionInstructions }),
})

export type Citation =
  | { readonly grounded: true; readonly pageNumber: number; readonly passage: string }
  | {
      readonly grounded: false
      readonly pageNumber: number
      readonly passage: string
      /** One line saying what is wrong, used in the correction sent with the retry. */
      readonly detail: string
    }

/**
 * The answer's citation, checked by the domain's rule (`groundAnswer`: the passage is text of the page,
 * normalised and with small slips tolerated, and states the value). The cited page first; a passage that
 * is on another page of the request is cited there. When the passage is on no page, a line of the pages
 * that states the value and best shares the passage's words is cited instead. Otherwise ungrounded, with
 * the model's own passage and page kept as given and the reason.
 */
export const groundCitation = (
  pages: ReadonlyArray<PageText>,
  pageNumber: number | undefined,
  quoted: string,
  value: string,
  valueType: ValueType,
  agent: AgentExpectation = {},
): Citation => {
  const passage = asPageText(quoted, pages)
  const cited = pageNumber ?? pages[0]?.pageNumber ?? 1
  const ordered = pages.length === 0 ? [] : citedFirst(pages, pageNumber)
  const options = writtenFormOptions(pages, agent)
  let first: Extract<Grounding, { grounded: false }> | undefined
  for (const page of ordered) {
    const g = groundAnswer({ valueType, value, passage, pageText: page.text, pageNumber: cited, ...options })
    if (g.grounded) return { grounded: true, pageNumber: page.pageNumber, passage: g.passage }
    first ??= g
    // On the page, but not stating the value: that is the answer's fault, not the page number's.
    if (g.reason === "value not in passage") break
  }
  if (first?.reason !== "value not in passage" && valueType !== "bool") {
    const line = bestLine(ordered, passage, value, valueType, true, options)
    if (line !== undefined) return { grounded: true, ...line }
  }
  return {
    grounded: false,
    pageNumber: cited,
    passage: passage.trim(),
    detail: first?.detail ?? `no page was given for the passage ${JSON.stringify(clip(passage))}`,
  }
}

const clip = (text: string): string => {
  const t = text.trim().replace(/\s+/g, " ")
  return t.length > 160 ? `${t.slice(0, 157)}…` : t
}
