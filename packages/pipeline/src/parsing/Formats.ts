import type { Backend } from "./Backend.ts"

/**
 * Which backend reads which extension, loading only the backend needed: a parse thread that reads a
 * text file need not load pdf.js, exceljs, sharp and tesseract first (≈2 s). Registry.ts loads them all
 * (for tests and tools); a test checks both agree.
 */
interface Format {
  readonly extensions: ReadonlyArray<string>
  readonly load: () => Promise<Backend>
}

export const formats: ReadonlyArray<Format> = [
  {
    extensions: [".txt", ".md", ".markdown", ".json", ".xml", ".log"],
    load: () => import("./Text.ts").then((m) => m.textBackend),
  },
  { extensions: [".html", ".htm"], load: () => import("./Html.ts").then((m) => m.htmlBackend) },
  { extensions: [".eml"], load: () => import("./Email.ts").then((m) => m.emailBackend) },
  { extensions: [".msg"], load: () => import("./Outlook.ts").then((m) => m.outlookMessageBackend) },
  {
    extensions: [".mp3", ".wav", ".m4a", ".ogg", ".flac", ".webm", ".mp4"],
    load: () => import("./Audio.ts").then((m) => m.audioBackend),
  },
  {
    extensions: [".docx", ".docm", ".doc", ".odt", ".rtf"],
    load: () => import("./Word.ts").then((m) => m.wordBackend),
  },
  {
    extensions: [".pptx", ".pptm", ".ppt", ".odp"],
    load: () => import("./PowerPoint.ts").then((m) => m.powerPointBackend),
  },
  {
    extensions: [".xlsx", ".xlsm", ".csv", ".xls", ".ods"],
    load: () => import("./Excel.ts").then((m) => m.excelBackend),
  },
  {
    extensions: [".png", ".jpg", ".jpeg", ".tif", ".tiff", ".webp", ".gif", ".bmp"],
    load: () => import("./Image.ts").then((m) => m.imageBackend),
  },
  { extensions: [".pdf"], load: () => import("./Pdf.ts").then((m) => m.pdfBackend) },
]

export const extensionOf = (fileName: string): string => {
  const dot = fileName.lastIndexOf(".")
  return dot > 0 ? fileName.slice(dot).toLowerCase() : ""
}

/** Loads the backend for a file name, or undefined when no backend reads its extension. */
export const loadBackendFor = (fileName: string): Promise<Backend | undefined> => {
  const ext = extensionOf(fileName)
  const format = formats.find((f) => f.extensions.includes(ext))
  return format ? format.load() : Promise.resolve(undefined)
}
