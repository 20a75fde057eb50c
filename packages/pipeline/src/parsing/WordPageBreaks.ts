import {
  attribute,
  childElements,
  firstChild,
  ns,
  parseXml,
  type XmlElement,
  type XmlNode,
} from "./OfficeXml.ts"

/**
 * The page breaks of a Word document that mammoth does not model, read from word/document.xml and
 * word/styles.xml: paragraphs with "page break before" (their own or their style's, inherited through
 * basedOn) and section breaks whose next section starts on a new page.
 */

interface XmlBlock {
  readonly kind: "paragraph" | "table" | "section"
  readonly key: string
  readonly breakBefore: boolean
  /** The type of the section this paragraph ends, when it ends one. */
  readonly endsSection: string | undefined
}

const isOn = (element: XmlElement | undefined): boolean | undefined => {
  if (element === undefined) return undefined
  const value = attribute(element, ns.w, "val")
  return value === undefined || !["0", "false", "off"].includes(value.toLowerCase())
}

/** Paragraph styles that start a new page, with what they inherit (basedOn). */
const pageBreakStyles = (
  stylesXml: string | undefined,
): { ids: Set<string>; defaultId: string | undefined } => {
  const ids = new Set<string>()
  if (stylesXml === undefined) return { ids, defaultId: undefined }
  const root = parseXml(stylesXml).documentElement
  if (!root) return { ids, defaultId: undefined }
  const own = new Map<string, { on: boolean | undefined; basedOn: string | undefined }>()
  for (const style of childElements(root)) {
    if (style.localName !== "style" || attribute(style, ns.w, "type") !== "paragraph") continue
    const id = attribute(style, ns.w, "styleId")
    if (id === undefined) continue
    const pPr = firstChild(style, ns.w, "pPr")
    const basedOnElement = firstChild(style, ns.w, "basedOn")
    own.set(id, {
      on: pPr ? isOn(firstChild(pPr, ns.w, "pageBreakBefore")) : undefined,
      basedOn: basedOnElement ? attribute(basedOnElement, ns.w, "val") : undefined,
    })
  }
  for (const id of own.keys()) {
    let current: string | undefined = id
    for (let depth = 0; current !== undefined && depth < 20; depth++) {
      const style = own.get(current)
      if (style?.on !== undefined) {
        if (style.on) ids.add(id)
        break
      }
      current = style?.basedOn
    }
  }
  const defaultStyle = childElements(root).find(
    (style) =>
      style.localName === "style" &&
      attribute(style, ns.w, "type") === "paragraph" &&
      ["1", "true", "on"].includes(attribute(style, ns.w, "default") ?? ""),
  )
  return { ids, defaultId: defaultStyle ? attribute(defaultStyle, ns.w, "styleId") : undefined }
}

const isWordElement = (element: XmlElement): boolean =>
  (ns.w as ReadonlyArray<string>).includes(element.namespaceURI ?? "")

/** The text of a paragraph as mammoth reads it (no deleted text, no text boxes), without white space. */
const xmlText = (node: XmlNode): string => {
  let out = ""
  const visit = (n: XmlNode) => {
    for (const child of childElements(n)) {
      const name = child.localName
      if (name === "del" || name === "moveFrom" || name === "txbxContent" || name === "pict") continue
      if (name === "AlternateContent") {
        const fallback = childElements(child).find((c) => c.localName === "Fallback")
        if (fallback) visit(fallback)
        continue
      }
      if (name === "t" && isWordElement(child)) out += child.textContent ?? ""
      else visit(child)
    }
  }
  visit(node)
  return out.replace(/\s+/gu, "")
}

const bodyBlocks = (documentXml: string, stylesXml: string | undefined): Array<XmlBlock> => {
  const root = parseXml(documentXml).documentElement
  const body = root ? firstChild(root, ns.w, "body") : undefined
  if (!body) return []
  const styles = pageBreakStyles(stylesXml)
  const blocks: Array<XmlBlock> = []
  const visit = (container: XmlElement) => {
    for (const child of childElements(container)) {
      switch (child.localName) {
        case "p": {
          const pPr = firstChild(child, ns.w, "pPr")
          const styleElement = pPr ? firstChild(pPr, ns.w, "pStyle") : undefined
          const styleId = styleElement ? attribute(styleElement, ns.w, "val") : styles.defaultId
          const direct = pPr ? isOn(firstChild(pPr, ns.w, "pageBreakBefore")) : undefined
          const sectPr = pPr ? firstChild(pPr, ns.w, "sectPr") : undefined
          blocks.push({
            kind: "paragraph",
            key: xmlText(child),
            breakBefore: direct ?? (styleId !== undefined && styles.ids.has(styleId)),
            endsSection: sectPr ? sectionType(sectPr) : undefined,
          })
          break
        }
        case "tbl":
          blocks.push({ kind: "table", key: "", breakBefore: false, endsSection: undefined })
          break
        case "sdt": {
          const content = firstChild(child, ns.w, "sdtContent")
          if (content) visit(content)
          break
        }
        case "customXml":
        case "ins":
        case "moveTo":
        case "smartTag":
          visit(child)
          break
        case "AlternateContent": {
          const fallback = childElements(child).find((c) => c.localName === "Fallback")
          if (fallback) visit(fallback)
          break
        }
        case "sectPr":
          // The last section's properties, at the end of the body.
          blocks.push({ kind: "section", key: "", breakBefore: false, endsSection: sectionType(child) })
          break
      }
    }
  }
  visit(body)
  return blocks
}

const sectionType = (sectPr: XmlElement): string => {
  const type = firstChild(sectPr, ns.w, "type")
  return (type ? attribute(type, ns.w, "val") : undefined) ?? "nextPage"
}

const startsNewPage = (type: string | undefined) =>
  type === "nextPage" || type === "evenPage" || type === "oddPage"

/**
 * Which of mammoth's top-level blocks (given by their text without white space, undefined for a table)
 * start a new page because of their properties (page break before)
 * or because the previous paragraph ended a section whose successor starts on a new page. The XML
 * paragraphs are matched to mammoth's by their text, in order: mammoth moves text-box paragraphs out of
 * theirs and merges paragraphs whose mark was deleted, so positions alone can disagree.
 */
export const propertyBreaks = (
  keys: ReadonlyArray<string | undefined>,
  documentXml: string | undefined,
  stylesXml: string | undefined,
): Set<number> => {
  const breaks = new Set<number>()
  if (documentXml === undefined) return breaks
  let blocks: Array<XmlBlock>
  try {
    blocks = bodyBlocks(documentXml, stylesXml)
  } catch {
    return breaks
  }
  // A section's type says how that section starts: a paragraph ending section k breaks the page when
  // section k+1 (the next sectPr) starts on a new page.
  const sectionEnds = blocks.flatMap((b, i) => (b.endsSection !== undefined ? [i] : []))
  const breakAfter = new Set<number>()
  for (let s = 0; s + 1 < sectionEnds.length; s++) {
    const next = blocks[sectionEnds[s + 1] ?? -1]
    if (startsNewPage(next?.endsSection)) breakAfter.add(sectionEnds[s] ?? -1)
  }
  let cursor = 0
  blocks.forEach((block, index) => {
    if (block.kind !== "paragraph") return
    const window = block.key === "" ? 3 : 200
    for (let j = cursor; j < Math.min(keys.length, cursor + window); j++) {
      if (keys[j] !== block.key) continue
      if (block.breakBefore) breaks.add(j)
      if (breakAfter.has(index)) breaks.add(j + 1)
      cursor = j + 1
      return
    }
  })
  return breaks
}
