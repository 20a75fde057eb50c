import type { PageBlock } from "@dxs/domain/Content"
import { layoutTable, type StatedCell, type Table, tableLines } from "@dxs/domain/Tables"
import { Cause, Effect, Either } from "effect"
import mammoth from "mammoth"
import {
  type Backend,
  type ParsedPage,
  ParseFailure,
  type ParseInput,
  type ParseOutput,
  pageText,
} from "./Backend.ts"
import { convertBytesWithLibreOffice } from "./LibreOffice.ts"
import {
  coreProperties,
  extensionOf,
  inspectOoxml,
  inspectZip,
  isCompoundFile,
  isEncryptedOfficeFile,
} from "./Ooxml.ts"
import { propertyBreaks } from "./WordPageBreaks.ts"

/**
 * Word documents. A .docx has no pages of its own (Word lays them out when it shows the file), so:
 * with LibreOffice installed it is converted to PDF and read by the PDF backend (true pages); without,
 * mammoth reads it and pages end where the document forces them to (page breaks, "page break before"
 * paragraphs, section breaks that start a new page). Legacy formats (.doc, .odt, .rtf) need LibreOffice.
 */

const legacyExtensions = [".doc", ".odt", ".rtf"]

const pdfBackend: Effect.Effect<Backend | undefined> = Effect.promise(async () => {
  // Lazily: the registry imports this module.
  const { backendLoaders } = await import("./Formats.ts")
  return backendLoaders.pdf()
})

const pageOf = (number: number, page: WrittenPage): ParsedPage => ({
  number,
  text: page.text,
  width: null,
  height: null,
  unit: null,
  layout: [],
  tables: page.tables,
  blocks: page.blocks,
})

const checkPageCount = (input: ParseInput, count: number): Either.Either<void, ParseFailure> =>
  count > input.limits.maxPages
    ? Either.left(
        new ParseFailure({
          reason: `the document has ${count} pages, more than the limit of ${input.limits.maxPages} pages per document`,
        }),
      )
    : Either.void

// --- mammoth's document model (mammoth 1.x lib/documents.js; read, never built) ---

interface MammothElement {
  readonly type: string
  readonly children?: ReadonlyArray<MammothElement>
  readonly value?: string
  readonly styleId?: string | null
  readonly styleName?: string | null
  readonly numbering?: { readonly isOrdered?: boolean; readonly level?: string | number } | null
  readonly breakType?: string
  readonly checked?: boolean
  readonly noteType?: string
  readonly noteId?: string
  /** Table rows: a header row (w:tblHeader), repeated on every page. */
  readonly isHeader?: boolean
  /** Table cells: the grid columns (w:gridSpan) and rows (w:vMerge) the cell covers. */
  readonly colSpan?: number
  readonly rowSpan?: number
}

interface MammothNote {
  readonly noteType: string
  readonly noteId: string
  readonly body: ReadonlyArray<MammothElement>
}

interface MammothDocument extends MammothElement {
  readonly notes?: { resolve?: (reference: { noteType: string; noteId: string }) => MammothNote | null }
}

const readWithMammoth = (bytes: Uint8Array): Effect.Effect<MammothDocument, ParseFailure> =>
  Effect.gen(function* () {
    let captured: MammothDocument | undefined
    yield* Effect.tryPromise({
      try: () =>
        mammoth.convertToHtml(
          { buffer: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength) },
          {
            transformDocument: (document: MammothDocument) => {
              captured = document
              // Nothing left to write as HTML: the model is what we read, and no image gets decoded.
              return { ...document, children: [] }
            },
          },
        ),
      catch: (error) =>
        new ParseFailure({
          reason: `could not read the Word document: ${error instanceof Error ? error.message : String(error)}`,
        }),
    })
    if (captured === undefined) return yield* new ParseFailure({ reason: "could not read the Word document" })
    return captured
  })

/** The text of a mammoth paragraph, to match it with its XML paragraph (see WordPageBreaks). */
const modelText = (element: MammothElement): string =>
  element.type === "text" ? (element.value ?? "") : (element.children ?? []).map(modelText).join("")

// --- the model as pages of text ---

const headingStyle = /^(heading\s*\d|title|subtitle)$/iu

/** A heading's level: "Title" 1, "Subtitle" 2, "Heading N" N (at most 6). */
const headingLevel = (paragraph: MammothElement): number => {
  const name = `${paragraph.styleName ?? ""} ${paragraph.styleId ?? ""}`
  if (/subtitle/iu.test(name)) return 2
  const n = /heading\s*(\d)/iu.exec(name)?.[1]
  return n === undefined ? 1 : Math.max(1, Math.min(6, Number(n)))
}

