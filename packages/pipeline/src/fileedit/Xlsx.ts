/**
 * Filling a spreadsheet template (exceljs keeps the workbook's styles): placeholders in cells, and tables
 * under header rows of agent and dimension names (see `@dxs/domain/FileEdit`).
 */
import {
  cellAddress,
  FILE_EDIT_MAX_PLACEHOLDERS,
  FILE_EDIT_MAX_ROWS,
  type FilledValue,
  fillTable,
  type HeaderColumn,
  headerColumns,
  isWholePlaceholder,
  type PlaceholderProblem,
  placeholdersIn,
  type ResultIndex,
  resolvePlaceholder,
  valueText,
} from "@dxs/domain/FileEdit"
import { Effect } from "effect"
import ExcelJS from "exceljs"
import { type FillOutcome, FillRefused, type Progress } from "./Fill.ts"

/** The text of a cell as a reader sees it (rich text joined, a formula's result), or undefined when empty. */
const cellText = (cell: ExcelJS.Cell): string | undefined => {
  const v = cell.value
  if (v === null || v === undefined) return undefined
  if (typeof v === "string") return v
  if (typeof v === "number" || typeof v === "boolean") return String(v)
  if (v instanceof Date) return v.toISOString()
  if (typeof v === "object") {
    if ("richText" in v && Array.isArray(v.richText)) return v.richText.map((r) => r.text).join("")
    if ("formula" in v || "sharedFormula" in v) return undefined
    if ("text" in v && typeof v.text === "string") return v.text
  }
  return String(v)
}

/** Whether the cell's value is text the template's author wrote (not a formula, not a number). */
const isTextCell = (cell: ExcelJS.Cell): boolean => {
  const v = cell.value
  return typeof v === "string" || (typeof v === "object" && v !== null && "richText" in v)
}

interface PlaceholderCell {
  readonly cell: ExcelJS.Cell
  readonly text: string
  readonly location: string
}

interface Table {
  readonly sheet: ExcelJS.Worksheet
  readonly row: number
  readonly columns: ReadonlyArray<HeaderColumn>
  readonly header: string
  readonly location: string
}

