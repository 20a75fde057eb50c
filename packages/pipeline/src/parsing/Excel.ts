import type { PageBlock } from "@dxs/domain/Content"
import type { Table } from "@dxs/domain/Tables"
import { Effect, Either } from "effect"
import ExcelJS from "exceljs"
import { type Backend, ParseFailure, type ParseInput, type ParseOutput, pageText } from "./Backend.ts"
import {
  coreProperties,
  extensionOf,
  inspectOoxml,
  maxZipEntries,
  type OoxmlPackage,
  parseModernOrConverted,
} from "./Ooxml.ts"
import { type MergedRange, type SheetCell, sheetTables } from "./SheetTables.ts"

/**
 * Spreadsheets: one page per sheet (hidden ones too, marked), a header line naming the sheet and its
 * used range, then one line per row with each non-empty cell behind its A1 reference:
 *
 *   Sheet: Invoices (A1:D5)
 *   A1: Invoice | B1: Date | C1: Total
 *   A2: INV-001 | B2: 2024-01-15 | C2: 1250.5
 *
 * Dates are ISO (never serial numbers), formulas show their last computed value, a merged range shows
 * its value once, rich text is flattened. exceljs reads .xlsx/.xlsm; CSV is read here (one page);
 * .xls and .ods go through LibreOffice to .xlsx.
 */

/** Beyond this many non-empty cells a sheet is cut, with a note saying what was left out. */
export const maxCellsPerSheet = 20_000

const legacyExtensions = [".xls", ".ods"]

export const columnLetters = (column: number): string => {
  let n = column
  let out = ""
  while (n > 0) {
    const rest = (n - 1) % 26
    out = String.fromCharCode(65 + rest) + out
    n = Math.floor((n - 1) / 26)
  }
  return out
}

const pad = (n: number, width = 2) => String(n).padStart(width, "0")

/** Excel dates are wall-clock times without a zone; exceljs hands them over as UTC instants. */
const formatDate = (date: Date, timeOnly: boolean): string => {
  if (Number.isNaN(date.getTime())) return ""
  const rounded = new Date(Math.round(date.getTime() / 1000) * 1000)
  const time = `${pad(rounded.getUTCHours())}:${pad(rounded.getUTCMinutes())}:${pad(rounded.getUTCSeconds())}`
  if (timeOnly) return time
  const day = `${pad(rounded.getUTCFullYear(), 4)}-${pad(rounded.getUTCMonth() + 1)}-${pad(rounded.getUTCDate())}`
  return time === "00:00:00" ? day : `${day}T${time}`
}

/** A number format without its literal text, colours and conditions, to look at its codes. */
const formatCodes = (numFmt: string | undefined): string =>
  (numFmt ?? "")
    .replace(/"[^"]*"/gu, "")
    .replace(/\\./gu, "")
    .replace(/\[[^\]]*\]/gu, (m) => (/^\[(h+|m+|s+)\]$/iu.test(m) ? m : ""))
    .replace(/_.|\*./gu, "")

const isDateFormat = (numFmt: string | undefined): boolean => {
  const codes = formatCodes(numFmt)
  return !/^general$/iu.test(codes.trim()) && /[dmyhs]/iu.test(codes)
}

/** A format with time codes and no date codes (h:mm, [h]:mm:ss): an "m" next to hours or seconds is minutes. */
const isTimeOnlyFormat = (numFmt: string | undefined): boolean => {
  const codes = formatCodes(numFmt).toLowerCase()
  if (!/[hs]/u.test(codes) || /[dy]/u.test(codes)) return false
  return !codes.replace(/h+[^a-z]*m+|m+[^a-z]*s+/gu, "").includes("m")
}

const serialToDate = (serial: number, date1904: boolean): Date =>
  new Date(Math.round((serial + (date1904 ? 1462 : 0) - 25569) * 86_400_000))

const formatNumber = (value: number, numFmt: string | undefined): string => {
  if (!Number.isFinite(value)) return String(value)
  const codes = formatCodes(numFmt)
  if (codes.includes("%")) {
    const decimals = /\.(0+)/u.exec(codes.slice(0, codes.indexOf("%")))?.[1]?.length ?? 0
    return `${(value * 100).toFixed(decimals)}%`
  }
  // 15 significant digits, as Excel shows: no binary noise such as 0.30000000000000004.
  return Number.isInteger(value) ? String(value) : String(Number(value.toPrecision(15)))
}