/** A page as written: its text, its blocks in order and its tables. */
interface WrittenPage {
  readonly text: string
  readonly blocks: ReadonlyArray<PageBlock>
  readonly tables: ReadonlyArray<Table>
}

const roman = (n: number): string => {
  const numerals: Array<[number, string]> = [
    [1000, "m"],
    [900, "cm"],
    [500, "d"],
    [400, "cd"],
    [100, "c"],
    [90, "xc"],
    [50, "l"],
    [40, "xl"],
    [10, "x"],
    [9, "ix"],
    [5, "v"],
    [4, "iv"],
    [1, "i"],
  ]
  let rest = n
  let out = ""
  for (const [value, numeral] of numerals)
    while (rest >= value) {
      out += numeral
      rest -= value
    }
  return out
}

class PageWriter {
  readonly pages: Array<Array<string>> = [[]]
  private readonly blocks: Array<Array<PageBlock>> = [[]]
  private readonly tables: Array<Array<Table>> = [[]]
  private atTop = true
  private pageNotes: Array<string> = []
  private readonly endNotes: Array<string> = []
  private footnoteCount = 0
  private endnoteCount = 0
  private readonly listCounters: Array<number> = []

  constructor(private readonly document: MammothDocument) {}

  private get current(): Array<string> {
    return this.pages[this.pages.length - 1] ?? []
  }

  private line(text: string) {
    this.current.push(text)
    this.atTop = false
  }

  private blank() {
    if (!this.atTop && this.current[this.current.length - 1] !== "") this.current.push("")
  }

  newPage() {
    this.flushNotes()
    this.pages.push([])
    this.blocks.push([])
    this.tables.push([])
    this.atTop = true
  }

  private block(block: PageBlock) {
    this.blocks[this.blocks.length - 1]!.push(block)
  }

  newPageUnlessAtTop() {
    if (!this.atTop) this.newPage()
  }

  private flushNotes() {
    if (this.pageNotes.length === 0) return
    this.current.push("", ...this.pageNotes)
    for (const note of this.pageNotes) this.block({ kind: "paragraph", text: note, bbox: null })
    this.pageNotes = []
  }

  finish(): Array<WrittenPage> {
    this.flushNotes()
    if (this.endNotes.length > 0) {
      this.current.push("", ...this.endNotes)
      for (const note of this.endNotes) this.block({ kind: "paragraph", text: note, bbox: null })
    }
    return this.pages.map((lines, i) => ({
      text: pageText(lines),
      blocks: this.blocks[i]!,
      tables: this.tables[i]!,
    }))
  }

  /** A note reference's mark, its note written at the bottom of the page (footnote) or at the end. */
  private noteMark(element: MammothElement): string {
    const noteType = element.noteType ?? "footnote"
    const note = this.document.notes?.resolve?.({ noteType, noteId: element.noteId ?? "" })
    const isEndnote = noteType === "endnote"
    const mark = isEndnote ? roman(++this.endnoteCount) : String(++this.footnoteCount)
    const text = (note?.body ?? [])
      .map((p) => this.inlineText(p, false).join(" "))
      .join(" ")
      .replace(/\s+/gu, " ")
      .trim()
    ;(isEndnote ? this.endNotes : this.pageNotes).push(`[${mark}] ${text}`)
    return `[${mark}]`
  }

  /** The text of inline content, split where a page break falls (when `pageBreaks`). */
  private inlineText(element: MammothElement, pageBreaks: boolean): Array<string> {
    const segments = [""]
    const append = (text: string) => {
      segments[segments.length - 1] += text
    }
    const visit = (e: MammothElement) => {
      switch (e.type) {
        case "text":
          append(e.value ?? "")
          return
        case "tab":
          append("\t")
          return
        case "break":
          if (e.breakType === "page" && pageBreaks) segments.push("")
          else append(e.breakType === "page" ? " " : "\n")
          return
        case "checkbox":
          append(e.checked ? "☒ " : "☐ ")
          return
        case "noteReference":
          append(this.noteMark(e))
          return
        case "paragraph":
          // A paragraph inside inline content: a text box's.
          append("\n")
          for (const child of e.children ?? []) visit(child)
          append("\n")
          return
        case "table":
          append(`\n${this.nestedTableLines(e).join("\n")}\n`)
          return
        case "image":
        case "commentReference":
        case "comment":
        case "bookmarkStart":
          return
        default:
          for (const child of e.children ?? []) visit(child)
      }
    }
    for (const child of element.children ?? []) visit(child)
    return segments
  }

