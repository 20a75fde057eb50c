import { type Box, type Table, type TableCell, tableOfCells } from "@dxs/domain/Tables"
import { UnionFind } from "@dxs/domain/UnionFind"
import type { Ruling } from "./PdfGraphics.ts"
import {
  boxToPage,
  type Frame,
  rowsOfWords,
  rulingToFrame,
  type TextRow,
  textOfWords,
  toFrame,
  type Word,
} from "./PdfWords.ts"

/**
 * Ruled tables (the "lattice" approach of tabula's spreadsheet mode and camelot): the page's horizontal and
 * vertical rulings are merged into lines; lines that cross or touch form a network; a network with at least
 * two rows and two columns is a table. Its grid is every distinct line position; two neighbouring positions
 * belong to one cell where no ruling separates them (a spanning cell). Lines that stop short of the table's
 * edge (no outer border) are completed by the extent of the lines they meet. Text goes to the cell holding
 * the centre of each word, in reading order inside the cell. A table printed sideways is read in the frame
 * of its text (see PdfWords).
 */

/** Lines this close (points) are one line: a rule drawn as a thin filled rectangle has two edges. */
const samePosition = 2
/** Collinear pieces with a gap of at most this much (points) are one line (dashed or broken rules). */
const joinGap = 3
/** How far (points) a line may stop short of another and still meet it. */
const meetTolerance = 3
/** Grid positions closer than this (points) are one: no cell is thinner. */
const minCellSide = 4
/** More merged lines than this: a drawing (a chart, a plan), not a table. */
const maxLines = 3000

interface Line {
  /** Position across the line: y of a horizontal one, x of a vertical one. */
  at: number
  from: number
  to: number
}

/** Merges pieces into lines: same position (within `samePosition`), overlapping or within `joinGap`. */
const mergeLines = (pieces: ReadonlyArray<Line>): Array<Line> => {
  const sorted = [...pieces].sort((a, b) => a.at - b.at)
  const lines: Array<Line> = []
  let band: Array<Line> = []
  const flush = () => {
    band.sort((a, b) => a.from - b.from)
    let current: (Line & { sum: number; n: number }) | undefined
    for (const p of band) {
      if (current !== undefined && p.from <= current.to + joinGap) {
        current.to = Math.max(current.to, p.to)
        current.sum += p.at
        current.n++
      } else {
        if (current !== undefined)
          lines.push({ at: current.sum / current.n, from: current.from, to: current.to })
        current = { ...p, sum: p.at, n: 1 }
      }
    }
    if (current !== undefined) lines.push({ at: current.sum / current.n, from: current.from, to: current.to })
    band = []
  }
  for (const p of sorted) {
    if (band.length > 0 && p.at - band[0]!.at > samePosition) flush()
    band.push(p)
  }
  flush()
  return lines
}

const meets = (h: Line, v: Line): boolean =>
  v.at >= h.from - meetTolerance &&
  v.at <= h.to + meetTolerance &&
  h.at >= v.from - meetTolerance &&
  h.at <= v.to + meetTolerance

interface Network {
  readonly horizontals: ReadonlyArray<Line>
  readonly verticals: ReadonlyArray<Line>
  readonly box: Box
}

