/**
 * The format table: every file format dxs reads, in one place. The upload check (an unknown extension is
 * answered 415 Unsupported Media Type, DESIGN §4), the content type a document is stored and served with,
 * the extension given to an attachment that only has a content type, whether pages have images, and which
 * backend a parse thread loads are all derived from these rows.
 *
 * Adding a format = one row here, one backend file in `packages/pipeline/src/parsing` (loaded by the row's
 * `backend` name in `parsing/Formats.ts`), one golden folder of fixtures.
 */
import type { DocumentType } from "./Enums.ts"

/** The backends of `packages/pipeline/src/parsing`, by the name each reports. */
export type BackendName =
  | "pdf"
  | "word"
  | "excel"
  | "powerpoint"
  | "image"
  | "text"
  | "html"
  | "email"
  | "outlook-msg"
  | "audio"

/** Whether the pages of a format can be drawn as images: always, only when LibreOffice is installed, or never. */
export type PageImages = "always" | "with LibreOffice" | "never"

export interface DocumentFormat {
  readonly type: DocumentType
  /** Lower case, without the dot, in the order an unsupported upload lists them. */
  readonly extensions: ReadonlyArray<string>
  /**
   * The MIME type a file of these extensions is stored and served with, and the extensions written with it
   * (the first one names a file that has only this MIME type). An extension under none keeps the client's
   * own claim.
   */
  readonly mime: Readonly<Record<string, ReadonlyArray<string>>>
  /**
   * Other MIME types a file of the format may be claimed with (an e-mail attachment's part header), with
   * the extension each stands for. Never the type a file is stored or served with.
   */
  readonly otherMime?: Readonly<Record<string, string>>
  readonly pageImages: PageImages
  readonly backend: BackendName
}

export const documentFormats: ReadonlyArray<DocumentFormat> = [
  {
    type: "PDF",
    extensions: ["pdf"],
    mime: { "application/pdf": ["pdf"] },
    pageImages: "always",
    backend: "pdf",
  },
  {
    type: "Word Document",
    extensions: ["doc", "docx", "docm", "odt", "rtf"],
    mime: {
      "application/msword": ["doc"],
      "application/vnd.openxmlformats-officedocument.wordprocessingml.document": ["docx"],
      "application/vnd.oasis.opendocument.text": ["odt"],
      "application/rtf": ["rtf"],
    },
    pageImages: "with LibreOffice",
    backend: "word",
  },
  {
    type: "Excel",
    extensions: ["xls", "xlsx", "xlsm", "csv", "ods"],
    mime: {
      "application/vnd.ms-excel": ["xls"],
      "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": ["xlsx"],
      "application/vnd.ms-excel.sheet.macroEnabled.12": ["xlsm"],
      "text/csv": ["csv"],
      "application/vnd.oasis.opendocument.spreadsheet": ["ods"],
    },
    pageImages: "with LibreOffice",
    backend: "excel",
  },
  {
    type: "PPT",
    extensions: ["ppt", "pptx", "pptm", "odp"],
    mime: {
      "application/vnd.ms-powerpoint": ["ppt"],
      "application/vnd.openxmlformats-officedocument.presentationml.presentation": ["pptx"],
      "application/vnd.oasis.opendocument.presentation": ["odp"],
    },
    pageImages: "with LibreOffice",
    backend: "powerpoint",
  },
  {
    type: "Image",
    extensions: ["png", "jpg", "jpeg", "tif", "tiff", "webp", "gif", "bmp"],
    mime: {
      "image/png": ["png"],
      "image/jpeg": ["jpg", "jpeg"],
      "image/tiff": ["tiff", "tif"],
      "image/webp": ["webp"],
      "image/gif": ["gif"],
      "image/bmp": ["bmp"],
    },
    pageImages: "always",
    backend: "image",
  },
  {
    type: "Text",
    extensions: ["txt", "md", "markdown", "json", "xml", "log"],
    mime: {
      "text/plain": ["txt"],
      "text/markdown": ["md", "markdown"],
      "application/json": ["json"],
      "application/xml": ["xml"],
    },
    otherMime: { "text/xml": "xml", "text/rfc822-headers": "txt" },
    pageImages: "never",
    backend: "text",
  },
  {
    type: "Website",
    extensions: ["html", "htm"],
    mime: { "text/html": ["html", "htm"] },
    pageImages: "never",
    backend: "html",
  },
  {
    type: "Email",
    extensions: ["eml"],
    mime: { "message/rfc822": ["eml"] },
    otherMime: { "message/global": "eml" },
    pageImages: "never",
    backend: "email",
  },
  {
    type: "Email",
    extensions: ["msg"],
    mime: { "application/vnd.ms-outlook": ["msg"] },
    pageImages: "never",
    backend: "outlook-msg",
  },
  {
    type: "Audio",
    extensions: ["mp3", "wav", "m4a", "ogg", "flac", "webm", "mp4"],
    mime: {
      "audio/mpeg": ["mp3"],
      "audio/wav": ["wav"],
      "audio/mp4": ["m4a"],
      "audio/ogg": ["ogg"],
      "audio/flac": ["flac"],
      "audio/webm": ["webm"],
      "video/mp4": ["mp4"],
    },
    pageImages: "never",
    backend: "audio",
  },
]

