/**
 * E-mail messages (.eml), laid out as Message.ts says: headers, then the body (the text part, or the HTML
 * part converted to text). Attachments, attached messages included, are handed back to become documents
 * of their own.
 */

import { Effect, Either } from "effect"
import {
  type AddressObject,
  type Attachment,
  type EmailAddress,
  type SimpleParserOptions,
  simpleParser,
} from "mailparser"
import { type Backend, fromPromise, ParseFailure, type ParseLimits, type ParseOutput } from "./Backend.ts"
import { htmlToStructuredText } from "./Html.ts"
import { cleanBody, type MessagePart, mailbox, messageOutput, splitParts } from "./Message.ts"

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

const formatAddress = (a: EmailAddress): Array<string> =>
  a.group ? a.group.flatMap(formatAddress) : mailbox(a.name, a.address)

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

/**
 * An image shown inside the HTML body (multipart/related, referenced as cid:) is a logo or a signature
 * far more often than a document; it is left out. An image the body does not reference is kept.
 */
const isInlineImage = (attachment: Attachment, html: string): boolean =>
  attachment.contentType.toLowerCase().startsWith("image/") &&
  attachment.cid !== undefined &&
  attachment.cid !== "" &&
  html.toLowerCase().includes(`cid:${attachment.cid.toLowerCase()}`)

const skipReason = (attachment: Attachment, html: string): string | undefined => {
  if (isInlineImage(attachment, html)) return "image shown inside the message body"
  return attachment.content.length === 0 ? "empty" : undefined
}

const partOf =
  (html: string) =>
  (attachment: Attachment): MessagePart => {
    const contentType = attachment.contentType.toLowerCase()
    const skip = skipReason(attachment, html)
    return {
      fileName: attachment.filename,
      contentType,
      ...(contentType === "message/rfc822" ? { messageExtension: ".eml" as const } : {}),
      ...(skip === undefined ? {} : { skip }),
      bytes: () => {
        const bytes: Buffer = attachment.content
        return Either.right(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength))
      },
    }
  }

/** Whether the bytes start like an Outlook .msg file (a compound file). */
export const isCompoundFile = (bytes: Uint8Array): boolean =>
  bytes[0] === 0xd0 && bytes[1] === 0xcf && bytes[2] === 0x11 && bytes[3] === 0xe0

/** Parses an Internet message (RFC 5322, MIME); a ParseFailure when the bytes are none. */
export const parseInternetMessage = (
  bytes: Uint8Array,
  limits: ParseLimits,
): Effect.Effect<ParseOutput, ParseFailure> =>
  Effect.gen(function* () {
    const mail = yield* fromPromise(() =>
      simpleParser(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), parserOptions),
    )
    if (!messageHeaders.some((h) => mail.headers.has(h)))
      return yield* new ParseFailure({
        reason:
          "the file is not an e-mail message (it has no e-mail headers such as From, To, Subject or Date)",
      })
    const html = typeof mail.html === "string" ? mail.html : ""
    const fromText = mail.text !== undefined && mail.text.trim() !== ""
    const { kept, skipped } = yield* splitParts(mail.attachments.map(partOf(html)))
    const converted = !fromText && html ? htmlToStructuredText(html) : undefined
    return yield* messageOutput(
      {
        parser: fromText || !html ? "mailparser" : "mailparser+html-to-text",
        from: addresses(mail.from),
        to: addresses(mail.to),
        cc: addresses(mail.cc),
        date: dateOf(mail.headerLines),
        subject: mail.subject,
        messageId: mail.messageId,
        body: cleanBody(fromText ? mail.text! : (converted?.text ?? "")),
        structure: converted?.structure,
        bodyFormat: fromText ? "text" : html ? "html" : "none",
        kept,
        skipped,
      },
      limits,
    )
  })

export const emailBackend: Backend = {
  name: "email",
  parse: ({ bytes, limits }) =>
    // An Outlook message saved under the wrong extension is still read, as the Outlook message it is.
    isCompoundFile(bytes)
      ? Effect.promise(() => import("./Outlook.ts")).pipe(
          Effect.flatMap(({ parseOutlookMessage }) => parseOutlookMessage(bytes, limits)),
          Effect.mapError((e) => new ParseFailure({ reason: `this is an Outlook .msg file: ${e.reason}` })),
        )
      : parseInternetMessage(bytes, limits),
}
