/**
 * Outlook messages (.msg), read with @kenjiuno/msgreader and laid out as Message.ts says, exactly like
 * an .eml: headers (sender, recipients, date, subject), then the body (the plain text Outlook stores, or
 * the HTML body converted to text). Attachments become documents of their own; an attached Outlook
 * message is handed back as a .msg file of its own, and is parsed again the same way.
 *
 * The file is checked first (CompoundFile.ts), since the library trusts what the file says.
 */
import msgReaderModule, { type FieldsData } from "@kenjiuno/msgreader"
import { Effect, Either, identity } from "effect"
import { type Backend, ParseFailure, type ParseLimits, type ParseOutput } from "./Backend.ts"
import { type CompoundSummary, checkCompoundFile } from "./CompoundFile.ts"
import { isCompoundFile, parseInternetMessage } from "./Email.ts"
import { declaredCharset, htmlToStructuredText } from "./Html.ts"
import {
  cleanBody,
  type MessagePart,
  mailbox,
  messageOutput,
  splitParts,
  typeOfExtension,
} from "./Message.ts"
import { decodeText } from "./TextPages.ts"

type MsgReaderClass = typeof msgReaderModule.default
// A CommonJS module: Node's ESM loader hands over `module.exports`, whose `default` is the class; a
// loader that applies the `__esModule` convention hands over the class itself.
const MsgReader: MsgReaderClass =
  (msgReaderModule as { readonly default?: MsgReaderClass }).default ??
  (msgReaderModule as unknown as MsgReaderClass)

/** Attached messages nested deeper than this inside one file are refused (each nests two storages). */
export const MAX_NESTED_MESSAGES = 32

const PT_STRING8 = 0x001e
const PID_ATTACH_METHOD = 0x37050003
const ATTACH_BY_REFERENCE = new Set([2, 3, 4, 7])
const ATTACH_OLE = 6

/** Windows code pages as WHATWG encoding labels, which both TextDecoder and the library's iconv-lite know. */
const codepageLabels: Readonly<Record<number, string>> = {
  874: "windows-874",
  932: "shift_jis",
  936: "gbk",
  949: "euc-kr",
  950: "big5",
  1250: "windows-1250",
  1251: "windows-1251",
  1252: "windows-1252",
  1253: "windows-1253",
  1254: "windows-1254",
  1255: "windows-1255",
  1256: "windows-1256",
  1257: "windows-1257",
  1258: "windows-1258",
  20866: "koi8-r",
  21866: "koi8-u",
  28591: "iso-8859-1",
  28592: "iso-8859-2",
  28593: "iso-8859-3",
  28594: "iso-8859-4",
  28595: "iso-8859-5",
  28596: "iso-8859-6",
  28597: "iso-8859-7",
  28598: "iso-8859-8",
  28599: "iso-8859-9",
  28605: "iso-8859-15",
  50220: "iso-2022-jp",
  51932: "euc-jp",
  54936: "gb18030",
  65001: "utf-8",
}

interface Reading {
  readonly reader: InstanceType<MsgReaderClass>
  readonly fields: FieldsData
  /** PidTagAttachMethod of each attachment. */
  readonly methods: WeakMap<FieldsData, number>
  /** Some string property is 8-bit, in the message's code page. */
  readonly ansi: boolean
}

/** The message's fields as the library reads them; what it throws on a damaged file is thrown on. */
const read = (bytes: Uint8Array, ansiEncoding?: string): Either.Either<Reading, ParseFailure> => {
  const reader = new MsgReader(new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength))
  const methods = new WeakMap<FieldsData, number>()
  let ansi = false
  reader.parserConfig = {
    ...(ansiEncoding ? { ansiEncoding } : {}),
    propertyObserver: (fields, tag, raw) => {
      if ((tag & 0xffff) === PT_STRING8) ansi = true
      if (tag >>> 0 === PID_ATTACH_METHOD && raw !== null && raw.length >= 4)
        methods.set(fields, new DataView(raw.buffer, raw.byteOffset, raw.byteLength).getUint32(0, true))
    },
  }
  const fields = reader.getFileData()
  return fields.dataType !== "msg" || fields.error
    ? Either.left(
        new ParseFailure({
          reason: `the file is not an Outlook message${fields.error ? ` (${fields.error})` : ""}`,
        }),
      )
    : Either.right({ reader, fields, methods, ansi })
}

