/**
 * Outlook .msg messages built by the tests themselves ([MS-OXMSG] over a compound file written by the
 * `cfb` package): a property stream per object, one `__substg1.0_<tag>` stream per variable-length
 * property, recipients and attachments in storages of their own, attached messages as nested storages.
 * The hostile ones are built by changing such a file's bytes.
 */
import * as CFB from "cfb"

export interface MsgRecipient {
  readonly name: string
  readonly email: string
  readonly type?: "to" | "cc" | "bcc"
}

export interface MsgFileAttachment {
  /** Left out: an attachment without a name. */
  readonly fileName?: string
  /** Left out: no data (an attachment by reference). */
  readonly data?: Uint8Array
  readonly mimeType?: string
  /** Referenced by the HTML body as `cid:…`. */
  readonly contentId?: string
  /** PidTagAttachMethod: 1 by value (the default), 2 by reference, 6 an OLE object (`data` in a storage). */
  readonly method?: number
}

export interface MsgMessageAttachment {
  readonly displayName: string
  readonly message: MsgSpec
}

export interface MsgSpec {
  readonly messageClass?: string
  readonly subject?: string
  readonly senderName?: string
  readonly senderEmail?: string
  readonly recipients?: ReadonlyArray<MsgRecipient>
  readonly date?: Date
  readonly messageId?: string
  readonly body?: string
  readonly html?: string
  readonly attachments?: ReadonlyArray<MsgFileAttachment | MsgMessageAttachment>
  /** Writes the strings as 8-bit (PT_STRING8) in this Windows code page, and says so in the message. */
  readonly ansi?: { readonly codepage: number; readonly encode: (s: string) => Uint8Array }
  /** Further properties of the message (raw tag → bytes of a variable-length value). */
  readonly extraStreams?: Readonly<Record<number, Uint8Array>>
}

const PT_LONG = 0x0003
const PT_BOOLEAN = 0x000b
const PT_SYSTIME = 0x0040
const PT_STRING8 = 0x001e
const PT_UNICODE = 0x001f
const PT_BINARY = 0x0102
const PT_OBJECT = 0x000d

type Value =
  | { readonly type: typeof PT_LONG; readonly value: number }
  | { readonly type: typeof PT_BOOLEAN; readonly value: boolean }
  | { readonly type: typeof PT_SYSTIME; readonly value: Date }
  | { readonly type: typeof PT_UNICODE | typeof PT_STRING8 | typeof PT_BINARY; readonly value: Uint8Array }
  | { readonly type: typeof PT_OBJECT }

interface Prop {
  readonly id: number
  readonly v: Value
}

const hex8 = (n: number) => n.toString(16).toUpperCase().padStart(8, "0")
const utf16 = (s: string) => new Uint8Array(Buffer.from(s, "utf16le"))

const long = (id: number, value: number): Prop => ({ id, v: { type: PT_LONG, value } })
const time = (id: number, value: Date): Prop => ({ id, v: { type: PT_SYSTIME, value } })
const binary = (id: number, value: Uint8Array): Prop => ({ id, v: { type: PT_BINARY, value } })

/** A property stream: its header, then 16 bytes per property (fixed values inline, else their size). */
const propertyStream = (props: ReadonlyArray<Prop>, header: Uint8Array): Uint8Array => {
  const out = Buffer.alloc(header.length + 16 * props.length)
  out.set(header, 0)
  props.forEach((p, i) => {
    const at = header.length + 16 * i
    out.writeUInt32LE(((p.id << 16) | p.v.type) >>> 0, at)
    out.writeUInt32LE(6, at + 4)
    switch (p.v.type) {
      case PT_LONG:
        out.writeUInt32LE(p.v.value >>> 0, at + 8)
        break
      case PT_BOOLEAN:
        out.writeUInt16LE(p.v.value ? 1 : 0, at + 8)
        break
      case PT_SYSTIME:
        out.writeBigUInt64LE((BigInt(p.v.value.getTime()) + 11644473600000n) * 10000n, at + 8)
        break
      case PT_OBJECT:
        out.writeUInt32LE(0xffffffff, at + 8)
        break
      default:
        // Strings count their terminating NUL, which the stream itself leaves out.
        out.writeUInt32LE(
          p.v.value.length + (p.v.type === PT_UNICODE ? 2 : p.v.type === PT_STRING8 ? 1 : 0),
          at + 8,
        )
    }
  })
  return out
}

type Files = Array<readonly [string, Uint8Array]>

const streamsOf = (path: string, props: ReadonlyArray<Prop>, files: Files) => {
  for (const p of props)
    if (p.v.type === PT_UNICODE || p.v.type === PT_STRING8 || p.v.type === PT_BINARY)
      files.push([`${path}__substg1.0_${hex8(((p.id << 16) | p.v.type) >>> 0)}`, p.v.value])
}

const header = (size: number, counts?: { recipients: number; attachments: number }) => {
  const h = Buffer.alloc(size)
  if (counts) {
    h.writeUInt32LE(counts.recipients, 8)
    h.writeUInt32LE(counts.attachments, 12)
    h.writeUInt32LE(counts.recipients, 16)
    h.writeUInt32LE(counts.attachments, 20)
  }
  return h
}

const isMessage = (a: MsgFileAttachment | MsgMessageAttachment): a is MsgMessageAttachment => "message" in a

