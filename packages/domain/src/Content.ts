/**
 * A document read as structure (pure): its pages as blocks in reading order (headings, paragraphs, list
 * items, tables, figures, captions, running headers and footers), and the three ways it is written out:
 * Markdown (GitHub tables; an HTML table where spans need one), a JSON document (pages → blocks, each with
 * its box and page) and plain text. The page API, `…/content/`, GraphQL and `dxs parse` all write through
 * here, so the same document reads the same everywhere.
 *
 * Pages parsed before blocks were recorded (or of formats that record none) get blocks from their text:
 * paragraphs at blank lines, list items at their markers, the page's tables where their lines are.
 */
import { type Box, type Table, tableGrid, tableLines, tableMarkdown, tableSize } from "./Tables.ts"

export const blockKinds = [
  "heading",
  "paragraph",
  "list_item",
  "table",
  "figure",
  "caption",
  "page_header",
  "page_footer",
] as const
export type BlockKind = (typeof blockKinds)[number]

export interface PageBlock {
  readonly kind: BlockKind
  /** The block's text (a table's: its rows as lines, cells joined by " | "). */
  readonly text: string
  readonly bbox: Box | null
  /** A heading's level (1–6), a list item's depth (0 at the margin). */
  readonly level?: number
  /** A table block's table: its index in the page's tables. */
  readonly table?: number
}

export interface ContentPage {
  readonly page_number: number
  readonly width: number | null
  readonly height: number | null
  readonly unit: string | null
  readonly text: string
  /** Empty when the parser recorded none: derived from the text (see `blocksOfPage`). */
  readonly blocks: ReadonlyArray<PageBlock>
  readonly tables: ReadonlyArray<Table>
}

/** A page as parsers and storage hold it (`number`, optional structure), as the renderers read it. */
export const contentPageOf = (p: {
  readonly number: number
  readonly width: number | null
  readonly height: number | null
  readonly unit: string | null
  readonly text: string
  readonly blocks?: ReadonlyArray<PageBlock> | null | undefined
  readonly tables?: ReadonlyArray<Table> | null | undefined
}): ContentPage => ({
  page_number: p.number,
  width: p.width,
  height: p.height,
  unit: p.unit,
  text: p.text,
  blocks: p.blocks ?? [],
  tables: p.tables ?? [],
})

export interface ContentDocument {
  readonly file_name: string
  readonly type: string
  readonly pages: ReadonlyArray<ContentPage>
  /** Files attached to it (an e-mail's), written after its own content under their names. */
  readonly attachments: ReadonlyArray<ContentDocument>
}

export const contentFormats = ["markdown", "json", "text"] as const
export type ContentFormat = (typeof contentFormats)[number]

/** The media type each format is answered with. */
export const contentMediaTypes: Readonly<Record<ContentFormat, string>> = {
  markdown: "text/markdown; charset=utf-8",
  json: "application/json",
  text: "text/plain; charset=utf-8",
}

// ---------------------------------------------------------------------------------------------------------
// Blocks from text

const listMarker = /^(\s*)([-*•◦▪‣–]|\d{1,3}[.)]|[a-z][.)]|\([a-z0-9]{1,4}\))\s+\S/iu

/** Paragraphs at blank lines, list items at their markers, tables where the page text holds their lines. */
export const blocksOfText = (text: string, tables: ReadonlyArray<Table> = []): Array<PageBlock> => {
  const blocks: Array<PageBlock> = []
  const tableFirstLines = tables.map((t) => tableLines(t))
  const placed = new Set<number>()
  const lines = text.split("\n")
  let paragraph: Array<string> = []
  const flush = () => {
    const joined = paragraph.join("\n").trim()
    if (joined !== "") blocks.push({ kind: "paragraph", text: joined, bbox: null })
    paragraph = []
  }
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!
    const t = tableFirstLines.findIndex(
      (tl, k) => !placed.has(k) && tl.length > 0 && tl.every((l, j) => lines[i + j]?.trim() === l),
    )
    if (t >= 0) {
      flush()
      placed.add(t)
      blocks.push({ kind: "table", text: tableFirstLines[t]!.join("\n"), bbox: tables[t]!.bbox, table: t })
      i += tableFirstLines[t]!.length - 1
      continue
    }
    if (line.trim() === "") {
      flush()
      continue
    }
    const marker = listMarker.exec(line)
    if (marker) {
      flush()
      blocks.push({
        kind: "list_item",
        text: line.trim(),
        bbox: null,
        level: Math.min(8, Math.floor(marker[1]!.length / 2)),
      })
      continue
    }
    const last = blocks[blocks.length - 1]
    if (
      paragraph.length === 0 &&
      last?.kind === "list_item" &&
      lines[i - 1]?.trim() !== "" &&
      /^\s+/u.test(line)
    )
      blocks[blocks.length - 1] = { ...last, text: `${last.text} ${line.trim()}` }
    else paragraph.push(line)
  }
  flush()
  tables.forEach((t, k) => {
    if (!placed.has(k)) blocks.push({ kind: "table", text: tableLines(t).join("\n"), bbox: t.bbox, table: k })
  })
  return blocks
}