/** Runs the library; what it throws on a damaged file becomes a ParseFailure saying what could not be read. */
const guarded = <A>(what: string, run: () => A): Either.Either<A, ParseFailure> =>
  Either.try({
    try: run,
    catch: (e) =>
      new ParseFailure({
        reason: `the Outlook message is damaged: ${what} cannot be read (${e instanceof Error ? e.message : String(e)})`,
      }),
  })

// A property's type is written in the file, so a damaged file can make any field a number, a string or
// bytes: every field is read through one of these.
type Key = keyof FieldsData
const str = (f: FieldsData, key: Key): string | undefined => {
  const v = f[key]
  return typeof v === "string" ? v : undefined
}
const int = (f: FieldsData, key: Key): number | undefined => {
  const v = f[key]
  return typeof v === "number" ? v : undefined
}
const bin = (f: FieldsData, key: Key): Uint8Array | undefined => {
  const v = f[key]
  return v instanceof Uint8Array ? v : undefined
}

const isoDate = (value: string | undefined): string | undefined => {
  if (value === undefined) return undefined
  const date = new Date(value)
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString()
}

/** One header of the Internet headers a received message keeps (PidTagTransportMessageHeaders). */
const header = (f: FieldsData, name: string): string | undefined => {
  const m = str(f, "headers")?.match(new RegExp(`^${name}:[ \\t]*((?:.*)(?:\\r?\\n[ \\t].*)*)`, "im"))
  return m?.[1]?.replace(/\s+/g, " ").trim() || undefined
}

/** Outlook writes a name it has no display name for as 'bob@example.com'. */
const displayName = (name: string | undefined) => name?.trim().replace(/^'(.*)'$/, "$1")

/** The SMTP address of a sender or recipient; Exchange's own addresses (EX) mean nothing outside it. */
const smtpAddress = (address: string | undefined, type: string | undefined, smtp: string | undefined) =>
  smtp?.trim() || (type?.toUpperCase() === "SMTP" ? address?.trim() : undefined) || undefined

const sender = (f: FieldsData): Array<string> => {
  const address = smtpAddress(
    str(f, "senderEmail"),
    str(f, "senderAddressType"),
    str(f, "senderSmtpAddress") ?? str(f, "sentRepresentingSmtpAddress"),
  )
  const found = mailbox(displayName(str(f, "senderName")), address)
  if (found.length > 0) return found
  const from = header(f, "from")
  return from ? [from] : []
}

const recipients = (f: FieldsData, type: "to" | "cc"): Array<string> =>
  (f.recipients ?? [])
    .filter((r) => (str(r, "recipType") ?? "to") === type)
    .flatMap((r) =>
      mailbox(
        displayName(str(r, "name")),
        smtpAddress(str(r, "email"), str(r, "addressType"), str(r, "smtpAddress")),
      ),
    )

const htmlBody = (f: FieldsData): string => {
  const html = bin(f, "html")
  if (html !== undefined && html.length > 0) {
    const label = codepageLabels[int(f, "internetCodepage") ?? 0]
    return decodeText(html, declaredCharset(html, label ? `text/html; charset=${label}` : "")).text
  }
  return str(f, "bodyHtml") ?? ""
}

const parts = (reading: Reading, html: string): Array<MessagePart> =>
  (reading.fields.attachments ?? []).map((a): MessagePart => {
    const method = reading.methods.get(a)
    const bytes = () => guarded("an attachment", () => reading.reader.getAttachment(a).content)
    if (a.innerMsgContent === true && method !== ATTACH_OLE) {
      const inner = a.innerMsgContentFields
      const name = str(a, "name")?.trim() || (inner && str(inner, "subject")?.trim()) || undefined
      return { fileName: name, contentType: "application/vnd.ms-outlook", messageExtension: ".msg", bytes }
    }
    const fileName = str(a, "fileName") ?? str(a, "fileNameShort") ?? str(a, "name")
    const contentType = (
      str(a, "attachMimeTag")?.split(";")[0]?.trim() ||
      typeOfExtension(fileName ?? "") ||
      "application/octet-stream"
    ).toLowerCase()
    const part = { fileName, contentType, bytes }
    if (a.innerMsgContent === true) return { ...part, skip: "an embedded OLE object" }
    if (method !== undefined && ATTACH_BY_REFERENCE.has(method))
      return { ...part, skip: "a link to a file, not the file itself" }
    if (a.dataId === undefined || !a.contentLength) return { ...part, skip: "empty" }
    const cid = str(a, "pidContentId")
      ?.trim()
      .replace(/^<(.*)>$/, "$1")
    if (contentType.startsWith("image/") && cid && html.toLowerCase().includes(`cid:${cid.toLowerCase()}`))
      return { ...part, skip: "image shown inside the message body" }
    return part
  })

