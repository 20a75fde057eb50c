/**
 * Web pages (.html, .htm): the readable text (scripts, styles and other non-content dropped; headings,
 * paragraphs, lists and table rows as lines), with the title and description in the metadata. Long
 * text is cut into pages as for plain text.
 */
import { createRequire } from "node:module"
import { Effect } from "effect"
import { type Backend, ParseFailure } from "./Backend.ts"
import {
  collectStructure,
  type DomNode,
  type Formatter,
  headingFormatter,
  tableFormatter,
} from "./HtmlTables.ts"
import {
  chunkText,
  countCharacters,
  decodeText,
  looksBinary,
  normaliseLineEnds,
  pageSource,
  textPages,
} from "./TextPages.ts"
import { placeStructure, type TextStructure } from "./TextStructure.ts"

// html-to-text 10 ships no type declarations; its formatter API is typed in HtmlTables.ts.
type Convert = (html: string, options: object) => string

/**
 * html-to-text comes with mailparser; it is declared in package.json, and until `pnpm install` links it
 * for this package it is taken from mailparser's own dependencies (the same version).
 */
const loadConvert = (): Convert => {
  const require = createRequire(import.meta.url)
  try {
    return require("html-to-text").convert
  } catch {
    return createRequire(require.resolve("mailparser"))("html-to-text").convert
  }
}

let convert: Convert | undefined

/** A layout table's cell: the cells of a row go on one line, separated by " | ". */
const cell: Formatter = (element, walk, builder) => {
  let previous: DomNode | null | undefined = element.prev
  while (previous && previous.type !== "tag") previous = previous.prev
  if (previous) builder.addInline(" | ")
  walk(element.children, builder)
}

/** An image stands for its alternative text, never its address. */
const altText: Formatter = (element, _walk, builder) => {
  const alt = element.attribs?.alt?.trim()
  if (alt) builder.addInline(alt)
}

const heading = (selector: string) => ({ selector, format: "heading" })
const skip = (selector: string) => ({ selector, format: "skip" })

const options = {
  wordwrap: false,
  // Input beyond html-to-text's default 16 MiB would be cut silently; the worker's limits bound it instead.
  limits: { maxInputLength: Number.MAX_SAFE_INTEGER, maxDepth: 400 },
  formatters: { cell, altText, table: tableFormatter, heading: headingFormatter },
  selectors: [
    { selector: "a", options: { ignoreHref: true } },
    { selector: "img", format: "altText" },
    ...["h1", "h2", "h3", "h4", "h5", "h6"].map(heading),
    ...["noscript", "template", "svg", "canvas", "iframe", "object", "button", "select", "hr"].map(skip),
    { selector: "table", format: "table" },
    { selector: "tr", format: "block", options: { leadingLineBreaks: 1, trailingLineBreaks: 1 } },
    { selector: "caption", format: "block", options: { leadingLineBreaks: 1, trailingLineBreaks: 1 } },
    { selector: "td", format: "cell" },
    { selector: "th", format: "cell" },
  ],
}

/** The readable text of an HTML document or fragment, paragraphs separated by a blank line. */
export const htmlToText = (html: string): string => htmlToStructuredText(html).text

/**
 * The readable text of an HTML document or fragment and its structure: its data tables (written in the
 * text one line per row) and headings. Place them on pages with `placeStructure`.
 */
export const htmlToStructuredText = (
  html: string,
): { readonly text: string; readonly structure: TextStructure } => {
  convert ??= loadConvert()
  const run = convert
  const { result, structure } = collectStructure(() => run(html, options))
  const text = normaliseLineEnds(result)
    .split("\n")
    .map((line) => line.trimEnd())
    .join("\n")
    .replace(/\n{3,}/g, "\n\n")
    .trim()
  return { text, structure }
}

/** Text with entities decoded and white space collapsed, for attribute values and the title. */
const plain = (html: string): string => htmlToText(html.replace(/</g, "&lt;")).replace(/\s+/g, " ").trim()

const attributes = (tag: string): Map<string, string> => {
  const found = new Map<string, string>()
  for (const m of tag.matchAll(/([^\s"'<>/=]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+)))?/g)) {
    const name = m[1]!.toLowerCase()
    if (!found.has(name)) found.set(name, m[2] ?? m[3] ?? m[4] ?? "")
  }
  return found
}

/** The document head: everything before <body>, where title and meta elements are. */
const headOf = (html: string): string => {
  const body = html.search(/<body[\s>]/i)
  return body === -1 ? html.slice(0, 65536) : html.slice(0, body)
}

const metaTags = (head: string): Array<Map<string, string>> =>
  [...head.matchAll(/<meta\b([^>]*)>/gi)].map((m) => attributes(m[1]!))

const charsetOf = (contentType: string | undefined): string | undefined =>
  contentType?.match(/charset\s*=\s*["']?([\w.:-]+)/i)?.[1]

/** The charset a page declares: the upload's Content-Type first, then a meta element near the start. */
export const declaredCharset = (bytes: Uint8Array, contentType: string): string | undefined => {
  const fromType = charsetOf(contentType)
  if (fromType) return fromType
  const start = Buffer.from(bytes.subarray(0, 4096)).toString("latin1")
  for (const meta of metaTags(start)) {
    const charset = meta.get("charset") ?? charsetOf(meta.get("content"))
    if (charset) return charset
  }
  return undefined
}

interface PageInfo {
  readonly title?: string
  readonly description?: string
  readonly language?: string
}

const pageInfo = (html: string): PageInfo => {
  const head = headOf(html)
  const title = head.match(/<title\b[^>]*>([\s\S]*?)<\/title>/i)?.[1]
  const metas = metaTags(head)
  const metaContent = (key: string, value: string) =>
    metas.find((m) => m.get(key)?.toLowerCase() === value)?.get("content")
  const description =
    metaContent("name", "description") ??
    metaContent("property", "og:description") ??
    metaContent("name", "twitter:description")
  const language = html.match(/<html\b([^>]*)>/i)?.[1]
  const info = {
    title: title === undefined ? undefined : plain(title),
    description: description === undefined ? undefined : plain(description),
    language: language === undefined ? undefined : attributes(language).get("lang")?.trim(),
  }
  return Object.fromEntries(Object.entries(info).filter(([, v]) => v !== undefined && v !== "")) as PageInfo
}

export const htmlBackend: Backend = {
  name: "html",
  parse: ({ bytes, contentType, limits }) =>
    Effect.gen(function* () {
      const decoded = decodeText(bytes, declaredCharset(bytes, contentType))
      if (looksBinary(decoded.text))
        return yield* new ParseFailure({ reason: "the file is not an HTML page (it looks binary)" })
      const info = pageInfo(decoded.text)
      const { text, structure } = htmlToStructuredText(decoded.text)
      const pages = placeStructure(yield* textPages(chunkText(text), limits), structure)
      return {
        parser: "html-to-text",
        pages,
        metadata: {
          ...info,
          encoding: decoded.encoding,
          characters: countCharacters(text),
          page_source: pageSource(pages.length),
        },
      }
    }),
}
