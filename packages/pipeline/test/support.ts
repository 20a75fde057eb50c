/**
 * What every backend's tests share: a ParseInput with test defaults, the golden-file mechanics
 * (UPDATE_GOLDEN=1 rewrites a file in the repository's JSON style; review the diff), and the
 * ParseFailure reason of a parse that must fail.
 */
import { spawnSync } from "node:child_process"
import { existsSync } from "node:fs"
import * as fs from "node:fs/promises"
import { tmpdir } from "node:os"
import { fileURLToPath } from "node:url"
import { tableGrid } from "@dxs/domain/Tables"
import { Effect, Either } from "effect"
import { expect } from "vitest"
import {
  type Backend,
  defaultLimits,
  ParseFailure,
  type ParseInput,
  type ParseOutput,
} from "../src/parsing/Backend.ts"

export const parseInput = (
  fileName: string,
  bytes: Uint8Array,
  overrides: Partial<ParseInput> = {},
): ParseInput => ({
  bytes,
  fileName,
  contentType: "application/octet-stream",
  limits: defaultLimits,
  tools: { libreOffice: undefined, tempDir: tmpdir() },
  ...overrides,
})

const biome = fileURLToPath(new URL("../../../node_modules/.bin/biome", import.meta.url))

/**
 * The expected record stored in `file`, or undefined after UPDATE_GOLDEN=1 wrote `actual` there.
 * A missing file fails, saying how to create it.
 */
export const goldenExpectation = async (file: URL, actual: unknown): Promise<unknown | undefined> => {
  if (process.env.UPDATE_GOLDEN === "1") {
    await fs.mkdir(new URL("./", file), { recursive: true })
    await fs.writeFile(file, `${JSON.stringify(actual, null, 2)}\n`)
    if (existsSync(biome)) spawnSync(biome, ["format", "--write", fileURLToPath(file)], { stdio: "ignore" })
    return undefined
  }
  const text = await fs.readFile(file, "utf8").catch(() => {
    throw new Error(`no golden output ${file.pathname}: run with UPDATE_GOLDEN=1 and review it`)
  })
  return JSON.parse(text)
}

/** Compares a record with its golden file exactly (as JSON). */
export const expectGoldenRecord = async (file: URL, actual: unknown): Promise<void> => {
  const expected = await goldenExpectation(file, actual)
  if (expected !== undefined) expect(JSON.parse(JSON.stringify(actual))).toEqual(expected)
}

/**
 * A parse by a backend (or a PDF engine) as a promise, as the parsing thread runs it: it rejects with the
 * failure itself (a ParseFailure, or PdfiumRefused), and with a defect's error otherwise.
 */
export const parseWith = <E>(
  backend: { readonly parse: (input: ParseInput) => Effect.Effect<ParseOutput, E> },
  input: ParseInput,
): Promise<ParseOutput> => runParsing(backend.parse(input))

/** A page image drawn by a backend (or a PDF engine), as a promise; see `parseWith`. */
export const renderWith = <E>(
  backend: { readonly renderPage?: (input: ParseInput, pageNumber: number) => Effect.Effect<Uint8Array, E> },
  input: ParseInput,
  pageNumber: number,
): Promise<Uint8Array> => runParsing(backend.renderPage!(input, pageNumber))

/** A parsing Effect as a promise that rejects with its failure itself (as tests of promises expect). */
export const runParsing = <A, E>(effect: Effect.Effect<A, E>): Promise<A> =>
  Effect.runPromise(Effect.either(effect)).then(Either.getOrThrowWith((e) => e))

/** The ParseFailure reason of a parse that must fail (any other error fails the test). */
export const failureReason = async (backend: Backend, input: ParseInput): Promise<string> => {
  const error = await parseWith(backend, input).then(
    () => undefined,
    (e: unknown) => e,
  )
  expect(error).toBeInstanceOf(ParseFailure)
  return (error as ParseFailure).reason
}

/**
 * The structure of a parse, as the table golden files hold it: per page its tables (box to the whole
 * unit, `continued`, the full grid, the spanning cells as [row, column, rows, columns], the header cells
 * as [row, column]) and its blocks (kind, text, level, table).
 */
export const structureRecord = (output: ParseOutput) => ({
  pages: output.pages.map((p) => ({
    number: p.number,
    tables: (p.tables ?? []).map((t) => ({
      bbox: t.bbox?.map(Math.round) ?? null,
      continued: t.continued,
      rows: tableGrid(t),
      spans: t.cells
        .filter((c) => c.row_span > 1 || c.column_span > 1)
        .map((c) => [c.row, c.column, c.row_span, c.column_span]),
      headers: t.cells.filter((c) => c.header).map((c) => [c.row, c.column]),
    })),
    blocks: (p.blocks ?? []).map((b) => ({
      kind: b.kind,
      text: b.text,
      ...(b.level === undefined ? {} : { level: b.level }),
      ...(b.table === undefined ? {} : { table: b.table }),
    })),
  })),
})

export type StructureRecord = ReturnType<typeof structureRecord>

/** Compares the structure of a parse with `file` (UPDATE_GOLDEN=1 rewrites it); returns the expected record. */
export const expectStructure = async (file: URL, output: ParseOutput): Promise<StructureRecord> => {
  const actual = structureRecord(output)
  const stored = await goldenExpectation(file, actual)
  const expected = (stored ?? actual) as StructureRecord
  expect(actual).toEqual(expected)
  return expected
}
