import { PDFDocument, rgb, StandardFonts } from "pdf-lib"

/** PDFs whose drawing would be costly to read as tables if nothing bounded it. */

/** One page ruled into `n` × `n` cells, each holding its row and column ("r.c"), drawn as one path. */
export const gridPdf = async (n: number): Promise<Uint8Array> => {
  const doc = await PDFDocument.create()
  const font = await doc.embedFont(StandardFonts.Helvetica)
  const size = 9 * n + 40
  const page = doc.addPage([size * 1.6, size])
  const [cw, ch] = [14.4, 9]
  const left = 20
  const top = size - 20
  const rules: Array<string> = []
  for (let i = 0; i <= n; i++) {
    rules.push(`M ${left} ${20 + i * ch} L ${left + n * cw} ${20 + i * ch}`)
    rules.push(`M ${left + i * cw} 20 L ${left + i * cw} ${20 + n * ch}`)
  }
  page.drawSvgPath(rules.join(" "), { x: 0, y: size, borderWidth: 0.25, borderColor: rgb(0, 0, 0) })
  for (let r = 0; r < n; r++)
    for (let c = 0; c < n; c++)
      page.drawText(`${r}.${c}`, { x: left + c * cw + 1, y: top - (r + 1) * ch + 2.5, size: 4, font })
  return doc.save({ useObjectStreams: false })
}

/** A page of 30,000 short strokes (a map, a chart) with a little text set in columns above it. */
export const crowdedPdf = async (): Promise<Uint8Array> => {
  const doc = await PDFDocument.create()
  const font = await doc.embedFont(StandardFonts.Helvetica)
  const page = doc.addPage([612, 792])
  const strokes: Array<string> = []
  for (let i = 0; i < 30_000; i++) {
    const x = 50 + (i % 200) * 2.5
    const y = 100 + Math.floor(i / 200) * 3.5
    strokes.push(`M ${x} ${y} L ${x + (i % 2 === 0 ? 2 : 0)} ${y + (i % 2 === 0 ? 0 : 2)}`)
  }
  page.drawSvgPath(strokes.join(" "), { x: 0, y: 792, borderWidth: 0.2, borderColor: rgb(0, 0, 0) })
  for (const [i, [a, b]] of [
    ["Legend", "value"],
    ["North", "12"],
    ["South", "30"],
    ["East", "7"],
  ].entries()) {
    page.drawText(a!, { x: 50, y: 700 - i * 14, size: 10, font })
    page.drawText(b!, { x: 300, y: 700 - i * 14, size: 10, font })
  }
  return doc.save({ useObjectStreams: false })
}
