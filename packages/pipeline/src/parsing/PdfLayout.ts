import type { PageBlock } from "@dxs/domain/Content"
import { type Box, tableLines } from "@dxs/domain/Tables"
import type { ParsedPage } from "./Backend.ts"
import type { FoundTable } from "./PdfLattice.ts"
import type { TextLine } from "./PdfText.ts"

/**
 * The blocks of a PDF page in reading order, from the lines of its rebuilt text (which already follow the
 * columns of the page): lines between blank lines make a block; the lines of a table give way to the
 * table, where its first line was; a block is a heading when it is short and set larger than the page's
 * body text (or in capitals, standing alone), a list item when it starts with a bullet or a number, a
 * caption when it names a table or figure next to one. Images large enough to be figures go where their
 * top edge falls. Running headers and footers are found across the document's pages (`markRunning`).
 */

const bullet = /^([•▪◦‣●○■□–\-*]|\d{1,3}[.)]|[a-z][.)]|\((?:[a-z]{1,4}|\d{1,3})\))\s+\S/iu
const captionStart =
  /^(table|figure|fig\.|chart|exhibit|image|tabelle|abbildung|tableau)\s+[\dA-Z][\w.-]*\s*[.:\-–—]?/iu

interface Group {
  lines: Array<TextLine>
  table?: FoundTable
}

const boxOfLines = (lines: ReadonlyArray<TextLine>): Box | null => {
  if (lines.length === 0) return null
  let [x0, y0, x1, y1] = [Infinity, Infinity, -Infinity, -Infinity]
  for (const l of lines) {
    x0 = Math.min(x0, l.x0)
    y0 = Math.min(y0, l.y0)
    x1 = Math.max(x1, l.x1)
    y1 = Math.max(y1, l.y1)
  }
  return [x0, y0, x1, y1]
}

/** The table holding most of a line (half its width, and its middle height), if any. */
const tableOfLine = (line: TextLine, tables: ReadonlyArray<FoundTable>): FoundTable | undefined => {
  const cy = (line.y0 + line.y1) / 2
  const width = Math.max(1e-6, line.x1 - line.x0)
  return tables.find((t) => {
    const [x0, y0, x1, y1] = t.box
    if (cy < y0 - 1 || cy > y1 + 1) return false
    return (Math.min(x1, line.x1) - Math.max(x0, line.x0)) / width >= 0.5
  })
}

/** The font size most of the page's text is set in (by characters). */
const bodySize = (lines: ReadonlyArray<TextLine>): number => {
  const bySize = new Map<number, number>()
  for (const l of lines) {
    const size = Math.round(l.size * 2) / 2
    bySize.set(size, (bySize.get(size) ?? 0) + l.text.length)
  }
  let best = 0
  let chars = -1
  for (const [size, n] of bySize)
    if (n > chars) {
      best = size
      chars = n
    }
  return best
}

const headingLevel = (size: number, body: number): number | undefined => {
  if (body <= 0) return undefined
  const ratio = size / body
  return ratio >= 1.6 ? 1 : ratio >= 1.3 ? 2 : ratio >= 1.12 ? 3 : undefined
}

const isCapitals = (text: string): boolean => {
  const letters = text.replace(/[^\p{L}]/gu, "")
  return letters.length >= 4 && letters === letters.toUpperCase() && letters !== letters.toLowerCase()
}

