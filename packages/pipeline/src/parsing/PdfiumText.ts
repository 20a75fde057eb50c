import type { Doc, Geometry } from "./PdfiumModule.ts"
import type { TextRun } from "./PdfText.ts"

/**
 * The text of a page as PDFium's text page gives it: characters with their origins and advance boxes (its
 * high-level API has none), grouped into runs of text as pdf.js groups its text items, so that the line
 * rebuild and table detection shared by both engines (PdfText.ts, PdfTables.ts) see the same input.
 */

interface OpenRun {
  str: string
  hasEOL: boolean
  x0: number
  y0: number
  ux: number
  uy: number
  vx: number
  vy: number
  end: number
  /** The end of the last character that is not a space. */
  inkEnd: number
  across: number
  size: number
  font: number
}

/** A run ends at its last visible character: a trailing space is not part of it (as in pdf.js's items). */
const finished = (run: OpenRun): TextRun => ({
  str: run.str.endsWith(" ") ? run.str.slice(0, -1) : run.str,
  hasEOL: run.hasEOL,
  x0: run.x0,
  y0: run.y0,
  ux: run.ux,
  uy: run.uy,
  vx: run.vx,
  vy: run.vy,
  vertical: false,
  length: Math.max(0, run.inkEnd - (run.x0 * run.ux + run.y0 * run.uy)),
  size: run.size,
})

const space: Omit<TextRun, "hasEOL"> = {
  str: " ",
  x0: 0,
  y0: 0,
  ux: 1,
  uy: 0,
  vx: 0,
  vy: -1,
  vertical: false,
  length: 0,
  size: 0,
}

/**
 * The page's characters as runs, as pdf.js groups text: characters that follow each other on one baseline in
 * one direction and size make a run; a gap of 0.1–0.6 em inside a run becomes a space; a larger gap, a jump
 * back or a change of line starts a new run. Spaces in the file separate runs, or become one space inside a
 * run. The spaces and line ends PDFium adds itself are left out (see below).
 */
const runsOfPage = (
  doc: Doc,
  textPage: number,
  vt: Geometry["vt"],
  textObjects: Set<number>,
): Array<TextRun> => {
  const runs: Array<TextRun> = []
  const { m, scratch } = doc
  const [A, B, C, D, E, F] = vt
  const count = m._FPDFText_CountChars(textPage)
  let run: OpenRun | undefined
  let gapSpace = false
  // The text object of the previous character: its characters share the matrix and the font size.
  let object = 0
  let ma = 1
  let mb = 0
  let mc = 0
  let md = 1
  let fontSize = 0
  let font = 0
  for (let i = 0; i < count; i++) {
    const code = m._FPDFText_GetUnicode(textPage, i)
    // Characters PDFium made up (spaces, line ends) belong to no text object.
    const charObject = m._FPDFText_GetTextObject(textPage, i)
    if (charObject === 0 || code === 13 || code === 10) {
      // PDFium's own spaces and line ends come from its layout analysis, which breaks lines where pdf.js
      // does not (a signature block's columns) and spaces out letter-spaced words: runs and lines are
      // decided from the positions alone, as pdf.js does.
      continue
    }
    // PDFium marks a hyphen at a line end as U+0002; other control characters carry no text.
    // Tabs, no-break and other Unicode spaces are plain spaces, as in pdf.js's text.
    const ch =
      code === 2
        ? "-"
        : code === 9 ||
            code === 0xa0 ||
            (code >= 0x2000 && code <= 0x200a) ||
            code === 0x202f ||
            code === 0x3000
          ? " "
          : code < 32 || code > 0x10ffff
            ? ""
            : String.fromCodePoint(code)
    if (ch === "" || (code >= 0xd800 && code <= 0xdfff)) continue
    if (charObject !== object) {
      object = charObject
      textObjects.add(object)
      m._FPDFText_GetMatrix(textPage, i, scratch.at)
      ma = scratch.f32(0)
      mb = scratch.f32(1)
      mc = scratch.f32(2)
      md = scratch.f32(3)
      fontSize = m._FPDFText_GetFontSize(textPage, i)
      font = m._FPDFTextObj_GetFont(object)
    }
    m._FPDFText_GetCharOrigin(textPage, i, scratch.at, scratch.at + 8)
    const ox = scratch.f64(0)
    const oy = scratch.f64(1)
    // Loose box (left, top, right, bottom): the advance from the origin along the text direction.
    m._FPDFText_GetLooseCharBox(textPage, i, scratch.at)
    const l = scratch.f32(0)
    const t = scratch.f32(1)
    const r = scratch.f32(2)
    const b = scratch.f32(3)
    const sa = Math.hypot(ma, mb) || 1
    const pa = ma / sa
    const pb = mb / sa
    const start = ox * pa + oy * pb
    const advance = Math.max(
      0,
      Math.max(l * pa + t * pb, r * pa + t * pb, l * pa + b * pb, r * pa + b * pb) - start,
    )
    // Into top-left points.
    const x0 = A * ox + C * oy + E
    const y0 = B * ox + D * oy + F
    const ux = A * pa + C * pb
    const uy = B * pa + D * pb
    const sv = Math.hypot(mc, md)
    const vx = sv > 0 ? (A * mc + C * md) / sv : -uy
    const vy = sv > 0 ? (B * mc + D * md) / sv : ux
    const size = Math.abs(fontSize * (sv || 1)) || Math.abs(t - b) || 1
    const along = x0 * ux + y0 * uy
    const across = -(x0 * vx + y0 * vy)
    if (run !== undefined) {
      const big = Math.max(size, run.size)
      const gap = along - run.end
      const joins =
        font === run.font &&
        ux * run.ux + uy * run.uy > 0.99 &&
        Math.abs(across - run.across) < 0.2 * big &&
        Math.abs(size - run.size) < 0.2 * big &&
        gap > -0.2 * big &&
        gap <= 0.6 * big
      if (joins) {
        // One space between words, however many the file draws (as pdf.js's text).
        if ((gapSpace || gap > 0.102 * big || ch === " ") && !run.str.endsWith(" ")) run.str += " "
        run.end = Math.max(run.end, along + advance)
        if (ch !== " ") {
          run.str += ch
          run.inkEnd = run.end
        }
        gapSpace = false
        continue
      }
      runs.push(finished(run))
      // The trailing space left out of the run still separates it from the next.
      gapSpace = gapSpace || run.str.endsWith(" ")
      run = undefined
    }
    if (ch === " ") {
      // Spaces do not start a run: they separate it from the previous one.
      gapSpace = true
      continue
    }
    if (gapSpace) runs.push({ ...space, hasEOL: false })
    gapSpace = false
    run = {
      str: ch,
      hasEOL: false,
      x0,
      y0,
      ux,
      uy,
      vx,
      vy,
      end: along + advance,
      inkEnd: along + advance,
      across,
      size,
      font,
    }
  }
  if (run !== undefined) runs.push(finished(run))
  return runs
}

/**
 * The page's runs of text, in content order (none when PDFium cannot load its text), and how many text
 * objects drew them.
 */
export const runsOfTextPage = (
  doc: Doc,
  page: number,
  geometry: Geometry,
): { readonly runs: Array<TextRun>; readonly textObjects: number } => {
  const textPage = doc.m._FPDFText_LoadPage(page)
  if (textPage === 0) return { runs: [], textObjects: 0 }
  try {
    const textObjects = new Set<number>()
    const runs = runsOfPage(doc, textPage, geometry.vt, textObjects)
    return { runs, textObjects: textObjects.size }
  } finally {
    doc.m._FPDFText_ClosePage(textPage)
  }
}
