import type { PageBlock } from "@dxs/domain/Content"
import { layoutTable, type Table, tableLines } from "@dxs/domain/Tables"
import { Effect, Either } from "effect"
import { type Backend, ParseFailure, type ParseInput, type ParseOutput, pageText } from "./Backend.ts"
import { childElements, firstChild, ns, parseXml } from "./OfficeXml.ts"
import {
  coreProperties,
  inspectOoxml,
  maxZipEntries,
  type OoxmlPackage,
  parseModernOrConverted,
} from "./Ooxml.ts"
import { slidePartsInOrder, slideTables } from "./PowerPointTables.ts"

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

/** A chart's data as a table: a header row of category labels, a row per series (none without data). */
const chartTable = (chart: ChartData | undefined): Table | undefined => {
  const sets = chart?.dataSets ?? []
  if (sets.length === 0) return undefined
  const labels = chart?.labels ?? []
  const header = labels.length > 0 ? [["Series", ...labels.map(clean)]] : []
  const rows = sets.map((set) => [clean(set.name) || "Series", ...(set.values ?? []).map(clean)])
  return layoutTable(
    [...header, ...rows].map((row, r) => row.map((text) => ({ text, header: r === 0 && header.length > 0 }))),
  )
}

/** A table as officeparser reads it (no spans; a cell's paragraphs run together), when the XML has none. */
const astTable = (node: AstNode): Table | undefined =>
  layoutTable(
    (node.children ?? []).map((row) => (row.children ?? []).map((cell) => ({ text: clean(cell.text) }))),
  )

/** A slide's (or its notes') text lines, blocks and tables; `xmlTables` are the slide's, in order. */
class SlideWriter {
  readonly lines: Array<string> = []
  readonly blocks: Array<PageBlock> = []
  readonly tables: Array<Table> = []
  private nextTable = 0

  constructor(
    private readonly charts: ReadonlyMap<string, ChartData>,
    private readonly xmlTables: ReadonlyArray<Table | undefined>,
  ) {}

  private table(table: Table, caption?: string) {
    if (caption !== undefined) this.blocks.push({ kind: "caption", text: caption, bbox: null })
    this.tables.push(table)
    this.blocks.push({
      kind: "table",
      text: tableLines(table).join("\n"),
      bbox: null,
      table: this.tables.length - 1,
    })
  }

  node(node: AstNode): void {
    switch (node.type) {
      case "paragraph":
      case "heading":
      case "text": {
        const text = clean(node.text)
        if (text === "") return
        this.lines.push(text)
        this.blocks.push(
          node.type === "heading"
            ? { kind: "heading", text, bbox: null, level: 1 }
            : { kind: "paragraph", text, bbox: null },
        )
        return
      }
      case "list": {
        const text = clean(node.text)
        if (text === "") return
        const meta = metadataOf(node)
        const level = Math.max(0, Math.min(8, Number(meta.indentation) || 0))
        const mark = meta.listType === "ordered" ? `${(Number(meta.itemIndex) || 0) + 1}.` : "-"
        this.lines.push(`${"  ".repeat(level)}${mark} ${text}`)
        this.blocks.push({ kind: "list_item", text: `${mark} ${text}`, bbox: null, level })
        return
      }
      case "table": {
        const table = this.xmlTables[this.nextTable++] ?? astTable(node)
        if (table === undefined) return
        this.lines.push("", ...tableLines(table), "")
        this.table(table)
        return
      }
      case "chart": {
        const chart = this.charts.get(String(metadataOf(node).attachmentName ?? ""))
        const lines = chartLines(chart, node.text)
        this.lines.push(...lines)
        const table = chartTable(chart)
        if (table !== undefined) this.table(table, lines[1])
        else if (lines.length > 0) this.blocks.push({ kind: "paragraph", text: lines[1]!, bbox: null })
        return
      }
      case "image":
      case "comment":
      case "slideMaster":
        return
      default: {
        if (node.children && node.children.length > 0) {
          for (const child of node.children) this.node(child)
          return
        }
        const text = clean(node.text)
        if (text === "") return
        this.lines.push(text)
        this.blocks.push({ kind: "paragraph", text, bbox: null })
      }
    }
  }
}