/**
 * Formats dxs does not read, by MIME type, with their extension: an e-mail attachment of one of them keeps
 * its own extension (and is then refused as unsupported) instead of being named as text or binary.
 */
export const unreadFormats: Readonly<Record<string, string>> = {
  "text/calendar": "ics",
  "application/zip": "zip",
}

const formatByExtension: ReadonlyMap<string, DocumentFormat> = new Map(
  documentFormats.flatMap((format) => format.extensions.map((ext) => [ext, format] as const)),
)

const mimeTypeByExtension: ReadonlyMap<string, string> = new Map(
  documentFormats.flatMap((format) =>
    Object.entries(format.mime).flatMap(([mime, extensions]) =>
      extensions.map((ext) => [ext, mime] as const),
    ),
  ),
)

// Keyed in lower case, as MIME types compare case-insensitively (xlsm's is written with capitals).
const extensionByMimeType: ReadonlyMap<string, string> = new Map(
  documentFormats
    .flatMap((format) =>
      Object.entries(format.mime).flatMap(([mime, [first]]) =>
        first === undefined ? [] : [[mime.toLowerCase(), first] as const],
      ),
    )
    .concat(
      documentFormats.flatMap((format) =>
        Object.entries(format.otherMime ?? {}).map(([mime, ext]) => [mime.toLowerCase(), ext] as const),
      ),
    ),
)

/** Every file extension (lower case, without the dot) that maps to a document type. */
export const supportedExtensions: ReadonlyArray<string> = [...formatByExtension.keys()]

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

/** The format of a file name by its extension, case-insensitively; `undefined` when unsupported. */
export const formatOfFileName = (fileName: string): DocumentFormat | undefined => {
  const ext = fileExtension(fileName)
  return ext === undefined ? undefined : formatByExtension.get(ext)
}

/** The document type of a file name by its extension, case-insensitively; `undefined` when unsupported. */
export const documentTypeFromFileName = (fileName: string): DocumentType | undefined =>
  formatOfFileName(fileName)?.type

/** The MIME type the file name's extension stands for; `undefined` when the table names none. */
export const mimeTypeOfFileName = (fileName: string): string | undefined => {
  const ext = fileExtension(fileName)
  return ext === undefined ? undefined : mimeTypeByExtension.get(ext)
}

/**
 * The extension (without the dot) of a content type such as `text/html; charset=utf-8`, when a format dxs
 * reads is known by it (as the type it stores, or another it is claimed with).
 */
export const extensionOfMimeType = (contentType: string): string | undefined =>
  extensionByMimeType.get(contentType.split(";")[0]!.trim().toLowerCase())

/** Whether the pages of a document type have images; `never` for a type the table does not know. */
export const pageImagesOf = (type: string): PageImages =>
  documentFormats.find((format) => format.type === type)?.pageImages ?? "never"

/**
 * The parser name of pages read by OCR in a document's parse metadata: an image's, and after a PDF's
 * engine and `+` when pages had no text layer. `readByOcr` reads it.
 */
export const OCR_PARSER = "tesseract.js"

/**
 * Whether a page of a document was read by OCR, by its parse metadata (as the parse stage writes it): every
 * page of an image (parser `OCR_PARSER`), the `ocr_pages` of a PDF whose pages had no text layer.
 */
export const readByOcr = (metadata: string, page: number | null): boolean => {
  let parsed: unknown
  try {
    parsed = JSON.parse(metadata)
  } catch {
    return false
  }
  if (typeof parsed !== "object" || parsed === null) return false
  const { parser, ocr_pages } = parsed as { parser?: unknown; ocr_pages?: unknown }
  if (parser === OCR_PARSER) return true
  return page !== null && Array.isArray(ocr_pages) && ocr_pages.includes(page)
}
