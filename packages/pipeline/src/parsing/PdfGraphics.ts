import type { Box } from "@dxs/domain/Tables"

/**
 * What both PDF engines read of a page's drawing, in the same terms: the straight horizontal and vertical
 * lines it draws (stroked lines, the edges of rectangles: the rulings of ruled tables), and where it shows
 * images (figures). Each engine walks its own representation of the page's paths (PDFium's path objects,
 * pdf.js's operator list) and feeds the points, in PDF user space with their transformation applied, to a
 * `GraphicsCollector`, which turns them into top-left page points with the page's view transform.
 */

/** An axis-aligned segment in top-left page points: x0 ≤ x1, y0 ≤ y1, and x0 = x1 or y0 = y1. */
export interface Ruling {
  readonly x0: number
  readonly y0: number
  readonly x1: number
  readonly y1: number
}

export interface PageGraphics {
  readonly rulings: ReadonlyArray<Ruling>
  /** Boxes of the images shown (large enough to be figures), top-left page points. */
  readonly images: ReadonlyArray<Box>
  /** Path objects drawn (for "text drawn as outlines"). */
  readonly paths: number
  /** Largest image in its own pixels (for "worth OCR"), width × height. */
  readonly imagePixels: ReadonlyArray<readonly [number, number]>
  /** More drawing than tables are looked for in (a chart, a map, text drawn as outlines). */
  readonly crowded: boolean
}

export const noGraphics: PageGraphics = { rulings: [], images: [], paths: 0, imagePixels: [], crowded: false }

/** Beyond this many straight segments a page's drawing is a picture, not a table's rulings. */
const maxSegments = 20_000
/** Shortest segment kept, in points. */
const minLength = 1
/** How far from horizontal or vertical a segment may lean, in points over its length. */
const slant = 0.5
/** An image smaller than this on the page (points on each side) is an icon, not a figure. */
const minFigureSide = 24
/**
 * A filled shape no thicker than this (points) is a line drawn as a rectangle; a thicker one is a background
 * (a shaded cell, a coloured box), whose edges are no rulings: next to a shape of the same colour they
 * do not even show.
 */
const maxRuleThickness = 3

/** A 2-D affine transformation `[a, b, c, d, e, f]` (PDF's matrix order). */
export type Matrix = readonly [number, number, number, number, number, number]

export const identity: Matrix = [1, 0, 0, 1, 0, 0]

/** `first` then `second` (PDF: a point times `first` times `second`). */
export const compose = (first: Matrix, second: Matrix): Matrix => {
  const [a, b, c, d, e, f] = first
  const [A, B, C, D, E, F] = second
  return [a * A + b * C, a * B + b * D, c * A + d * C, c * B + d * D, e * A + f * C + E, e * B + f * D + F]
}

/** Whether an RGB colour (0–255) is white or nearly: such a line or fill does not show on the page. */
export const isWhite = (r: number, g: number, b: number): boolean => r >= 250 && g >= 250 && b >= 250

/**
 * Collects one page's drawing. Points come in PDF user space (the path's or image's matrix applied); the
 * view transform `vt` (user space → top-left points, page rotation included) is applied here.
 */
export class GraphicsCollector {
  private readonly rulings: Array<Ruling> = []
  private readonly images: Array<Box> = []
  private readonly imagePixels: Array<readonly [number, number]> = []
  private paths = 0
  private crowded = false
  private startX = 0
  private startY = 0
  private lastX = 0
  private lastY = 0
  private stroked = false
  private filled = false
  /** The current subpath's straight segments (user space) and extent (page points). */
  private pending: Array<number> = []
  private minX = Infinity
  private minY = Infinity
  private maxX = -Infinity
  private maxY = -Infinity

  constructor(private readonly vt: Matrix) {}

  /** A new path: whether it is stroked, and filled, in a colour that shows. */
  beginPath(stroked: boolean, filled: boolean) {
    this.endSubpath()
    this.paths++
    this.stroked = stroked && !this.crowded
    this.filled = filled && !this.crowded
  }

