import { describe, expect, it } from "@effect/vitest"
import {
  cellAddress,
  fillTable,
  headerColumns,
  isWholePlaceholder,
  parsePlaceholder,
  placeholdersIn,
  resolvePlaceholder,
  resultIndex,
  type TemplateAgent,
  type TemplateResult,
} from "./FileEdit.ts"

const agents: Array<TemplateAgent> = [
  { name: "Total Amount", valueType: "number", valueIfNotFound: "n/a", dimensions: ["Document"] },
  { name: "Invoice Number", valueType: "string", valueIfNotFound: "n/a", dimensions: ["Document"] },
  { name: "Governing law", valueType: "string", valueIfNotFound: "unknown", dimensions: [] },
  { name: "Unrun", valueType: "string", valueIfNotFound: "n/a", dimensions: [] },
  { name: "By region", valueType: "number", valueIfNotFound: "n/a", dimensions: ["Document", "Region"] },
]
const results: Array<TemplateResult> = [
  { agent: "Total Amount", dimensionValues: { Document: "b.pdf" }, value: "2400", status: "Resolved" },
  { agent: "Total Amount", dimensionValues: { Document: "a.pdf" }, value: "1200", status: "Resolved" },
  { agent: "Invoice Number", dimensionValues: { Document: "a.pdf" }, value: "INV-1", status: "Resolved" },
  { agent: "Invoice Number", dimensionValues: { Document: "b.pdf" }, value: "INV-2", status: "Resolved" },
  { agent: "Governing law", dimensionValues: {}, value: null, status: "No result" },
  { agent: "By region", dimensionValues: { Document: "a.pdf", Region: "EU" }, value: 5, status: "Resolved" },
]
const index = resultIndex(agents, results, ["Document", "Region"])

describe("placeholders", () => {
  it("are found with their inner text and place", () => {
    expect(placeholdersIn("a {{X}} b {{ Y | D=v }}")).toEqual([
      { raw: "{{X}}", inner: "X", index: 2 },
      { raw: "{{ Y | D=v }}", inner: " Y | D=v ", index: 10 },
    ])
    expect(isWholePlaceholder(" {{X}} ")).toBe(true)
    expect(isWholePlaceholder("{{X}} and more")).toBe(false)
  })

  it("read qualifiers, and say what is malformed", () => {
    expect(parsePlaceholder(" Total | Document = a.pdf , Region=EU ")).toEqual({
      ok: true,
      placeholder: {
        agent: "Total",
        qualifiers: [
          { dimension: "Document", value: "a.pdf" },
          { dimension: "Region", value: "EU" },
        ],
      },
    })
    expect(parsePlaceholder("  ").ok).toBe(false)
    expect(parsePlaceholder("Total | Document")).toMatchObject({ ok: false, message: /Dimension=value/ })
    expect(parsePlaceholder("Total |")).toMatchObject({ ok: false })
  })
})

describe("resolving a placeholder", () => {
  it("gives the value as displayed, numbers as numbers, ignoring case and spaces in names", () => {
    expect(resolvePlaceholder(index, " total  amount | document=A.PDF")).toEqual({ ok: true, value: 1200 })
    expect(resolvePlaceholder(index, "Invoice Number | Document=b.pdf")).toEqual({ ok: true, value: "INV-2" })
    expect(resolvePlaceholder(index, "Governing law")).toEqual({ ok: true, value: "unknown" })
  })

  it("reports what it cannot fill and what to do", () => {
    expect(resolvePlaceholder(index, "Nobody")).toMatchObject({
      ok: false,
      message: /No agent is named "Nobody"/,
    })
    expect(resolvePlaceholder(index, "Total Amount")).toMatchObject({
      ok: false,
      message: /2 results \(one per Document\).*\{\{Total Amount \| Document=/,
    })
    expect(resolvePlaceholder(index, "Total Amount | Region=EU")).toMatchObject({
      ok: false,
      message: /not split by the dimension "Region"/,
    })
    expect(resolvePlaceholder(index, "Total Amount | Colour=red")).toMatchObject({
      ok: false,
      message: /No dimension is named "Colour"/,
    })
    expect(resolvePlaceholder(index, "Total Amount | Document=c.pdf")).toMatchObject({
      ok: false,
      message: /no value "c.pdf".*"b.pdf", "a.pdf"/,
    })
    expect(resolvePlaceholder(index, "Unrun")).toMatchObject({ ok: false, message: /no result yet/ })
  })
})

describe("header rows", () => {
  it("are rows of agent and dimension names with at least one agent", () => {
    const cells = (...texts: Array<string>) => texts.map((text, i) => ({ column: i + 1, text }))
    expect(headerColumns(index, cells("document", "Total Amount"))?.map((c) => c.kind)).toEqual([
      "dimension",
      "agent",
    ])
    expect(headerColumns(index, cells("Document", "Region"))).toBeUndefined()
    expect(headerColumns(index, cells("Document", "Total Amount", "Notes"))).toBeUndefined()
  })

  it("fill one row per combination, in order of the values", () => {
    const columns = headerColumns(index, [
      { column: 2, text: "Document" },
      { column: 3, text: "Invoice Number" },
      { column: 4, text: "Total Amount" },
      { column: 5, text: "Governing law" },
    ])!
    expect(fillTable(index, columns)).toEqual({
      rows: [
        [
          { column: 2, value: "a.pdf" },
          { column: 3, value: "INV-1" },
          { column: 4, value: 1200 },
          { column: 5, value: "unknown" },
        ],
        [
          { column: 2, value: "b.pdf" },
          { column: 3, value: "INV-2" },
          { column: 4, value: 2400 },
          { column: 5, value: "unknown" },
        ],
      ],
      problems: [],
    })
  })

  it("report an agent split by a dimension that is not a column", () => {
    const columns = headerColumns(index, [
      { column: 1, text: "Document" },
      { column: 2, text: "By region" },
      { column: 3, text: "Total Amount" },
    ])!
    const fill = fillTable(index, columns)
    expect(fill.rows).toHaveLength(2)
    expect(fill.rows[0]).toEqual([
      { column: 1, value: "a.pdf" },
      { column: 3, value: 1200 },
    ])
    expect(fill.problems).toEqual([expect.stringMatching(/"By region" is split by Region/)])
  })
})

it("names cells as spreadsheets do", () => {
  expect(cellAddress("Sheet1", 2, 4)).toBe("Sheet1!B4")
  expect(cellAddress("My sheet", 28, 1)).toBe("'My sheet'!AB1")
})
