/**
 * What the e-mail backends (.eml, .msg) share: one layout of pages and metadata, so that a message reads
 * the same whichever way it was saved, and one way of naming the attachments that become documents.
 * Page 1 is a header block (From, To, Cc, Date, Subject, Attachments) followed by the body; a long body
 * continues on further pages.
 */
import { extensionOfMimeType, mimeTypeOfFileName, unreadFormats } from "@dxs/domain/DocumentType"
import { Either } from "effect"
import type { ExtractedAttachment, ParsedPage, ParseFailure, ParseLimits, ParseOutput } from "./Backend.ts"
import { chunkText, pageChars, pageSource, textPages } from "./TextPages.ts"
import { noStructure, placeStructure, type TextStructure } from "./TextStructure.ts"

export const extensionOf = (name: string): string => {
  const dot = name.lastIndexOf(".")
  return dot > 0 ? name.slice(dot).toLowerCase() : ""
}

/**
 * The content type an extension stands for, when an attachment says none: the format table's, or that of
 * a format dxs does not read.
 */
export const typeOfExtension = (name: string): string | undefined => {
  const ext = extensionOf(name)
  if (ext === "") return undefined
  return mimeTypeOfFileName(name) ?? Object.entries(unreadFormats).find(([, e]) => `.${e}` === ext)?.[0]
}

/** The extension (with its dot) a content type stands for, as `typeOfExtension` reads them. */
const extensionOfType = (type: string): string | undefined => {
  const ext = extensionOfMimeType(type) ?? unreadFormats[type]
  return ext === undefined ? undefined : `.${ext}`
}

/**
 * A safe file name for an attachment: no directories or control characters; an extension from the content
 * type when the name has none; `attachment-<n><ext>` when the message gives no name. An attached message
 * always ends in `messageExtension` (.eml or .msg), so that it is parsed as e-mail.
 */
