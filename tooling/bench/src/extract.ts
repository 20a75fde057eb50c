/**
 * Extraction benchmark of the `local` provider on the labelled corpus:
 * - Kleister-NDA train: effective date, jurisdiction, parties and term of 254 NDAs, written in the
 *   Kleister `key=value` format and scored with the corpus's `score.py` (micro-F1), plus per-field
 *   precision/recall computed here;
 * - invoices: amount, date, invoice number, issuer and currency, exact-match rate per field.
 * Prints milliseconds per agent/document pair (extraction only; parsing is timed separately).
 * Usage: pnpm bench:extract [--limit N] [--no-cache] [--show-errors FIELD]
 * Parsed page text is cached in the temp folder (keyed by file size and mtime) so reruns are fast.
 */
import { spawnSync } from "node:child_process"
import { existsSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { backendFor, defaultLimits } from "@dxs/pipeline"
import { localExtract } from "@dxs/pipeline/extraction/local/Extractor"
import type { AgentSpec, ExtractRequest, PageText, ValueType } from "@dxs/pipeline/llm/LanguageModel"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..")
const labelled = path.join(root, "../shared/corpus/labelled")
const ndaDir = path.join(labelled, "kleister-nda-train")
const invoiceDir = path.join(labelled, "invoices/compare")

const args = process.argv.slice(2)
const option = (name: string) => {
  const i = args.indexOf(name)
  return i >= 0 ? args[i + 1] : undefined
}
const limit = Number(option("--limit") ?? Number.POSITIVE_INFINITY)
const useCache = !args.includes("--no-cache")
const showErrors = option("--show-errors")
const REFERENCE_DATE = "2024-01-01"

const agent = (
  id: string,
  name: string,
  extractionInstructions: string,
  valueType: ValueType = "string",
  examples = "",
): AgentSpec => ({
  id,
  name,
  extractionInstructions,
  valueType,
  unit: "",
  examples,
  inconsistencyInstructions: "",
  resolutionInstructions: "",
  enableComplexCalculations: false,
  valueIfNotFound: "",
  derivedPrompt: "",
  isEvaluation: false,
})

const ndaAgents = {
  effective_date: agent(
    "effective_date",
    "Effective date",
    "The date the agreement is dated or takes effect",
    "date",
  ),
  jurisdiction: agent("jurisdiction", "Jurisdiction", "The state or country whose laws govern the agreement"),
  party: agent("party", "Parties", "The parties between whom the agreement is made (companies or persons)"),
  term: agent("term", "Term", "How long the agreement lasts (its term or duration)", "string", "2 years"),
}

const invoiceAgents = {
  amount: agent("amount", "Amount", "The total amount of the invoice (amount due, including tax)", "number"),
  date: agent("date", "Invoice date", "The date the invoice was issued", "date"),
  invoice_number: agent("invoice_number", "Invoice number", "The invoice number"),
  issuer: agent("issuer", "Issuer", "The company that issued the invoice (the seller)"),
  currency: agent("currency", "Currency", "The currency of the invoice total as an ISO code"),
}

// ---------------------------------------------------------------------------------------------------------
// Parsing (cached)

/** The pages as the pipeline gives them to the extractor: their text and their tables. */
type Page = Pick<PageText, "text" | "tables">
const cacheFile = path.join(os.tmpdir(), "dxs-bench-extract-pages.json")
type TextCache = Record<string, { readonly stamp: string; readonly pages: ReadonlyArray<Page> }>
const cache: TextCache = useCache && existsSync(cacheFile) ? JSON.parse(readFileSync(cacheFile, "utf8")) : {}
let parseMs = 0
let parsed = 0

const pagesOf = async (file: string): Promise<ReadonlyArray<Page> | undefined> => {
  const stat = statSync(file)
  const stamp = `${stat.size}:${stat.mtimeMs}`
  const hit = cache[file]
  if (hit && hit.stamp === stamp) return hit.pages
  const backend = backendFor(file)
  if (!backend) return undefined
  const t = performance.now()
  try {
    const out = await backend.parse({
      bytes: readFileSync(file),
      fileName: path.basename(file),
      contentType: "application/pdf",
      limits: defaultLimits,
      tools: { libreOffice: undefined, tempDir: os.tmpdir() },
    })
    const pages = out.pages.map((p) => ({ text: p.text, tables: p.tables ?? [] }))
    cache[file] = { stamp, pages }
    return pages
  } catch (e) {
    console.log(`  parse failed: ${path.basename(file)}: ${(e as Error).message}`)
    return undefined
  } finally {
    parseMs += performance.now() - t
    parsed += 1
  }
}

const request = (spec: AgentSpec, name: string, pages: ReadonlyArray<Page>): ExtractRequest => ({
  agent: spec,
  document: { id: name, name },
  pages: pages.map((p, i): PageText => ({ documentId: name, documentName: name, pageNumber: i + 1, ...p })),
  dimensions: [],
  referenceDate: REFERENCE_DATE,
})

let extractMs = 0
let pairs = 0
const extract = (spec: AgentSpec, name: string, pages: ReadonlyArray<Page>): string | undefined => {
  const t = performance.now()
  const response = localExtract(request(spec, name, pages))
  extractMs += performance.now() - t
  pairs += 1
  return response.values[0]?.value
}

// ---------------------------------------------------------------------------------------------------------
// Kleister-NDA

/** A value in the Kleister format: commas dropped, spaces as `_`. */
const kleister = (value: string) =>
  value
    .replace(/\s*&\s*/g, " and ")
    .replace(/\bIncorporated\b/gi, "Inc.")
    .replace(/\bLimited\b/gi, "Ltd.")
    .replace(/\bCorp\b(?!\.)/g, "Corp.")
    .replace(/\bL\.P\.?(?=\s|$)/g, "LP")
    .replace(/\bL\.L\.C\.?(?=\s|$)/g, "LLC")
    .replace(/,/g, "")
    .trim()
    .replace(/\s+/g, "_")

/** Party names joined with ", " back into a list (a comma before a legal suffix stays in the name). */
const splitParties = (value: string) =>
  value
    .split(
      /,\s+(?!(?:Inc|Ltd|Incorporated|LLC|L\.L\.C|LLP|L\.P|LP|Co|Corp|Corporation|S\.A|N\.V|B\.V|GmbH|plc|AG|Limited|Jr|Sr|III|II|IV|M\.D)\b)/i,
    )
    .map((s) => s.trim())
    .filter((s) => s !== "")

const bench = async () => {
  if (!existsSync(ndaDir)) {
    console.log(`no Kleister-NDA folder at ${ndaDir}: nothing to measure`)
  } else {
    const gold = readFileSync(path.join(ndaDir, "gold.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { file: string; fields: Record<string, Array<string>> })
      .slice(0, limit)
    const expected: Array<string> = []
    const output: Array<string> = []
    const fields = Object.keys(ndaAgents) as Array<keyof typeof ndaAgents>
    const counts = Object.fromEntries(fields.map((f) => [f, { tp: 0, gold: 0, pred: 0 }]))
    for (const g of gold) {
      const pages = await pagesOf(path.join(ndaDir, "documents", g.file))
      const exp = fields.flatMap((f) => (g.fields[f] ?? []).map((v) => `${f}=${kleister(v)}`))
      const out: Array<string> = []
      if (pages) {
        for (const f of fields) {
          const value = extract(ndaAgents[f], g.file, pages)
          if (value === undefined) continue
          const list = f === "party" ? splitParties(value) : [value]
          for (const v of list) out.push(`${f}=${kleister(v)}`)
        }
      }
      for (const f of fields) {
        const e = exp.filter((x) => x.startsWith(`${f}=`)).map((x) => x.toUpperCase())
        const o = out.filter((x) => x.startsWith(`${f}=`)).map((x) => x.toUpperCase())
        const c = counts[f]!
        c.gold += e.length
        c.pred += o.length
        const left = [...e]
        for (const x of o) {
          const i = left.indexOf(x)
          if (i >= 0) {
            c.tp += 1
            left.splice(i, 1)
          }
        }
        if (showErrors === f && (left.length > 0 || o.length > e.length - left.length))
          console.log(`  ${g.file}: expected ${e.join(" ") || "-"} | got ${o.join(" ") || "-"}`)
      }
      expected.push(exp.join(" "))
      output.push(out.join(" "))
    }
    const dir = mkdtempSync(path.join(os.tmpdir(), "dxs-bench-extract-"))
    writeFileSync(path.join(dir, "expected.tsv"), `${expected.join("\n")}\n`)
    writeFileSync(path.join(dir, "out.tsv"), `${output.join("\n")}\n`)
    console.log(`Kleister-NDA train: ${gold.length} documents (files in ${dir})`)
    const score = spawnSync(
      "python3",
      [path.join(ndaDir, "score.py"), path.join(dir, "expected.tsv"), path.join(dir, "out.tsv")],
      { encoding: "utf8" },
    )
    if (score.error) console.log("  python3 is not available: score.py not run")
    else
      console.log(
        `  score.py: ${score.stdout.trim().split("\n")[0]}${score.stderr ? `\n${score.stderr}` : ""}`,
      )
    for (const f of fields) {
      const c = counts[f]!
      const p = c.pred ? c.tp / c.pred : 0
      const r = c.gold ? c.tp / c.gold : 0
      const f1 = p + r ? (2 * p * r) / (p + r) : 0
      console.log(
        `  ${f.padEnd(15)} P=${p.toFixed(3)} R=${r.toFixed(3)} F1=${f1.toFixed(3)} (tp ${c.tp}, gold ${c.gold}, predicted ${c.pred})`,
      )
    }
  }

  if (!existsSync(invoiceDir)) {
    console.log(`no invoice folder at ${invoiceDir}: nothing to measure`)
  } else {
    const files = readdirSync(invoiceDir)
      .filter((f) => f.endsWith(".pdf") && existsSync(path.join(invoiceDir, f.replace(/\.pdf$/, ".json"))))
      .sort()
    const fields = Object.keys(invoiceAgents) as Array<keyof typeof invoiceAgents>
    const hits = Object.fromEntries(fields.map((f) => [f, { right: 0, total: 0, answered: 0 }]))
    for (const file of files) {
      const goldJson = JSON.parse(
        readFileSync(path.join(invoiceDir, file.replace(/\.pdf$/, ".json")), "utf8"),
      )
      const gold = (Array.isArray(goldJson) ? goldJson[0] : goldJson) as Record<string, unknown>
      const pages = await pagesOf(path.join(invoiceDir, file))
      for (const f of fields) {
        const want = gold[f]
        if (want === undefined || want === null) continue
        const got = pages ? extract(invoiceAgents[f], file, pages) : undefined
        const h = hits[f]!
        h.total += 1
        if (got !== undefined) h.answered += 1
        const same =
          got !== undefined &&
          (f === "amount"
            ? Math.abs(Number(got) - Number(want)) < 0.005
            : got.trim().toLowerCase().replace(/\s+/g, " ") ===
              String(want).trim().toLowerCase().replace(/\s+/g, " "))
        if (same) h.right += 1
        if (showErrors === f && !same) console.log(`  ${file}: expected ${String(want)} | got ${got ?? "-"}`)
      }
    }
    console.log(`invoices: ${files.length} PDFs with gold`)
    for (const f of fields) {
      const h = hits[f]!
      console.log(
        `  ${f.padEnd(15)} exact ${h.right}/${h.total} = ${(h.total ? h.right / h.total : 0).toFixed(2)} (answered ${h.answered})`,
      )
    }
  }

  if (pairs > 0)
    console.log(
      `extraction: ${pairs} agent/document pairs in ${extractMs.toFixed(0)} ms = ${(extractMs / pairs).toFixed(2)} ms per pair`,
    )
  if (parsed > 0)
    console.log(
      `parsing: ${parsed} PDFs in ${(parseMs / 1000).toFixed(1)} s ${useCache ? " (cached for the next run)" : ""}`,
    )
  if (useCache && parsed > 0) writeFileSync(cacheFile, JSON.stringify(cache))
}

bench().catch((e) => {
  console.error(e)
  process.exitCode = 1
})