/** The networks of lines that meet, with at least two of each direction. */
const networks = (rulings: ReadonlyArray<Ruling>): Array<Network> => {
  const hs = mergeLines(rulings.filter((r) => r.y0 === r.y1).map((r) => ({ at: r.y0, from: r.x0, to: r.x1 })))
  const vs = mergeLines(rulings.filter((r) => r.x0 === r.x1).map((r) => ({ at: r.x0, from: r.y0, to: r.y1 })))
  if (hs.length < 2 || vs.length < 2 || hs.length > maxLines || vs.length > maxLines) return []
  const sets = new UnionFind(hs.length + vs.length)
  for (let i = 0; i < hs.length; i++)
    for (let j = 0; j < vs.length; j++) if (meets(hs[i]!, vs[j]!)) sets.union(i, hs.length + j)
  const groups = new Map<number, { h: Array<Line>; v: Array<Line> }>()
  const group = (i: number) => {
    const root = sets.find(i)
    const g = groups.get(root) ?? { h: [], v: [] }
    groups.set(root, g)
    return g
  }
  for (const [i, h] of hs.entries()) group(i).h.push(h)
  for (const [j, v] of vs.entries()) group(hs.length + j).v.push(v)
  return [...groups.values()]
    .filter((g) => g.h.length >= 2 && g.v.length >= 2)
    .map((g) => ({
      horizontals: g.h,
      verticals: g.v,
      box: [
        Math.min(...g.h.map((l) => l.from), ...g.v.map((l) => l.at)),
        Math.min(...g.v.map((l) => l.from), ...g.h.map((l) => l.at)),
        Math.max(...g.h.map((l) => l.to), ...g.v.map((l) => l.at)),
        Math.max(...g.v.map((l) => l.to), ...g.h.map((l) => l.at)),
      ] as Box,
    }))
}

/** Distinct positions (closer than `minCellSide` are one), ascending. */
const positions = (values: ReadonlyArray<number>): Array<number> => {
  const sorted = [...values].sort((a, b) => a - b)
  const out: Array<number> = []
  let sum = 0
  let n = 0
  for (const v of sorted) {
    if (n > 0 && v - sum / n >= minCellSide) {
      out.push(sum / n)
      sum = 0
      n = 0
    }
    sum += v
    n++
  }
  if (n > 0) out.push(sum / n)
  return out
}

/** Whether a line at `at` (within `samePosition`) covers the middle half of `from`–`to`. */
const separated = (lines: ReadonlyArray<Line>, at: number, from: number, to: number): boolean => {
  const q = (to - from) / 4
  return lines.some(
    (l) => Math.abs(l.at - at) <= minCellSide / 2 + 0.5 && l.from <= from + q && l.to >= to - q,
  )
}

/** The index i of the interval [edges[i], edges[i + 1]) holding `at` (edges ascending, `at` within them). */
const slot = (edges: ReadonlyArray<number>, at: number): number => {
  let lo = 0
  let hi = edges.length - 2
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1
    if (edges[mid]! <= at) lo = mid
    else hi = mid - 1
  }
  return lo
}

const centreIn = (w: Word, x0: number, y0: number, x1: number, y1: number): boolean => {
  const cx = (w.x0 + w.x1) / 2
  const cy = (w.y0 + w.y1) / 2
  return cx >= x0 && cx < x1 && cy >= y0 && cy < y1
}

export interface FoundTable {
  readonly table: Table
  /** Page coordinates. */
  readonly box: Box
  /** The words (of `words` given) the table holds. */
  readonly words: ReadonlySet<Word>
  readonly frame: Frame
}

