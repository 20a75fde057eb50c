import type { PageBlock } from "@dxs/domain/Content"
import { OCR_PARSER } from "@dxs/domain/DocumentType"
import { type Table, withGuessedHeader } from "@dxs/domain/Tables"
import { Effect } from "effect"
import { type LayoutItem, type ParsedPage, ParseFailure, type ParseOutput } from "./Backend.ts"
import { noGraphics, type PageGraphics } from "./PdfGraphics.ts"
import { finishPdfPages, pageBlocks } from "./PdfLayout.ts"
import { pageTables } from "./PdfTables.ts"
import { minDrawnPaths, minTextChars, readable, type TextRun, textOfRuns } from "./PdfText.ts"

export { finishPdfPages }

/**
 * A PDF page read the same way by both engines, from the runs of text and the drawing each engine gives:
 * its text and layout (PdfText.ts), its tables (PdfTables.ts) and its blocks in reading order
 * (PdfLayout.ts).
 */

export interface PdfPageContent {
  readonly text: string
  readonly layout: ReadonlyArray<LayoutItem>
  /** Characters of visible text, for "does this page have a text layer". */
  readonly chars: number
  readonly tables: ReadonlyArray<Table>
  readonly blocks: ReadonlyArray<PageBlock>
  readonly graphics: PageGraphics
}

/**
 * A page's drawing is read only where it can matter: a page with text set in columns (a table needs two
 * columns of text), or with almost no text (a scan, for OCR). Elsewhere it is not read at all: a page of
 * running text pays nothing for tables (nor are its figures found).
 */
const minDrawingEvidence = 2

/** `readGraphics` is called only when the page's text shows that its drawing can matter. */
export const pdfPageContent = async (
  runs: ReadonlyArray<TextRun>,
  readGraphics: () => PageGraphics | Promise<PageGraphics>,
): Promise<PdfPageContent> => {
  const text = textOfRuns(runs)
  const drawn = text.chars < minTextChars || text.columnEvidence >= minDrawingEvidence
  const graphics = drawn ? await readGraphics() : noGraphics
  const found = pageTables(runs, text, graphics)
  return {
    text: text.text,
    layout: text.layout,
    chars: text.chars,
    tables: found.map((f) => withGuessedHeader(f.table)),
    blocks: pageBlocks(text.lines, found, graphics.images),
    graphics,
  }
}

/**
 * Whether a page without (much of a) text layer shows something OCR could read: a real image (not a
 * stretched 1-pixel rule or a small icon), or many paths (text drawn as outlines).
 */
export const showsScan = (content: PdfPageContent): boolean =>
  content.chars < minTextChars &&
  (content.graphics.imagePixels.some(([w, h]) => readable(w, h)) || content.graphics.paths >= minDrawnPaths)

/** What either engine read of a whole PDF, to be answered as one `ParseOutput`. */
export interface PdfRead {
  /** The engine's name in `parser` ("pdfium", "pdfjs-dist"); "+tesseract.js" is added when a page was OCRed. */
  readonly engine: string
  readonly pages: Array<ParsedPage>
  readonly count: number
  readonly metadata: Readonly<Record<string, unknown>>
  readonly ocrPages: ReadonlyArray<number>
  readonly ocrFailures: ReadonlyArray<{ readonly page: number; readonly reason: string }>
  readonly unreadable: ReadonlyArray<number>
  /** Metadata of the engine's own (e.g. a repaired trailer), between the page figures and the failures. */
  readonly extra?: Readonly<Record<string, unknown>>
}

/**
 * The output of a PDF both engines read the same way: a document without a text layer whose OCR failed is
 * refused; otherwise its pages finished (running headers, captions) and the metadata both engines record.
 */
export const pdfOutput = (read: PdfRead): Effect.Effect<ParseOutput, ParseFailure> => {
  const { pages, ocrPages, ocrFailures, unreadable } = read
  if (ocrFailures.length > 0 && pages.every((p) => p.text === ""))
    return new ParseFailure({
      reason: `the PDF has no text layer and OCR failed: ${ocrFailures[0]!.reason}`,
    })
  const first = pages.find((p) => p.width !== null)
  return Effect.succeed({
    parser: ocrPages.length > 0 ? `${read.engine}+${OCR_PARSER}` : read.engine,
    pages: finishPdfPages(pages),
    metadata: {
      ...read.metadata,
      page_count: read.count,
      ...(first ? { page_width: first.width, page_height: first.height } : {}),
      ocr_pages: ocrPages,
      ...read.extra,
      ...(unreadable.length > 0 ? { unreadable_pages: unreadable } : {}),
      ...(ocrFailures.length > 0 ? { ocr_failures: ocrFailures } : {}),
    },
  })
}
