/**
 * Readings that agree across a project's documents. OCR misreads a character or two of a long value in
 * one scan and others in the next: a shop's address on its twelve receipts reads `Jalan Pelabar` on one,
 * `Jalan Pciabur` on another and `Jalan Pelabur` on the rest. Where at least three readings of one agent,
 * each of the documents' own OCR, differ from each other by a few characters only, the one they are
 * nearest to together (the medoid: least edits to all the others) is the value, and a reading within
 * those few characters of it takes it. Only readings with numbers, and the same numbers, are held against
 * each other (another branch's lot or another postcode is another place; a name has nothing that tells
 * two of like spelling apart), and values printed differently (another street) differ by more than a few
 * characters: all are left as read; so are short values (an invoice number, a date)
 * whose one character is the whole difference, and values of documents not read by OCR (a PDF's text
 * layer reads what is printed).
 */
import { Array as Arr } from "effect"
import { editDistance } from "./Grounding.ts"
import { UnionFind } from "./UnionFind.ts"

/** A value of one atomic value (`key`) as read from its document. */
export interface Reading {
  readonly key: string
  readonly value: string
}

/** The value the readings agree on for a key whose own reading differs from it. */
export interface AgreedReading {
  readonly value: string
  /** How many readings (this one included) are within the edits allowed of the agreed value. */
  readonly readings: number
}

/** Values shorter than this (compared as read, case and spacing aside) are never changed. */
export const AGREEMENT_MIN_LENGTH = 15
/** The most edits between two readings of one value, as a share of the longer one. */
export const AGREEMENT_MAX_EDIT_SHARE = 0.1
/** The fewest readings that must agree. */
export const AGREEMENT_MIN_READINGS = 3
/**
 * Distinct readings compared at most: the comparison is of every pair (of like length); beyond this many
 * the values are left as read.
 */
export const AGREEMENT_MAX_DISTINCT = 5_000

/** Case and runs of spaces aside: how readings are compared. */
const comparable = (value: string) => value.toUpperCase().replace(/\s+/g, " ").trim()

/** The numbers of a reading, in order: a house's, a lot's, a unit's, a postcode. */
const numbersOf = (value: string) => (value.match(/\d+/g) ?? []).join(" ")

const allowedEdits = (a: string, b: string) =>
  Math.floor(AGREEMENT_MAX_EDIT_SHARE * Math.max(a.length, b.length))

/** Readings of like length (sorted by length) within a few edits of each other, as groups of indices. */
const linkedGroups = (values: ReadonlyArray<string>): Array<ReadonlyArray<number>> => {
  const sets = new UnionFind(values.length)
  for (let i = 0; i < values.length; i++) {
    const a = values[i]!
    for (let j = i + 1; j < values.length; j++) {
      const b = values[j]!
      const limit = allowedEdits(a, b)
      if (b.length - a.length > limit) break
      if (sets.find(i) !== sets.find(j) && editDistance(a, b, limit) <= limit) sets.union(i, j)
    }
  }
  const groups = Arr.groupBy(
    values.map((_, i) => i),
    (i) => String(sets.find(i)),
  )
  return Object.values(groups).filter((g) => g.length > 1)
}

/**
 * The readings whose value the others change: each key whose reading differs from the value agreed on,
 * with that value (as one of the documents read it) and how many readings agree. Only readings with the
 * same numbers are held against each other: numbers are what tell two places (or two branches) apart, so
 * a reading whose number OCR misread stays as read, and so does a reading without numbers (a name: two
 * shops' names may be a letter apart).
 */
export const agreedReadings = (readings: ReadonlyArray<Reading>): ReadonlyMap<string, AgreedReading> => {
  // Distinct readings (case and spacing aside), each with its keys and its first form as read.
  const distinct = new Map<string, { form: string; keys: Array<string> }>()
  for (const r of readings) {
    const c = comparable(r.value)
    if (c.length < AGREEMENT_MIN_LENGTH) continue
    const entry = distinct.get(c)
    if (entry === undefined) distinct.set(c, { form: r.value, keys: [r.key] })
    else entry.keys.push(r.key)
  }
  const out = new Map<string, AgreedReading>()
  if (distinct.size < 2 || distinct.size > AGREEMENT_MAX_DISTINCT) return out
  const weight = (c: string) => distinct.get(c)!.keys.length
  for (const [numbers, bucket] of Object.entries(Arr.groupBy(distinct.keys(), numbersOf))) {
    // A reading without numbers (a name) has nothing that tells two of like spelling apart: left as read.
    if (numbers === "" || bucket.length < 2) continue
    const values = bucket.sort((a, b) => a.length - b.length || (a < b ? -1 : 1))
    for (const group of linkedGroups(values)) {
      const members = group.map((i) => values[i]!)
      if (members.reduce((n, c) => n + weight(c), 0) < AGREEMENT_MIN_READINGS) continue
      // The medoid: the fewest edits to every reading of the group (more readings of it first on a tie);
      // a reading further than twice the edits allowed counts as that far.
      let agreed = members[0]!
      let bestCost = Number.POSITIVE_INFINITY
      for (const a of members) {
        let cost = 0
        for (const b of members)
          if (b !== a) cost += weight(b) * editDistance(a, b, 2 * allowedEdits(a, b) + 1)
        if (cost < bestCost || (cost === bestCost && weight(a) > weight(agreed))) {
          agreed = a
          bestCost = cost
        }
      }
      // Only readings within a few edits of the agreed value itself take it (a chain of small steps does
      // not reach a reading far from it).
      const near = members.filter((c) => {
        const limit = allowedEdits(c, agreed)
        return editDistance(c, agreed, limit) <= limit
      })
      const agreeing = near.reduce((n, c) => n + weight(c), 0)
      if (agreeing < AGREEMENT_MIN_READINGS) continue
      const form = distinct.get(agreed)!.form
      for (const c of near)
        if (c !== agreed)
          for (const key of distinct.get(c)!.keys) out.set(key, { value: form, readings: agreeing })
    }
  }
  return out
}