  private listPrefix(paragraph: MammothElement): string {
    const numbering = paragraph.numbering
    if (!numbering) {
      this.listCounters.length = 0
      return ""
    }
    const level = Math.max(0, Math.min(8, Number(numbering.level ?? 0) || 0))
    this.listCounters.length = level + 1
    const count = (this.listCounters[level] ?? 0) + 1
    this.listCounters[level] = count
    return `${"  ".repeat(level)}${numbering.isOrdered ? `${count}.` : "-"} `
  }

  paragraph(paragraph: MammothElement) {
    const isHeading =
      headingStyle.test(paragraph.styleName ?? "") || /^heading\d$/iu.test(paragraph.styleId ?? "")
    const prefix = this.listPrefix(paragraph)
    const segments = this.inlineText(paragraph, true)
    segments.forEach((segment, index) => {
      if (index > 0) this.newPage()
      const text = segment.replace(/[ \t]*\n[ \t]*/gu, "\n").trimEnd()
      if (text === "" && segments.length > 1) {
        // Only the paragraph's mark stands after a page break: it still opens the page.
        if (index === segments.length - 1) this.atTop = false
        return
      }
      if (isHeading && text !== "") this.blank()
      const written = index === 0 ? `${prefix}${text}` : text
      this.line(written)
      if (isHeading && text !== "") this.blank()
      if (text === "") return
      if (isHeading) this.block({ kind: "heading", text, bbox: null, level: headingLevel(paragraph) })
      else if (prefix !== "" && index === 0)
        this.block({
          kind: "list_item",
          text: written.trim(),
          bbox: null,
          level: Math.floor((prefix.length - prefix.trimStart().length) / 2),
        })
      else this.block({ kind: "paragraph", text, bbox: null })
    })
  }

  /** A cell's text on one line: its paragraphs joined, a table inside it as its lines joined by "; ". */
  private cellText(cell: MammothElement): string {
    return (cell.children ?? [])
      .map((child) =>
        child.type === "table"
          ? this.nestedTableLines(child).join("; ")
          : this.inlineText(child, false).join(" "),
      )
      .join(" ")
      .replace(/\s+/gu, " ")
      .trim()
  }

  /** The table as the file states it: its cells with their spans, header rows' cells as headers. */
  private tableOf(table: MammothElement): Table | undefined {
    const rows = (table.children ?? [])
      .filter((row) => row.type === "tableRow")
      .map((row) =>
        (row.children ?? [])
          .filter((cell) => cell.type === "tableCell")
          .map(
            (cell): StatedCell => ({
              text: this.cellText(cell),
              columnSpan: cell.colSpan,
              rowSpan: cell.rowSpan,
              header: row.isHeader === true,
            }),
          ),
      )
    return layoutTable(rows)
  }

  /** A table inside a cell or a text box: only its lines, in the text of what holds it. */
  private nestedTableLines(table: MammothElement): Array<string> {
    const t = this.tableOf(table)
    return t === undefined ? [] : tableLines(t)
  }

  table(table: MammothElement) {
    this.listCounters.length = 0
    const t = this.tableOf(table)
    if (t === undefined) return
    const lines = tableLines(t)
    this.blank()
    for (const line of lines) this.line(line)
    this.blank()
    const tables = this.tables[this.tables.length - 1]!
    tables.push(t)
    this.block({ kind: "table", text: lines.join("\n"), bbox: null, table: tables.length - 1 })
  }
}

const documentPages = (
  document: MammothDocument,
  documentXml: string | undefined,
  stylesXml: string | undefined,
): Array<WrittenPage> => {
  const top = (document.children ?? []).filter((e) => e.type === "paragraph" || e.type === "table")
  const keys = top.map((e) => (e.type === "paragraph" ? modelText(e).replace(/\s+/gu, "") : undefined))
  const breaks = propertyBreaks(keys, documentXml, stylesXml)
  const writer = new PageWriter(document)
  top.forEach((element, index) => {
    if (breaks.has(index)) writer.newPageUnlessAtTop()
    if (element.type === "table") writer.table(element)
    else writer.paragraph(element)
  })
  return writer.finish()
}