const flatten = (text: string): string => text.replace(/\s*\r?\n\s*/gu, " ").trim()

interface Scalars {
  readonly numFmt: string | undefined
  readonly date1904: boolean
}

/** The readable value of a cell's value (or of a formula's result). */
const scalarText = (value: unknown, context: Scalars): string => {
  if (value === null || value === undefined) return ""
  if (value instanceof Date) {
    const timeOnly = value.getTime() < Date.UTC(1900, 0, 1) || isTimeOnlyFormat(context.numFmt)
    return formatDate(value, timeOnly)
  }
  if (typeof value === "number") {
    if (isDateFormat(context.numFmt) && value > -1 && value < 2_958_466)
      return formatDate(serialToDate(value, context.date1904), value < 1 || isTimeOnlyFormat(context.numFmt))
    return formatNumber(value, context.numFmt)
  }
  if (typeof value === "boolean") return value ? "TRUE" : "FALSE"
  if (typeof value === "string") return flatten(value)
  if (typeof value === "object") {
    const v = value as Record<string, unknown>
    if (Array.isArray(v.richText))
      return flatten((v.richText as Array<{ text?: unknown }>).map((r) => String(r.text ?? "")).join(""))
    if ("error" in v) return String(v.error ?? "")
    if ("formula" in v || "sharedFormula" in v) {
      if (v.result !== undefined && v.result !== null) return scalarText(v.result, context)
      const formula = v.formula ?? v.sharedFormula
      return typeof formula === "string" && formula !== "" ? `=${formula}` : ""
    }
    if ("hyperlink" in v || "text" in v) return scalarText(v.text ?? v.hyperlink, context)
  }
  return flatten(String(value))
}

interface SheetText {
  readonly text: string
  readonly range: string | undefined
  readonly cells: number
  readonly truncated: boolean
  readonly tables: ReadonlyArray<Table>
  readonly blocks: ReadonlyArray<PageBlock>
}

/**
 * The page of a sheet, its cells added in row order: a header line, then one line per row. Only the
 * first `maxCellsPerSheet` cells are kept; the rest are counted for the range and the truncation note.
 */
class SheetWriter {
  private readonly rows: Array<string> = []
  private row: Array<string> = []
  private rowNumber = 0
  private count = 0
  private top = Number.POSITIVE_INFINITY
  private left = Number.POSITIVE_INFINITY
  private bottom = 0
  private right = 0
  private firstLeftOut = 0
  private readonly kept: Array<SheetCell> = []
  private readonly merges = new Map<string, { top: number; left: number; bottom: number; right: number }>()

  /** A cell of the merged range whose first cell is at `top`, `left`. */
  merged(top: number, left: number, row: number, column: number) {
    const key = `${top}:${left}`
    const range = this.merges.get(key) ?? { top, left, bottom: top, right: left }
    range.bottom = Math.max(range.bottom, row)
    range.right = Math.max(range.right, column)
    this.merges.set(key, range)
  }

  add(row: number, column: number, text: string) {
    this.count++
    this.top = Math.min(this.top, row)
    this.left = Math.min(this.left, column)
    this.bottom = Math.max(this.bottom, row)
    this.right = Math.max(this.right, column)
    if (this.count > maxCellsPerSheet) {
      if (this.firstLeftOut === 0) this.firstLeftOut = row
      return
    }
    if (row !== this.rowNumber) this.endRow()
    this.rowNumber = row
    this.row.push(`${columnLetters(column)}${row}: ${text}`)
    this.kept.push({ row, column, text })
  }

  private endRow() {
    if (this.row.length > 0) this.rows.push(this.row.join(" | "))
    this.row = []
  }

