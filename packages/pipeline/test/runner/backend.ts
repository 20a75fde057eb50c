/**
 * A backend for Runner tests only, loaded by path through `runParse({ backendModule })`. What it does
 * depends on the file name: it hangs, exhausts memory, throws, refuses, or parses (echoing the bytes, and
 * saying which thread parsed it and how many parses that thread has run).
 */
import { threadId } from "node:worker_threads"
import { Effect } from "effect"
import {
  type Backend,
  ParseFailure,
  type ParseInput,
  type ParseOutput,
  reportSlowStep,
} from "../../src/parsing/Backend.ts"

/** Parses this thread has run (module state survives between the jobs of a pooled thread). */
let parses = 0

const parse = async ({ bytes, fileName, limits, tools }: ParseInput): Promise<ParseOutput> => {
  parses += 1
  if (fileName.startsWith("hang")) for (;;) {}
  // Reports progress for ever: the overall cap must still stop it.
  if (fileName.startsWith("endless"))
    for (;;) {
      await new Promise((r) => setTimeout(r, 100))
      reportSlowStep()
    }
  // Slow but making progress: six steps of 400 ms, each reported like an OCR'd page.
  if (fileName.startsWith("steady")) {
    for (let step = 0; step < 6; step++) {
      await new Promise((r) => setTimeout(r, 400))
      reportSlowStep()
    }
  }
  if (fileName.startsWith("hog")) {
    const hoard: Array<Array<number>> = []
    for (;;) hoard.push(Array.from({ length: 100_000 }, (_, i) => i * Math.random()))
  }
  if (fileName.startsWith("boom")) throw new TypeError("backend exploded")
  if (fileName.startsWith("exit")) process.exit(3)
  const text = new TextDecoder().decode(bytes)
  return {
    parser: "runner-test",
    pages: [{ number: 1, text, width: 612, height: 792, unit: "pt", layout: [] }],
    metadata: {
      maxPages: limits.maxPages,
      tempDir: tools.tempDir,
      libreOffice: tools.libreOffice ?? null,
      threadId,
      parsesInThread: parses,
    },
    attachments: [
      { fileName: "inner.txt", contentType: "text/plain", bytes: new TextEncoder().encode("inner") },
    ],
  }
}

const backend: Backend = {
  name: "runner-test",
  parse: (input) =>
    input.fileName.startsWith("refuse")
      ? Effect.sync(() => {
          parses += 1
        }).pipe(Effect.zipRight(Effect.fail(new ParseFailure({ reason: "the file is encrypted" }))))
      : Effect.promise(() => parse(input)),
  renderPage: (_input, pageNumber) => Effect.succeed(new Uint8Array([0x89, 0x50, 0x4e, 0x47, pageNumber])),
}

export default backend
