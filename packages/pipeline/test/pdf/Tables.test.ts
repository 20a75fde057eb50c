import { tableGrid } from "@dxs/domain/Tables"
import { afterAll, describe, expect, it } from "vitest"
import { type PdfEngine, pdfEngines } from "../../src/parsing/Backend.ts"
import { terminateOcr } from "../../src/parsing/Ocr.ts"
import { pdfBackend } from "../../src/parsing/Pdf.ts"
import { expectStructure, parseWith, type StructureRecord, structureRecord } from "../support.ts"
import { input } from "./fixtures.ts"
import { crowdedPdf, gridPdf } from "./hostileTables.ts"
import { continuedPdf, rotatedPdf, ruledPdf, twoColumnPdf, unruledPdf } from "./tableFixtures.ts"

afterAll(() => terminateOcr())

/**
 * Tables, spans and reading order of PDF pages: one golden record per fixture (test/pdf/golden/tables/),
 * which both engines must give exactly (table boxes to the whole point).
 */
const parse = (name: string, bytes: Uint8Array, engine: PdfEngine) =>
  parseWith(
    pdfBackend,
    input(`${name}.pdf`, bytes, { tools: { libreOffice: undefined, tempDir: "/tmp", pdfEngine: engine } }),
  )

/** Parses with both engines; both must match the golden record. Returns the record. */
const golden = async (name: string, bytes: Uint8Array): Promise<StructureRecord> => {
  const [pdfjs, pdfium] = await Promise.all(pdfEngines.map((e) => parse(name, bytes, e)))
  const expected = await expectStructure(new URL(`golden/tables/${name}.json`, import.meta.url), pdfjs!)
  expect(structureRecord(pdfium!), "PDFium gives what pdf.js gives").toEqual(expected)
  return expected
}

describe("PDF tables", () => {
  it("reads a ruled table from its rules, with a cell spanning two rows and one spanning two columns", async () => {
    const { pages } = await golden("ruled", await ruledPdf())
    const [table] = pages[0]!.tables
    expect(pages[0]!.tables).toHaveLength(1)
    expect(table!.rows).toEqual([
      ["Region", "Sales", "", "Share"],
      ["", "2023", "2024", "%"],
      ["North", "1,200", "1,344", "42"],
      ["South", "900", "1,020", "31"],
      ["Total", "2,100", "2,364", "73"],
    ])
    expect(table!.spans).toEqual([
      [0, 0, 2, 1],
      [0, 1, 1, 2],
    ])
    // The table sits between the paragraph and its caption; the heading comes first.
    expect(pages[0]!.blocks.map((b) => b.kind)).toEqual([
      "heading",
      "paragraph",
      "table",
      "caption",
      "page_footer",
    ])
  })

  it("reads an unruled table from the alignment of its words, and nothing from the prose around it", async () => {
    const { pages } = await golden("unruled", await unruledPdf())
    expect(pages[0]!.tables).toHaveLength(1)
    expect(pages[0]!.tables[0]!.rows).toEqual([
      ["Item", "Quantity", "Unit price", "Amount"],
      ["Steel bolts M8", "400", "0.12", "48.00"],
      ["Washers", "400", "0.03", "12.00"],
      ["Hex nuts M8", "350", "0.05", "17.50"],
      ["Total", "", "", "77.50"],
    ])
    expect(pages[0]!.tables[0]!.headers).toEqual([
      [0, 0],
      [0, 1],
      [0, 2],
      [0, 3],
    ])
    expect(pages[0]!.blocks.map((b) => b.kind)).toEqual(["paragraph", "table", "paragraph"])
  })

  it("reads the same table on a turned page and printed sideways on an upright one", async () => {
    const { pages } = await golden("rotated", await rotatedPdf())
    const upright = (await golden("ruled", await ruledPdf())).pages[0]!.tables[0]!
    for (const page of pages) {
      expect(page.tables).toHaveLength(1)
      expect(page.tables[0]!.rows).toEqual(upright.rows)
      expect(page.tables[0]!.spans).toEqual(upright.spans)
    }
  })

  it("marks a table that goes on from the previous page, and sets running headers and footers apart", async () => {
    const { pages } = await golden("continued", await continuedPdf())
    expect(pages.map((p) => p.tables.map((t) => t.continued))).toEqual([[false], [true]])
    for (const page of pages) {
      expect(page.blocks[0]!.kind).toBe("page_header")
      expect(page.blocks[page.blocks.length - 1]!.kind).toBe("page_footer")
    }
  })

  it("keeps the reading order of a two-column page: the title, the left column, then the right", async () => {
    const { pages } = await golden("two-columns", await twoColumnPdf())
    expect(pages[0]!.tables).toEqual([])
    expect(pages[0]!.blocks.map((b) => [b.kind, b.text.split("\n")[0]])).toEqual([
      ["heading", "Field notes"],
      ["paragraph", "Left column, first paragraph,"],
      ["paragraph", "Left column, second paragraph"],
      ["paragraph", "Right column, first paragraph,"],
      ["paragraph", "Right column, last paragraph."],
    ])
  })
})

describe("PDF tables from hostile drawings", () => {
  it("reads a grid of 60 × 60 ruled cells in full, with both engines", async () => {
    const bytes = await gridPdf(60)
    for (const engine of pdfEngines) {
      const output = await parse("grid", bytes, engine)
      const [table] = output.pages[0]!.tables ?? []
      expect(table?.cells).toHaveLength(3600)
      expect(table?.cells[3599]?.text).toBe("59.59")
    }
  }, 120_000)

  it("takes a page of tens of thousands of strokes for a drawing, not rules, and still reads its text", async () => {
    const bytes = await crowdedPdf()
    for (const engine of pdfEngines) {
      const output = await parse("crowded", bytes, engine)
      // The only table is the text set in columns above the drawing, read without rules.
      expect(output.pages[0]!.tables?.map(tableGrid)).toEqual([
        [
          ["Legend", "value"],
          ["North", "12"],
          ["South", "30"],
          ["East", "7"],
        ],
      ])
    }
  }, 120_000)
})