  page(title: string): SheetText {
    this.endRow()
    if (this.count === 0) {
      const text = `Sheet: ${title} (empty)`
      const blocks: Array<PageBlock> = [{ kind: "heading", text, bbox: null, level: 2 }]
      return { text, range: undefined, cells: 0, truncated: false, tables: [], blocks }
    }
    const range = `${columnLetters(this.left)}${this.top}:${columnLetters(this.right)}${this.bottom}`
    const heading = `Sheet: ${title} (${range})`
    const lines = [heading, ...this.rows]
    const truncated = this.count > maxCellsPerSheet
    const note = `[truncated: ${(this.count - maxCellsPerSheet).toLocaleString("en-US")} more non-empty cells from row ${this.firstLeftOut} to row ${this.bottom} are not shown; the first ${maxCellsPerSheet.toLocaleString("en-US")} are]`
    if (truncated) lines.push("", note)
    const { tables, blocks } = sheetTables(this.kept, [...this.merges.values()] satisfies Array<MergedRange>)
    blocks.unshift({ kind: "heading", text: heading, bbox: null, level: 2 })
    if (truncated) blocks.push({ kind: "paragraph", text: note, bbox: null })
    return { text: pageText(lines), range, cells: this.count, truncated, tables, blocks }
  }
}

const pageOf = (number: number, page: SheetText) => ({
  number,
  text: page.text,
  width: null,
  height: null,
  unit: null,
  layout: [],
  tables: page.tables,
  blocks: page.blocks,
})

const sheetLabel = (name: string, state: string | undefined): string =>
  state === "hidden" ? `${name} [hidden]` : state === "veryHidden" ? `${name} [very hidden]` : name

const tooManySheets = (input: ParseInput, sheets: number) =>
  new ParseFailure({
    reason: `the workbook has ${sheets} sheets, more than the limit of ${input.limits.maxPages} pages per document`,
  })

const parseWorkbook = (input: ParseInput, parser = "exceljs"): Effect.Effect<ParseOutput, ParseFailure> =>
  Effect.gen(function* () {
    const pkg = yield* inspectOoxml(input, "excel")
    const workbook = new ExcelJS.Workbook()
    const loaded = yield* Effect.either(
      Effect.tryPromise({
        // exceljs's own Buffer type predates Node's generic one.
        try: () => workbook.xlsx.load(Buffer.from(input.bytes) as unknown as ExcelJS.Buffer),
        catch: (error) => (error instanceof Error ? error.message : String(error)),
      }),
    )
    if (Either.isLeft(loaded)) return yield* parseWithOfficeParser(input, pkg, loaded.left)
    return yield* readWorkbook(input, workbook, pkg, parser)
  })

const readWorkbook = (
  input: ParseInput,
  workbook: ExcelJS.Workbook,
  pkg: OoxmlPackage,
  parser: string,
): Either.Either<ParseOutput, ParseFailure> => {
  const sheets = workbook.worksheets
  if (sheets.length > input.limits.maxPages) return Either.left(tooManySheets(input, sheets.length))
  const date1904 = workbook.properties?.date1904 === true
  const summaries: Array<Record<string, unknown>> = []
  const pages = sheets.map((sheet, index) => {
    const writer = new SheetWriter()
    sheet.eachRow({ includeEmpty: false }, (row, rowNumber) => {
      row.eachCell({ includeEmpty: false }, (cell, columnNumber) => {
        // The other cells of a merged range repeat the value of its first: shown once, spanning them.
        if (cell.type === ExcelJS.ValueType.Merge) {
          writer.merged(Number(cell.master.row), Number(cell.master.col), rowNumber, columnNumber)
          return
        }
        const text = scalarText(cell.value, { numFmt: cell.numFmt, date1904 })
        if (text !== "") writer.add(rowNumber, columnNumber, text)
      })
    })
    const state = sheet.state
    const page = writer.page(sheetLabel(sheet.name, state))
    summaries.push({
      name: sheet.name,
      ...(state !== "visible" && state !== undefined ? { state } : {}),
      range: page.range ?? null,
      cells: page.cells,
      ...(page.truncated ? { truncated: true } : {}),
    })
    return pageOf(index + 1, page)
  })
  return Either.right({
    parser,
    pages,
    metadata: { ...coreProperties(pkg), sheet_count: sheets.length, sheets: summaries },
  })
}

/** The part of officeparser's AST read here: sheets of rows of cells, 0-based row and column. */
interface AstNode {
  readonly type: string
  readonly text?: string
  readonly children?: ReadonlyArray<AstNode>
  readonly metadata?: unknown
}

