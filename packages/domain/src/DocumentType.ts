/**
 * Document type inference from the uploaded file name. An unknown extension yields `undefined`; the API
 * answers 415 Unsupported Media Type for it (DESIGN §4).
 */
import type { DocumentType } from "./Enums.ts"

const extensionsByType: ReadonlyArray<readonly [DocumentType, ReadonlyArray<string>]> = [
  ["PDF", ["pdf"]],
  ["Word Document", ["doc", "docx", "docm", "odt", "rtf"]],
  ["Excel", ["xls", "xlsx", "xlsm", "csv", "ods"]],
  ["PPT", ["ppt", "pptx", "pptm", "odp"]],
  ["Image", ["png", "jpg", "jpeg", "tif", "tiff", "webp", "gif", "bmp"]],
  ["Text", ["txt", "md", "markdown", "json", "xml", "log"]],
  ["Website", ["html", "htm"]],
  ["Email", ["eml", "msg"]],
  ["Audio", ["mp3", "wav", "m4a", "ogg", "flac", "webm", "mp4"]],
]

const typeByExtension: ReadonlyMap<string, DocumentType> = new Map(
  extensionsByType.flatMap(([type, extensions]) => extensions.map((ext) => [ext, type] as const)),
)

/** Every file extension (lower case, without the dot) that maps to a document type. */
export const supportedExtensions: ReadonlyArray<string> = [...typeByExtension.keys()]

/**
 * The lower-cased extension of a file name, without the dot; `undefined` when the name has none. Directory
 * parts (`/` or `\`) are ignored, so `C:\docs\a.PDF` gives `pdf`. A leading dot alone (`.env`) is not an
 * extension.
 */
export const fileExtension = (fileName: string): string | undefined => {
  const baseName = fileName.trim().split(/[\\/]/).pop() ?? ""
  const dot = baseName.lastIndexOf(".")
  if (dot <= 0 || dot === baseName.length - 1) return undefined
  return baseName.slice(dot + 1).toLowerCase()
}

/** The document type of a file name by its extension, case-insensitively; `undefined` when unsupported. */
export const documentTypeFromFileName = (fileName: string): DocumentType | undefined => {
  const ext = fileExtension(fileName)
  return ext === undefined ? undefined : typeByExtension.get(ext)
}
