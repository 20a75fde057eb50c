import type { Readable } from "node:stream"
import { Effect } from "effect"
import yauzl from "yauzl"
import { ParseFailure, type ParseInput, type ParseOutput } from "./Backend.ts"
import { convertBytesWithLibreOffice } from "./LibreOffice.ts"
import { childElements, descendants, ns, parseXml } from "./OfficeXml.ts"

/**
 * The gate every zipped Office file passes before a format library touches its bytes: it must be a ZIP
 * container, decompress within the limit (sizes checked as recorded, then verified while inflating:
 * a ZIP can lie about them), not be a ZIP bomb, and be the kind of Office file its name says.
 */

export type OfficeKind = "word" | "excel" | "powerpoint"

/** More entries than this is not an Office file anyone wrote by hand or by tool. */
export const maxZipEntries = 10_000
/** Deflate cannot exceed about 1,030:1; real XML stays far below this ratio. */
export const maxCompressionRatio = 500
/** Entries smaller than this are not judged by their compression ratio. */
const ratioCheckMinBytes = 8 * 1024 * 1024
/** Parts read here into memory (content types, properties…) are small; a larger one is not kept. */
const maxKeptPartBytes = 64 * 1024 * 1024

const kindNames: Record<OfficeKind, string> = {
  word: "a Word document",
  excel: "an Excel workbook",
  powerpoint: "a PowerPoint presentation",
}

const kindNouns: Record<OfficeKind, string> = {
  word: "Word document",
  excel: "Excel workbook",
  powerpoint: "PowerPoint presentation",
}

export const extensionOf = (fileName: string): string => {
  const dot = fileName.lastIndexOf(".")
  return dot >= 0 ? fileName.slice(dot).toLowerCase() : ""
}

const formatBytes = (n: number): string => {
  const units = ["bytes", "KB", "MB", "GB", "TB"]
  let value = n
  let unit = 0
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024
    unit++
  }
  return unit === 0 ? `${n} bytes` : `${value >= 10 ? Math.round(value) : value.toFixed(1)} ${units[unit]}`
}

const asBuffer = (bytes: Uint8Array): Buffer => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)

const compoundFileMagic = Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1])

/** An OLE compound file: the container of legacy .doc/.xls/.ppt and of password-protected OOXML files. */
export const isCompoundFile = (bytes: Uint8Array): boolean =>
  bytes.length >= 8 && asBuffer(bytes).subarray(0, 8).equals(compoundFileMagic)

/** Office encrypts an OOXML file into a compound file holding an "EncryptedPackage" stream. */
export const isEncryptedOfficeFile = (bytes: Uint8Array): boolean =>
  isCompoundFile(bytes) && asBuffer(bytes).includes(Buffer.from("EncryptedPackage", "utf16le"))

export interface ZipContents {
  readonly entryNames: ReadonlyArray<string>
  readonly totalUncompressedBytes: number
  /** The entries asked for (and [Content_Types].xml, mimetype), by name. */
  readonly parts: ReadonlyMap<string, Buffer>
}

export interface InspectOptions {
  /** Entries to keep in memory while inspecting, by name. */
  readonly keep?: (name: string) => boolean
}

const damaged = (label: string, detail: string) =>
  new ParseFailure({ reason: `not a valid ${label} file (its ZIP container is damaged: ${detail})` })

const streamError = (label: string, name: string, error: unknown): ParseFailure => {
  const message = error instanceof Error ? error.message : String(error)
  if (/too many bytes|not enough bytes/i.test(message))
    return new ParseFailure({
      reason: `not a valid ${label} file (its ZIP entry "${name}" does not decompress to its recorded size: damaged, or a ZIP bomb)`,
    })
  return damaged(label, `${name}: ${message}`)
}

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error))

const tooLarge = (label: string, limit: number) =>
  new ParseFailure({
    reason: `the ${label} file decompresses to more than ${formatBytes(limit)}, the limit for Office files`,
  })

/**
 * Inflates one entry, stopping as soon as it exceeds `room` bytes (undefined then); its bytes when kept.
 * A stream left early is destroyed by the loop's end.
 */
