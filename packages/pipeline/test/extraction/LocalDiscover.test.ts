import { describe, expect, it } from "vitest"
import { localDiscover } from "../../src/extraction/local/Extractor.ts"
import type { DimensionQuery } from "../../src/llm/LanguageModel.ts"
import { agentSpec } from "./agents.ts"

const agent = agentSpec("Revenue", "", "number")

const dimension = (name: string, exampleValues: string, description = ""): DimensionQuery => ({
  dimensionId: name.toLowerCase(),
  name,
  description,
  exampleValues,
  kind: "dynamic",
  values: [],
})

const discover = (d: DimensionQuery, pages: ReadonlyArray<string>) =>
  localDiscover({
    agent,
    dimension: d,
    document: { id: "doc", name: "doc.pdf" },
    pages: pages.map((text, i) => ({ documentId: "doc", documentName: "doc.pdf", pageNumber: i + 1, text })),
  })

describe("localDiscover", () => {
  it.each([
    {
      title: "region labels in table rows, in order of first appearance",
      dimension: dimension("Region", "EU, US"),
      pages: ["Revenue by region\n\nAPAC      1,100\nEU        1,200\nUS        3,400\nEU total  1,200\n"],
      values: ["APAC", "EU", "US"],
    },
    {
      title: "values after the dimension's own label",
      dimension: dimension("Product line", ""),
      pages: ["Product line: Widgets\nRevenue: 100\n", "Product line: Gadgets\nRevenue: 200\n"],
      values: ["Widgets", "Gadgets"],
    },
    {
      title: "list items shaped like the examples",
      dimension: dimension("Quarter", "Q1 2023"),
      pages: ["Highlights\n- Q3 2023: strong growth\n- Q4 2023: stable\n\nOutlook for Q1 2024 follows."],
      values: ["Q3 2023", "Q4 2023"],
    },
    {
      title: "countries named in prose, for a country dimension",
      dimension: dimension("Country", "", "Countries where we sell"),
      pages: ["We sell in Germany and France; Spain follows next year. Germany remains the largest market."],
      values: ["Germany", "France", "Spain"],
    },
    {
      title: "nothing to discover",
      dimension: dimension("Region", "EU, US"),
      pages: ["Minutes of the meeting.\n\nNo figures were discussed."],
      values: [],
    },
  ])("$title", ({ dimension: d, pages, values }) => {
    const response = discover(d, pages)
    expect(response.values).toEqual(values)
    expect(response.usage.calls).toBe(0)
  })

  it("is deterministic", () => {
    const pages = ["EU 1\nUS 2\nAPAC 3"]
    expect(discover(dimension("Region", "EU"), pages)).toEqual(discover(dimension("Region", "EU"), pages))
  })
})
