import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import { backendFor } from "../../src/parsing/Registry.ts"
import { textBackend } from "../../src/parsing/Text.ts"
import { chunkText, pageChars } from "../../src/parsing/TextPages.ts"
import { parseWith } from "../support.ts"
import { expectGolden, expectTextPages, failureReason, input } from "./golden.ts"

const here = new URL("./", import.meta.url)
const utf8 = (text: string) => new TextEncoder().encode(text)
const utf16le = (text: string) => new Uint8Array(Buffer.from(text, "utf16le"))
const utf16be = (text: string) => {
  const bytes = utf16le(text)
  for (let i = 0; i + 1 < bytes.length; i += 2) [bytes[i], bytes[i + 1]] = [bytes[i + 1]!, bytes[i]!]
  return bytes
}
const latin1 = (...parts: Array<string | number>) =>
  new Uint8Array(
    Buffer.concat(parts.map((p) => (typeof p === "number" ? Buffer.from([p]) : Buffer.from(p, "latin1")))),
  )

/** About 9,000 characters of log lines, with terminal colours on some of them. */
const serverLog = (): string =>
  Array.from({ length: 120 }, (_, i) => {
    const time = `2024-03-01T10:${String(Math.floor(i / 60)).padStart(2, "0")}:${String(i % 60).padStart(2, "0")}Z`
    const status = i % 17 === 0 ? "\u001b[31mERROR\u001b[0m" : "INFO"
    return `${time} ${status} GET /api/v1/projects/${1000 + i}/documents served in ${(i * 37) % 250} ms`
  }).join("\r\n")

const sources: ReadonlyArray<readonly [string, Uint8Array]> = [
  [
    "utf8-bom-crlf.txt",
    utf8("\ufeffInvoice INV-2024-001\r\nTotal due: €1,234.56\r\n\r\nThank you — ¡gracias!\r\n"),
  ],
  ["utf16le-bom.txt", utf16le("\ufeffÜnïcödé text, little-endian\nsecond line 日本語 😀\n")],
  ["utf16be-bom.txt", utf16be("\ufeffÜnïcödé text, big-endian\nsecond line 日本語 😀\n")],
  ["utf16le-no-bom.txt", utf16le("Exported by a Windows tool\r\nwithout a byte-order mark\r\n")],
  ["latin1.txt", latin1("Café crème at 25 °C in São Paulo.\nPrice: ", 0x80, "12 (windows-1252 euro sign)\n")],
  [
    "notes.md",
    utf8(
      '# Meeting notes\n\n- Effective date: **1 March 2024**\n- Term: 24 months\n\n```json\n{ "a": 1 }\n```\n',
    ),
  ],
  [
    "data.json",
    utf8(JSON.stringify({ invoice: "INV-7", total: 99.5, currency: "EUR", lines: ["a", "ü"] }, null, 2)),
  ],
  ["config.xml", utf8('<?xml version="1.0"?>\n<config>\n  <name>dxs</name>\n</config>\n')],
  ["server.log", utf8(serverLog())],
]