/**
 * A workbook exceljs cannot read (it trips over some valid files: prefixed relationship XML, drawings
 * it does not know) read by officeparser instead: the values as stored, so dates stay serial numbers
 * and formats are not applied, and hidden sheets are not told apart. Said so in the metadata.
 */
const parseWithOfficeParser = (
  input: ParseInput,
  pkg: OoxmlPackage,
  reason: string,
): Effect.Effect<ParseOutput, ParseFailure> =>
  Effect.gen(function* () {
    const { OfficeParser } = yield* Effect.promise(() => import("officeparser"))
    const ast = yield* Effect.tryPromise({
      try: () =>
        OfficeParser.parseOffice(Buffer.from(input.bytes), {
          ignoreComments: true,
          extractAttachments: false,
          ocr: false,
          decompressionLimits: { maxUncompressedBytes: input.limits.maxDecompressedBytes, maxZipEntries },
        }),
      catch: (error) =>
        new ParseFailure({
          reason: `could not read the Excel workbook: ${reason}; ${error instanceof Error ? error.message : String(error)}`,
        }),
    })
    return yield* readOfficeParserSheets(input, ast.content as ReadonlyArray<AstNode>, pkg, reason)
  })

const readOfficeParserSheets = (
  input: ParseInput,
  content: ReadonlyArray<AstNode>,
  pkg: OoxmlPackage,
  reason: string,
): Either.Either<ParseOutput, ParseFailure> => {
  const sheets = content.filter((n) => n.type === "sheet")
  if (sheets.length > input.limits.maxPages) return Either.left(tooManySheets(input, sheets.length))
  const summaries: Array<Record<string, unknown>> = []
  const pages = sheets.map((sheet, index) => {
    const name = String(
      (sheet.metadata as { sheetName?: unknown } | undefined)?.sheetName ?? `Sheet${index + 1}`,
    )
    const writer = new SheetWriter()
    for (const row of sheet.children ?? [])
      for (const cell of row.children ?? []) {
        const at = (cell.metadata ?? {}) as { row?: unknown; col?: unknown }
        const text = flatten(cell.text ?? "")
        if (text !== "" && typeof at.row === "number" && typeof at.col === "number")
          writer.add(at.row + 1, at.col + 1, text)
      }
    const page = writer.page(name)
    summaries.push({
      name,
      range: page.range ?? null,
      cells: page.cells,
      ...(page.truncated ? { truncated: true } : {}),
    })
    return pageOf(index + 1, page)
  })
  return Either.right({
    parser: "officeparser",
    pages,
    metadata: {
      ...coreProperties(pkg),
      sheet_count: sheets.length,
      sheets: summaries,
      values: "as stored (dates as serial numbers, number formats not applied)",
      exceljs_error: reason,
    },
  })
}

// --- CSV ---

/** Windows-1252's characters at 0x80–0x9F (where Latin-1 has control characters). */
const windows1252 = Array.from("€\u0081‚ƒ„…†‡ˆ‰Š‹Œ\u008dŽ\u008f\u0090‘’“”•–—˜™š›œ\u009džŸ")

const decodeText = (bytes: Uint8Array): { text: string; encoding: string } => {
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf)
    return { text: new TextDecoder("utf-8").decode(bytes.subarray(3)), encoding: "utf-8" }
  if (bytes[0] === 0xff && bytes[1] === 0xfe)
    return { text: new TextDecoder("utf-16le").decode(bytes.subarray(2)), encoding: "utf-16le" }
  if (bytes[0] === 0xfe && bytes[1] === 0xff)
    return { text: new TextDecoder("utf-16be").decode(bytes.subarray(2)), encoding: "utf-16be" }
  try {
    return { text: new TextDecoder("utf-8", { fatal: true }).decode(bytes), encoding: "utf-8" }
  } catch {
    // Not UTF-8: the usual other encoding of spreadsheet exports. Node 20's TextDecoder decodes
    // "windows-1252" as Latin-1, so its 0x80–0x9F characters (€, quotes, dashes) are mapped here.
    const latin1 = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("latin1")
    const text = latin1.replace(/[\u0080-\u009f]/gu, (c) => windows1252[c.charCodeAt(0) - 0x80] ?? c)
    return { text, encoding: "windows-1252" }
  }
}

