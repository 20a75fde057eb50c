/**
 * E-mail messages (.eml). Page 1 is a header block (From, To, Cc, Date, Subject, Attachments) followed by
 * the body: the text part, or the HTML part converted to text; a long body continues on further pages.
 * Attachments, attached messages included, are handed back to become documents of their own.
 */
import {
  type AddressObject,
  type Attachment,
  type EmailAddress,
  type SimpleParserOptions,
  simpleParser,
} from "mailparser"
import { type Backend, type ExtractedAttachment, ParseFailure } from "./Backend.ts"
import { htmlToText } from "./Html.ts"
import { chunkText, pageChars, pageSource, textPages } from "./TextPages.ts"

const parserOptions: SimpleParserOptions & { readonly ignoreEmbedded: boolean } = {
  // The HTML body is converted below exactly as a web page is; the text is never wanted as HTML.
  skipHtmlToText: true,
  skipTextToHtml: true,
  skipTextLinks: true,
  skipImageLinks: true,
  // mailsplit option: an attached message stays an attachment (one .eml document of its own) even when
  // its disposition is "inline", instead of being merged into this message's body.
  ignoreEmbedded: true,
}

/** Headers of which at least one is in every real message; a file with none of them is not e-mail. */
const messageHeaders = [
  ...["from", "to", "subject", "date", "message-id", "received", "mime-version", "sender"],
  // A MIME entity saved without its envelope (only Content-Type) is still a readable message.
  "content-type",
]

const formatAddress = (a: EmailAddress): Array<string> => {
  if (a.group) return a.group.flatMap(formatAddress)
  const name = a.name.trim()
  const address = a.address?.trim() ?? ""
  if (name && address && name !== address) return [`${name} <${address}>`]
  return name || address ? [name || address] : []
}

const addresses = (field: AddressObject | ReadonlyArray<AddressObject> | undefined): Array<string> =>
  field === undefined
    ? []
    : (Array.isArray(field) ? field : [field]).flatMap((f) => f.value.flatMap(formatAddress))

/** The Date header as ISO 8601, or undefined when absent or unreadable (mailparser would say "now"). */
const dateOf = (headerLines: ReadonlyArray<{ key: string; line: string }>): string | undefined => {
  const line = headerLines.find((h) => h.key === "date")?.line
  if (line === undefined) return undefined
  const date = new Date(
    line
      .slice(line.indexOf(":") + 1)
      .replace(/\s+/g, " ")
      .trim(),
  )
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString()
}

const extensionByType: Readonly<Record<string, string>> = {
  "application/pdf": ".pdf",
  "message/rfc822": ".eml",
  "message/global": ".eml",
  "text/plain": ".txt",
  "text/html": ".html",
  "text/markdown": ".md",
  "text/xml": ".xml",
  "application/xml": ".xml",
  "application/json": ".json",
  "text/csv": ".csv",
  "text/calendar": ".ics",
  "text/rfc822-headers": ".txt",
  "image/png": ".png",
  "image/jpeg": ".jpg",
  "image/gif": ".gif",
  "image/tiff": ".tiff",
  "image/webp": ".webp",
  "image/bmp": ".bmp",
  "application/msword": ".doc",
  "application/vnd.openxmlformats-officedocument.wordprocessingml.document": ".docx",
  "application/vnd.ms-excel": ".xls",
  "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": ".xlsx",
  "application/vnd.ms-powerpoint": ".ppt",
  "application/vnd.openxmlformats-officedocument.presentationml.presentation": ".pptx",
  "application/vnd.ms-outlook": ".msg",
  "application/zip": ".zip",
  "audio/mpeg": ".mp3",
  "audio/wav": ".wav",
  "audio/mp4": ".m4a",
  "video/mp4": ".mp4",
}

const extensionOf = (name: string): string => {
  const dot = name.lastIndexOf(".")
  return dot > 0 ? name.slice(dot).toLowerCase() : ""
}

/**
 * A safe file name for an attachment: no directories or control characters; an extension from the content
 * type when the name has none (an attached message always ends in .eml, so that it is parsed as e-mail);
 * `attachment-<n><ext>` when the message gives no name.
 */
