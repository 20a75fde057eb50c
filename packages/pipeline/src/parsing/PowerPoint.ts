import { type Backend, ParseFailure, type ParseInput, type ParseOutput, pageText } from "./Backend.ts"
import { childElements, firstChild, ns, parseXml } from "./OfficeXml.ts"
import { coreProperties, inspectOoxml, maxZipEntries, parseModernOrConverted } from "./Ooxml.ts"

/**
 * PowerPoint presentations: one page per slide, in the order the presentation shows them, the slide's
 * text then "Notes:" and its speaker notes. officeparser reads the slides (in slide-list order, notes
 * found through each slide's own relationships). Legacy .ppt and .odp go through LibreOffice to .pptx.
 */

const legacyExtensions = [".ppt", ".odp"]
const maxBytesWithCharts = 64 * 1024 * 1024

/** The part of officeparser's AST read here. */
interface AstNode {
  readonly type: string
  readonly text?: string
  readonly children?: ReadonlyArray<AstNode>
  readonly notes?: ReadonlyArray<AstNode>
  readonly metadata?: unknown
}

const metadataOf = (node: AstNode): Record<string, unknown> =>
  typeof node.metadata === "object" && node.metadata !== null
    ? (node.metadata as Record<string, unknown>)
    : {}

const clean = (text: string | undefined): string =>
  (text ?? "").replace(/\r\n?/gu, "\n").replace(/\v/gu, "\n").trim()

/** A chart's data as officeparser reads it (from the chart part, with `extractAttachments`). */
interface ChartData {
  readonly title?: string
  readonly labels?: ReadonlyArray<string>
  readonly dataSets?: ReadonlyArray<{ readonly name?: string; readonly values?: ReadonlyArray<string> }>
}

/** A chart as a small table: a header of category labels, a row per series. */
const chartLines = (chart: ChartData | undefined, text: string | undefined): Array<string> => {
  const title = clean(chart?.title)
  const sets = chart?.dataSets ?? []
  if (sets.length === 0) {
    const flat = clean(text).replace(/\s*\n\s*/gu, ", ")
    return flat === "" && title === ""
      ? []
      : ["", `Chart: ${[title, flat].filter((t) => t !== "").join(": ")}`, ""]
  }
  const labels = chart?.labels ?? []
  const rows = sets.map((set) => [clean(set.name) || "Series", ...(set.values ?? []).map(clean)].join(" | "))
  const header = labels.length > 0 ? [["Series", ...labels.map(clean)].join(" | ")] : []
  return ["", title === "" ? "Chart:" : `Chart: ${title}`, ...header, ...rows, ""]
}

const nodeLinesWith = (charts: ReadonlyMap<string, ChartData>) => {
  const nodeLines = (node: AstNode): Array<string> => {
    switch (node.type) {
      case "paragraph":
      case "heading":
      case "text": {
        const text = clean(node.text)
        return text === "" ? [] : [text]
      }
      case "list": {
        const text = clean(node.text)
        if (text === "") return []
        const meta = metadataOf(node)
        const indent = "  ".repeat(Math.max(0, Math.min(8, Number(meta.indentation) || 0)))
        const mark = meta.listType === "ordered" ? `${(Number(meta.itemIndex) || 0) + 1}.` : "-"
        return [`${indent}${mark} ${text}`]
      }
      case "table": {
        const rows = (node.children ?? [])
          .map((row) => (row.children ?? []).map((cell) => clean(cell.text).replace(/\s+/gu, " ")))
          .filter((cells) => cells.some((c) => c !== ""))
          .map((cells) => cells.join(" | "))
        return rows.length === 0 ? [] : ["", ...rows, ""]
      }
      case "chart":
        return chartLines(charts.get(String(metadataOf(node).attachmentName ?? "")), node.text)
      case "image":
      case "comment":
      case "slideMaster":
        return []
      default: {
        if (node.children && node.children.length > 0) return node.children.flatMap(nodeLines)
        const text = clean(node.text)
        return text === "" ? [] : [text]
      }
    }
  }
  return nodeLines
}

