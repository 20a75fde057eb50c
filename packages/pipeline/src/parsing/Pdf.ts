import { Effect } from "effect"
import { pdfEngineSetting } from "../Config.ts"
import type { Backend, ParseInput, PdfEngine } from "./Backend.ts"
import { pdfiumEngine } from "./Pdfium.ts"
import { pdfjsEngine } from "./PdfJs.ts"

/**
 * The PDF backend: PDFium (faster, and it reads damaged files pdf.js refuses) with pdf.js as the fallback
 * for the files PDFium cannot open or read, or pdf.js alone with PDF_ENGINE=pdfjs. Both give the same
 * output shape: text rebuilt line by line from positioned runs, a layout in top-left points, OCR for pages
 * without a text layer; `parser` says which engine read the file.
 */

/**
 * The engine of a parse: the input's own choice (tests), else PDF_ENGINE. The `dxs` configuration validates
 * PDF_ENGINE at start; a parsing thread inherits the process environment, so the value is read at each
 * parse, in the thread where it runs.
 */
export const pdfEngineOf = (input: ParseInput): PdfEngine => input.tools.pdfEngine ?? pdfEngineSetting()

const parse: Backend["parse"] = (input) =>
  pdfEngineOf(input) === "pdfjs"
    ? pdfjsEngine.parse(input)
    : pdfiumEngine.parse(input).pipe(Effect.catchTag("PdfiumRefused", () => pdfjsEngine.parse(input)))

const renderPage: NonNullable<Backend["renderPage"]> = (input, pageNumber) =>
  pdfEngineOf(input) === "pdfjs"
    ? pdfjsEngine.renderPage(input, pageNumber)
    : pdfiumEngine
        .renderPage(input, pageNumber)
        .pipe(Effect.catchTag("PdfiumRefused", () => pdfjsEngine.renderPage(input, pageNumber)))

export const pdfBackend: Backend = { name: "pdf", parse, renderPage }