  moveTo(x: number, y: number) {
    this.endSubpath()
    this.startX = this.lastX = x
    this.startY = this.lastY = y
    this.extend(x, y)
  }

  lineTo(x: number, y: number) {
    if (this.stroked || this.filled) this.pending.push(this.lastX, this.lastY, x, y)
    this.lastX = x
    this.lastY = y
    this.extend(x, y)
  }

  /** A curve is not a ruling: only its end point moves the pen. */
  curveTo(x: number, y: number) {
    this.lastX = x
    this.lastY = y
    this.extend(x, y)
  }

  closePath() {
    this.lineTo(this.startX, this.startY)
  }

  /** The path is complete (also implied by the next path or the result). */
  endPath() {
    this.endSubpath()
  }

  private extend(x: number, y: number) {
    const [px, py] = this.toPage(x, y)
    this.minX = Math.min(this.minX, px)
    this.minY = Math.min(this.minY, py)
    this.maxX = Math.max(this.maxX, px)
    this.maxY = Math.max(this.maxY, py)
  }

  /** A stroked subpath's segments are rulings; a filled one's only when it is a line drawn as a thin shape. */
  private endSubpath() {
    const thin = Math.min(this.maxX - this.minX, this.maxY - this.minY) <= maxRuleThickness
    if (this.stroked || (this.filled && thin))
      for (let i = 0; i + 3 < this.pending.length; i += 4)
        this.segment(this.pending[i]!, this.pending[i + 1]!, this.pending[i + 2]!, this.pending[i + 3]!)
    this.pending = []
    this.minX = this.minY = Infinity
    this.maxX = this.maxY = -Infinity
  }

  /** An image drawn over the unit square transformed by `m` (user space), of `width × height` pixels. */
  image(m: Matrix, width: number, height: number) {
    this.imagePixels.push([width, height])
    const corners = [
      [m[4], m[5]],
      [m[0] + m[4], m[1] + m[5]],
      [m[2] + m[4], m[3] + m[5]],
      [m[0] + m[2] + m[4], m[1] + m[3] + m[5]],
    ].map(([x, y]) => this.toPage(x!, y!))
    const xs = corners.map((p) => p[0])
    const ys = corners.map((p) => p[1])
    const box: Box = [Math.min(...xs), Math.min(...ys), Math.max(...xs), Math.max(...ys)]
    if (box[2] - box[0] >= minFigureSide && box[3] - box[1] >= minFigureSide) this.images.push(box)
  }

  private toPage(x: number, y: number): [number, number] {
    const [a, b, c, d, e, f] = this.vt
    return [a * x + c * y + e, b * x + d * y + f]
  }

  private segment(ux0: number, uy0: number, ux1: number, uy1: number) {
    const [x0, y0] = this.toPage(ux0, uy0)
    const [x1, y1] = this.toPage(ux1, uy1)
    const dx = Math.abs(x1 - x0)
    const dy = Math.abs(y1 - y0)
    if (Math.max(dx, dy) < minLength) return
    if (dy <= slant) {
      const y = (y0 + y1) / 2
      this.push({ x0: Math.min(x0, x1), y0: y, x1: Math.max(x0, x1), y1: y })
    } else if (dx <= slant) {
      const x = (x0 + x1) / 2
      this.push({ x0: x, y0: Math.min(y0, y1), x1: x, y1: Math.max(y0, y1) })
    }
  }

  private push(ruling: Ruling) {
    if (this.rulings.length >= maxSegments) {
      this.crowded = true
      this.stroked = this.filled = false
      return
    }
    this.rulings.push(ruling)
  }

  result(): PageGraphics {
    this.endSubpath()
    return {
      rulings: this.crowded ? [] : this.rulings,
      images: this.images,
      paths: this.paths,
      imagePixels: this.imagePixels,
      crowded: this.crowded,
    }
  }
}