/** The grid of a network in its frame, its cells and their text; undefined when it is not a table. */
const gridTable = (network: Network, words: ReadonlyArray<Word>, frame: Frame): FoundTable | undefined => {
  const { horizontals: hs, verticals: vs } = network
  const left = Math.min(...hs.map((h) => h.from))
  const right = Math.max(...hs.map((h) => h.to))
  const top = Math.min(...vs.map((v) => v.from))
  const bottom = Math.max(...vs.map((v) => v.to))
  // Lines that run past the outermost crossing lines stand for a missing outer border.
  const xs = positions([...vs.map((v) => v.at), left, right])
  const ys = positions([...hs.map((h) => h.at), top, bottom])
  const rows = ys.length - 1
  const columns = xs.length - 1
  if (rows < 1 || columns < 1 || rows * columns > 100_000) return undefined
  const sets = new UnionFind(rows * columns)
  for (let r = 0; r < rows; r++)
    for (let c = 0; c < columns; c++) {
      if (c + 1 < columns && !separated(vs, xs[c + 1]!, ys[r]!, ys[r + 1]!))
        sets.union(r * columns + c, r * columns + c + 1)
      if (r + 1 < rows && !separated(hs, ys[r + 1]!, xs[c]!, xs[c + 1]!))
        sets.union(r * columns + c, (r + 1) * columns + c)
    }
  const spans = new Map<number, { r0: number; c0: number; r1: number; c1: number }>()
  for (let r = 0; r < rows; r++)
    for (let c = 0; c < columns; c++) {
      const root = sets.find(r * columns + c)
      const s = spans.get(root)
      if (s === undefined) spans.set(root, { r0: r, c0: c, r1: r, c1: c })
      else {
        s.r0 = Math.min(s.r0, r)
        s.c0 = Math.min(s.c0, c)
        s.r1 = Math.max(s.r1, r)
        s.c1 = Math.max(s.c1, c)
      }
    }
  // Each word to the grid position holding its centre (a binary search per axis), then to its cell.
  const wordsOf = new Map<number, Array<Word>>()
  const held = new Set<Word>()
  for (const w of words) {
    if (!centreIn(w, xs[0]!, ys[0]!, xs[columns]!, ys[rows]!)) continue
    const c = slot(xs, (w.x0 + w.x1) / 2)
    const r = slot(ys, (w.y0 + w.y1) / 2)
    const root = sets.find(r * columns + c)
    const list = wordsOf.get(root)
    if (list === undefined) wordsOf.set(root, [w])
    else list.push(w)
    held.add(w)
  }
  const areas = [...spans.entries()].map(([root, s]) => ({ ...s, words: wordsOf.get(root) ?? [] }))
  const cells = placeCells(areas, xs, ys, frame)
  const filled = cells.filter((c) => c.text !== "")
  // A frame around a block of text, a form's single box, a chart's grid: not tables.
  if (filled.length < 2 || filled.length < 0.2 * cells.length) return undefined
  const table = tableOfCells(cells, {
    bbox: roundBox(boxToPage(frame, [xs[0]!, ys[0]!, xs[columns]!, ys[rows]!])),
  })
  if (table === undefined) return undefined
  const used = new Set(table.cells.filter((c) => c.text !== "").map((c) => `${c.row}:${c.column}`))
  const usedRows = new Set([...used].map((k) => k.split(":")[0]))
  const usedColumns = new Set([...used].map((k) => k.split(":")[1]))
  if (usedRows.size < 2 || usedColumns.size < 2) return undefined
  return { table, box: table.bbox!, words: held, frame }
}

interface Area {
  readonly r0: number
  readonly c0: number
  readonly r1: number
  readonly c1: number
  readonly words: ReadonlyArray<Word>
}

/**
 * A grid row whose cells hold several lines of text in step (a ruled table whose rows are not ruled: only
 * its columns are) is as many table rows as it has lines; a row of wrapped cells (lines in one or two
 * columns only) stays one row.
 */
const linesOfRow = (row: ReadonlyArray<Area>): Array<TextRow> | undefined => {
  if (row.some((a) => a.r0 !== a.r1)) return undefined
  const lines = rowsOfWords(row.flatMap((a) => a.words))
  if (lines.length < 3) return undefined
  const filled = row.filter((a) => a.words.length > 0)
  const inStep = filled.filter((a) => {
    const mine = new Set(a.words)
    return lines.filter((l) => l.words.some((w) => mine.has(w))).length >= 0.8 * lines.length
  })
  return inStep.length >= 2 && inStep.length >= 0.5 * filled.length ? lines : undefined
}

