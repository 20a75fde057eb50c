import { readdirSync, readFileSync, writeFileSync } from "node:fs"
import { tableGrid } from "@dxs/domain/Tables"
import { defaultLimits } from "./src/parsing/Backend.ts"
import { pdfiumEngine } from "./src/parsing/Pdfium.ts"
import { pdfjsEngine } from "./src/parsing/PdfJs.ts"

const dir = process.argv[2]!
const engine = process.argv[3] === "pdfjs" ? pdfjsEngine : pdfiumEngine
const out: Array<string> = []
for (const file of readdirSync(dir)
  .filter((f) => f.endsWith(".pdf"))
  .sort()) {
  const bytes = new Uint8Array(readFileSync(`${dir}/${file}`))
  const t0 = Date.now()
  const parsed = await engine.parse({
    bytes,
    fileName: file,
    contentType: "application/pdf",
    limits: defaultLimits,
    tools: { libreOffice: undefined, tempDir: "/tmp" },
  })
  const ms = Date.now() - t0
  for (const p of parsed.pages) {
    out.push(JSON.stringify({ file, page: p.number, tables: (p.tables ?? []).map(tableGrid) }))
    if (process.env.SHOW)
      for (const t of p.tables ?? []) console.log(file, p.number, JSON.stringify(tableGrid(t)).slice(0, 600))
  }
  console.error(
    file,
    parsed.pages.length,
    "pages",
    ms,
    "ms",
    parsed.pages.map((p) => (p.tables ?? []).length).join(","),
  )
}
writeFileSync(process.argv[4] ?? "/tmp/tables-exp/pred.jsonl", `${out.join("\n")}\n`)
