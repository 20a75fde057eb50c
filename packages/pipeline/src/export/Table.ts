/**
 * Tables written as files while their rows arrive: CSV (csv-stringify, with a UTF-8 byte order mark so
 * spreadsheets read it as UTF-8) and XLSX (exceljs's streaming workbook writer). Each takes a header and a
 * stream of row batches and gives a stream of bytes, pulled batch by batch: what is in memory is one batch
 * and what the writer has not yet handed on.
 */
import { PassThrough } from "node:stream"
import { stringify } from "csv-stringify/sync"
import { Effect, Stream } from "effect"
import ExcelJS from "exceljs"

/** A cell: text, a number, or nothing. */
export type TableCell = string | number | null

export type TableRow = ReadonlyArray<TableCell>

export const TABLE_FORMATS = {
  csv: { contentType: "text/csv; charset=utf-8", extension: "csv" },
  xlsx: {
    contentType: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    extension: "xlsx",
  },
} as const

export type TableFormat = keyof typeof TABLE_FORMATS

const encoder = new TextEncoder()

const csvText = (rows: ReadonlyArray<TableRow>) =>
  stringify(
    rows.map((r) => r.map((c) => (c === null ? "" : c))),
    { record_delimiter: "\r\n" },
  )

/** The table as CSV bytes: a byte order mark and the header, then one chunk per batch. */
export const csvBytes = <E, R>(
  header: TableRow,
  batches: Stream.Stream<ReadonlyArray<TableRow>, E, R>,
): Stream.Stream<Uint8Array, E, R> =>
  Stream.concat(
    Stream.succeed(encoder.encode(`\uFEFF${csvText([header])}`)),
    Stream.map(batches, (rows) => encoder.encode(csvText(rows))),
  )

/** Resolves once `out` has room again (at once when it has). */
const drained = (out: PassThrough) =>
  Effect.async<void>((resume) => {
    if (!out.writableNeedDrain) return resume(Effect.void)
    const go = () => resume(Effect.void)
    out.once("drain", go)
    out.once("close", go)
    return Effect.sync(() => {
      out.off("drain", go)
      out.off("close", go)
    })
  })

/**
 * The table as an XLSX workbook of one sheet named `sheetName` (header row bold and frozen): the rows are
 * committed to the workbook as each batch comes, waiting whenever the reader is behind.
 */
export const xlsxBytes = <E, R>(
  sheetName: string,
  header: TableRow,
  batches: Stream.Stream<ReadonlyArray<TableRow>, E, R>,
): Stream.Stream<Uint8Array, E, R> =>
  Stream.unwrapScoped(
    Effect.gen(function* () {
      const out = new PassThrough({ highWaterMark: 256 * 1024 })
      const workbook = new ExcelJS.stream.xlsx.WorkbookWriter({
        stream: out,
        useSharedStrings: false,
        useStyles: true,
      })
      const sheet = workbook.addWorksheet(safeSheetName(sheetName), {
        views: [{ state: "frozen", ySplit: 1 }],
      })
      const head = sheet.addRow([...header])
      head.font = { bold: true }
      head.commit()
      const write = Stream.runForEach(batches, (rows) =>
        Effect.zipRight(
          Effect.sync(() => {
            for (const r of rows) sheet.addRow([...r]).commit()
          }),
          drained(out),
        ),
      ).pipe(
        Effect.zipRight(Effect.promise(() => workbook.commit())),
        Effect.tapErrorCause((cause) => Effect.sync(() => out.destroy(new Error(String(cause))))),
      )
      const failure = yield* Effect.forkScoped(write)
      const bytes = Stream.fromAsyncIterable(out as AsyncIterable<Buffer>, (e) => e).pipe(
        Stream.map((b): Uint8Array => new Uint8Array(b.buffer, b.byteOffset, b.byteLength)),
      )
      // The writer's failure (a database error) is the stream's, not a truncated file.
      return Stream.concat(
        Stream.catchAll(bytes, () => Stream.empty),
        Stream.fromEffect(failure.await).pipe(
          Stream.flatMap((exit) => (exit._tag === "Success" ? Stream.empty : Stream.failCause(exit.cause))),
        ),
      ) as Stream.Stream<Uint8Array, E, R>
    }),
  )

/** A worksheet name Excel accepts: at most 31 characters, none of `[]:*?/\`. */
const safeSheetName = (name: string) =>
  name
    .replace(/[[\]:*?/\\]/g, " ")
    .slice(0, 31)
    .trim() || "Results"
