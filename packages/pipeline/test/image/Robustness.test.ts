/**
 * Real third-party images (../shared/corpus, read-only, not in the repository): each must end in pages or
 * a ParseFailure within the parse time limit, parsed the production way (a worker thread under limits).
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { formatOfFileName } from "@dxs/domain/DocumentType"
import { describe, expect, it } from "vitest"
import { ParseFailure } from "../../src/parsing/Backend.ts"
import { imageBackend } from "../../src/parsing/Image.ts"
import { runParse } from "../../src/parsing/Runner.ts"

const corpus = path.resolve(
  fileURLToPath(new URL("../../../../", import.meta.url)),
  "../shared/corpus/robustness/docling",
)
const folders = ["ocr", "tiff", "webp"]

const files = folders.flatMap((folder) => {
  const dir = path.join(corpus, folder, "sources")
  if (!fs.existsSync(dir)) return []
  return fs
    .readdirSync(dir)
    .filter((name) => formatOfFileName(name)?.backend === imageBackend.name)
    .map((name) => path.join(dir, name))
})

const timeoutMs = 120_000

describe.skipIf(files.length === 0)("image robustness corpus", () => {
  for (const file of files) {
    it(
      `${path.relative(corpus, file)} ends in pages or a ParseFailure within ${timeoutMs / 1000} s`,
      async () => {
        const started = performance.now()
        const outcome = await runParse(
          { bytes: fs.readFileSync(file), fileName: path.basename(file), contentType: "" },
          { timeoutMs, libreOffice: undefined },
        ).then(
          (output) => output,
          (e: unknown) => e,
        )
        const seconds = ((performance.now() - started) / 1000).toFixed(1)
        if (outcome instanceof ParseFailure) {
          console.info(`${path.basename(file)}: failed in ${seconds} s: ${outcome.reason}`)
          expect(outcome.reason).not.toMatch(/took longer|stopped unexpectedly/)
          return
        }
        expect(outcome).not.toBeInstanceOf(Error)
        const output = outcome as Awaited<ReturnType<typeof runParse>>
        expect(output.pages.length).toBeGreaterThan(0)
        for (const page of output.pages) expect(page.unit).toBe("px")
        const chars = output.pages.reduce((n, p) => n + p.text.length, 0)
        console.info(
          `${path.basename(file)}: ${output.pages.length} page(s), ${chars} chars, confidence ${String(output.metadata.confidence)}, ${seconds} s`,
        )
      },
      timeoutMs + 30_000,
    )
  }
})

if (files.length === 0) {
  describe("image robustness corpus", () => {
    it.skip(`skipped: no images under ${corpus}/{${folders.join(",")}}/sources (the shared corpus is absent)`, () => {})
  })
}
