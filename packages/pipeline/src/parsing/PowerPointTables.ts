import { type Table, type TableCell, tableOfCells } from "@dxs/domain/Tables"
import {
  attribute,
  childElements,
  descendants,
  firstChild,
  ns,
  parseXml,
  type XmlElement,
} from "./OfficeXml.ts"

/**
 * The tables of PowerPoint slides as the slide XML states them (DrawingML `a:tbl`): every grid position has
 * its `a:tc`; a merged cell's first one says how far it reaches (`gridSpan`, `rowSpan`), the positions it
 * covers are marked `hMerge`/`vMerge` and hold nothing. A header row is the first row when the table's style
 * options say so (`a:tblPr firstRow`). officeparser reads neither spans nor the breaks between a cell's
 * paragraphs, so tables are read here, in the order the slide holds them.
 */

const a = [
  "http://schemas.openxmlformats.org/drawingml/2006/main",
  "http://purl.oclc.org/ooxml/drawingml/main",
]
const relationships = ["http://schemas.openxmlformats.org/package/2006/relationships"]

const truthy = (value: string | null | undefined) => value === "1" || value === "true" || value === "on"

const spanOf = (value: string | null): number => {
  const n = Number.parseInt(value ?? "", 10)
  return Number.isFinite(n) && n >= 1 ? Math.min(n, 1000) : 1
}

/** A paragraph's text: its runs and fields, line breaks as "\n". */
const paragraphText = (p: XmlElement): string =>
  childElements(p)
    .map((e) =>
      e.localName === "br"
        ? "\n"
        : e.localName === "r" || e.localName === "fld"
          ? (firstChild(e, a, "t")?.textContent ?? "")
          : "",
    )
    .join("")

const cellText = (tc: XmlElement): string => {
  const body = firstChild(tc, a, "txBody")
  if (body === undefined) return ""
  return childElements(body)
    .filter((e) => e.localName === "p")
    .map(paragraphText)
    .join("\n")
    .replace(/[ \t]+/gu, " ")
    .trim()
}

const tableOf = (tbl: XmlElement): Table | undefined => {
  const properties = firstChild(tbl, a, "tblPr")
  const headerRow = truthy(properties?.getAttribute("firstRow"))
  const cells: Array<TableCell> = []
  childElements(tbl)
    .filter((e) => e.localName === "tr")
    .forEach((tr, row) => {
      childElements(tr)
        .filter((e) => e.localName === "tc")
        .forEach((tc, column) => {
          if (truthy(tc.getAttribute("hMerge")) || truthy(tc.getAttribute("vMerge"))) return
          cells.push({
            row,
            column,
            row_span: spanOf(tc.getAttribute("rowSpan")),
            column_span: spanOf(tc.getAttribute("gridSpan")),
            text: cellText(tc),
            header: headerRow && row === 0,
            bbox: null,
          })
        })
    })
  return cells.length === 0 ? undefined : tableOfCells(cells)
}

/** The tables of one slide's XML, in the order the slide holds them (an unreadable part has none). */
export const slideTables = (xml: Buffer | undefined): Array<Table | undefined> => {
  if (xml === undefined) return []
  try {
    const root = parseXml(xml.toString("utf8")).documentElement
    return root === null ? [] : descendants(root, a, "tbl").map(tableOf)
  } catch {
    return []
  }
}

/** The slide parts in the order the presentation lists them (`p:sldIdLst` through its relationships). */
export const slidePartsInOrder = (
  presentation: Buffer | undefined,
  rels: Buffer | undefined,
): Array<string> => {
  if (presentation === undefined || rels === undefined) return []
  try {
    const targets = new Map<string, string>()
    const relsRoot = parseXml(rels.toString("utf8")).documentElement
    for (const r of relsRoot ? descendants(relsRoot, relationships, "Relationship") : []) {
      const target = r.getAttribute("Target") ?? ""
      const path = target.startsWith("/") ? target.slice(1) : `ppt/${target.replace(/^\.\//u, "")}`
      targets.set(r.getAttribute("Id") ?? "", path)
    }
    const root = parseXml(presentation.toString("utf8")).documentElement
    const list = root ? firstChild(root, ns.p, "sldIdLst") : undefined
    return (list ? childElements(list) : [])
      .filter((e) => e.localName === "sldId")
      .map((e) => targets.get(attribute(e, ns.r, "id") ?? "") ?? "")
  } catch {
    return []
  }
}
