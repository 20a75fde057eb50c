import { DOMParser } from "@xmldom/xmldom"

/**
 * A small DOM over the XML parts of Office files, for the few parts the format libraries do not expose
 * (content types, core properties, Word's page-break properties, PowerPoint's slide list).
 *
 * The parser is @xmldom/xmldom, the version mammoth reads word/document.xml with, so both see the same
 * elements.
 */

export interface XmlNodeList {
  readonly length: number
  item(index: number): XmlNode | null
}

export interface XmlNode {
  readonly nodeType: number
  readonly childNodes: XmlNodeList
  readonly textContent: string | null
}

export interface XmlElement extends XmlNode {
  readonly localName: string
  readonly namespaceURI: string | null
  getAttribute(name: string): string | null
  getAttributeNS(namespace: string, localName: string): string | null
  getElementsByTagNameNS(namespace: string, localName: string): XmlNodeList
}

export interface XmlDocument {
  readonly documentElement: XmlElement | null
}

interface DomParser {
  parseFromString(source: string, mimeType: string): XmlDocument
}
type DomParserConstructor = new (options: {
  errorHandler: Record<string, (message: string) => void>
}) => DomParser

const ELEMENT_NODE = 1

const domParser = (): DomParserConstructor => DOMParser as unknown as DomParserConstructor

/** Parses XML text; throws on XML that is not well-formed enough to read. */
export const parseXml = (text: string): XmlDocument => {
  const Parser = domParser()
  const parser = new Parser({
    errorHandler: {
      warning: () => {},
      error: () => {},
      fatalError: (message: string) => {
        throw new Error(`invalid XML: ${message}`)
      },
    },
  })
  return parser.parseFromString(text.replace(/^\uFEFF/u, ""), "text/xml")
}

export const isElement = (node: XmlNode | null): node is XmlElement => node?.nodeType === ELEMENT_NODE

/** The element children of `node`, in document order. */
export const childElements = (node: XmlNode): Array<XmlElement> => {
  const out: Array<XmlElement> = []
  const list = node.childNodes
  for (let i = 0; i < list.length; i++) {
    const child = list.item(i)
    if (isElement(child)) out.push(child)
  }
  return out
}

/** The first child element with one of the namespaces and the local name. */
export const firstChild = (
  node: XmlNode,
  namespaces: ReadonlyArray<string>,
  localName: string,
): XmlElement | undefined =>
  childElements(node).find((e) => e.localName === localName && namespaces.includes(e.namespaceURI ?? ""))

/** Every descendant element with one of the namespaces and the local name. */
export const descendants = (
  element: XmlElement,
  namespaces: ReadonlyArray<string>,
  localName: string,
): Array<XmlElement> => {
  const out: Array<XmlElement> = []
  for (const ns of namespaces) {
    const list = element.getElementsByTagNameNS(ns, localName)
    for (let i = 0; i < list.length; i++) {
      const e = list.item(i)
      if (isElement(e)) out.push(e)
    }
  }
  return out
}

/** An attribute in one of the namespaces (xmldom answers "" for a missing one: undefined here). */
export const attribute = (
  element: XmlElement,
  namespaces: ReadonlyArray<string>,
  localName: string,
): string | undefined => {
  for (const ns of namespaces) {
    const value = element.getAttributeNS(ns, localName)
    if (value) return value
  }
  return undefined
}

/** Namespaces of the transitional and strict flavours of OOXML. */
export const ns = {
  w: [
    "http://schemas.openxmlformats.org/wordprocessingml/2006/main",
    "http://purl.oclc.org/ooxml/wordprocessingml/main",
  ],
  r: [
    "http://schemas.openxmlformats.org/officeDocument/2006/relationships",
    "http://purl.oclc.org/ooxml/officeDocument/relationships",
  ],
  p: [
    "http://schemas.openxmlformats.org/presentationml/2006/main",
    "http://purl.oclc.org/ooxml/presentationml/main",
  ],
  mc: ["http://schemas.openxmlformats.org/markup-compatibility/2006"],
  contentTypes: ["http://schemas.openxmlformats.org/package/2006/content-types"],
  dc: ["http://purl.org/dc/elements/1.1/"],
  dcterms: ["http://purl.org/dc/terms/"],
  cp: [
    "http://schemas.openxmlformats.org/package/2006/metadata/core-properties",
    "http://schemas.openxmlformats.org/officeDocument/2006/metadata/core-properties",
  ],
} as const
