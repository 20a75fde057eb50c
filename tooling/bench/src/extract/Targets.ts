/**
 * What the extraction benchmark is held to: each labelled set's figures before the local extractor read
 * documents by kind of value (measured with this benchmark on the code of that time, the same corpus and
 * cache), the targets, and a PASS/FAIL line per target.
 */

export interface SetFigures {
  readonly name: string
  /** F1 per field (and `all`), or for invoices right answers per field with `<field>_total` beside them. */
  readonly figures: Readonly<Record<string, number>>
}

/** Figures of the local extractor before it read receipts (same benchmark, same corpus). */
export const BEFORE: Readonly<Record<string, Readonly<Record<string, number>>>> = {
  nda: { all: 0.807, effective_date: 0.778, jurisdiction: 0.98, party: 0.758, term: 0.624 },
  invoices: { amount: 10, date: 11, invoice_number: 7, issuer: 3, currency: 11 },
  receipts: { all: 0.278, company: 0, date: 0.43, address: 0, total: 0.462 },
  "receipts held back": { all: 0.294, company: 0, date: 0.5, address: 0, total: 0.456 },
  cost: { msPerPair: 3.04 },
}

interface Target {
  readonly set: string
  readonly field: string
  /** The figure must be at least this (a count for invoices: `"all"` means every document). */
  readonly atLeast: number | "all"
}

const TARGETS: ReadonlyArray<Target> = [
  { set: "receipts", field: "all", atLeast: 0.6 },
  ...["company", "date", "address", "total"].map((field) => ({ set: "receipts", field, atLeast: 0.4 })),
  { set: "receipts held back", field: "all", atLeast: 0.6 },
  ...["company", "date", "address", "total"].map((field) => ({
    set: "receipts held back",
    field,
    atLeast: 0.4,
  })),
  { set: "invoices", field: "issuer", atLeast: 9 },
  { set: "invoices", field: "invoice_number", atLeast: 9 },
  ...["amount", "date", "currency"].map((field) => ({ set: "invoices", field, atLeast: "all" as const })),
  { set: "nda", field: "all", atLeast: 0.85 },
]

/** Extraction cost per agent and document, in milliseconds, that must not be reached. */
export const COST_LIMIT_MS = 10

const show = (set: string, value: number | undefined) =>
  value === undefined ? "-" : set === "invoices" ? String(value) : value.toFixed(3)

/** Prints before, now and target per field, and PASS/FAIL; returns whether every measured target is met. */
export const printTargets = (sets: ReadonlyArray<SetFigures>, msPerPair: number | undefined): boolean => {
  console.log("\ntargets (before → now):")
  let ok = true
  for (const t of TARGETS) {
    const set = sets.find((s) => s.name === t.set)
    if (set === undefined) continue
    const now = set.figures[t.field]
    const bound = t.atLeast === "all" ? set.figures[`${t.field}_total`] : t.atLeast
    const pass = now !== undefined && bound !== undefined && now >= bound
    ok &&= pass
    const of = t.set === "invoices" ? `/${set.figures[`${t.field}_total`]}` : ""
    console.log(
      `  ${pass ? "PASS" : "FAIL"}  ${`${t.set} ${t.field}`.padEnd(34)} ${show(t.set, BEFORE[t.set]?.[t.field])}${of} → ${show(t.set, now)}${of}  (target ≥ ${show(t.set, bound)}${of})`,
    )
  }
  if (msPerPair !== undefined) {
    const pass = msPerPair < COST_LIMIT_MS
    ok &&= pass
    console.log(
      `  ${pass ? "PASS" : "FAIL"}  ${"extraction ms per agent and document".padEnd(34)} ${BEFORE.cost!.msPerPair!.toFixed(2)} → ${msPerPair.toFixed(2)}  (target < ${COST_LIMIT_MS})`,
    )
  }
  return ok
}