/** The blocks of one group of lines: a heading, list items, or a paragraph. */
const groupBlocks = (group: ReadonlyArray<TextLine>, body: number, alone: boolean): Array<PageBlock> => {
  const text = group.map((l) => l.text.trim()).join("\n")
  const size = Math.max(...group.map((l) => l.size))
  const short = group.length <= 2 && text.length <= 150 && !/[.;,]$/u.test(text)
  const level = short ? headingLevel(size, body) : undefined
  if (level !== undefined) return [{ kind: "heading", text, bbox: boxOfLines(group), level }]
  if (short && alone && group.length === 1 && text.length <= 80 && isCapitals(text) && size >= body - 0.25)
    return [{ kind: "heading", text, bbox: boxOfLines(group), level: 3 }]
  if (!bullet.test(group[0]!.text.trim())) return [{ kind: "paragraph", text, bbox: boxOfLines(group) }]
  // List items: each line with a marker starts one; the lines after it, without one, go on with it.
  const margin = Math.min(...group.map((l) => l.x0))
  const items: Array<Array<TextLine>> = []
  for (const line of group) {
    if (bullet.test(line.text.trim()) || items.length === 0) items.push([line])
    else items[items.length - 1]!.push(line)
  }
  return items.map((lines) => ({
    kind: "list_item",
    text: lines.map((l) => l.text.trim()).join("\n"),
    bbox: boxOfLines(lines),
    level: Math.max(0, Math.min(8, Math.round((lines[0]!.x0 - margin) / Math.max(6, body * 1.5)))),
  }))
}

/** The page's blocks in reading order; `tables` are the page's, in the order of `tableIndex`. */
export const pageBlocks = (
  lines: ReadonlyArray<TextLine>,
  tables: ReadonlyArray<FoundTable>,
  images: ReadonlyArray<Box>,
): Array<PageBlock> => {
  const body = bodySize(lines)
  const groups: Array<Group> = []
  for (const line of lines) {
    if (line.text.trim() === "") continue
    const table = tableOfLine(line, tables)
    const last = groups[groups.length - 1]
    if (table !== undefined) {
      if (!groups.some((g) => g.table === table)) groups.push({ lines: [], table })
      continue
    }
    const previous = last?.lines[last.lines.length - 1]
    // A change of font size ends a block too (a heading set close above its text).
    const resized =
      previous !== undefined &&
      Math.abs(previous.size - line.size) > 0.15 * Math.max(previous.size, line.size)
    if (last === undefined || last.table !== undefined || line.startsBlock || resized)
      groups.push({ lines: [line] })
    else last.lines.push(line)
  }
  const blocks: Array<PageBlock> = []
  for (const group of groups) {
    if (group.table !== undefined) {
      const t = group.table
      blocks.push({
        kind: "table",
        text: tableLines(t.table).join("\n"),
        bbox: t.box,
        table: tables.indexOf(t),
      })
    } else blocks.push(...groupBlocks(group.lines, body, true))
  }
  for (const [i, t] of tables.entries())
    if (!blocks.some((b) => b.table === i))
      blocks.push({ kind: "table", text: tableLines(t.table).join("\n"), bbox: t.box, table: i })
  placeFigures(blocks, images)
  markCaptions(blocks)
  return blocks
}

/** Each figure goes before the first block that starts below its top edge and shares its width. */
const placeFigures = (blocks: Array<PageBlock>, images: ReadonlyArray<Box>) => {
  for (const image of images) {
    const figure: PageBlock = { kind: "figure", text: "", bbox: image }
    const at = blocks.findIndex(
      (b) => b.bbox !== null && b.bbox[1] >= image[1] && b.bbox[0] < image[2] && b.bbox[2] > image[0],
    )
    if (at < 0) blocks.push(figure)
    else blocks.splice(at, 0, figure)
  }
}

/** A paragraph that names a table or figure, right before or after one, is its caption. */
const markCaptions = (blocks: Array<PageBlock>) => {
  blocks.forEach((b, i) => {
    if (b.kind !== "paragraph" || b.text.length > 300 || !captionStart.test(b.text)) return
    const near = [blocks[i - 1], blocks[i + 1]].some((n) => n?.kind === "table" || n?.kind === "figure")
    if (near) blocks[i] = { ...b, kind: "caption" }
  })
}

// ---------------------------------------------------------------------------------------------------------
// Across pages

/** How far from the top or bottom edge (share of the page height) running headers and footers sit. */
const margin = 0.12

