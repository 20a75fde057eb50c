import { describe, expect, it } from "vitest"
import {
  documentFormats,
  documentTypeFromFileName,
  extensionOfMimeType,
  fileExtension,
  formatOfFileName,
  mimeTypeOfFileName,
  pageImagesOf,
  readByOcr,
  supportedExtensions,
  unreadFormats,
} from "./DocumentType.ts"
import { DocumentTypes } from "./Enums.ts"

describe("documentTypeFromFileName", () => {
  it.each([
    ["report.pdf", "PDF"],
    ["REPORT.PDF", "PDF"],
    ["contract.docx", "Word Document"],
    ["macro.docm", "Word Document"],
    ["deck.pptm", "PPT"],
    ["server.log", "Text"],
    ["old.doc", "Word Document"],
    ["letter.odt", "Word Document"],
    ["memo.rtf", "Word Document"],
    ["sheet.xlsx", "Excel"],
    ["macro.XLSM", "Excel"],
    ["data.csv", "Excel"],
    ["calc.ods", "Excel"],
    ["legacy.xls", "Excel"],
    ["deck.pptx", "PPT"],
    ["deck.ppt", "PPT"],
    ["slides.odp", "PPT"],
    ["scan.png", "Image"],
    ["photo.JPEG", "Image"],
    ["photo.jpg", "Image"],
    ["fax.tif", "Image"],
    ["fax.tiff", "Image"],
    ["pic.webp", "Image"],
    ["anim.gif", "Image"],
    ["bitmap.bmp", "Image"],
    ["notes.txt", "Text"],
    ["README.md", "Text"],
    ["doc.markdown", "Text"],
    ["payload.json", "Text"],
    ["feed.xml", "Text"],
    ["page.html", "Website"],
    ["page.HTM", "Website"],
    ["mail.eml", "Email"],
    ["outlook.msg", "Email"],
    ["call.mp3", "Audio"],
    ["call.wav", "Audio"],
    ["voice.m4a", "Audio"],
    ["voice.ogg", "Audio"],
    ["voice.flac", "Audio"],
    ["meeting.webm", "Audio"],
    ["meeting.mp4", "Audio"],
    ["archive.tar.pdf", "PDF"],
    ["C:\\Users\\me\\invoice.Pdf", "PDF"],
    ["uploads/2024/report.pdf", "PDF"],
    ["  spaced.pdf  ", "PDF"],
    ["report.pdf.exe", undefined],
    ["archive.zip", undefined],
    ["noextension", undefined],
    ["trailingdot.", undefined],
    [".pdf", undefined],
    ["dir.pdf/file", undefined],
    ["", undefined],
  ] as const)("%j -> %s", (name, expected) => {
    expect(documentTypeFromFileName(name)).toBe(expected)
  })

  it("lists every supported extension once, in lower case", () => {
    expect(new Set(supportedExtensions).size).toBe(supportedExtensions.length)
    expect(supportedExtensions.length).toBe(40)
    for (const ext of supportedExtensions) {
      expect(ext).toBe(ext.toLowerCase())
      expect(documentTypeFromFileName(`file.${ext.toUpperCase()}`)).toBeDefined()
    }
  })

  it.each([
    ["a.B", "b"],
    ["a", undefined],
    ["x/y.tar.GZ", "gz"],
  ] as const)("fileExtension(%j) = %j", (name, ext) => {
    expect(fileExtension(name)).toBe(ext)
  })
})

