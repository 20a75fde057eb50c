import type { PDFPageProxy } from "pdfjs-dist/legacy/build/pdf.mjs"
import {
  compose,
  GraphicsCollector,
  identity,
  isWhite,
  type Matrix,
  type PageGraphics,
} from "./PdfGraphics.ts"

/**
 * The drawing of a page as pdf.js's operator list holds it: paths (`constructPath`, in the user space of the
 * current transformation, which is tracked through `save`, `restore`, `transform` and form XObjects) and
 * images (the unit square under the current transformation). Colours come as `#rrggbb` (pdf.js converts
 * every colour space to RGB in its operator list).
 */

type Pdfjs = typeof import("pdfjs-dist/legacy/build/pdf.mjs")

// pdf.js's DrawOPS: the codes inside a constructPath's path data.
const drawMove = 0
const drawLine = 1
const drawCurve = 2
const drawQuadratic = 3
const drawClose = 4

interface State {
  ctm: Matrix
  fillShows: boolean
  strokeShows: boolean
}

const shows = (hex: unknown): boolean => {
  if (typeof hex !== "string" || !/^#[0-9a-f]{6}$/iu.test(hex)) return true
  const n = Number.parseInt(hex.slice(1), 16)
  return !isWhite((n >> 16) & 255, (n >> 8) & 255, n & 255)
}

const applied = (m: Matrix, x: number, y: number): [number, number] => [
  m[0] * x + m[2] * y + m[4],
  m[1] * x + m[3] * y + m[5],
]

/** Adds one constructPath's path data to the collector, in page user space. */
const addPath = (collector: GraphicsCollector, data: ArrayLike<number>, ctm: Matrix) => {
  for (let i = 0; i < data.length; ) {
    const op = data[i++]
    if (op === drawMove || op === drawLine) {
      const [x, y] = applied(ctm, data[i]!, data[i + 1]!)
      if (op === drawMove) collector.moveTo(x, y)
      else collector.lineTo(x, y)
      i += 2
    } else if (op === drawCurve) {
      collector.curveTo(...applied(ctm, data[i + 4]!, data[i + 5]!))
      i += 6
    } else if (op === drawQuadratic) {
      collector.curveTo(...applied(ctm, data[i + 2]!, data[i + 3]!))
      i += 4
    } else if (op === drawClose) collector.closePath()
    else break
  }
}

/** The page's rulings, figures and drawing counts from its operator list; `vt` is the viewport transform. */
export const pageGraphicsOf = async (pdfjs: Pdfjs, page: PDFPageProxy, vt: Matrix): Promise<PageGraphics> => {
  const { fnArray, argsArray } = await page.getOperatorList()
  const { OPS } = pdfjs
  const collector = new GraphicsCollector(vt)
  const stack: Array<State> = []
  let state: State = { ctm: identity, fillShows: true, strokeShows: true }
  const strokes = new Set<number>([OPS.stroke, OPS.closeStroke])
  const fills = new Set<number>([OPS.fill, OPS.eoFill])
  const both = new Set<number>([OPS.fillStroke, OPS.eoFillStroke, OPS.closeFillStroke, OPS.closeEOFillStroke])
  for (let i = 0; i < fnArray.length; i++) {
    const op = fnArray[i]
    const args = argsArray[i] as Array<unknown> | null
    switch (op) {
      case OPS.save:
        stack.push(state)
        state = { ...state }
        break
      case OPS.restore:
        state = stack.pop() ?? state
        break
      case OPS.transform:
        state.ctm = compose(args as unknown as Matrix, state.ctm)
        break
      case OPS.paintFormXObjectBegin: {
        stack.push(state)
        const matrix = args?.[0] as Matrix | null | undefined
        state = { ...state, ctm: matrix ? compose(matrix, state.ctm) : state.ctm }
        break
      }
      case OPS.paintFormXObjectEnd:
        state = stack.pop() ?? state
        break
      case OPS.setFillRGBColor:
        state.fillShows = shows(args?.[0])
        break
      case OPS.setStrokeRGBColor:
        state.strokeShows = shows(args?.[0])
        break
      case OPS.setFillTransparent:
        state.fillShows = false
        break
      case OPS.setStrokeTransparent:
        state.strokeShows = false
        break
      case OPS.constructPath: {
        const paint = Number(args?.[0])
        const data = (args?.[1] as Array<ArrayLike<number> | null> | undefined)?.[0]
        if (data === null || data === undefined || typeof data !== "object" || !("length" in data)) break
        const stroked = (strokes.has(paint) || both.has(paint)) && state.strokeShows
        const filled = (fills.has(paint) || both.has(paint)) && state.fillShows
        collector.beginPath(stroked, filled)
        addPath(collector, data, state.ctm)
        collector.endPath()
        break
      }
      case OPS.paintImageXObject:
        collector.image(state.ctm, Number(args?.[1]), Number(args?.[2]))
        break
      case OPS.paintInlineImageXObject: {
        const image = args?.[0] as { width?: unknown; height?: unknown } | undefined
        collector.image(state.ctm, Number(image?.width), Number(image?.height))
        break
      }
      case OPS.paintImageMaskXObject: {
        const mask = args?.[0] as { width?: unknown; height?: unknown } | undefined
        collector.image(state.ctm, Number(mask?.width), Number(mask?.height))
        break
      }
    }
  }
  return collector.result()
}