const attachmentName = (attachment: Attachment, position: number): string => {
  const contentType = attachment.contentType.toLowerCase()
  const typeExtension =
    extensionByType[contentType] ?? (/^(text|message)\//.test(contentType) ? ".txt" : ".bin")
  const given = (attachment.filename ?? "")
    .split(/[\\/]/)
    .pop()!
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is removed
    .replace(/[\u0000-\u001f\u007f]/g, "")
    .trim()
    .slice(-200)
  if (given === "" || given === "." || given === "..") return `attachment-${position}${typeExtension}`
  if (contentType === "message/rfc822" && extensionOf(given) !== ".eml") return `${given}.eml`
  return extensionOf(given) === "" && typeExtension !== ".bin" ? `${given}${typeExtension}` : given
}

/** Two attachments with one name get "name (2).ext", so that their documents can be told apart. */
const uniqueName = (name: string, taken: Set<string>): string => {
  const ext = extensionOf(name)
  const stem = ext ? name.slice(0, -ext.length) : name
  let candidate = name
  for (let n = 2; taken.has(candidate.toLowerCase()); n++) candidate = `${stem} (${n})${ext}`
  taken.add(candidate.toLowerCase())
  return candidate
}

/**
 * An image shown inside the HTML body (multipart/related, referenced as cid:) is a logo or a signature
 * far more often than a document; it is left out. An image the body does not reference is kept.
 */
const isInlineImage = (attachment: Attachment, html: string): boolean =>
  attachment.contentType.toLowerCase().startsWith("image/") &&
  attachment.cid !== undefined &&
  attachment.cid !== "" &&
  html.toLowerCase().includes(`cid:${attachment.cid.toLowerCase()}`)

interface SkippedAttachment {
  readonly name: string
  readonly reason: string
}

const skipReason = (attachment: Attachment, html: string): string | undefined => {
  if (isInlineImage(attachment, html)) return "image shown inside the message body"
  return attachment.content.length === 0 ? "empty" : undefined
}

/** Unnamed attachments are numbered in the order of the documents they become. */
const splitAttachments = (attachments: ReadonlyArray<Attachment>, html: string) => {
  const taken = new Set<string>()
  const kept = attachments
    .filter((attachment) => skipReason(attachment, html) === undefined)
    .map((attachment, i): ExtractedAttachment => {
      const bytes: Buffer = attachment.content
      return {
        fileName: uniqueName(attachmentName(attachment, i + 1), taken),
        contentType: attachment.contentType.toLowerCase(),
        bytes: new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength),
      }
    })
  const skipped: Array<SkippedAttachment> = attachments
    .flatMap((attachment) => {
      const reason = skipReason(attachment, html)
      return reason === undefined ? [] : [{ attachment, reason }]
    })
    .map(({ attachment, reason }, i) => ({ name: attachmentName(attachment, i + 1), reason }))
  return { kept, skipped }
}

const cleanBody = (text: string): string =>
  text
    .replace(/\r\n?/g, "\n")
    .split("\n")
    .map((line) => line.trimEnd())
    .join("\n")
    .replace(/\n{3,}/g, "\n\n")
    .trim()

const isOutlookMessage = (bytes: Uint8Array): boolean =>
  bytes[0] === 0xd0 && bytes[1] === 0xcf && bytes[2] === 0x11 && bytes[3] === 0xe0

const outlookUnsupported = "Outlook .msg files are not supported yet; save the message as .eml"

export const emailBackend: Backend = {
  name: "email",
  extensions: [".eml"],
  parse: async ({ bytes, limits }) => {
    if (isOutlookMessage(bytes)) throw new ParseFailure(`this is an Outlook .msg file: ${outlookUnsupported}`)
    const mail = await simpleParser(
      Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength),
      parserOptions,
    )
    if (!messageHeaders.some((h) => mail.headers.has(h))) {
      throw new ParseFailure(
        "the file is not an e-mail message (it has no e-mail headers such as From, To, Subject or Date)",
      )
    }
    const html = typeof mail.html === "string" ? mail.html : ""
    const fromText = mail.text !== undefined && mail.text.trim() !== ""
    const body = cleanBody(fromText ? mail.text! : html ? htmlToText(html) : "")
    const { kept, skipped } = splitAttachments(mail.attachments, html)

    const from = addresses(mail.from)
    const to = addresses(mail.to)
    const cc = addresses(mail.cc)
    const date = dateOf(mail.headerLines)
    const subject = mail.subject?.trim()
    const names = kept.map((a) => a.fileName)
    const headerBlock = [
      from.length > 0 ? `From: ${from.join(", ")}` : undefined,
      to.length > 0 ? `To: ${to.join(", ")}` : undefined,
      cc.length > 0 ? `Cc: ${cc.join(", ")}` : undefined,
      date ? `Date: ${date}` : undefined,
      subject ? `Subject: ${subject}` : undefined,
      names.length > 0 ? `Attachments: ${names.join(", ")}` : undefined,
    ]
      .filter((line) => line !== undefined)
      .join("\n")
    const [first = "", ...rest] = chunkText(body, pageChars)
    const firstPage = [headerBlock, first].filter((part) => part !== "").join("\n\n")
    const pages = textPages([firstPage, ...rest], limits)

    return {
      parser: fromText || !html ? "mailparser" : "mailparser+html-to-text",
      pages,
      metadata: {
        from: from.join(", "),
        to,
        cc,
        subject: subject ?? "",
        ...(date ? { date } : {}),
        ...(mail.messageId ? { message_id: mail.messageId } : {}),
        body_format: fromText ? "text" : html ? "html" : "none",
        attachment_count: kept.length,
        attachment_names: names,
        ...(skipped.length > 0 ? { skipped_attachments: skipped } : {}),
        page_source:
          pages.length > 1 ? `headers, then the body in ${pageSource(pages.length)}` : "whole message",
      },
      attachments: kept,
    }
  },
}

export const outlookMessageBackend: Backend = {
  name: "outlook-msg",
  extensions: [".msg"],
  parse: async () => {
    throw new ParseFailure(outlookUnsupported)
  },
}