/** Fills a spreadsheet template; a file exceljs cannot read is a defect (the task's attempt fails with it). */
export const fillXlsx = <E>(
  bytes: Uint8Array,
  index: ResultIndex,
  progress: Progress<E>,
): Effect.Effect<FillOutcome, FillRefused | E> =>
  Effect.gen(function* () {
    const workbook = new ExcelJS.Workbook()
    yield* Effect.promise(() => workbook.xlsx.load(bytes as unknown as ArrayBuffer))
    const cells: Array<PlaceholderCell> = []
    const tables: Array<Table> = []
    let placeholderCount = 0
    for (const sheet of workbook.worksheets) {
      sheet.eachRow({ includeEmpty: false }, (row, rowNumber) => {
        const texts: Array<{ column: number; text: string }> = []
        let onlyText = true
        row.eachCell({ includeEmpty: false }, (cell, column) => {
          if (cell.isMerged && cell.master !== cell) return
          const text = cellText(cell)
          if (text === undefined) {
            if (cell.value !== null && cell.value !== undefined) onlyText = false
            return
          }
          if (text.trim() === "") return
          if (!isTextCell(cell)) onlyText = false
          texts.push({ column, text })
          if (isTextCell(cell) && text.includes("{{")) {
            const found = placeholdersIn(text).length
            if (found > 0) {
              placeholderCount += found
              cells.push({ cell, text, location: cellAddress(sheet.name, column, rowNumber) })
            }
          }
        })
        const columns = onlyText ? headerColumns(index, texts) : undefined
        if (columns !== undefined) {
          const first = columns[0]!.column
          const last = columns[columns.length - 1]!.column
          tables.push({
            sheet,
            row: rowNumber,
            columns,
            header: texts.map((t) => t.text.trim()).join(" | "),
            location:
              first === last
                ? cellAddress(sheet.name, first, rowNumber)
                : `${cellAddress(sheet.name, first, rowNumber)}:${cellAddress(sheet.name, last, rowNumber).replace(/^.*!/, "")}`,
          })
        }
      })
      if (placeholderCount > FILE_EDIT_MAX_PLACEHOLDERS)
        return yield* new FillRefused({
          message: `The template has more than ${FILE_EDIT_MAX_PLACEHOLDERS} placeholders: split it into smaller templates.`,
        })
    }

    const problems: Array<PlaceholderProblem> = []
    // Names over placeholders (`Total` above `{{Total}}`) are labels of a form, not the header of a table.
    const placeholderCells = new Set(cells.map((c) => c.cell))
    const labelRow = (t: Table) => {
      const below = t.sheet.findRow(t.row + 1)
      return t.columns.some((c) => {
        const cell = below?.findCell(c.column)
        return cell !== undefined && placeholderCells.has(cell)
      })
    }
    const fills = tables
      .filter((t) => !labelRow(t))
      .map((t) => ({ table: t, fill: fillTable(index, t.columns) }))
    const rowsToWrite = fills.reduce((n, f) => n + f.fill.rows.length, 0)
    if (rowsToWrite > FILE_EDIT_MAX_ROWS)
      return yield* new FillRefused({
        message: `The template's tables would take ${rowsToWrite} rows, more than ${FILE_EDIT_MAX_ROWS}: use fewer dimension columns or split the template.`,
      })
    const total = cells.length + rowsToWrite
    let completed = 0
    yield* progress(completed, total)

    const cache = new Map<string, ReturnType<typeof resolvePlaceholder>>()
    const resolve = (inner: string) => {
      let r = cache.get(inner)
      if (r === undefined) {
        r = resolvePlaceholder(index, inner)
        cache.set(inner, r)
      }
      return r
    }
    for (const { cell, text, location } of cells) {
      const found = placeholdersIn(text)
      const whole = isWholePlaceholder(text)
      let out = ""
      let at = 0
      let single: FilledValue | undefined
      for (const p of found) {
        const r = resolve(p.inner)
        out += text.slice(at, p.index)
        if (r.ok) {
          out += valueText(r.value)
          if (whole) single = r.value
        } else {
          out += p.raw
          problems.push({ placeholder: p.raw, location, message: r.message })
        }
        at = p.index + p.raw.length
      }
      out += text.slice(at)
      if (out !== text) cell.value = single !== undefined ? single : out
      completed++
      if (completed % 500 === 0) yield* progress(completed, total)
    }

    for (const { table, fill } of fills) {
      for (const message of fill.problems)
        problems.push({ placeholder: table.header, location: table.location, message })
      const blocked = firstOccupied(table, fill.rows.length)
      if (blocked !== undefined) {
        problems.push({
          placeholder: table.header,
          location: table.location,
          message: `The table needs ${fill.rows.length} rows below its header, but ${blocked} is not empty: clear the rows under the header (or move what is there), then fill again. Nothing was written for this table.`,
        })
        completed += fill.rows.length
        continue
      }
      for (const [i, row] of fill.rows.entries()) {
        for (const { column, value } of row) table.sheet.getCell(table.row + 1 + i, column).value = value
        completed++
        if (completed % 500 === 0) yield* progress(completed, total)
      }
    }
    yield* progress(total, total)
    const out = yield* Effect.promise(() => workbook.xlsx.writeBuffer())
    return { bytes: new Uint8Array(out as ArrayBuffer), problems }
  })

/** The first non-empty cell under the table's header columns within `rows` rows, as an address. */
const firstOccupied = (table: Table, rows: number): string | undefined => {
  for (let i = 1; i <= rows; i++) {
    const row = table.sheet.findRow(table.row + i)
    if (row === undefined) continue
    for (const { column } of table.columns) {
      const cell = row.findCell(column)
      if (cell === undefined) continue
      if ((cellText(cell) ?? "").trim() !== "" || cell.isMerged)
        return cellAddress(table.sheet.name, column, table.row + i)
    }
  }
  return undefined
}
