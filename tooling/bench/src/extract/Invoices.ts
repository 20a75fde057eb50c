/** Invoices: amount, date, invoice number, issuer and currency of the labelled PDFs, exact match per field. */
import { existsSync, readdirSync, readFileSync } from "node:fs"
import * as path from "node:path"
import { agent, type Corpus, labelled } from "./Corpus.ts"
import type { SetFigures } from "./Targets.ts"

const invoiceDir = path.join(labelled, "invoices/compare")

const invoiceAgents = {
  amount: agent("amount", "Amount", "The total amount of the invoice (amount due, including tax)", "number"),
  date: agent("date", "Invoice date", "The date the invoice was issued", "date"),
  invoice_number: agent("invoice_number", "Invoice number", "The invoice number"),
  issuer: agent("issuer", "Issuer", "The company that issued the invoice (the seller)"),
  currency: agent("currency", "Currency", "The currency of the invoice total as an ISO code"),
}

const sameText = (a: string, b: string) =>
  a.trim().toLowerCase().replace(/\s+/g, " ") === b.trim().toLowerCase().replace(/\s+/g, " ")

export const benchInvoices = async (
  corpus: Corpus,
  options: { readonly showErrors: string | undefined },
): Promise<SetFigures | undefined> => {
  if (!existsSync(invoiceDir)) {
    console.log(`no invoice folder at ${invoiceDir}: nothing to measure`)
    return undefined
  }
  const files = readdirSync(invoiceDir)
    .filter((f) => f.endsWith(".pdf") && existsSync(path.join(invoiceDir, f.replace(/\.pdf$/, ".json"))))
    .sort()
  const fields = Object.keys(invoiceAgents) as Array<keyof typeof invoiceAgents>
  const hits = Object.fromEntries(fields.map((f) => [f, { right: 0, total: 0, answered: 0 }]))
  for (const file of files) {
    const goldJson = JSON.parse(readFileSync(path.join(invoiceDir, file.replace(/\.pdf$/, ".json")), "utf8"))
    const gold = (Array.isArray(goldJson) ? goldJson[0] : goldJson) as Record<string, unknown>
    const pages = await corpus.pagesOf(path.join(invoiceDir, file))
    const answers = pages ? corpus.extract(Object.values(invoiceAgents), file, pages) : new Map()
    for (const f of fields) {
      const want = gold[f]
      if (want === undefined || want === null) continue
      const got = answers.get(f)
      const h = hits[f]!
      h.total += 1
      if (got !== undefined) h.answered += 1
      const same =
        got !== undefined &&
        (f === "amount" ? Math.abs(Number(got) - Number(want)) < 0.005 : sameText(got, String(want)))
      if (same) h.right += 1
      if (options.showErrors === f && !same)
        console.log(`  ${file}: expected ${String(want)} | got ${got ?? "-"}`)
    }
  }
  console.log(`invoices: ${files.length} PDFs with gold`)
  const figures: Record<string, number> = {}
  for (const f of fields) {
    const h = hits[f]!
    figures[f] = h.right
    figures[`${f}_total`] = h.total
    console.log(
      `  ${f.padEnd(15)} exact ${h.right}/${h.total} = ${(h.total ? h.right / h.total : 0).toFixed(2)} (answered ${h.answered})`,
    )
  }
  return { name: "invoices", figures }
}