/** A notes page's text without the slide-number placeholder every notes page carries. */
const notesLines = (slide: AstNode, slideNumber: number, nodeLines: (node: AstNode) => Array<string>) =>
  (slide.notes ?? [])
    .flatMap((note) => (note.children ?? []).flatMap(nodeLines))
    .filter((line) => line.trim() !== String(slideNumber))

/** How many slides the presentation lists (p:sldIdLst), when ppt/presentation.xml can be read. */
const listedSlideCount = (xml: Buffer | undefined): number => {
  if (!xml) return 0
  try {
    const root = parseXml(xml.toString("utf8")).documentElement
    const list = root ? firstChild(root, ns.p, "sldIdLst") : undefined
    return list ? childElements(list).filter((e) => e.localName === "sldId").length : 0
  } catch {
    return 0
  }
}

const parseOpenXml = async (input: ParseInput, parser = "officeparser"): Promise<ParseOutput> => {
  const pkg = await inspectOoxml(input, "powerpoint", { keep: (name) => name === "ppt/presentation.xml" })
  const { OfficeParser } = await import("officeparser")
  // Charts are read with the attachments, pictures and all: only when there are charts, and the whole
  // file is small enough to hold its pictures in memory twice.
  const withCharts =
    pkg.entryNames.some((n) => /^ppt\/charts\/chart\d+\.xml$/u.test(n)) &&
    pkg.totalUncompressedBytes <= maxBytesWithCharts
  let content: ReadonlyArray<AstNode>
  const charts = new Map<string, ChartData>()
  try {
    const ast = await OfficeParser.parseOffice(
      Buffer.from(input.bytes.buffer, input.bytes.byteOffset, input.bytes.byteLength),
      {
        ignoreComments: true,
        ignoreSlideMasters: true,
        extractAttachments: withCharts,
        ocr: false,
        decompressionLimits: { maxUncompressedBytes: input.limits.maxDecompressedBytes, maxZipEntries },
      },
    )
    content = ast.content as ReadonlyArray<AstNode>
    for (const attachment of ast.attachments)
      if (attachment.type === "chart" && attachment.chartData)
        charts.set(attachment.name, attachment.chartData as ChartData)
  } catch (error) {
    throw new ParseFailure({
      reason: `could not read the PowerPoint presentation: ${error instanceof Error ? error.message : String(error)}`,
    })
  }
  // officeparser leaves out slides holding nothing: their pages are kept, empty, so numbers stay true.
  const slides = new Map<number, AstNode>()
  for (const node of content) {
    const number = Number(metadataOf(node).slideNumber)
    if (node.type === "slide" && Number.isInteger(number) && number > 0) slides.set(number, node)
  }
  const slideParts = pkg.entryNames.filter((n) => /^ppt\/slides\/slide\d+\.xml$/u.test(n)).length
  const count = Math.max(
    0,
    ...slides.keys(),
    Math.min(listedSlideCount(pkg.parts.get("ppt/presentation.xml")), slideParts),
  )
  if (count > input.limits.maxPages)
    throw new ParseFailure({
      reason: `the presentation has ${count} slides, more than the limit of ${input.limits.maxPages} pages per document`,
    })
  const nodeLines = nodeLinesWith(charts)
  const pages = Array.from({ length: count }, (_, i) => {
    const number = i + 1
    const slide = slides.get(number)
    const lines = slide ? (slide.children ?? []).flatMap(nodeLines) : []
    const notes = slide ? notesLines(slide, number, nodeLines) : []
    if (notes.length > 0) lines.push("", "Notes:", ...notes)
    return { number, text: pageText(lines), width: null, height: null, unit: null, layout: [] }
  })
  return { parser, pages, metadata: { ...coreProperties(pkg), slide_count: count } }
}

const parse = (input: ParseInput): Promise<ParseOutput> =>
  parseModernOrConverted(input, {
    legacyExtensions,
    oleExtension: ".ppt",
    openDocumentExtension: ".odp",
    target: "pptx",
    parseModern: parseOpenXml,
    convertedParser: "libreoffice+officeparser",
  })

export const powerPointBackend: Backend = {
  name: "powerpoint",
  parse,
}