describe("the format table", () => {
  const mimeEntries = documentFormats.flatMap((f) =>
    Object.entries(f.mime).map(([mime, extensions]) => ({ format: f, mime, extensions })),
  )

  it("maps every extension to one format, and every format has a backend of its own", () => {
    const extensions = documentFormats.flatMap((f) => f.extensions)
    expect(new Set(extensions).size).toBe(extensions.length)
    expect(extensions).toEqual(supportedExtensions)
    const backends = documentFormats.map((f) => f.backend)
    expect(new Set(backends).size).toBe(backends.length)
    for (const format of documentFormats)
      for (const ext of format.extensions) expect(formatOfFileName(`a.${ext}`)).toBe(format)
  })

  it("gives every document type a format, a MIME type and one page-image rule", () => {
    for (const type of DocumentTypes) {
      const formats = documentFormats.filter((f) => f.type === type)
      expect(formats.length, type).toBeGreaterThan(0)
      expect(new Set(formats.map((f) => f.pageImages)).size, type).toBe(1)
      expect(pageImagesOf(type)).toBe(formats[0]!.pageImages)
      expect(
        formats.some((f) => Object.keys(f.mime).length > 0),
        type,
      ).toBe(true)
    }
    expect(pageImagesOf("Unknown")).toBe("never")
  })

  it("writes each MIME type with extensions of its own format, and each extension with at most one", () => {
    const written = mimeEntries.flatMap((e) => e.extensions)
    expect(new Set(written).size).toBe(written.length)
    expect(new Set(mimeEntries.map((e) => e.mime)).size).toBe(mimeEntries.length)
    for (const { format, mime, extensions } of mimeEntries) {
      expect(extensions.length, mime).toBeGreaterThan(0)
      for (const ext of extensions) {
        expect(format.extensions, mime).toContain(ext)
        expect(mimeTypeOfFileName(`file.${ext.toUpperCase()}`)).toBe(mime)
      }
    }
  })

  it("agrees in both directions: the extension of a MIME type stands for that MIME type", () => {
    for (const { mime, extensions } of mimeEntries) {
      expect(extensionOfMimeType(mime)).toBe(extensions[0])
      expect(mimeTypeOfFileName(`x.${extensionOfMimeType(mime)}`)).toBe(mime)
    }
    expect(extensionOfMimeType(" Text/HTML; charset=utf-8")).toBe("html")
    expect(extensionOfMimeType("image/tiff")).toBe("tiff")
    expect(extensionOfMimeType("image/jpeg")).toBe("jpg")
    expect(extensionOfMimeType("application/zip")).toBeUndefined()
    expect(mimeTypeOfFileName("server.log")).toBeUndefined()
    expect(mimeTypeOfFileName("noextension")).toBeUndefined()
  })

  it("knows the other MIME types a format is claimed with, never storing a file with one", () => {
    for (const format of documentFormats)
      for (const [mime, ext] of Object.entries(format.otherMime ?? {})) {
        expect(format.extensions, mime).toContain(ext)
        expect(extensionOfMimeType(mime)).toBe(ext)
        expect(mimeTypeOfFileName(`x.${ext}`)).not.toBe(mime)
      }
    expect(extensionOfMimeType("message/global")).toBe("eml")
    expect(extensionOfMimeType("Text/XML")).toBe("xml")
  })

  it("names formats it does not read by extensions it does not accept", () => {
    for (const [mime, ext] of Object.entries(unreadFormats)) {
      expect(supportedExtensions, mime).not.toContain(ext)
      expect(extensionOfMimeType(mime)).toBeUndefined()
    }
  })
})

describe("readByOcr", () => {
  it("reads every page of an image, and a PDF's pages without a text layer, as read by OCR", () => {
    expect(readByOcr(JSON.stringify({ format: "jpeg", parser: "tesseract.js" }), 1)).toBe(true)
    const scanned = JSON.stringify({ parser: "pdfium+tesseract.js", ocr_pages: [2, 3] })
    expect(readByOcr(scanned, 2)).toBe(true)
    expect(readByOcr(scanned, 1)).toBe(false)
    expect(readByOcr(scanned, null)).toBe(false)
    expect(readByOcr(JSON.stringify({ parser: "pdfium", ocr_pages: [] }), 1)).toBe(false)
    expect(readByOcr("", 1)).toBe(false)
    expect(readByOcr("null", 1)).toBe(false)
  })
})