/**
 * Calls `onRecord` with each RFC 4180 record (quoted fields may hold the delimiter, doubled quotes and
 * line breaks; blank lines are skipped) until it answers false or the text ends.
 */
const eachCsvRecord = (text: string, delimiter: string, onRecord: (record: Array<string>) => boolean) => {
  let record: Array<string> = []
  let field = ""
  let quoted = false
  let going = true
  const endRecord = () => {
    record.push(field)
    field = ""
    if (!(record.length === 1 && record[0] === "")) going = onRecord(record)
    record = []
  }
  for (let i = 0; i < text.length && going; i++) {
    const ch = text[i]
    if (quoted) {
      if (ch !== '"') field += ch
      else if (text[i + 1] === '"') {
        field += '"'
        i++
      } else quoted = false
    } else if (ch === '"' && field.trim() === "") {
      quoted = true
      field = ""
    } else if (ch === delimiter) {
      record.push(field)
      field = ""
    } else if (ch === "\n" || ch === "\r") {
      if (ch === "\r" && text[i + 1] === "\n") i++
      endRecord()
    } else field += ch
  }
  if (going && (field !== "" || record.length > 0)) endRecord()
}

/** The first `maxRecords` records of CSV text. */
export const csvRecords = (text: string, delimiter: string, maxRecords = Number.POSITIVE_INFINITY) => {
  const records: Array<Array<string>> = []
  eachCsvRecord(text, delimiter, (record) => records.push(record) < maxRecords)
  return records
}

/** The delimiter whose field count is the same, and above one, on most of the first records. */
export const detectDelimiter = (text: string): string => {
  const sample = text.slice(0, 64 * 1024)
  let best = ","
  let bestScore = 0
  for (const delimiter of [",", ";", "\t", "|"]) {
    const counts = csvRecords(sample, delimiter, 50).map((r) => r.length)
    if (counts.length === 0) continue
    const frequency = new Map<number, number>()
    for (const c of counts) frequency.set(c, (frequency.get(c) ?? 0) + 1)
    let mode = 1
    let modeCount = 0
    for (const [count, times] of frequency)
      if (times > modeCount || (times === modeCount && count > mode)) {
        mode = count
        modeCount = times
      }
    if (mode < 2) continue
    const score = (modeCount / counts.length) * 1000 + Math.min(mode, 100)
    if (score > bestScore) {
      best = delimiter
      bestScore = score
    }
  }
  return best
}

const delimiterNames: Record<string, string> = { ",": "comma", ";": "semicolon", "\t": "tab", "|": "pipe" }

const parseCsv = (input: ParseInput): ParseOutput => {
  const { text, encoding } = decodeText(input.bytes)
  const delimiter = detectDelimiter(text)
  const writer = new SheetWriter()
  let rows = 0
  let columns = 0
  eachCsvRecord(text, delimiter, (record) => {
    rows++
    columns = Math.max(columns, record.length)
    record.forEach((value, c) => {
      const cellText = flatten(value)
      if (cellText !== "") writer.add(rows, c + 1, cellText)
    })
    return true
  })
  const page = writer.page(input.fileName)
  return {
    parser: "csv",
    pages: [pageOf(1, page)],
    metadata: {
      encoding,
      delimiter: delimiterNames[delimiter] ?? delimiter,
      rows,
      columns,
      range: page.range ?? null,
      ...(page.truncated ? { truncated: true } : {}),
    },
  }
}

const parse = (input: ParseInput): Effect.Effect<ParseOutput, ParseFailure> => {
  const ext = extensionOf(input.fileName)
  if (ext === ".csv") return Effect.sync(() => parseCsv(input))
  return parseModernOrConverted(input, {
    legacyExtensions,
    oleExtension: ".xls",
    openDocumentExtension: ".ods",
    target: "xlsx",
    parseModern: parseWorkbook,
    convertedParser: "libreoffice+exceljs",
  })
}

export const excelBackend: Backend = {
  name: "excel",
  parse,
}