/** Writes one message's storages and streams under `path` ("/" for the file itself). */
const writeMessage = (spec: MsgSpec, path: string, topLevel: boolean, files: Files) => {
  const text = (id: number, s: string): Prop =>
    spec.ansi
      ? { id, v: { type: PT_STRING8, value: spec.ansi.encode(s) } }
      : { id, v: { type: PT_UNICODE, value: utf16(s) } }
  const recipients = spec.recipients ?? []
  const attachments = spec.attachments ?? []
  const props: Array<Prop> = [text(0x001a, spec.messageClass ?? "IPM.Note")]
  if (spec.subject !== undefined) props.push(text(0x0037, spec.subject), text(0x0e1d, spec.subject))
  if (spec.senderName !== undefined) props.push(text(0x0c1a, spec.senderName))
  if (spec.senderEmail !== undefined)
    props.push(text(0x0c1e, "SMTP"), text(0x0c1f, spec.senderEmail), text(0x5d01, spec.senderEmail))
  if (spec.date) props.push(time(0x0039, spec.date), time(0x0e06, spec.date))
  if (spec.messageId !== undefined) props.push(text(0x1035, spec.messageId))
  if (spec.body !== undefined) props.push(text(0x1000, spec.body))
  if (spec.html !== undefined) props.push(binary(0x1013, new Uint8Array(Buffer.from(spec.html, "utf8"))))
  const display = (type: string) =>
    recipients
      .filter((r) => (r.type ?? "to") === type)
      .map((r) => r.name)
      .join("; ")
  props.push(text(0x0e04, display("to")), text(0x0e03, display("cc")))
  props.push(long(0x0e07, attachments.length > 0 ? 0x11 : 0x01))
  props.push(long(0x3fde, spec.ansi ? spec.ansi.codepage : 65001))
  if (spec.ansi) props.push(long(0x3ffd, spec.ansi.codepage))
  files.push([
    `${path}__properties_version1.0`,
    propertyStream(
      props,
      header(topLevel ? 32 : 24, { recipients: recipients.length, attachments: attachments.length }),
    ),
  ])
  streamsOf(path, props, files)
  for (const [tag, bytes] of Object.entries(spec.extraStreams ?? {}))
    files.push([`${path}__substg1.0_${hex8(Number(tag))}`, bytes])

  recipients.forEach((r, i) => {
    const dir = `${path}__recip_version1.0_#${hex8(i)}/`
    const rp = [
      text(0x3001, r.name),
      text(0x3002, "SMTP"),
      text(0x3003, r.email),
      text(0x39fe, r.email),
      long(0x0c15, r.type === "cc" ? 2 : r.type === "bcc" ? 3 : 1),
    ]
    files.push([`${dir}__properties_version1.0`, propertyStream(rp, header(8))])
    streamsOf(dir, rp, files)
  })

  attachments.forEach((a, i) => {
    const dir = `${path}__attach_version1.0_#${hex8(i)}/`
    const ap: Array<Prop> = [long(0x0e21, i), long(0x370b, -1)]
    if (isMessage(a)) {
      ap.push(long(0x3705, 5), text(0x3001, a.displayName), { id: 0x3701, v: { type: PT_OBJECT } })
      writeMessage(a.message, `${dir}__substg1.0_3701000D/`, false, files)
    } else {
      const method = a.method ?? 1
      ap.push(long(0x3705, method))
      if (a.fileName !== undefined) {
        ap.push(text(0x3001, a.fileName), text(0x3707, a.fileName), text(0x3704, a.fileName))
        const dot = a.fileName.lastIndexOf(".")
        if (dot > 0) ap.push(text(0x3703, a.fileName.slice(dot)))
      }
      if (a.data !== undefined && method === 6) {
        ap.push({ id: 0x3701, v: { type: PT_OBJECT } })
        files.push([`${dir}__substg1.0_3701000D/\u0001Ole10Native`, a.data])
      } else if (a.data !== undefined) ap.push(binary(0x3701, a.data))
      if (a.mimeType) ap.push(text(0x370e, a.mimeType))
      if (a.contentId) ap.push(text(0x3712, a.contentId))
    }
    files.push([`${dir}__properties_version1.0`, propertyStream(ap, header(8))])
    streamsOf(dir, ap, files)
  })
}

/** An Outlook .msg file of the message. */
export const buildMsg = (spec: MsgSpec): Uint8Array => {
  const files: Files = []
  writeMessage(spec, "/", true, files)
  for (const name of ["00020102", "00030102", "00040102"])
    files.push([`/__nameid_version1.0/__substg1.0_${name}`, new Uint8Array(0)])
  const container = CFB.utils.cfb_new()
  for (const [name, bytes] of files) CFB.utils.cfb_add(container, name, Buffer.from(bytes))
  CFB.utils.cfb_gc(container)
  return new Uint8Array(CFB.write(container, { type: "buffer" }) as Buffer)
}

/** The directory entries of a compound file, as the file stores them (index, name, fields' offsets). */
export const directoryEntries = (bytes: Uint8Array) => {
  const view = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const sectorSize = 1 << view.readUInt16LE(30)
  const fat: Array<number> = []
  for (let i = 0; i < Math.min(109, view.readUInt32LE(44)); i++) {
    const sector = view.readUInt32LE(76 + 4 * i)
    for (let j = 0; j < sectorSize / 4; j++) fat.push(view.readUInt32LE((sector + 1) * sectorSize + 4 * j))
  }
  const entries: Array<{ index: number; name: string; offset: number }> = []
  for (let sector = view.readUInt32LE(48), n = 0; sector < 0xfffffff0; sector = fat[sector]!) {
    for (let k = 0; k < sectorSize / 128; k++, n++) {
      const offset = (sector + 1) * sectorSize + 128 * k
      const nameLength = view.readUInt16LE(offset + 64)
      const name = view.toString("utf16le", offset, offset + Math.max(0, nameLength - 2))
      entries.push({ index: n, name, offset })
    }
  }
  return entries
}