describe("text backend", () => {
  for (const [name, bytes] of sources) {
    it(`parses ${name} like its golden output`, async () => {
      const output = await parseWith(textBackend, input(name, bytes, { contentType: "text/plain" }))
      expectTextPages(output)
      await expectGolden(here, name, output)
    })
  }

  it("decodes every encoding to the same text, with line ends normalised", async () => {
    const text = "Zürich, 5 °C\nsecond line\n"
    const encodings = [utf8(text), utf8(`\ufeff${text}`), utf16le(`\ufeff${text}`), utf16be(`\ufeff${text}`)]
    for (const bytes of [...encodings, latin1(text.replace(/\n/g, "\r\n"))]) {
      const output = await parseWith(textBackend, input("a.txt", bytes))
      expect(output.pages.map((p) => p.text)).toEqual(["Zürich, 5 °C\nsecond line"])
      expect(output.metadata).toMatchObject({ characters: text.length, lines: 2 })
    }
  })

  it("cuts a long file into pages at line breaks and keeps every line", async () => {
    const log = serverLog().replace(/\r\n/g, "\n")
    const output = await parseWith(textBackend, input("server.log", utf8(log)))
    expect(output.pages.length).toBeGreaterThan(2)
    expect(output.metadata.page_source).toBe(`chunks of ${pageChars} characters`)
    for (const page of output.pages) {
      expect(page.text.length).toBeLessThanOrEqual(pageChars)
      expect(page.text.startsWith("2024-03-01T")).toBe(true)
    }
    expect(output.pages.map((p) => p.text).join("\n")).toBe(log)
  })

  it("is one empty page for an empty file", async () => {
    const output = await parseWith(textBackend, input("empty.txt", new Uint8Array(0)))
    expect(output.pages.map((p) => p.text)).toEqual([""])
    expect(output.metadata).toMatchObject({ characters: 0, lines: 0, page_source: "whole text" })
  })

  it("refuses binary content with a reason", async () => {
    const png = new Uint8Array([
      0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d, 0x49, 0x48, 0x44, 0x52,
    ])
    const random = new Uint8Array(4096).map((_, i) => (i * 7919 + 13) % 256)
    const controls = utf8("ok\u0001\u0002\u0003\u0004\u0005\u0006 text\u0007\u0008\u000e\u000f\u0010")
    for (const bytes of [png, random, controls]) {
      expect(await failureReason(textBackend, input("binary.txt", bytes))).toBe(
        "the file is not text (it looks binary)",
      )
    }
  })

  it("refuses more pages than the limit", async () => {
    const parse = input("server.log", utf8(serverLog()), { limits: { maxPages: 2, maxDecompressedBytes: 1 } })
    expect(await failureReason(textBackend, parse)).toMatch(
      /^the text is too long: \d+ pages .* limit of 2 pages$/,
    )
  })
})

describe("chunkText", () => {
  it("keeps all non-space text, in order, in chunks of at most the size", () => {
    const pieces = fc.oneof(
      fc.constantFrom("\n", "\n\n", " ", "\t", "word", "😀", "é"),
      fc.string({ maxLength: 40 }),
      fc.string({ minLength: 50, maxLength: 120, unit: "grapheme" }),
    )
    fc.assert(
      fc.property(fc.array(pieces, { maxLength: 200 }), fc.integer({ min: 10, max: 300 }), (parts, size) => {
        const text = parts.join("")
        const chunks = chunkText(text, size)
        for (const chunk of chunks) expect(chunk.length).toBeLessThanOrEqual(size)
        expect(chunks.join("").replace(/\s/g, "")).toBe(text.replace(/\s/g, ""))
        if (text.trimEnd().length <= size) expect(chunks).toEqual([text.trimEnd()])
      }),
    )
  })

  it("keeps text that fits once its trailing spaces are dropped in one chunk", () => {
    expect(chunkText(`${"a".repeat(10)}\n${"b"}\t`, 12)).toEqual([`${"a".repeat(10)}\nb`])
  })

  it("prefers a paragraph break, then a line break, in the second half of a chunk", () => {
    expect(chunkText(`${"a".repeat(60)}\n\n${"b".repeat(30)}\n${"c".repeat(30)}`, 100)).toEqual([
      "a".repeat(60),
      `${"b".repeat(30)}\n${"c".repeat(30)}`,
    ])
    expect(chunkText(`${"a".repeat(20)}\n\n${"b".repeat(60)}\n${"c".repeat(60)}`, 100)).toEqual([
      `${"a".repeat(20)}\n\n${"b".repeat(60)}`,
      "c".repeat(60),
    ])
  })
})

describe("registry", () => {
  it("finds the text-like backends by extension, in any case", () => {
    const names = Object.fromEntries(
      [
        "a.TXT",
        "a.md",
        "a.markdown",
        "a.json",
        "a.xml",
        "a.log",
        "a.HTML",
        "a.htm",
        "a.eml",
        "a.msg",
        "a.mp3",
      ].map((f) => [f, backendFor(f)?.name]),
    )
    expect(names).toEqual({
      "a.TXT": "text",
      "a.md": "text",
      "a.markdown": "text",
      "a.json": "text",
      "a.xml": "text",
      "a.log": "text",
      "a.HTML": "html",
      "a.htm": "html",
      "a.eml": "email",
      "a.msg": "outlook-msg",
      "a.mp3": "audio",
    })
  })
})
