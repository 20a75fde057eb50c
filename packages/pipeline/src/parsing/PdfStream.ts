import { type Box, type TableCell, tableOfCells } from "@dxs/domain/Tables"
import type { FoundTable } from "./PdfLattice.ts"
import { boxToPage, type Frame, rowsOfWords, type TextRow, type Word } from "./PdfWords.ts"

/**
 * Unruled tables (the "stream" approach of tabula's basic mode and camelot): the words of a row of text that
 * stand apart by a wide gap (about an em or more) are separate segments; consecutive rows of two or more
 * segments, close together, make a table region (a row or two of one segment between them are wrapped
 * cells or section labels; short rows just above are its header rows). The rows whose segment count is the
 * region's usual one fix the columns (their j-th segments line up), and every segment goes to the columns
 * it overlaps (a header over several columns spans them). Each row of text is a row of the table, as in
 * tabula. A region of long segments is prose set in columns, not a table.
 */

/** Words further apart than this many font sizes are in different cells. */
const cellGap = 0.9
/** Rows further apart than this many font sizes (or than 1.5 of the region's own spacing) end a region. */
const rowGap = 1.0
/** Rows of one segment a region may hold between rows of several. */
const maxInnerSingles = 2
/** Header rows (of shorter segments, within the table's width) taken in above a region. */
const maxHeaderRows = 3
/** Segments longer than this (characters) are prose. */
const longSegment = 45

interface Segment {
  readonly words: Array<Word>
  readonly x0: number
  readonly x1: number
  readonly text: string
}

interface Line {
  readonly row: TextRow
  readonly segments: Array<Segment>
  readonly size: number
}

const median = (values: ReadonlyArray<number>): number => {
  if (values.length === 0) return 0
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]!
}

const segmentOf = (words: Array<Word>): Segment => ({
  words,
  x0: words[0]!.x0,
  x1: Math.max(...words.map((w) => w.x1)),
  text: words.map((w) => w.text).join(" "),
})

const lineOf = (row: TextRow): Line => {
  const segments: Array<Segment> = []
  let current: Array<Word> = []
  for (const w of row.words) {
    const last = current[current.length - 1]
    if (last !== undefined && w.x0 - last.x1 > cellGap * Math.max(w.size, last.size)) {
      segments.push(segmentOf(current))
      current = []
    }
    current.push(w)
  }
  if (current.length > 0) segments.push(segmentOf(current))
  return { row, segments, size: median(row.words.map((w) => w.size)) }
}

/** Whether some row of the page has a wide gap between two words: without one there is no unruled table. */
export const hasWideGaps = (words: ReadonlyArray<Word>): boolean => {
  let rowsWithGaps = 0
  for (const row of rowsOfWords(words))
    if (lineOf(row).segments.length >= 2 && ++rowsWithGaps >= 2) return true
  return false
}

const gapBetween = (above: Line, below: Line): number => below.row.y0 - above.row.y1

/** The indices [from, to] of regions: runs of multi-segment lines, close together. */
const regions = (lines: ReadonlyArray<Line>): Array<[number, number]> => {
  const found: Array<[number, number]> = []
  let i = 0
  while (i < lines.length) {
    if (lines[i]!.segments.length < 2) {
      i++
      continue
    }
    const start = i
    let end = i
    const gaps: Array<number> = []
    let j = i + 1
    while (j < lines.length) {
      const limit = Math.max(rowGap * lines[j - 1]!.size, gaps.length > 0 ? 1.5 * median(gaps) : 0)
      const gap = gapBetween(lines[j - 1]!, lines[j]!)
      if (gap > limit) break
      if (lines[j]!.segments.length >= 2) {
        gaps.push(Math.max(0, gap))
        end = j
      } else if (j - end > maxInnerSingles) break
      j++
    }
    found.push([start, end])
    i = end + 1
  }
  return found
}

const within = (s: Segment, x0: number, x1: number, slack: number) => s.x0 >= x0 - slack && s.x1 <= x1 + slack

/** Rows just above a region that read as its header: short segments within its width, close above it. */
const headerStart = (lines: ReadonlyArray<Line>, start: number, x0: number, x1: number): number => {
  let first = start
  while (first > 0 && start - first < maxHeaderRows) {
    const above = lines[first - 1]!
    const below = lines[first]!
    const fits = above.segments.every((s) => within(s, x0, x1, below.size) && s.text.length <= longSegment)
    if (!fits || gapBetween(above, below) > rowGap * below.size) break
    first--
  }
  return first
}

interface Column {
  x0: number
  x1: number
}

/** The columns: the j-th segments of the rows with the region's usual segment count, overlapping ones merged. */
const columnsOf = (lines: ReadonlyArray<Line>): Array<Column> => {
  const counts = new Map<number, number>()
  for (const l of lines)
    if (l.segments.length >= 2) counts.set(l.segments.length, (counts.get(l.segments.length) ?? 0) + 1)
  let k = 0
  let best = 0
  for (const [count, times] of counts)
    if (times > best || (times === best && count > k)) {
      k = count
      best = times
    }
  const columns: Array<Column> = Array.from({ length: k }, () => ({ x0: Infinity, x1: -Infinity }))
  for (const l of lines)
    if (l.segments.length === k)
      l.segments.forEach((s, j) => {
        columns[j]!.x0 = Math.min(columns[j]!.x0, s.x0)
        columns[j]!.x1 = Math.max(columns[j]!.x1, s.x1)
      })
  const merged: Array<Column> = []
  for (const c of columns) {
    const last = merged[merged.length - 1]
    if (last !== undefined && c.x0 <= last.x1) last.x1 = Math.max(last.x1, c.x1)
    else merged.push({ ...c })
  }
  return merged
}