/** The cells of the grid's areas, rows split where their lines are in step (see `linesOfRow`). */
const placeCells = (
  areas: ReadonlyArray<Area>,
  xs: ReadonlyArray<number>,
  ys: ReadonlyArray<number>,
  frame: Frame,
): Array<TableCell> => {
  const rows = ys.length - 1
  const byRow: Array<Array<Area>> = Array.from({ length: rows }, () => [])
  for (const a of areas) for (let r = a.r0; r <= a.r1; r++) byRow[r]!.push(a)
  const split = byRow.map(linesOfRow)
  const start: Array<number> = []
  let next = 0
  for (let r = 0; r < rows; r++) {
    start.push(next)
    next += split[r]?.length ?? 1
  }
  start.push(next)
  const cells: Array<TableCell> = []
  const cell = (row: number, span: number, a: Area, words: ReadonlyArray<Word>, y0: number, y1: number) =>
    cells.push({
      row,
      column: a.c0,
      row_span: span,
      column_span: a.c1 - a.c0 + 1,
      text: textOfWords(words),
      header: false,
      bbox: roundBox(boxToPage(frame, [xs[a.c0]!, y0, xs[a.c1 + 1]!, y1])),
    })
  for (const a of areas) {
    const lines = split[a.r0]
    if (lines === undefined) {
      cell(start[a.r0]!, start[a.r1 + 1]! - start[a.r0]!, a, a.words, ys[a.r0]!, ys[a.r1 + 1]!)
      continue
    }
    const mine = new Set(a.words)
    lines.forEach((line, j) => {
      const top = j === 0 ? ys[a.r0]! : (lines[j - 1]!.y1 + line.y0) / 2
      const bottom = j === lines.length - 1 ? ys[a.r0 + 1]! : (line.y1 + lines[j + 1]!.y0) / 2
      cell(
        start[a.r0]! + j,
        1,
        a,
        line.words.filter((w) => mine.has(w)),
        top,
        bottom,
      )
    })
  }
  return cells
}

const roundBox = (box: Box): Box => box.map((v) => Math.round(v * 100) / 100) as unknown as Box

/**
 * The ruled tables of a page: `rulings` in top-left page points; `words` in their frames. Each network is
 * read in the frame of most of the words it encloses.
 */
export const latticeTables = (
  rulings: ReadonlyArray<Ruling>,
  words: ReadonlyArray<Word>,
): Array<FoundTable> => {
  const found: Array<FoundTable> = []
  for (const network of networks(rulings)) {
    const [x0, y0, x1, y1] = network.box
    const counts = [0, 0, 0, 0]
    for (const w of words) {
      // Back to page coordinates: the centre of the word.
      const [cx, cy] = [(w.x0 + w.x1) / 2, (w.y0 + w.y1) / 2]
      const page = frameCentreToPage(w.frame, cx, cy)
      if (page[0] >= x0 && page[0] <= x1 && page[1] >= y0 && page[1] <= y1) counts[w.frame]!++
    }
    const frame = counts.indexOf(Math.max(...counts)) as Frame
    if (counts[frame] === 0) continue
    const inFrame = frame === 0 ? network : turnNetwork(network, frame)
    const table = gridTable(
      inFrame,
      words.filter((w) => w.frame === frame),
      frame,
    )
    if (table !== undefined) found.push(table)
  }
  return found
}

const frameCentreToPage = (frame: Frame, X: number, Y: number): [number, number] => {
  if (frame === 0) return [X, Y]
  // fromFrame, inlined for the hot loop of counting.
  const [ux, uy] = frame === 1 ? [0, 1] : frame === 2 ? [-1, 0] : [0, -1]
  return [X * ux - Y * uy, X * uy + Y * ux]
}

/** A network's lines in a frame turned by quarter turns (horizontal lines may become vertical). */
const turnNetwork = (network: Network, frame: Frame): Network => {
  const turned = [
    ...network.horizontals.map((h) => rulingToFrame(frame, { x0: h.from, y0: h.at, x1: h.to, y1: h.at })),
    ...network.verticals.map((v) => rulingToFrame(frame, { x0: v.at, y0: v.from, x1: v.at, y1: v.to })),
  ]
  const horizontals = turned
    .filter((r) => r.y0 === r.y1 || Math.abs(r.y0 - r.y1) < 1e-6)
    .map((r) => ({ at: r.y0, from: r.x0, to: r.x1 }))
  const verticals = turned
    .filter((r) => !(r.y0 === r.y1 || Math.abs(r.y0 - r.y1) < 1e-6))
    .map((r) => ({ at: r.x0, from: r.y0, to: r.y1 }))
  const [a, b] = toFrame(frame, network.box[0], network.box[1])
  const [c, d] = toFrame(frame, network.box[2], network.box[3])
  return { horizontals, verticals, box: [Math.min(a, c), Math.min(b, d), Math.max(a, c), Math.max(b, d)] }
}
