import * as fs from "node:fs/promises"
import * as path from "node:path"
import { type ContentDocument, type ContentFormat, contentJson, renderContent } from "@dxs/domain/Content"
import { mimeTypeOfFileName } from "@dxs/domain/DocumentType"
import { ParseFailure } from "@dxs/pipeline/parsing/Backend"
import { convertFile } from "@dxs/pipeline/parsing/Convert"
import { detectLibreOffice, ParsePool } from "@dxs/pipeline/parsing/Runner"
import { Effect } from "effect"
import { CliError } from "./CliError.ts"
import type { Config } from "./Config.ts"

/**
 * `dxs parse FILE… [--format markdown|json|text] [--out DIR]`: documents converted offline, without a server
 * or a database, exactly as uploads are parsed (the same parse threads and limits), written as Markdown,
 * JSON or text. Files are parsed in parallel, as many at once as there are parsing threads; the output keeps
 * the order of the command line.
 */

const extensions: Readonly<Record<ContentFormat, string>> = { markdown: "md", json: "json", text: "txt" }

type Outcome =
  | { readonly _tag: "Read"; readonly file: string; readonly content: ContentDocument }
  | { readonly _tag: "Failed"; readonly file: string; readonly reason: string }

/** The file's bytes, or a ParseFailure saying why they cannot be read. */
const readBytes = (file: string) =>
  Effect.tryPromise({
    try: () => fs.readFile(file),
    catch: (e) => {
      const code = (e as NodeJS.ErrnoException).code
      return new ParseFailure({
        reason: code === "ENOENT" ? "no such file" : `cannot read it (${code ?? String(e)})`,
      })
    },
  })

const readAndConvert = (file: string, pool: ParsePool, config: Config): Effect.Effect<Outcome> =>
  Effect.gen(function* () {
    const bytes = yield* readBytes(file)
    const fileName = path.basename(file)
    const content = yield* Effect.tryPromise({
      try: (signal) =>
        convertFile(
          {
            bytes: new Uint8Array(bytes),
            fileName,
            contentType: mimeTypeOfFileName(fileName) ?? "application/octet-stream",
          },
          {
            pool,
            signal,
            timeoutMs: config.parsing.timeoutSeconds * 1000,
            memoryMb: config.parsing.memoryMb,
            limits: {
              maxPages: config.parsing.maxPages,
              maxDecompressedBytes: config.parsing.maxDecompressedBytes,
            },
            libreOffice: detectLibreOffice(),
            transcription: config.parsing.transcription,
          },
        ),
      catch: (e) => e,
    }).pipe(Effect.catchAll((e) => (e instanceof ParseFailure ? Effect.fail(e) : Effect.die(e))))
    return { _tag: "Read", file, content } satisfies Outcome
  }).pipe(
    Effect.catchTag("ParseFailure", (e) =>
      Effect.succeed<Outcome>({ _tag: "Failed", file, reason: e.reason }),
    ),
  )

/** Output names in DIR: the file's name without its extension, or with it when two inputs share a stem. */
const outputNames = (files: ReadonlyArray<string>, format: ContentFormat): Array<string> => {
  const stems = files.map((f) => path.parse(f).name || path.basename(f))
  return files.map((f, i) => {
    const stem = stems[i]!
    const shared = stems.filter((s) => s === stem).length > 1
    return `${shared ? path.basename(f) : stem}.${extensions[format]}`
  })
}

const stdoutText = (
  read: ReadonlyArray<Extract<Outcome, { _tag: "Read" }>>,
  format: ContentFormat,
): string => {
  if (read.length === 1) return renderContent(read[0]!.content, format)
  if (format === "json")
    return `${JSON.stringify(
      read.map((r) => contentJson(r.content)),
      null,
      2,
    )}\n`
  return read.map((r) => `==> ${r.file} <==\n${renderContent(r.content, format)}`).join("\n")
}

export const parseFiles = (
  config: Config,
  command: {
    readonly files: ReadonlyArray<string>
    readonly format: ContentFormat
    readonly out: string | undefined
  },
) =>
  Effect.gen(function* () {
    const threads = Math.max(1, Math.min(config.parsing.threads, command.files.length))
    const pool = yield* Effect.acquireRelease(
      Effect.sync(() => new ParsePool({ threads })),
      (p) => Effect.promise(() => p.close()),
    )
    const outcomes = yield* Effect.forEach(command.files, (file) => readAndConvert(file, pool, config), {
      concurrency: threads,
    })
    const read = outcomes.filter((o): o is Extract<Outcome, { _tag: "Read" }> => o._tag === "Read")
    if (command.out === undefined) {
      if (read.length > 0) {
        const text = stdoutText(read, command.format)
        yield* Effect.promise(
          () => new Promise<void>((resolve) => process.stdout.write(text, () => resolve())),
        )
      }
    } else {
      const dir = command.out
      const names = outputNames(command.files, command.format)
      yield* Effect.tryPromise({
        try: async () => {
          await fs.mkdir(dir, { recursive: true })
          for (const [i, outcome] of outcomes.entries())
            if (outcome._tag === "Read")
              await fs.writeFile(path.join(dir, names[i]!), renderContent(outcome.content, command.format))
        },
        catch: (e) => new CliError({ message: `cannot write into ${dir}: ${String(e)}`, exitCode: 1 }),
      })
    }
    const failed = outcomes.filter((o): o is Extract<Outcome, { _tag: "Failed" }> => o._tag === "Failed")
    if (failed.length > 0)
      return yield* new CliError({
        message: failed.map((f) => `${f.file}: ${f.reason}`).join("\ndxs: "),
        exitCode: 1,
      })
  }).pipe(Effect.scoped)