/** A notes page's text without the slide-number placeholder every notes page carries. */
const writeNotes = (slide: AstNode, slideNumber: number, writer: SlideWriter) => {
  const notes = new SlideWriter(new Map(), [])
  for (const note of slide.notes ?? []) for (const child of note.children ?? []) notes.node(child)
  const keep = (text: string) => text.trim() !== String(slideNumber)
  const lines = notes.lines.filter(keep)
  if (lines.length === 0) return
  writer.lines.push("", "Notes:", ...lines)
  writer.blocks.push({ kind: "paragraph", text: "Notes:", bbox: null })
  writer.blocks.push(...notes.blocks.filter((b) => keep(b.text) && b.kind !== "table"))
}

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

const parseOpenXml = (input: ParseInput, parser = "officeparser"): Effect.Effect<ParseOutput, ParseFailure> =>
  Effect.gen(function* () {
    const pkg = yield* inspectOoxml(input, "powerpoint", {
      keep: (name) =>
        name === "ppt/presentation.xml" ||
        name === "ppt/_rels/presentation.xml.rels" ||
        /^ppt\/slides\/slide\d+\.xml$/u.test(name),
    })
    const { OfficeParser } = yield* Effect.promise(() => import("officeparser"))
    // Charts are read with the attachments, pictures and all: only when there are charts, and the whole
    // file is small enough to hold its pictures in memory twice.
    const withCharts =
      pkg.entryNames.some((n) => /^ppt\/charts\/chart\d+\.xml$/u.test(n)) &&
      pkg.totalUncompressedBytes <= maxBytesWithCharts
    const { content, charts } = yield* Effect.tryPromise({
      try: async () => {
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
        const charts = new Map<string, ChartData>()
        for (const attachment of ast.attachments)
          if (attachment.type === "chart" && attachment.chartData)
            charts.set(attachment.name, attachment.chartData as ChartData)
        return { content: ast.content as ReadonlyArray<AstNode>, charts }
      },
      catch: (error) =>
        new ParseFailure({
          reason: `could not read the PowerPoint presentation: ${error instanceof Error ? error.message : String(error)}`,
        }),
    })
    return yield* slidePages(input, pkg, content, charts, parser)
  })

/** The slides officeparser read, as pages (numbered as in the file). */
const slidePages = (
  input: ParseInput,
  pkg: OoxmlPackage,
  content: ReadonlyArray<AstNode>,
  charts: ReadonlyMap<string, ChartData>,
  parser: string,
): Either.Either<ParseOutput, ParseFailure> => {
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
    return Either.left(
      new ParseFailure({
        reason: `the presentation has ${count} slides, more than the limit of ${input.limits.maxPages} pages per document`,
      }),
    )
  const parts = slidePartsInOrder(
    pkg.parts.get("ppt/presentation.xml"),
    pkg.parts.get("ppt/_rels/presentation.xml.rels"),
  )
  const pages = Array.from({ length: count }, (_, i) => {
    const number = i + 1
    const slide = slides.get(number)
    const writer = new SlideWriter(charts, slideTables(pkg.parts.get(parts[i] ?? "")))
    for (const child of slide?.children ?? []) writer.node(child)
    if (slide) writeNotes(slide, number, writer)
    const { lines, blocks, tables } = writer
    return {
      number,
      text: pageText(lines),
      width: null,
      height: null,
      unit: null,
      layout: [],
      tables,
      blocks,
    }
  })
  return Either.right({ parser, pages, metadata: { ...coreProperties(pkg), slide_count: count } })
}

const parse = (input: ParseInput): Effect.Effect<ParseOutput, ParseFailure> =>
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
