import {
  compose,
  GraphicsCollector,
  identity,
  isWhite,
  type Matrix,
  type PageGraphics,
} from "./PdfGraphics.ts"
import type { Doc, Geometry } from "./PdfiumModule.ts"

/**
 * The drawing of a page as PDFium's page objects hold it: path objects (their segments, with each object's
 * matrix and the matrices of the form XObjects around it) and image objects. A bounded walk: a page of
 * hundreds of thousands of objects is a picture, looked at no further.
 */

// FPDF_PAGEOBJ_* and FPDF_SEGMENT_* constants.
const pathObject = 2
const imageObject = 3
const formObject = 5
const segmentLine = 0
const segmentBezier = 1
const segmentMove = 2

const maxObjects = 100_000
const maxDepth = 16

/** The object's matrix (FS_MATRIX: six floats), or the identity when PDFium has none. */
const matrixOf = (doc: Doc, object: number): Matrix => {
  const { m, scratch } = doc
  if (!m._FPDFPageObj_GetMatrix(object, scratch.at)) return identity
  return [scratch.f32(0), scratch.f32(1), scratch.f32(2), scratch.f32(3), scratch.f32(4), scratch.f32(5)]
}

/** Whether a path is stroked, and filled, in a colour that shows (not white, not transparent). */
const paintOf = (doc: Doc, path: number): [boolean, boolean] => {
  const { m, scratch } = doc
  if (!m._FPDFPath_GetDrawMode(path, scratch.at, scratch.at + 4)) return [false, false]
  const fill = m.HEAP32[scratch.at >> 2]! !== 0
  const stroke = m.HEAP32[(scratch.at + 4) >> 2]! !== 0
  const colour = (get: typeof m._FPDFPageObj_GetFillColor) =>
    get(path, scratch.at, scratch.at + 4, scratch.at + 8, scratch.at + 12)
      ? !isWhite(scratch.u32(0), scratch.u32(1), scratch.u32(2)) && scratch.u32(3) > 0
      : true
  return [stroke && colour(m._FPDFPageObj_GetStrokeColor), fill && colour(m._FPDFPageObj_GetFillColor)]
}

const addPath = (doc: Doc, path: number, matrix: Matrix, collector: GraphicsCollector) => {
  const { m, scratch } = doc
  collector.beginPath(...paintOf(doc, path))
  const [a, b, c, d, e, f] = matrix
  const count = m._FPDFPath_CountSegments(path)
  for (let i = 0; i < count; i++) {
    const segment = m._FPDFPath_GetPathSegment(path, i)
    if (segment === 0 || !m._FPDFPathSegment_GetPoint(segment, scratch.at, scratch.at + 4)) continue
    const px = scratch.f32(0)
    const py = scratch.f32(1)
    const x = a * px + c * py + e
    const y = b * px + d * py + f
    const type = m._FPDFPathSegment_GetType(segment)
    if (type === segmentMove) collector.moveTo(x, y)
    else if (type === segmentLine) collector.lineTo(x, y)
    else if (type === segmentBezier) collector.curveTo(x, y)
    if (m._FPDFPathSegment_GetClose(segment)) collector.closePath()
  }
  collector.endPath()
}

/** The page's rulings, figures and drawing counts; `vt` is the page's view transform. */
export const pageGraphics = (doc: Doc, page: number, geometry: Geometry): PageGraphics => {
  const { m, scratch } = doc
  const collector = new GraphicsCollector(geometry.vt)
  let budget = maxObjects
  const walk = (count: number, get: (i: number) => number, outer: Matrix, depth: number) => {
    for (let i = 0; i < count && budget-- > 0; i++) {
      const object = get(i)
      if (object === 0) continue
      const type = m._FPDFPageObj_GetType(object)
      if (type === pathObject) addPath(doc, object, compose(matrixOf(doc, object), outer), collector)
      else if (type === imageObject) {
        const sized = m._FPDFImageObj_GetImagePixelSize(object, scratch.at, scratch.at + 4)
        const [w, h] = sized ? [scratch.u32(0), scratch.u32(1)] : [0, 0]
        collector.image(compose(matrixOf(doc, object), outer), w, h)
      } else if (type === formObject && depth < maxDepth) {
        const inner = compose(matrixOf(doc, object), outer)
        walk(
          m._FPDFFormObj_CountObjects(object),
          (j) => m._FPDFFormObj_GetObject(object, j),
          inner,
          depth + 1,
        )
      }
    }
  }
  walk(m._FPDFPage_CountObjects(page), (i) => m._FPDFPage_GetObject(page, i), identity, 0)
  return collector.result()
}
