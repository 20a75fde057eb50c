import type { PdfEngine } from "./parsing/Backend.ts"

/**
 * The pipeline's reads of the environment, the only ones in this package. Each is read when it is used,
 * not at import: parsing threads inherit the process environment, and the `dxs` configuration validates
 * PDF_ENGINE when the service starts.
 */

/** PDF_ENGINE=pdfjs: pdf.js alone; otherwise PDFium first. */
export const pdfEngineSetting = (): PdfEngine =>
  process.env.PDF_ENGINE?.trim().toLowerCase() === "pdfjs" ? "pdfjs" : "pdfium"

/** The PATH the process was started with (where LibreOffice is looked for). */
export const executableSearchPath = (): string => process.env.PATH ?? ""