/** The columns a segment belongs to: those it overlaps, else the nearest. */
const columnsOfSegment = (s: Segment, columns: ReadonlyArray<Column>): [number, number] => {
  const overlapping = columns.flatMap((c, j) => (s.x0 < c.x1 && s.x1 > c.x0 ? [j] : []))
  if (overlapping.length > 0) return [overlapping[0]!, overlapping[overlapping.length - 1]!]
  let nearest = 0
  let distance = Infinity
  columns.forEach((c, j) => {
    const d = s.x1 <= c.x0 ? c.x0 - s.x1 : s.x0 - c.x1
    if (d < distance) {
      distance = d
      nearest = j
    }
  })
  return [nearest, nearest]
}

const round = (v: number) => Math.round(v * 100) / 100
const roundBox = (box: Box): Box => [round(box[0]), round(box[1]), round(box[2]), round(box[3])]

const listMarker = /^([•▪◦‣●○■□–\-*]|\d{1,3}[.)]|[a-z][.)]|\((?:[a-z]{1,4}|\d{1,3})\))$/iu

/** A first column of nothing but list markers (bullets, "1.", "(a)") beside text: a list, not a table. */
const readsAsList = (cells: ReadonlyArray<TableCell>): boolean => {
  const first = cells.filter((c) => c.column === 0 && c.text !== "")
  return first.length > 0 && first.every((c) => listMarker.test(c.text.trim()))
}

/** A column whose cells are mostly long: paragraphs set beside something, not a table's cells. */
const hasProseColumn = (cells: ReadonlyArray<TableCell>): boolean => {
  const byColumn = new Map<number, { long: number; all: number }>()
  for (const c of cells) {
    if (c.text === "" || c.column_span > 1) continue
    const n = byColumn.get(c.column) ?? { long: 0, all: 0 }
    n.all++
    if (c.text.length > longSegment) n.long++
    byColumn.set(c.column, n)
  }
  return [...byColumn.values()].some((n) => n.all >= 2 && n.long >= 0.5 * n.all)
}

/** A region as a table, or undefined when its cells read as prose or it has too few rows of cells. */
const regionTable = (lines: ReadonlyArray<Line>, frame: Frame): FoundTable | undefined => {
  const columns = columnsOf(lines)
  if (columns.length < 2) return undefined
  // Cell edges halfway between the columns' text.
  const edges = [
    Math.min(columns[0]!.x0, ...lines.flatMap((l) => l.segments.map((s) => s.x0))),
    ...columns.slice(1).map((c, j) => (columns[j]!.x1 + c.x0) / 2),
    Math.max(columns[columns.length - 1]!.x1, ...lines.flatMap((l) => l.segments.map((s) => s.x1))),
  ]
  const cells: Array<TableCell> = []
  const words = new Set<Word>()
  let rowsWithCells = 0
  let long = 0
  let filled = 0
  lines.forEach((line, r) => {
    const texts = new Map<number, { to: number; text: Array<string> }>()
    for (const s of line.segments) {
      const [from, to] = columnsOfSegment(s, columns)
      const cell = texts.get(from)
      if (cell === undefined) texts.set(from, { to, text: [s.text] })
      else {
        cell.to = Math.max(cell.to, to)
        cell.text.push(s.text)
      }
      for (const w of s.words) words.add(w)
    }
    if (texts.size >= 2) rowsWithCells++
    let next = 0
    for (const [from, cell] of [...texts.entries()].sort((a, b) => a[0] - b[0])) {
      if (from < next) continue
      const text = cell.text.join(" ")
      filled++
      if (text.length > longSegment) long++
      const to = Math.max(from, Math.min(cell.to, columns.length - 1))
      cells.push({
        row: r,
        column: from,
        row_span: 1,
        column_span: to - from + 1,
        text,
        header: false,
        bbox: roundBox(boxToPage(frame, [edges[from]!, line.row.y0, edges[to + 1]!, line.row.y1])),
      })
      next = to + 1
    }
  })
  if (rowsWithCells < 3 || long > 0.25 * filled || readsAsList(cells) || hasProseColumn(cells))
    return undefined
  const top = lines[0]!.row.y0
  const bottom = lines[lines.length - 1]!.row.y1
  const box = roundBox(boxToPage(frame, [edges[0]!, top, edges[edges.length - 1]!, bottom]))
  const table = tableOfCells(cells, { bbox: box })
  return table === undefined ? undefined : { table, box, words, frame }
}

/** The unruled tables among `words` (all of one frame, none already in a ruled table). */
export const streamTables = (words: ReadonlyArray<Word>, frame: Frame): Array<FoundTable> => {
  const lines = rowsOfWords(words).map(lineOf)
  const found: Array<FoundTable> = []
  let taken = 0
  for (const [start, end] of regions(lines)) {
    const body = lines.slice(start, end + 1)
    const x0 = Math.min(...body.flatMap((l) => l.segments.map((s) => s.x0)))
    const x1 = Math.max(...body.flatMap((l) => l.segments.map((s) => s.x1)))
    const first = Math.max(taken, headerStart(lines, start, x0, x1))
    taken = end + 1
    const table = regionTable(lines.slice(first, end + 1), frame)
    if (table !== undefined) found.push(table)
  }
  return found
}