/** A .docx read by mammoth, its pages split where the document forces a new page. */
const parseOpenXml = (input: ParseInput, parser = "mammoth"): Effect.Effect<ParseOutput, ParseFailure> =>
  Effect.gen(function* () {
    const pkg = yield* inspectOoxml(input, "word", {
      keep: (name) => /^word\/(document\d*|styles)\.xml$/u.test(name),
    })
    const document = yield* readWithMammoth(input.bytes)
    const part = (name: string) => pkg.parts.get(name)?.toString("utf8")
    const folder = pkg.mainPart.includes("/") ? pkg.mainPart.slice(0, pkg.mainPart.lastIndexOf("/") + 1) : ""
    const written = documentPages(document, part(pkg.mainPart), part(`${folder}styles.xml`))
    yield* checkPageCount(input, written.length)
    return {
      parser,
      pages: written.map((page, i) => pageOf(i + 1, page)),
      metadata: { ...coreProperties(pkg), page_source: "page-breaks" },
    }
  })

/** The converted PDF read by the PDF backend, as the Word file's pages. */
const pdfPages = (
  pdf: Backend,
  input: ParseInput,
  bytes: Uint8Array,
  metadata: Record<string, unknown>,
): Effect.Effect<ParseOutput, ParseFailure> =>
  pdf
    .parse({
      ...input,
      bytes,
      fileName: input.fileName.replace(/\.[^.]*$/u, ".pdf"),
      contentType: "application/pdf",
    })
    .pipe(
      Effect.map((output) => ({
        ...output,
        parser: `libreoffice+${output.parser}`,
        metadata: { ...output.metadata, ...metadata, page_source: "libreoffice" },
      })),
    )

/** Any Word file through LibreOffice: to PDF for the PDF backend, or to .docx when there is none. */
const parseWithLibreOffice = (
  input: ParseInput,
  ext: string,
  pdf: Backend | undefined,
): Effect.Effect<ParseOutput, ParseFailure> =>
  Effect.gen(function* () {
    if (pdf === undefined) {
      const docx = yield* convertBytesWithLibreOffice(input.tools, input.bytes, ext, "docx")
      const output = yield* parseOpenXml(
        { ...input, bytes: docx, fileName: "document.docx" },
        "libreoffice+mammoth",
      )
      return { ...output, metadata: { ...output.metadata, converted_from: ext } }
    }
    const bytes = yield* convertBytesWithLibreOffice(input.tools, input.bytes, ext, "pdf")
    return yield* pdfPages(pdf, input, bytes, {})
  })

/**
 * A .docx with LibreOffice and the PDF backend at hand: its true pages from the PDF LibreOffice makes;
 * when the conversion fails, mammoth's pages, with LibreOffice's error in the metadata.
 */
const parseConverted = (
  input: ParseInput,
  ext: string,
  pdf: Backend,
): Effect.Effect<ParseOutput, ParseFailure> =>
  Effect.gen(function* () {
    const pkg = yield* inspectOoxml(input, "word")
    // However the conversion fails, mammoth still reads the file.
    const converted = yield* convertBytesWithLibreOffice(
      input.tools,
      input.bytes,
      ext || ".docx",
      "pdf",
    ).pipe(Effect.sandbox, Effect.either)
    if (Either.isRight(converted)) return yield* pdfPages(pdf, input, converted.right, coreProperties(pkg))
    const error = Cause.squash(converted.left)
    const output = yield* parseOpenXml(input)
    return {
      ...output,
      metadata: {
        ...output.metadata,
        libreoffice_error: error instanceof Error ? error.message : String(error),
      },
    }
  })

const parse = (input: ParseInput): Effect.Effect<ParseOutput, ParseFailure> =>
  Effect.gen(function* () {
    const ext = extensionOf(input.fileName)
    const soffice = input.tools.libreOffice
    // A legacy .doc named .docx is read as the .doc it is when LibreOffice can; else inspectOoxml says what it is.
    const legacy =
      legacyExtensions.includes(ext) ||
      (soffice !== undefined && isCompoundFile(input.bytes) && !isEncryptedOfficeFile(input.bytes))
    if (legacy) {
      const from = legacyExtensions.includes(ext) ? ext : ".doc"
      if (soffice === undefined)
        return yield* new ParseFailure({
          reason: `reading a ${from} file needs LibreOffice, which is not installed`,
        })
      // An OpenDocument file is a ZIP too: the same limits before LibreOffice inflates it.
      if (from === ".odt") yield* inspectZip(input)
      return yield* parseWithLibreOffice(input, from, yield* pdfBackend)
    }
    const pdf = soffice === undefined ? undefined : yield* pdfBackend
    return yield* pdf === undefined ? parseOpenXml(input) : parseConverted(input, ext, pdf)
  })

export const wordBackend: Backend = {
  name: "word",
  parse,
}
