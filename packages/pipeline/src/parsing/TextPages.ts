/**
 * Shared by the backends of formats without pages (text, HTML, e-mail, transcripts): decoding bytes to
 * text, telling text from binary, and cutting long text into pages so that a citation points to a few
 * thousand characters rather than to the whole file.
 */
import { TextDecoder } from "node:util"
import { Either } from "effect"
import { type ParsedPage, ParseFailure, type ParseLimits } from "./Backend.ts"

/** Long text is cut into pages of at most this many characters. */
export const pageChars = 3000

export interface DecodedText {
  readonly text: string
  /** WHATWG encoding name: "utf-8", "utf-16le", "utf-16be", "windows-1252", or a declared charset. */
  readonly encoding: string
  readonly bom: boolean
}

const decoderFor = (label: string, fatal = false): TextDecoder | undefined => {
  try {
    return new TextDecoder(label, { fatal })
  } catch {
    return undefined
  }
}

// windows-1252 bytes 0x80–0x9F (the rest is latin1); 0x81, 0x8D, 0x8F, 0x90, 0x9D stay as they are.
const windows1252High =
  "\u20ac\u0081\u201a\u0192\u201e\u2026\u2020\u2021\u02c6\u2030\u0160\u2039\u0152\u008d\u017d\u008f" +
  "\u0090\u2018\u2019\u201c\u201d\u2022\u2013\u2014\u02dc\u2122\u0161\u203a\u0153\u009d\u017e\u0178"

/** Node 20's TextDecoder decodes "windows-1252" as latin1 (0x80 is U+0080, not €), so it is done here. */
const decodeWindows1252 = (bytes: Uint8Array): string =>
  Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
    .toString("latin1")
    .replace(/[\u0080-\u009f]/g, (c) => windows1252High[c.charCodeAt(0) - 0x80]!)

const decode = (bytes: Uint8Array, label: string): string =>
  label === "windows-1252" ? decodeWindows1252(bytes) : decoderFor(label)!.decode(bytes)

const swapBytes = (bytes: Uint8Array): Uint8Array => {
  const out = new Uint8Array(bytes.length - (bytes.length % 2))
  for (let i = 0; i + 1 < bytes.length; i += 2) {
    out[i] = bytes[i + 1]!
    out[i + 1] = bytes[i]!
  }
  return out
}

/** UTF-16 without a byte-order mark: one of the two byte columns of ASCII-heavy text is nearly all zero. */
const utf16WithoutBom = (bytes: Uint8Array): "utf-16le" | "utf-16be" | undefined => {
  const sample = Math.min(bytes.length, 4096) & ~1
  if (sample < 4) return undefined
  let evenZeros = 0
  let oddZeros = 0
  for (let i = 0; i < sample; i += 2) {
    if (bytes[i] === 0) evenZeros++
    if (bytes[i + 1] === 0) oddZeros++
  }
  const pairs = sample / 2
  if (oddZeros > pairs * 0.6 && evenZeros < pairs * 0.05) return "utf-16le"
  if (evenZeros > pairs * 0.6 && oddZeros < pairs * 0.05) return "utf-16be"
  return undefined
}

/**
 * Bytes to text: a byte-order mark decides (UTF-8, UTF-16 LE/BE); else UTF-16 recognised by its zero
 * bytes; else a `declared` charset (HTML meta) when the platform knows it; else UTF-8 when the bytes are
 * valid UTF-8; else windows-1252, the superset of latin1 that files called "latin1" are written in.
 */
export const decodeText = (bytes: Uint8Array, declared?: string): DecodedText => {
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) {
    return { text: decode(bytes.subarray(3), "utf-8"), encoding: "utf-8", bom: true }
  }
  if (bytes[0] === 0xff && bytes[1] === 0xfe) {
    return { text: decode(bytes.subarray(2), "utf-16le"), encoding: "utf-16le", bom: true }
  }
  if (bytes[0] === 0xfe && bytes[1] === 0xff) {
    return { text: decode(swapBytes(bytes.subarray(2)), "utf-16le"), encoding: "utf-16be", bom: true }
  }
  const utf16 = utf16WithoutBom(bytes)
  if (utf16 === "utf-16le") return { text: decode(bytes, "utf-16le"), encoding: utf16, bom: false }
  if (utf16 === "utf-16be") return { text: decode(swapBytes(bytes), "utf-16le"), encoding: utf16, bom: false }
  const declaredDecoder = declared === undefined ? undefined : decoderFor(declared)
  // A declared UTF-8 that is not valid UTF-8 is a wrong declaration: fall through to the checks below.
  if (declaredDecoder !== undefined && declaredDecoder.encoding !== "utf-8") {
    return { text: decode(bytes, declaredDecoder.encoding), encoding: declaredDecoder.encoding, bom: false }
  }
  try {
    return { text: decoderFor("utf-8", true)!.decode(bytes), encoding: "utf-8", bom: false }
  } catch {
    return { text: decode(bytes, "windows-1252"), encoding: "windows-1252", bom: false }
  }
}

