import { spawn } from "node:child_process"
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises"
import { basename, extname, join } from "node:path"
import { pathToFileURL } from "node:url"
import { Effect } from "effect"
import { fromPromise, ParseFailure, type ParseTools } from "./Backend.ts"

/**
 * Conversions through LibreOffice (`soffice --headless --convert-to`), used when it is installed: the
 * only way to the true pages of a Word file, and to legacy formats (.doc, .ppt, .xls, OpenDocument).
 *
 * Each conversion gets its own output directory and its own user profile: two soffice processes
 * sharing a profile hand their work to one another or fail, and converted files from two conversions
 * must not meet in one directory.
 */

export const libreOfficeTimeoutMs = 120_000

const tail = (text: string): string => {
  const lines = text
    .split(/\r?\n/u)
    .map((l) => l.trim())
    .filter((l) => l !== "" && !/^convert /iu.test(l))
  return lines.slice(-2).join(" ").slice(0, 300)
}

/**
 * Converts `inputFile` to `targetExt` ("pdf", "docx", "xlsx"…, optionally "ext:FilterName") and answers
 * the converted file's path, inside a new directory under `tempDir`. Failures are ParseFailures.
 */
export const convertWithLibreOffice = (
  soffice: string,
  inputFile: string,
  targetExt: string,
  tempDir: string,
  timeoutMs: number = libreOfficeTimeoutMs,
): Effect.Effect<string, ParseFailure> =>
  Effect.gen(function* () {
    const workDir = yield* Effect.promise(() => mkdtemp(join(tempDir, "libreoffice-")))
    const outDir = join(workDir, "out")
    const profileDir = join(workDir, "profile")
    return yield* Effect.promise(() => mkdir(outDir)).pipe(
      Effect.zipRight(runConversion(soffice, inputFile, targetExt, outDir, profileDir, timeoutMs)),
      Effect.onError(() => Effect.promise(() => rm(workDir, { recursive: true, force: true }))),
    )
  })

const runConversion = (
  soffice: string,
  inputFile: string,
  targetExt: string,
  outDir: string,
  profileDir: string,
  timeoutMs: number,
): Effect.Effect<string, ParseFailure> =>
  Effect.gen(function* () {
    const args = [
      "--headless",
      "--invisible",
      "--nologo",
      "--nodefault",
      "--nofirststartwizard",
      "--nolockcheck",
      "--norestore",
      `-env:UserInstallation=${pathToFileURL(profileDir).href}`,
      "--convert-to",
      targetExt,
      "--outdir",
      outDir,
      inputFile,
    ]
    const output = yield* fromPromise(
      () =>
        new Promise<string>((resolve, reject) => {
          // Its own process group: soffice starts soffice.bin, and a timeout must end both.
          const child = spawn(soffice, args, { stdio: ["ignore", "pipe", "pipe"], detached: true })
          let log = ""
          const collect = (chunk: Buffer) => {
            if (log.length < 16_384) log += chunk.toString("utf8")
          }
          child.stdout.on("data", collect)
          child.stderr.on("data", collect)
          let timedOut = false
          const timer = setTimeout(() => {
            timedOut = true
            try {
              if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL")
            } catch {
              child.kill("SIGKILL")
            }
          }, timeoutMs)
          child.on("error", (error) => {
            clearTimeout(timer)
            reject(
              new ParseFailure({ reason: `LibreOffice could not be started (${soffice}): ${error.message}` }),
            )
          })
          child.on("close", (code, signal) => {
            clearTimeout(timer)
            if (timedOut) {
              reject(
                new ParseFailure({
                  reason: `LibreOffice did not finish converting the file within ${Math.round(timeoutMs / 1000)} s`,
                }),
              )
              return
            }
            const detail = tail(log)
            if (signal !== null) {
              reject(
                new ParseFailure({ reason: `LibreOffice stopped (${signal}) while converting the file` }),
              )
              return
            }
            resolve(detail === "" ? `exit code ${code}` : detail)
          })
        }),
    )
    const ext = targetExt.split(":")[0] ?? targetExt
    const expected = join(outDir, `${basename(inputFile, extname(inputFile))}.${ext}`)
    const found = yield* Effect.promise(() =>
      stat(expected).then(
        (s) => s.isFile() && s.size > 0,
        () => false,
      ),
    )
    if (found) return expected
    const produced = (yield* Effect.promise(() => readdir(outDir))).filter((f) =>
      f.toLowerCase().endsWith(`.${ext.toLowerCase()}`),
    )
    if (produced.length === 1 && produced[0] !== undefined) return join(outDir, produced[0])
    return yield* new ParseFailure({ reason: `LibreOffice could not convert the file (${output})` })
  })

/** Converts bytes of a file with extension `fromExt` and answers the converted bytes; cleans up after itself. */
export const convertBytesWithLibreOffice = (
  tools: ParseTools,
  bytes: Uint8Array,
  fromExt: string,
  targetExt: string,
  timeoutMs: number = libreOfficeTimeoutMs,
): Effect.Effect<Uint8Array, ParseFailure> => {
  const soffice = tools.libreOffice
  if (soffice === undefined) return Effect.fail(new ParseFailure({ reason: "LibreOffice is not installed" }))
  const remove = (dir: string) => Effect.promise(() => rm(dir, { recursive: true, force: true }))
  return Effect.acquireUseRelease(
    Effect.promise(() => mkdtemp(join(tools.tempDir, "libreoffice-input-"))),
    (inputDir) =>
      Effect.gen(function* () {
        // A name of our own: the uploaded one may hold anything, and soffice reads some characters as options.
        const inputFile = join(inputDir, `document${fromExt}`)
        yield* Effect.promise(() => writeFile(inputFile, bytes))
        const outputFile = yield* convertWithLibreOffice(
          soffice,
          inputFile,
          targetExt,
          tools.tempDir,
          timeoutMs,
        )
        return yield* Effect.promise(async () => new Uint8Array(await readFile(outputFile))).pipe(
          // The conversion's directory is the parent of its output directory.
          Effect.ensuring(remove(join(outputFile, "..", ".."))),
        )
      }),
    remove,
  )
}
