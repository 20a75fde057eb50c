/**
 * Scanned receipts (SROIE task 3): company, date, address and total of each receipt image, read by the
 * image backend's OCR and scored as the task does — a value is right when it equals the annotation after
 * upper-casing and collapsing whitespace, dates compared as dates and totals as numbers; precision, recall
 * and F1 per field and over all four.
 *
 * Every fifth receipt (in the order of their names) is held back: rules are tuned by looking at the errors
 * of the others only (`--show-errors` never prints a held-back receipt), and the two parts are reported
 * apart, so a rule that fits only the receipts it was tuned on shows up as a gap between them.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs"
import * as path from "node:path"
import { agreedReadings } from "@dxs/domain/Readings"
import { agent, type Corpus, labelled, prf } from "./Corpus.ts"
import type { SetFigures } from "./Targets.ts"

const receiptDir = path.join(labelled, "receipts-sroie")

const receiptAgents = {
  company: agent("company", "Company", "The name of the shop or company that issued the receipt"),
  date: agent("date", "Date", "The date of the receipt", "date"),
  address: agent("address", "Address", "The address of the shop or company that issued the receipt"),
  total: agent("total", "Total", "The total amount paid", "number"),
}
type Field = keyof typeof receiptAgents
const FIELDS = Object.keys(receiptAgents) as Array<Field>

const MONTHS = ["JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"]

const fullYear = (y: string) => (y.length === 2 ? 2000 + Number(y) : Number(y))
const iso = (y: number, m: number, d: number) =>
  m >= 1 && m <= 12 && d >= 1 && d <= 31
    ? `${y}-${String(m).padStart(2, "0")}-${String(d).padStart(2, "0")}`
    : undefined

/** A date as the annotations write it (day first when numeric), as `YYYY-MM-DD`. */
export const receiptDate = (raw: string): string | undefined => {
  const s = raw
    .trim()
    .replace(/^\(|\)$/g, "")
    .toUpperCase()
  let m = /^(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})$/.exec(s)
  if (m) return iso(Number(m[1]), Number(m[2]), Number(m[3]))
  m = /^(\d{1,2})[-/.](\d{1,2})[-/.](\d{2}|\d{4})$/.exec(s)
  if (m) return iso(fullYear(m[3]!), Number(m[2]), Number(m[1]))
  m = /^(\d{2})(\d{2})(\d{4})$/.exec(s)
  if (m) return iso(Number(m[3]), Number(m[2]), Number(m[1]))
  m = /^(\d{1,2})[\s-]+([A-Z]{3})[A-Z]*[\s-]+(\d{2}|\d{4})$/.exec(s)
  if (m) return iso(fullYear(m[3]!), MONTHS.indexOf(m[2]!) + 1, Number(m[1]))
  m = /^([A-Z]{3})[A-Z]*\s+(\d{1,2}),?\s+(\d{4})$/.exec(s)
  if (m) return iso(Number(m[3]), MONTHS.indexOf(m[1]!) + 1, Number(m[2]))
  return undefined
}

/** An amount as printed ("RM 9.00", "$12.50", "1,234.50"), as a number. */
export const receiptAmount = (raw: string): number | undefined => {
  const s = raw.replace(/RM|\$|,|\s/gi, "")
  return /^-?\d+(\.\d+)?$/.test(s) ? Number(s) : undefined
}

const normal = (s: string) => s.toUpperCase().replace(/\s+/g, " ").trim()

const same = (field: Field, got: string, want: string): boolean => {
  if (field === "date") {
    const a = receiptDate(got)
    return a !== undefined && a === receiptDate(want)
  }
  if (field === "total") {
    const a = receiptAmount(got)
    const b = receiptAmount(want)
    return a !== undefined && b !== undefined && Math.abs(a - b) < 0.005
  }
  return normal(got) === normal(want)
}

type Counts = Record<Field, { tp: number; pred: number; gold: number }>
const emptyCounts = (): Counts =>
  Object.fromEntries(FIELDS.map((f) => [f, { tp: 0, pred: 0, gold: 0 }])) as Counts

const figuresOf = (counts: Counts): Record<string, number> => {
  const out: Record<string, number> = {}
  let tp = 0
  let pred = 0
  let gold = 0
  for (const f of FIELDS) {
    const c = counts[f]
    out[f] = prf(c.tp, c.pred, c.gold).f1
    tp += c.tp
    pred += c.pred
    gold += c.gold
  }
  out.all = prf(tp, pred, gold).f1
  return out
}

