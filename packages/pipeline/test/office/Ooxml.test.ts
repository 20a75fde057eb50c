import { Document, Packer, Paragraph } from "docx"
import { describe, expect, it } from "vitest"
import { defaultLimits, ParseFailure } from "../../src/parsing/Backend.ts"
import { excelBackend } from "../../src/parsing/Excel.ts"
import { inspectOoxml } from "../../src/parsing/Ooxml.ts"
import { powerPointBackend } from "../../src/parsing/PowerPoint.ts"
import { wordBackend } from "../../src/parsing/Word.ts"
import { runParsing } from "../support.ts"
import { atFixedTime, failureReason, inputOf, makeDocx } from "./fixtures.ts"

/** A Word document whose document.xml is mostly one huge run of one letter: it deflates about 1,000:1. */
const compressibleDocx = (letters: number) =>
  atFixedTime(
    async () =>
      new Uint8Array(
        await Packer.toBuffer(
          new Document({
            sections: [{ children: [new Paragraph("a".repeat(letters)), new Paragraph("end")] }],
          }),
        ),
      ),
  )

describe("the OOXML gate", () => {
  it("stops a file that decompresses beyond the limit before any parser reads it", async () => {
    const bytes = await compressibleDocx(3_000_000)
    expect(bytes.length).toBeLessThan(100_000)
    const limits = { ...defaultLimits, maxDecompressedBytes: 1024 * 1024 }
    for (const [backend, name] of [
      [wordBackend, "bomb.docx"],
      [excelBackend, "bomb.xlsx"],
      [powerPointBackend, "bomb.pptx"],
    ] as const)
      expect(await failureReason(backend, inputOf(name, bytes, { limits }))).toBe(
        `the ${name.slice(4)} file decompresses to more than 1.0 MB, the limit for Office files`,
      )
  })

  it("stops an entry with an absurd compression ratio (a ZIP bomb) within the size limit", async () => {
    const bytes = await compressibleDocx(40_000_000)
    expect(await failureReason(wordBackend, inputOf("bomb.docx", bytes))).toMatch(
      /^the \.docx file looks like a ZIP bomb: its entry "word\/document\.xml" expands \d+ times \(the limit is 500\)$/u,
    )
  })

  it("stops a ZIP that records false sizes", async () => {
    const bytes = Buffer.from(await atFixedTime(makeDocx))
    // Shrink the uncompressed size recorded for word/document.xml in the central directory.
    const name = Buffer.from("word/document.xml")
    let at = bytes.indexOf(Buffer.from([0x50, 0x4b, 0x01, 0x02]))
    while (at >= 0 && !bytes.subarray(at + 46, at + 46 + name.length).equals(name))
      at = bytes.indexOf(Buffer.from([0x50, 0x4b, 0x01, 0x02]), at + 4)
    expect(at).toBeGreaterThan(0)
    bytes.writeUInt32LE(100, at + 24)
    expect(await failureReason(wordBackend, inputOf("lying.docx", new Uint8Array(bytes)))).toBe(
      'not a valid .docx file (its ZIP entry "word/document.xml" does not decompress to its recorded size: damaged, or a ZIP bomb)',
    )
  })

  it("refuses what is not a ZIP, an empty file, a truncated one", async () => {
    const docx = await atFixedTime(makeDocx)
    expect(await failureReason(wordBackend, inputOf("a.docx", new TextEncoder().encode("hello")))).toBe(
      "not a valid .docx file (it is not a ZIP container)",
    )
    expect(await failureReason(excelBackend, inputOf("a.xlsx", new Uint8Array()))).toBe(
      "not a valid .xlsx file (the file is empty)",
    )
    expect(await failureReason(wordBackend, inputOf("a.docx", docx.subarray(0, docx.length - 200)))).toMatch(
      /^not a valid \.docx file \(/u,
    )
  })

  it("tells a password-protected Office file", async () => {
    // An encrypted OOXML file is a compound file with an EncryptedPackage stream (its name in UTF-16).
    const header = Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1])
    const bytes = Buffer.concat([header, Buffer.alloc(504), Buffer.from("EncryptedPackage", "utf16le")])
    expect(await failureReason(excelBackend, inputOf("secret.xlsx", new Uint8Array(bytes)))).toBe(
      "the .xlsx file is password-protected: remove the password and upload it again",
    )
    const legacy = Buffer.concat([header, Buffer.alloc(1024)])
    expect(await failureReason(wordBackend, inputOf("old.docx", new Uint8Array(legacy)))).toBe(
      "not a valid .docx file (it is a legacy binary Office file: save it in the current format, or rename it to .doc)",
    )
  })

  it("answers the kind, main part and the parts asked for", async () => {
    const pkg = await runParsing(
      inspectOoxml(inputOf("a.docx", await atFixedTime(makeDocx)), "word", {
        keep: (name) => name === "word/styles.xml",
      }),
    )
    expect(pkg.kind).toBe("word")
    expect(pkg.mainPart).toBe("word/document.xml")
    expect([...pkg.parts.keys()].sort()).toEqual([
      "[Content_Types].xml",
      "docProps/core.xml",
      "word/styles.xml",
    ])
    await expect(
      runParsing(inspectOoxml(inputOf("a.xlsx", await atFixedTime(makeDocx)), "excel")),
    ).rejects.toBeInstanceOf(ParseFailure)
  })
})