/** CR LF and lone CR become LF. */
export const normaliseLineEnds = (text: string): string => text.replace(/\r\n?/g, "\n")

/** Tab, line feed, vertical tab, form feed, carriage return, and escape (terminal colours in logs). */
const allowedControls = new Set([0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x1b])

/**
 * Whether decoded text is really binary: a NUL, or more than 1% control characters other than tab, line
 * ends, form feed and escape (terminal colours in logs), in the first 64 KiB characters.
 */
export const looksBinary = (text: string): boolean => {
  const sample = text.length > 65536 ? text.slice(0, 65536) : text
  if (sample.includes("\u0000")) return true
  let controls = 0
  for (let i = 0; i < sample.length; i++) {
    const c = sample.charCodeAt(i)
    if ((c < 0x20 && !allowedControls.has(c)) || c === 0x7f) controls++
  }
  return controls > Math.max(1, sample.length * 0.01)
}

/** Unicode code points, not UTF-16 units. */
export const countCharacters = (text: string): number => {
  let surrogates = 0
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c >= 0xdc00 && c <= 0xdfff) surrogates++
  }
  return text.length - surrogates
}

export const countLines = (text: string): number => {
  if (text === "") return 0
  let lines = 1
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) lines++
  return text.endsWith("\n") ? lines - 1 : lines
}

/** Where, at or before `size`, to cut `window` (a slice of the remaining text longer than `size`). */
const cutPosition = (window: string, size: number): number => {
  const floor = Math.floor(size / 2)
  const paragraph = window.lastIndexOf("\n\n", size)
  if (paragraph >= floor) return paragraph + 2
  const line = window.lastIndexOf("\n", size)
  if (line >= floor) return line + 1
  const space = Math.max(window.lastIndexOf(" ", size), window.lastIndexOf("\t", size))
  if (space >= floor) return space + 1
  // No break in sight: cut hard, but never between the two halves of a surrogate pair.
  const c = window.charCodeAt(size)
  return c >= 0xdc00 && c <= 0xdfff ? size - 1 : size
}

/**
 * Cuts text into chunks of at most `size` characters, at a paragraph break when there is one in the second
 * half of the chunk, else at a line break, else at a space, else anywhere. Line breaks at the cuts are
 * dropped; the text in between is kept as it is. Text of at most `size` characters is one chunk.
 */
export const chunkText = (whole: string, size: number = pageChars): Array<string> => {
  // Trailing spaces never make a chunk of their own, nor push what fits into two.
  const text = whole.trimEnd()
  const chunks: Array<string> = []
  let start = 0
  while (text.length - start > size) {
    const window = text.slice(start, start + size + 2)
    const cut = cutPosition(window, size)
    const chunk = window.slice(0, cut).trimEnd()
    if (chunk !== "") chunks.push(chunk)
    start += cut
    while (text[start] === "\n") start++
  }
  const rest = text.slice(start).trimEnd()
  if (rest !== "" || chunks.length === 0) chunks.push(rest)
  return chunks
}

/** Postgres text cannot hold NUL. */
const storable = (text: string): string => (text.includes("\u0000") ? text.replaceAll("\u0000", "") : text)

/** Page records for text without coordinates. More than `limits.maxPages` → ParseFailure. */
export const textPages = (
  chunks: ReadonlyArray<string>,
  limits: ParseLimits,
): Either.Either<Array<ParsedPage>, ParseFailure> =>
  chunks.length > limits.maxPages
    ? Either.left(
        new ParseFailure({
          reason: `the text is too long: ${chunks.length} pages of up to ${pageChars} characters, more than the limit of ${limits.maxPages} pages`,
        }),
      )
    : Either.right(
        chunks.map((text, i) => ({
          number: i + 1,
          text: storable(text),
          width: null,
          height: null,
          unit: null,
          layout: [],
        })),
      )

/** What `metadata.page_source` says about pages made by `chunkText`. */
export const pageSource = (pageCount: number): string =>
  pageCount > 1 ? `chunks of ${pageChars} characters` : "whole text"