const drain = async (
  stream: Readable,
  keep: boolean,
  room: number,
): Promise<{ readonly size: number; readonly content: Buffer | undefined } | undefined> => {
  const chunks: Array<Buffer> = []
  let size = 0
  for await (const chunk of stream) {
    const buffer = chunk as Buffer
    size += buffer.length
    if (size > room) return undefined
    if (keep) chunks.push(buffer)
  }
  return { size, content: keep ? Buffer.concat(chunks) : undefined }
}

/**
 * The container's entries, checked against the limits as they are listed (the first one over a limit
 * stops the listing: a ZIP bomb is not listed to its end).
 */
const listEntries = async (
  zip: yauzl.ZipFile,
  label: string,
  limit: number,
): Promise<Array<yauzl.Entry> | ParseFailure> => {
  const entries: Array<yauzl.Entry> = []
  let declared = 0
  for await (const entry of zip.eachEntry()) {
    entries.push(entry)
    declared += entry.uncompressedSize
    if (declared > limit) return tooLarge(label, limit)
    const ratio = entry.uncompressedSize / Math.max(entry.compressedSize, 1)
    if (entry.uncompressedSize >= ratioCheckMinBytes && ratio > maxCompressionRatio)
      return new ParseFailure({
        reason: `the ${label} file looks like a ZIP bomb: its entry "${entry.fileName}" expands ${Math.round(ratio)} times (the limit is ${maxCompressionRatio})`,
      })
    if (entry.isEncrypted())
      return new ParseFailure({
        reason: `the ${label} file is encrypted: remove the password and upload it again`,
      })
  }
  return entries
}

/** Every entry inflated once (sizes verified), the ones asked for kept. */
const readEntries = (
  zip: yauzl.ZipFile,
  label: string,
  limit: number,
  options: InspectOptions,
): Effect.Effect<ZipContents, ParseFailure> =>
  Effect.gen(function* () {
    if (zip.entryCount > maxZipEntries)
      return yield* new ParseFailure({
        reason: `the ${label} file holds ${zip.entryCount.toLocaleString("en-US")} ZIP entries, more than the limit of ${maxZipEntries.toLocaleString("en-US")}`,
      })
    const entries = yield* Effect.tryPromise({
      try: () => listEntries(zip, label, limit),
      catch: (error) => damaged(label, messageOf(error)),
    })
    if (entries instanceof ParseFailure) return yield* entries
    const parts = new Map<string, Buffer>()
    let inflated = 0
    for (const entry of entries) {
      if (entry.fileName.endsWith("/")) continue
      const name = entry.fileName
      const keep =
        entry.uncompressedSize <= maxKeptPartBytes &&
        (name === "[Content_Types].xml" || name === "mimetype" || (options.keep?.(name) ?? false))
      const drained = yield* Effect.tryPromise({
        try: async () => drain(await zip.openReadStreamPromise(entry), keep, limit - inflated),
        catch: (error) => streamError(label, name, error),
      })
      if (drained === undefined) return yield* tooLarge(label, limit)
      inflated += drained.size
      if (drained.content) parts.set(name, drained.content)
    }
    return { entryNames: entries.map((e) => e.fileName), totalUncompressedBytes: inflated, parts }
  })

/**
 * Checks a ZIP container against the limits, inflating every entry once to verify the sizes it
 * records, and returns its entry names and the entries asked for. Failures are ParseFailures.
 */
export const inspectZip = (
  input: ParseInput,
  options: InspectOptions = {},
): Effect.Effect<ZipContents, ParseFailure> =>
  Effect.gen(function* () {
    const label = extensionOf(input.fileName) || "Office"
    if (input.bytes.length === 0)
      return yield* new ParseFailure({ reason: `not a valid ${label} file (the file is empty)` })
    const zip = yield* Effect.tryPromise({
      try: () =>
        yauzl.fromBufferPromise(asBuffer(input.bytes), {
          lazyEntries: true,
          validateEntrySizes: true,
          decodeStrings: true,
          strictFileNames: false,
        }),
      catch: (error) =>
        /end of central directory record signature not found/i.test(messageOf(error))
          ? new ParseFailure({ reason: `not a valid ${label} file (it is not a ZIP container)` })
          : damaged(label, messageOf(error)),
    })
    return yield* readEntries(zip, label, input.limits.maxDecompressedBytes, options).pipe(
      Effect.ensuring(Effect.sync(() => zip.close())),
    )
  })

