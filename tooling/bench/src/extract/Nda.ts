/**
 * Kleister-NDA train: effective date, jurisdiction, parties and term of 254 NDAs, written in the Kleister
 * `key=value` format and scored with the corpus's `score.py` (micro-F1), plus per-field precision and
 * recall computed here.
 */
import { spawnSync } from "node:child_process"
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { agent, type Corpus, labelled, prf } from "./Corpus.ts"
import type { SetFigures } from "./Targets.ts"

const ndaDir = path.join(labelled, "kleister-nda-train")

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

/** A value in the Kleister format: commas dropped, spaces as `_`, legal suffixes written as Kleister writes them. */
const kleister = (value: string) =>
  value
    .replace(/\s*&\s*/g, " and ")
    .replace(/\bIncorporated\b/gi, "Inc.")
    .replace(/\bLimited\b/gi, "Ltd.")
    .replace(/\b(Corp|Inc|Ltd)\b(?!\.)/gi, "$1.")
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

export const benchNda = async (
  corpus: Corpus,
  options: { readonly limit: number; readonly showErrors: string | undefined },
): Promise<SetFigures | undefined> => {
  if (!existsSync(ndaDir)) {
    console.log(`no Kleister-NDA folder at ${ndaDir}: nothing to measure`)
    return undefined
  }
  const gold = readFileSync(path.join(ndaDir, "gold.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as { file: string; fields: Record<string, Array<string>> })
    .slice(0, options.limit)
  const expected: Array<string> = []
  const output: Array<string> = []
  const fields = Object.keys(ndaAgents) as Array<keyof typeof ndaAgents>
  const counts = Object.fromEntries(fields.map((f) => [f, { tp: 0, gold: 0, pred: 0 }]))
  for (const g of gold) {
    const pages = await corpus.pagesOf(path.join(ndaDir, "documents", g.file))
    const exp = fields.flatMap((f) => (g.fields[f] ?? []).map((v) => `${f}=${kleister(v)}`))
    const out: Array<string> = []
    if (pages) {
      const answers = corpus.extract(Object.values(ndaAgents), g.file, pages)
      for (const f of fields) {
        const value = answers.get(f)
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
      if (options.showErrors === f && (left.length > 0 || o.length > e.length - left.length))
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
  let all: number | undefined
  if (score.error) console.log("  python3 is not available: score.py not run")
  else {
    const line = score.stdout.trim().split("\n")[0] ?? ""
    console.log(`  score.py: ${line}${score.stderr ? `\n${score.stderr}` : ""}`)
    const f1 = /ALL F1=([\d.]+)/.exec(line)?.[1]
    if (f1 !== undefined) all = Number(f1)
  }
  const figures: Record<string, number> = {}
  let tp = 0
  let pred = 0
  let goldCount = 0
  for (const f of fields) {
    const c = counts[f]!
    const { p, r, f1 } = prf(c.tp, c.pred, c.gold)
    figures[f] = f1
    tp += c.tp
    pred += c.pred
    goldCount += c.gold
    console.log(
      `  ${f.padEnd(15)} P=${p.toFixed(3)} R=${r.toFixed(3)} F1=${f1.toFixed(3)} (tp ${c.tp}, gold ${c.gold}, predicted ${c.pred})`,
    )
  }
  figures.all = all ?? prf(tp, pred, goldCount).f1
  return { name: "nda", figures }
}