export const attachmentName = (
  given: string | undefined,
  contentType: string,
  position: number,
  messageExtension?: ".eml" | ".msg",
): string => {
  const type = contentType.toLowerCase()
  const typeExtension =
    messageExtension ?? extensionOfType(type) ?? (/^(text|message)\//.test(type) ? ".txt" : ".bin")
  const name = (given ?? "")
    .split(/[\\/]/)
    .pop()!
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is removed
    .replace(/[\u0000-\u001f\u007f]/g, "")
    .trim()
    .slice(-200)
  if (name === "" || name === "." || name === "..") return `attachment-${position}${typeExtension}`
  if (messageExtension !== undefined && extensionOf(name) !== messageExtension)
    return `${name}${messageExtension}`
  return extensionOf(name) === "" && typeExtension !== ".bin" ? `${name}${typeExtension}` : name
}

/** Two attachments with one name get "name (2).ext", so that their documents can be told apart. */
export const uniqueName = (name: string, taken: Set<string>): string => {
  const ext = extensionOf(name)
  const stem = ext ? name.slice(0, -ext.length) : name
  let candidate = name
  for (let n = 2; taken.has(candidate.toLowerCase()); n++) candidate = `${stem} (${n})${ext}`
  taken.add(candidate.toLowerCase())
  return candidate
}

/** One attachment of a message, before it is kept or skipped. */
export interface MessagePart {
  /** The name the message gives it, if any. */
  readonly fileName: string | undefined
  readonly contentType: string
  /** An attached message: its name must end in this extension. */
  readonly messageExtension?: ".eml" | ".msg"
  /** Why it does not become a document, if it does not. */
  readonly skip?: string
  /** Read only for kept attachments; a damaged one fails the message. */
  readonly bytes: () => Either.Either<Uint8Array, ParseFailure>
}

export interface SkippedAttachment {
  readonly name: string
  readonly reason: string
}

/** Unnamed attachments are numbered in the order of the documents they become. */
export const splitParts = (
  parts: ReadonlyArray<MessagePart>,
): Either.Either<
  { readonly kept: Array<ExtractedAttachment>; readonly skipped: Array<SkippedAttachment> },
  ParseFailure
> => {
  const taken = new Set<string>()
  const kept = Either.all(
    parts
      .filter((part) => part.skip === undefined)
      .map((part, i) =>
        Either.map(
          part.bytes(),
          (bytes): ExtractedAttachment => ({
            fileName: uniqueName(
              attachmentName(part.fileName, part.contentType, i + 1, part.messageExtension),
              taken,
            ),
            contentType: part.contentType.toLowerCase(),
            bytes,
          }),
        ),
      ),
  )
  const skipped: Array<SkippedAttachment> = parts
    .filter((part) => part.skip !== undefined)
    .map((part, i) => ({
      name: attachmentName(part.fileName, part.contentType, i + 1, part.messageExtension),
      reason: part.skip!,
    }))
  return Either.map(kept, (kept) => ({ kept, skipped }))
}

/** "Name <address>", or whichever of the two there is. */
export const mailbox = (name: string | undefined, address: string | undefined): Array<string> => {
  const n = name?.trim() ?? ""
  const a = address?.trim() ?? ""
  if (n && a && n !== a) return [`${n} <${a}>`]
  return n || a ? [n || a] : []
}

export const cleanBody = (text: string): string =>
  text
    .replace(/\r\n?/g, "\n")
    .split("\n")
    .map((line) => line.trimEnd())
    .join("\n")
    .replace(/\n{3,}/g, "\n\n")
    .trim()

export interface MessageContent {
  readonly parser: string
  readonly from: ReadonlyArray<string>
  readonly to: ReadonlyArray<string>
  readonly cc: ReadonlyArray<string>
  /** ISO 8601. */
  readonly date: string | undefined
  readonly subject: string | undefined
  readonly messageId: string | undefined
  readonly body: string
  readonly bodyFormat: "text" | "html" | "none"
  readonly kept: ReadonlyArray<ExtractedAttachment>
  readonly skipped: ReadonlyArray<SkippedAttachment>
  /** Further metadata of the format (the Outlook message class). */
  readonly metadata?: Readonly<Record<string, unknown>>
  /** The tables and headings of an HTML body. */
  readonly structure?: TextStructure | undefined
}

/** The pages and metadata of a message. */
export const messageOutput = (
  m: MessageContent,
  limits: ParseLimits,
): Either.Either<ParseOutput, ParseFailure> => {
  const names = m.kept.map((a) => a.fileName)
  const subject = m.subject?.trim()
  const headerBlock = [
    m.from.length > 0 ? `From: ${m.from.join(", ")}` : undefined,
    m.to.length > 0 ? `To: ${m.to.join(", ")}` : undefined,
    m.cc.length > 0 ? `Cc: ${m.cc.join(", ")}` : undefined,
    m.date ? `Date: ${m.date}` : undefined,
    subject ? `Subject: ${subject}` : undefined,
    names.length > 0 ? `Attachments: ${names.join(", ")}` : undefined,
  ]
    .filter((line) => line !== undefined)
    .join("\n")
  const [first = "", ...rest] = chunkText(m.body, pageChars)
  const firstPage = [headerBlock, first].filter((part) => part !== "").join("\n\n")
  return Either.map(textPages([firstPage, ...rest], limits), (chunks) =>
    messagePages(m, placeStructure(chunks, m.structure ?? noStructure), subject, names),
  )
}

const messagePages = (
  m: MessageContent,
  pages: ReadonlyArray<ParsedPage>,
  subject: string | undefined,
  names: ReadonlyArray<string>,
): ParseOutput => ({
  parser: m.parser,
  pages,
  metadata: {
    ...m.metadata,
    from: m.from.join(", "),
    to: m.to,
    cc: m.cc,
    subject: subject ?? "",
    ...(m.date ? { date: m.date } : {}),
    ...(m.messageId ? { message_id: m.messageId } : {}),
    body_format: m.bodyFormat,
    attachment_count: m.kept.length,
    attachment_names: names,
    ...(m.skipped.length > 0 ? { skipped_attachments: m.skipped } : {}),
    page_source: pages.length > 1 ? `headers, then the body in ${pageSource(pages.length)}` : "whole message",
  },
  attachments: m.kept,
})