export interface OoxmlPackage extends ZipContents {
  readonly kind: OfficeKind
  /** The main part, e.g. "word/document.xml". */
  readonly mainPart: string
}

const kindOfContentType = (contentType: string): OfficeKind | "xlsb" | undefined => {
  const ct = contentType.trim().toLowerCase()
  if (ct === "application/vnd.ms-excel.sheet.binary.macroenabled.main") return "xlsb"
  if (!ct.endsWith(".main+xml")) return undefined
  if (ct.includes("wordprocessingml") || ct.includes("ms-word")) return "word"
  if (ct.includes("spreadsheetml") || ct.includes("ms-excel")) return "excel"
  if (ct.includes("presentationml") || ct.includes("ms-powerpoint")) return "powerpoint"
  return undefined
}

const mainPartNames: Record<OfficeKind, string> = {
  word: "word/document.xml",
  excel: "xl/workbook.xml",
  powerpoint: "ppt/presentation.xml",
}

const legacyExtension: Record<OfficeKind, string> = { word: ".doc", excel: ".xls", powerpoint: ".ppt" }

const openDocumentNames: Record<string, string> = {
  "application/vnd.oasis.opendocument.text": "an OpenDocument text (.odt)",
  "application/vnd.oasis.opendocument.spreadsheet": "an OpenDocument spreadsheet (.ods)",
  "application/vnd.oasis.opendocument.presentation": "an OpenDocument presentation (.odp)",
  "application/vnd.oasis.opendocument.graphics": "an OpenDocument drawing (.odg)",
  "application/epub+zip": "an EPUB e-book",
}

