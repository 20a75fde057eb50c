import type { BackendName } from "@dxs/domain/DocumentType"
import type { Backend } from "./Backend.ts"

/**
 * How each row of the format table (`@dxs/domain/DocumentType`) loads its backend, loading only the one
 * needed: a parse thread that reads a text file need not load pdf.js, exceljs, sharp and tesseract first
 * (≈2 s). Registry.ts loads them all (for tests and tools); a test checks both agree. Parse threads import
 * this module, so it imports nothing from other packages at run time: the runner looks the file name up in
 * the table and sends the thread the backend's name.
 */
export const backendLoaders: { readonly [Name in BackendName]: () => Promise<Backend> } = {
  pdf: () => import("./Pdf.ts").then((m) => m.pdfBackend),
  word: () => import("./Word.ts").then((m) => m.wordBackend),
  excel: () => import("./Excel.ts").then((m) => m.excelBackend),
  powerpoint: () => import("./PowerPoint.ts").then((m) => m.powerPointBackend),
  image: () => import("./Image.ts").then((m) => m.imageBackend),
  text: () => import("./Text.ts").then((m) => m.textBackend),
  html: () => import("./Html.ts").then((m) => m.htmlBackend),
  email: () => import("./Email.ts").then((m) => m.emailBackend),
  "outlook-msg": () => import("./Outlook.ts").then((m) => m.outlookMessageBackend),
  audio: () => import("./Audio.ts").then((m) => m.audioBackend),
}
