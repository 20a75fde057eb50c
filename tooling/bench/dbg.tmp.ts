import { readFileSync } from "node:fs"
import { localExtract } from "@dxs/pipeline/extraction/local/Extractor"

const texts = JSON.parse(readFileSync("/tmp/lx/texts.json", "utf8")) as Record<string, string[]>
const field = process.argv[2]!
const files = process.argv.slice(3)
const agents: Record<string, any> = {
  effective_date: ["Effective date", "The date the agreement is dated or takes effect", "date", ""],
  jurisdiction: ["Jurisdiction", "The state or country whose laws govern the agreement", "string", ""],
  party: ["Parties", "The parties between whom the agreement is made (companies or persons)", "string", ""],
  term: ["Term", "How long the agreement lasts (its term or duration)", "string", "2 years"],
}
const [name, ins, vt, ex] = agents[field]
for (const f of files) {
  const pages = texts[f]!
  const r = localExtract({
    agent: {
      id: "a",
      name,
      extractionInstructions: ins,
      valueType: vt,
      unit: "",
      examples: ex,
      inconsistencyInstructions: "",
      resolutionInstructions: "",
      enableComplexCalculations: false,
      valueIfNotFound: "",
      derivedPrompt: "",
      isEvaluation: false,
    },
    document: { id: f, name: f },
    pages: pages.map((text, i) => ({ documentId: f, documentName: f, pageNumber: i + 1, text })),
    dimensions: [],
    referenceDate: "2024-01-01",
  })
  console.log(
    "==",
    f,
    JSON.stringify(r.values[0]?.value),
    "\n  ",
    r.values[0]?.reasoning,
    "\n  PASSAGE:",
    r.values[0]?.relevantPassage.replace(/\n/g, " ").slice(0, 300),
  )
}