/** The page's blocks: those its parser recorded, else blocks from its text. */
export const blocksOfPage = (
  page: Pick<ContentPage, "text" | "blocks" | "tables">,
): ReadonlyArray<PageBlock> => (page.blocks.length > 0 ? page.blocks : blocksOfText(page.text, page.tables))

// ---------------------------------------------------------------------------------------------------------
// Markdown

const bullet = /^[*•◦▪‣–-]\s+/u

/** A line of a paragraph that Markdown would read as something else gets a backslash. */
const escapeParagraph = (text: string): string =>
  text
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "")
    .map((line) => (/^(#{1,6}\s|[-*+]\s|\d+[.)]\s|>|\||```|===|---)/u.test(line) ? `\\${line}` : line))
    .join("\n")

const listItemMarkdown = (block: PageBlock): string => {
  const text = block.text.replace(/\s+/gu, " ").trim()
  const indent = "  ".repeat(block.level ?? 0)
  if (bullet.test(text)) return `${indent}- ${text.replace(bullet, "")}`
  if (/^\d{1,9}[.)]\s/u.test(text)) return `${indent}${text}`
  return `${indent}- ${text}`
}

interface Written {
  readonly kind: BlockKind
  readonly markdown: string
}

/** A table continued from the previous page with as many columns joins it, its repeated header row left out. */
const joinContinued = (previous: Table, next: Table): Table | undefined => {
  if (!next.continued || tableSize(previous).columns !== tableSize(next).columns) return undefined
  const before = tableSize(previous).rows
  const header = tableGrid(previous)[0]?.join("\u0000")
  const skip = tableGrid(next)[0]?.join("\u0000") === header ? 1 : 0
  const cells = next.cells.filter((c) => c.row >= skip).map((c) => ({ ...c, row: c.row - skip + before }))
  return { ...previous, cells: [...previous.cells, ...cells] }
}

const pageMarkdown = (
  page: Pick<ContentPage, "text" | "blocks" | "tables">,
  out: Array<Written>,
  lastTable: { table?: Table; at: number },
  furniture = false,
) => {
  for (const block of blocksOfPage(page)) {
    switch (block.kind) {
      case "page_header":
      case "page_footer":
        // Running headers and footers repeat on every page: not part of the body (but of a page shown alone).
        if (furniture) out.push({ kind: block.kind, markdown: escapeParagraph(block.text) })
        continue
      case "heading": {
        const level = Math.max(1, Math.min(6, block.level ?? 1))
        out.push({
          kind: "heading",
          markdown: `${"#".repeat(level)} ${block.text.replace(/\s+/gu, " ").trim()}`,
        })
        lastTable.table = undefined
        continue
      }
      case "list_item":
        out.push({ kind: "list_item", markdown: listItemMarkdown(block) })
        lastTable.table = undefined
        continue
      case "table": {
        const table = block.table === undefined ? undefined : page.tables[block.table]
        if (table === undefined) continue
        const joined = lastTable.table === undefined ? undefined : joinContinued(lastTable.table, table)
        if (joined !== undefined) {
          out[lastTable.at] = { kind: "table", markdown: tableMarkdown(joined) }
          lastTable.table = joined
        } else {
          out.push({ kind: "table", markdown: tableMarkdown(table) })
          lastTable.table = table
          lastTable.at = out.length - 1
        }
        continue
      }
      case "figure":
        out.push({
          kind: "figure",
          markdown:
            block.text.trim() === ""
              ? "<!-- image -->"
              : `<!-- image: ${block.text.replace(/\s+/gu, " ").replace(/--/gu, "- -").trim()} -->`,
        })
        continue
      default: {
        const text = escapeParagraph(block.text)
        if (text !== "") out.push({ kind: block.kind, markdown: text })
        // A caption or a paragraph between two parts of a table ends it; a page break does not.
        if (text !== "") lastTable.table = undefined
      }
    }
  }
}

const joinWritten = (out: ReadonlyArray<Written>): string => {
  let markdown = ""
  out.forEach((w, i) => {
    if (i > 0) markdown += w.kind === "list_item" && out[i - 1]!.kind === "list_item" ? "\n" : "\n\n"
    markdown += w.markdown
  })
  return markdown
}

/**
 * One page in Markdown, running headers and footers included (a page read on its own, as the model
 * prompt shows it): its tables as Markdown tables where its text has them as lines or not at all.
 */
export const pageMarkdownText = (page: Pick<ContentPage, "text" | "blocks" | "tables">): string => {
  const out: Array<Written> = []
  pageMarkdown(page, out, { at: -1 }, true)
  return joinWritten(out)
}

const documentMarkdown = (document: ContentDocument, depth: number): string => {
  const out: Array<Written> = []
  const lastTable: { table?: Table; at: number } = { at: -1 }
  for (const page of document.pages) pageMarkdown(page, out, lastTable)
  let markdown = joinWritten(out)
  for (const attachment of document.attachments) {
    const heading = `${"#".repeat(Math.min(6, depth + 2))} Attachment: ${attachment.file_name}`
    const body = documentMarkdown(attachment, depth + 1)
    markdown += `${markdown === "" ? "" : "\n\n"}${heading}${body === "" ? "" : `\n\n${body}`}`
  }
  return markdown
}

/** The whole document in Markdown, in reading order; attachments after it under their file names. */
export const contentMarkdown = (document: ContentDocument): string => {
  const markdown = documentMarkdown(document, 0)
  return markdown === "" ? "" : `${markdown}\n`
}

// ---------------------------------------------------------------------------------------------------------
// JSON

export interface ContentTableJson {
  readonly bbox: Box | null
  readonly rows: ReadonlyArray<ReadonlyArray<string>>
  readonly cells: Table["cells"]
  readonly continued: boolean
}

/** A table as the API shows it: the full grid (`rows`) beside its cells. */
export const tableJson = (table: Table): ContentTableJson => ({
  bbox: table.bbox,
  rows: tableGrid(table),
  cells: table.cells,
  continued: table.continued,
})

export interface ContentBlockJson {
  readonly kind: BlockKind
  readonly page: number
  readonly text: string
  readonly bbox: Box | null
  readonly level?: number
  readonly table?: ContentTableJson
}

export interface ContentDocumentJson {
  readonly file_name: string
  readonly type: string
  readonly page_count: number
  readonly pages: ReadonlyArray<{
    readonly page_number: number
    readonly width: number | null
    readonly height: number | null
    readonly unit: string | null
    readonly blocks: ReadonlyArray<ContentBlockJson>
  }>
  readonly attachments: ReadonlyArray<ContentDocumentJson>
}

/** The whole document as JSON: pages → blocks in reading order, each with its page and box. */
export const contentJson = (document: ContentDocument): ContentDocumentJson => ({
  file_name: document.file_name,
  type: document.type,
  page_count: document.pages.length,
  pages: document.pages.map((page) => ({
    page_number: page.page_number,
    width: page.width,
    height: page.height,
    unit: page.unit,
    blocks: blocksOfPage(page).map((b): ContentBlockJson => {
      const table = b.kind === "table" && b.table !== undefined ? page.tables[b.table] : undefined
      return {
        kind: b.kind,
        page: page.page_number,
        text: b.text,
        bbox: b.bbox,
        ...(b.level === undefined ? {} : { level: b.level }),
        ...(table === undefined ? {} : { table: tableJson(table) }),
      }
    }),
  })),
  attachments: document.attachments.map(contentJson),
})

// ---------------------------------------------------------------------------------------------------------
// Text

/** The document's page texts as parsed, a blank line between pages; attachments after it under their names. */
export const contentText = (document: ContentDocument): string => {
  const parts = document.pages.map((p) => p.text.trim()).filter((t) => t !== "")
  for (const attachment of document.attachments) {
    const body = contentText(attachment).trim()
    parts.push(`=== Attachment: ${attachment.file_name} ===${body === "" ? "" : `\n\n${body}`}`)
  }
  return parts.length === 0 ? "" : `${parts.join("\n\n")}\n`
}

/** The document written in `format`. */
export const renderContent = (document: ContentDocument, format: ContentFormat): string =>
  format === "markdown"
    ? contentMarkdown(document)
    : format === "json"
      ? `${JSON.stringify(contentJson(document), null, 2)}\n`
      : contentText(document)
