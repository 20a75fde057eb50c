/**
 * Extraction benchmark of the `local` provider on the labelled corpus (`../shared/corpus/labelled`):
 * Kleister-NDA train (score.py micro-F1 and per-field F1), the invoices (exact match per field) and the
 * scanned receipts (SROIE scoring, with a held-back fifth reported apart). Each file is parsed by the
 * backend the API picks for it (OCR for images) and its agents asked through the provider's
 * `extractDocument`, as the extraction stage does. Prints the figures per field, milliseconds per
 * agent/document pair (extraction only), and each target of the local extractor with its figure before,
 * now, and PASS/FAIL.
 * Usage: pnpm bench:extract [--limit N] [--no-cache] [--show-errors FIELD] [--only nda|invoices|receipts]
 */
import { openCorpus } from "./extract/Corpus.ts"
import { benchInvoices } from "./extract/Invoices.ts"
import { benchNda } from "./extract/Nda.ts"
import { benchReceipts } from "./extract/Receipts.ts"
import { printTargets, type SetFigures } from "./extract/Targets.ts"

const args = process.argv.slice(2)
const option = (name: string) => {
  const i = args.indexOf(name)
  return i >= 0 ? args[i + 1] : undefined
}
const limit = Number(option("--limit") ?? Number.POSITIVE_INFINITY)
const showErrors = option("--show-errors")
const only = option("--only")

const bench = async () => {
  const corpus = openCorpus(!args.includes("--no-cache"))
  const sets: Array<SetFigures> = []
  try {
    if (only === undefined || only === "nda") {
      const nda = await benchNda(corpus, { limit, showErrors })
      if (nda) sets.push(nda)
    }
    if (only === undefined || only === "invoices") {
      const invoices = await benchInvoices(corpus, { showErrors })
      if (invoices) sets.push(invoices)
    }
    if (only === undefined || only === "receipts") {
      const receipts = await benchReceipts(corpus, { limit, showErrors })
      if (receipts) sets.push(...receipts)
    }
  } finally {
    await corpus.close()
  }
  const { pairs, extractMs, parsed, parseMs } = corpus.stats()
  const msPerPair = pairs > 0 ? extractMs / pairs : undefined
  if (msPerPair !== undefined)
    console.log(
      `extraction: ${pairs} agent/document pairs in ${extractMs.toFixed(0)} ms = ${msPerPair.toFixed(2)} ms per pair`,
    )
  if (parsed > 0) console.log(`parsing: ${parsed} files in ${(parseMs / 1000).toFixed(1)} s`)
  const met = printTargets(sets, msPerPair)
  console.log(met ? "every target met" : "some targets not met")
}

bench().catch((e) => {
  console.error(e)
  process.exitCode = 1
})
