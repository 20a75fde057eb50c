import { describe, expect, it } from "vitest"
import { documentTypeFromFileName, fileExtension, supportedExtensions } from "./DocumentType.ts"

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