const report = (title: string, counts: Counts) => {
  const all = figuresOf(counts)
  console.log(`  ${title}: F1 ${all.all!.toFixed(3)}`)
  for (const f of FIELDS) {
    const c = counts[f]
    const { p, r, f1 } = prf(c.tp, c.pred, c.gold)
    console.log(
      `    ${f.padEnd(13)} P=${p.toFixed(3)} R=${r.toFixed(3)} F1=${f1.toFixed(3)} (right ${c.tp}, gold ${c.gold}, answered ${c.pred})`,
    )
  }
}

export const benchReceipts = async (
  corpus: Corpus,
  options: {
    readonly limit: number
    readonly showErrors: string | undefined
    /** Only the held-back part (every fifth receipt). */
    readonly heldBackOnly?: boolean
  },
): Promise<ReadonlyArray<SetFigures> | undefined> => {
  const keyDir = path.join(receiptDir, "key")
  if (!existsSync(keyDir)) {
    console.log(`no receipts folder at ${receiptDir}: nothing to measure`)
    return undefined
  }
  const ids = readdirSync(keyDir)
    .filter((f) => f.endsWith(".json"))
    .map((f) => f.replace(/\.json$/, ""))
    .sort()
    .slice(0, options.limit)
  const parts = { development: emptyCounts(), heldBack: emptyCounts() }
  let read = 0
  const scoredIds = ids.filter((_, i) => !options.heldBackOnly || i % 5 === 4)
  const answersOf = new Map<string, Map<string, string>>()
  for (const id of scoredIds) {
    const image = path.join(receiptDir, "img", `${id}.jpg`)
    const pages = existsSync(image) ? await corpus.pagesOf(image) : undefined
    if (pages) read += 1
    answersOf.set(
      id,
      pages ? new Map(corpus.extract(Object.values(receiptAgents), id, pages)) : new Map<string, string>(),
    )
  }
  // The receipts are one project's documents, every page read by OCR: the resolve stage holds each text
  // value against the others' (`@dxs/domain/Readings`), as here.
  for (const f of FIELDS) {
    if (receiptAgents[f].valueType !== "string") continue
    const agreed = agreedReadings(
      scoredIds.flatMap((id) => {
        const value = answersOf.get(id)!.get(f)
        return value === undefined ? [] : [{ key: id, value }]
      }),
    )
    for (const [id, a] of agreed) answersOf.get(id)!.set(f, a.value)
    console.log(`receipts: ${f}: ${agreed.size} values read by OCR take the reading other receipts agree on`)
  }
  for (const [i, id] of ids.entries()) {
    const heldBack = i % 5 === 4
    if (options.heldBackOnly && !heldBack) continue
    const counts = heldBack ? parts.heldBack : parts.development
    const gold = JSON.parse(readFileSync(path.join(keyDir, `${id}.json`), "utf8")) as Record<Field, string>
    const answers = answersOf.get(id)!
    for (const f of FIELDS) {
      const want = gold[f]?.trim() ?? ""
      const got = answers.get(f)
      const c = counts[f]
      if (want !== "") c.gold += 1
      if (got !== undefined) c.pred += 1
      const right = got !== undefined && want !== "" && same(f, got, want)
      if (right) c.tp += 1
      if (options.showErrors === f && !heldBack && !right)
        console.log(`  ${id}: expected ${want || "-"} | got ${got ?? "-"}`)
    }
  }
  const scored = options.heldBackOnly ? ids.filter((_, i) => i % 5 === 4).length : ids.length
  console.log(`receipts: ${scored} scanned receipts (${read} read by OCR)`)
  const all = emptyCounts()
  for (const f of FIELDS)
    for (const k of ["tp", "pred", "gold"] as const)
      all[f][k] = parts.development[f][k] + parts.heldBack[f][k]
  if (!options.heldBackOnly) {
    report("all receipts", all)
    report("development part (4 in 5)", parts.development)
  }
  report("held-back part (every fifth)", parts.heldBack)
  return [
    { name: "receipts", figures: figuresOf(all) },
    { name: "receipts held back", figures: figuresOf(parts.heldBack) },
  ]
}