/** The bytes with the named-property map renamed away; see parseOutlookMessage. */
const withoutNamedProperties = (bytes: Uint8Array, entries: CompoundSummary["entries"]) => {
  const nameid = entries.find((e) => e.depth === 0 && e.name === "__nameid_version1.0")
  if (nameid === undefined) return bytes
  const copy = new Uint8Array(bytes)
  copy[nameid.offset] = "x".charCodeAt(0)
  return copy
}

/** Parses an Outlook .msg file; a ParseFailure saying why when it cannot. */
export const parseOutlookMessage = (
  bytes: Uint8Array,
  limits: ParseLimits,
): Effect.Effect<ParseOutput, ParseFailure> =>
  Effect.gen(function* () {
    const { entries } = yield* checkCompoundFile(bytes, {
      maxStorageDepth: 2 * MAX_NESTED_MESSAGES,
      tooDeep: () =>
        new ParseFailure({
          reason: `the Outlook message nests attached messages more than ${MAX_NESTED_MESSAGES} levels deep`,
        }),
    })
    if (!entries.some((e) => e.depth === 0 && e.name === "__properties_version1.0"))
      return yield* new ParseFailure({
        reason:
          "the file is a compound file but not an Outlook message (it has no message properties); Word, Excel and PowerPoint 97-2003 files are compound files too",
      })
    // Named properties (appointments, voting buttons) are not shown, and their parsers are the library's
    // least guarded code: without the map that names them, they are never run.
    const safe = withoutNamedProperties(bytes, entries)
    let reading = yield* Either.flatMap(
      guarded("its properties", () => read(safe)),
      identity,
    )
    const codepage = int(reading.fields, "messageCodepage") ?? int(reading.fields, "internetCodepage")
    const label = codepage === undefined ? undefined : codepageLabels[codepage]
    if (reading.ansi && label !== undefined) {
      // 8-bit strings are in the message's code page; the library reads them as Latin-1 unless told. When
      // the code page is unknown to the library, Latin-1 it stays.
      const relabelled = Either.flatMap(
        Either.try(() => read(safe, label)),
        identity,
      )
      if (Either.isRight(relabelled)) reading = relabelled.right
    }
    const f = reading.fields
    const html = htmlBody(f)
    const text = str(f, "body") ?? ""
    const fromText = text.trim() !== ""
    const { kept, skipped } = yield* splitParts(parts(reading, html))
    const converted = !fromText && html ? htmlToStructuredText(html) : undefined
    return yield* messageOutput(
      {
        parser: fromText || !html ? "msgreader" : "msgreader+html-to-text",
        from: sender(f),
        to: recipients(f, "to"),
        cc: recipients(f, "cc"),
        date: isoDate(str(f, "clientSubmitTime") ?? str(f, "messageDeliveryTime") ?? header(f, "date")),
        subject: str(f, "subject"),
        messageId: str(f, "messageId")?.trim() || header(f, "message-id"),
        body: cleanBody(fromText ? text : (converted?.text ?? "")),
        structure: converted?.structure,
        bodyFormat: fromText ? "text" : html ? "html" : "none",
        kept,
        skipped,
        metadata: { message_class: str(f, "messageClass") ?? "" },
      },
      limits,
    )
  })

const notOutlook =
  "the file is not an Outlook .msg message (an Outlook message is a compound file, which starts with the bytes D0 CF 11 E0)"

export const outlookMessageBackend: Backend = {
  name: "outlook-msg",
  parse: ({ bytes, limits }) =>
    isCompoundFile(bytes)
      ? parseOutlookMessage(bytes, limits)
      : // Some mail programs save a plain Internet message under .msg: it is read as the message it is.
        parseInternetMessage(bytes, limits).pipe(
          Effect.mapError(() => new ParseFailure({ reason: notOutlook })),
        ),
}
