/** Agents and one-document requests of the local extractor's tests. */
import { localExtract } from "../../src/extraction/local/Extractor.ts"
import type { AgentSpec, ExtractedValue, ValueType } from "../../src/llm/LanguageModel.ts"

export const agentSpec = (
  name: string,
  instructions = "",
  valueType: ValueType = "string",
  extra: Partial<AgentSpec> = {},
): AgentSpec => ({
  id: name.toLowerCase().replace(/\s+/g, "-"),
  name,
  extractionInstructions: instructions,
  valueType,
  unit: "",
  examples: "",
  inconsistencyInstructions: "",
  resolutionInstructions: "",
  enableComplexCalculations: false,
  valueIfNotFound: "",
  derivedPrompt: "",
  isEvaluation: false,
  ...extra,
})

/** The first value the local extractor answers for an agent on a document of these pages. */
export const extractFirst = (spec: AgentSpec, ...pages: ReadonlyArray<string>): ExtractedValue | undefined =>
  localExtract({
    agent: spec,
    document: { id: "doc", name: "document.pdf" },
    pages: pages.map((text, i) => ({
      documentId: "doc",
      documentName: "document.pdf",
      pageNumber: i + 1,
      text,
    })),
    dimensions: [],
    referenceDate: "2024-05-15",
  }).values[0]