/** The kind of Office file and its main part, from [Content_Types].xml, else from the part names. */
const detectKind = (contents: ZipContents): { kind: OfficeKind | "xlsb"; mainPart: string } | undefined => {
  const contentTypes = contents.parts.get("[Content_Types].xml")
  if (contentTypes) {
    try {
      const root = parseXml(contentTypes.toString("utf8")).documentElement
      if (root) {
        for (const override of childElements(root)) {
          if (override.localName !== "Override") continue
          const kind = kindOfContentType(override.getAttribute("ContentType") ?? "")
          const part = (override.getAttribute("PartName") ?? "").replace(/^\//u, "")
          if (kind && contents.entryNames.includes(part)) return { kind, mainPart: part }
        }
      }
    } catch {
      // A damaged [Content_Types].xml: the part names still tell.
    }
  }
  for (const kind of ["word", "excel", "powerpoint"] as const)
    if (contents.entryNames.includes(mainPartNames[kind])) return { kind, mainPart: mainPartNames[kind] }
  return undefined
}

/**
 * `inspectZip`, then the kind check: a file named .xlsx must hold an Excel workbook, not a Word document
 * (nor an OpenDocument file, nor some other ZIP).
 */
export const inspectOoxml = (
  input: ParseInput,
  expected: OfficeKind,
  options: InspectOptions = {},
): Effect.Effect<OoxmlPackage, ParseFailure> =>
  Effect.gen(function* () {
    const label = extensionOf(input.fileName) || "Office"
    if (isEncryptedOfficeFile(input.bytes))
      return yield* new ParseFailure({
        reason: `the ${label} file is password-protected: remove the password and upload it again`,
      })
    if (isCompoundFile(input.bytes))
      return yield* new ParseFailure({
        reason: `not a valid ${label} file (it is a legacy binary Office file: save it in the current format, or rename it to ${legacyExtension[expected]})`,
      })
    const contents = yield* inspectZip(input, {
      keep: (name) => name === "docProps/core.xml" || (options.keep?.(name) ?? false),
    })
    const detected = detectKind(contents)
    if (detected === undefined) {
      const mimetype = contents.parts.get("mimetype")?.toString("utf8").trim()
      const other = mimetype ? openDocumentNames[mimetype] : undefined
      return yield* new ParseFailure({
        reason: other
          ? `the file is ${other}, not ${kindNames[expected]}`
          : `not a valid ${label} file (its ZIP container holds no ${kindNouns[expected]})`,
      })
    }
    if (detected.kind === "xlsb")
      return yield* new ParseFailure({
        reason: "the file is an Excel binary workbook (.xlsb), which is not supported: save it as .xlsx",
      })
    if (detected.kind !== expected)
      return yield* new ParseFailure({
        reason: `the file is ${kindNames[detected.kind]}, not ${kindNames[expected]}`,
      })
    return { ...contents, kind: detected.kind, mainPart: detected.mainPart }
  })

const isoDate = (value: string): string => {
  const date = new Date(value)
  return Number.isNaN(date.getTime()) ? value : date.toISOString()
}

/**
 * Title, author and dates from docProps/core.xml (kept by `inspectOoxml`), with snake_case keys;
 * absent properties are left out. A damaged part gives no properties, not a failure.
 */
export const coreProperties = (contents: ZipContents): Record<string, string> => {
  const part = contents.parts.get("docProps/core.xml")
  if (!part) return {}
  try {
    const root = parseXml(part.toString("utf8")).documentElement
    if (!root) return {}
    const out: Record<string, string> = {}
    const read = (namespaces: ReadonlyArray<string>, name: string, key: string, date = false) => {
      const text = descendants(root, namespaces, name)[0]?.textContent?.trim()
      if (text) out[key] = date ? isoDate(text) : text
    }
    read(ns.dc, "title", "title")
    read(ns.dc, "subject", "subject")
    read(ns.dc, "creator", "author")
    read(ns.cp, "lastModifiedBy", "last_modified_by")
    read(ns.cp, "keywords", "keywords")
    read(ns.dc, "description", "description")
    read(ns.dcterms, "created", "created", true)
    read(ns.dcterms, "modified", "modified", true)
    return out
  } catch {
    return {}
  }
}

/**
 * Legacy or OpenDocument files (and OLE files whatever their name) go through LibreOffice into the
 * OOXML format first; others straight to the OOXML parser. Without LibreOffice a legacy file fails,
 * saying so.
 */
export const parseModernOrConverted = (
  input: ParseInput,
  options: {
    readonly legacyExtensions: ReadonlyArray<string>
    /** The legacy extension assumed for an OLE file under a modern name. */
    readonly oleExtension: string
    /** The OpenDocument extension, whose ZIP container is checked before conversion. */
    readonly openDocumentExtension: string
    readonly target: "xlsx" | "pptx"
    readonly parseModern: (input: ParseInput, parser?: string) => Effect.Effect<ParseOutput, ParseFailure>
    readonly convertedParser: string
  },
): Effect.Effect<ParseOutput, ParseFailure> =>
  Effect.gen(function* () {
    const ext = extensionOf(input.fileName)
    const soffice = input.tools.libreOffice
    const legacy =
      options.legacyExtensions.includes(ext) ||
      (soffice !== undefined && isCompoundFile(input.bytes) && !isEncryptedOfficeFile(input.bytes))
    if (!legacy) return yield* options.parseModern(input)
    const from = options.legacyExtensions.includes(ext) ? ext : options.oleExtension
    if (soffice === undefined)
      return yield* new ParseFailure({
        reason: `reading a ${from} file needs LibreOffice, which is not installed`,
      })
    if (from === options.openDocumentExtension) yield* inspectZip(input)
    const converted = yield* convertBytesWithLibreOffice(input.tools, input.bytes, from, options.target)
    const output = yield* options.parseModern(
      { ...input, bytes: converted, fileName: `converted.${options.target}` },
      options.convertedParser,
    )
    return { ...output, metadata: { ...output.metadata, converted_from: from } }
  })