const pattern = (text: string) => text.toLowerCase().replace(/\d+/gu, "#").replace(/\s+/gu, " ").trim()

const pageNumber = /^(page\s*)?[-–—]?\s*#\s*[-–—]?(\s*(of|\/|de|von)\s*#)?$/u

/**
 * Marks running headers and footers: a block near the top (bottom) edge whose text, numbers aside, comes
 * back near the same edge on at least half the pages (two or more), or that is a page number.
 */
const markRunning = (pages: ReadonlyArray<ParsedPage>): Array<ParsedPage> => {
  const zone = (p: ParsedPage, b: PageBlock): "top" | "bottom" | undefined => {
    if (b.bbox === null || p.height === null || b.kind === "table" || b.kind === "figure") return undefined
    if (b.bbox[3] <= p.height * margin) return "top"
    if (b.bbox[1] >= p.height * (1 - margin)) return "bottom"
    return undefined
  }
  // The blocks near an edge, by page: [index, zone, pattern]; the pages each pattern comes back on.
  const edges = pages.map((p) =>
    (p.blocks ?? []).flatMap((b, i) => {
      const z = zone(p, b)
      return z === undefined ? [] : [[i, z, pattern(b.text)] as const]
    }),
  )
  const seen = new Map<string, Set<number>>()
  pages.forEach((p, k) => {
    for (const [, z, key] of edges[k]!) {
      const where = seen.get(`${z}:${key}`) ?? new Set<number>()
      where.add(p.number)
      seen.set(`${z}:${key}`, where)
    }
  })
  const withText = pages.filter((p) => (p.blocks ?? []).length > 0).length
  const enough = Math.max(2, Math.ceil(withText / 2))
  return pages.map((p, k) => {
    const marked = edges[k]!.filter(
      ([, z, key]) => (seen.get(`${z}:${key}`)?.size ?? 0) >= enough || pageNumber.test(key),
    )
    if (marked.length === 0) return p
    const blocks = [...p.blocks!]
    for (const [i, z] of marked)
      blocks[i] = { ...blocks[i]!, kind: z === "top" ? "page_header" : "page_footer" }
    // Read in order: headers first, footers last, whenever the page drew them.
    const rank = (b: PageBlock) => (b.kind === "page_header" ? 0 : b.kind === "page_footer" ? 2 : 1)
    return {
      ...p,
      blocks: blocks
        .map((b, i) => [b, i] as const)
        .sort((a, b) => rank(a[0]) - rank(b[0]) || a[1] - b[1])
        .map(([b]) => b),
    }
  })
}

const bodyBlocks = (p: ParsedPage) =>
  (p.blocks ?? []).filter((b) => b.kind !== "page_header" && b.kind !== "page_footer")

/**
 * Marks a table that goes on from the previous page: the page's first body block is a table with as many
 * columns as the table that ends the previous page's body.
 */
const markContinued = (pages: ReadonlyArray<ParsedPage>): Array<ParsedPage> =>
  pages.map((p, i) => {
    const previous = i > 0 ? bodyBlocks(pages[i - 1]!) : []
    const last = previous[previous.length - 1]
    const first = bodyBlocks(p)[0]
    if (
      last?.kind !== "table" ||
      first?.kind !== "table" ||
      first.table === undefined ||
      last.table === undefined
    )
      return p
    const before = pages[i - 1]!.tables?.[last.table]
    const table = p.tables?.[first.table]
    if (before === undefined || table === undefined) return p
    const columns = (t: typeof table) => Math.max(...t.cells.map((c) => c.column + c.column_span))
    if (columns(before) !== columns(table)) return p
    const tables = p.tables!.map((t, k) => (k === first.table ? { ...t, continued: true } : t))
    return { ...p, tables }
  })

/** The document-wide part of reading PDF pages: running headers and footers, tables continued. */
export const finishPdfPages = (pages: ReadonlyArray<ParsedPage>): Array<ParsedPage> =>
  markContinued(markRunning(pages))
