import * as fs from "node:fs/promises"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { ParseFailure } from "../src/parsing/Backend.ts"
import { MAX_TIME_FACTOR, PageImageUnavailable, renderPageImage, runParse } from "../src/parsing/Runner.ts"

const backendModule = fileURLToPath(new URL("./runner/backend.ts", import.meta.url))
const file = (fileName: string, text = "hello") => ({
  bytes: new TextEncoder().encode(text),
  fileName,
  contentType: "application/octet-stream",
})

const failure = async (p: Promise<unknown>) => {
  const e = await p.then(
    () => undefined,
    (e: unknown) => e,
  )
  expect(e).toBeInstanceOf(ParseFailure)
  return (e as ParseFailure).reason
}

describe("runParse", () => {
  it("parses in a thread and brings back pages, metadata and attachment bytes; the temp dir is removed", async () => {
    const out = await runParse(file("ok.test", "Grüße"), {
      backendModule,
      libreOffice: undefined,
      limits: { maxPages: 7, maxDecompressedBytes: 1 },
    })
    expect(out.parser).toBe("runner-test")
    expect(out.pages).toEqual([{ number: 1, text: "Grüße", width: 612, height: 792, unit: "pt", layout: [] }])
    expect(out.metadata).toMatchObject({ maxPages: 7, libreOffice: null })
    expect(new TextDecoder().decode(out.attachments?.[0]?.bytes)).toBe("inner")
    const tempDir = out.metadata.tempDir as string
    expect(tempDir).toMatch(/dxs-parse-/)
    await expect(fs.stat(tempDir)).rejects.toThrow()
  })

  it("stops a parse that runs past the time limit, and the process carries on", async () => {
    const started = Date.now()
    expect(await failure(runParse(file("hang.test"), { backendModule, timeoutMs: 1500 }))).toBe(
      "parsing took longer than 1.5 s",
    )
    expect(Date.now() - started).toBeLessThan(10_000)
    expect((await runParse(file("ok.test"), { backendModule })).pages).toHaveLength(1)
  })

  it("gives a parse that reports slow steps (OCR'd pages) more time, but not without end", async () => {
    // 2.4 s of work against a 1.5 s limit: each reported step earns SLOW_STEP_ALLOWANCE_MS more.
    const out = await runParse(file("steady.test"), { backendModule, timeoutMs: 1500 })
    expect(out.pages).toHaveLength(1)
    // Reports earn time only up to MAX_TIME_FACTOR times the limit.
    expect(await failure(runParse(file("endless.test"), { backendModule, timeoutMs: 1500 }))).toBe(
      `parsing took longer than ${(1500 * MAX_TIME_FACTOR) / 1000} s`,
    )
    // Without reports the same limit still stops a parse.
    expect(await failure(runParse(file("hang.test"), { backendModule, timeoutMs: 1500 }))).toBe(
      "parsing took longer than 1.5 s",
    )
  })

  it("stops a parse that needs more memory than allowed, and the process carries on", async () => {
    expect(await failure(runParse(file("hog.test"), { backendModule, memoryMb: 64 }))).toBe(
      "parsing needed more than 64 MB of memory",
    )
    expect((await runParse(file("ok.test"), { backendModule })).pages).toHaveLength(1)
  })

  it("reports a backend's ParseFailure, other errors and a thread that exits", async () => {
    expect(await failure(runParse(file("refuse.test"), { backendModule }))).toBe("the file is encrypted")
    expect(await failure(runParse(file("boom.test"), { backendModule }))).toBe("backend exploded")
    expect(await failure(runParse(file("exit.test"), { backendModule }))).toBe(
      "parsing stopped unexpectedly (exit code 3)",
    )
  })

  it("stops when cancelled", async () => {
    const controller = new AbortController()
    const pending = runParse(file("hang.test"), { backendModule, signal: controller.signal })
    setTimeout(() => controller.abort(), 300)
    expect(await failure(pending)).toBe("parsing was cancelled")
  })

  it("names the extension when no backend handles it (the real registry)", async () => {
    expect(await failure(runParse(file("data.unknownext")))).toBe("no parser for .unknownext files")
    expect(await failure(runParse(file("README")))).toBe(
      "the file name has no extension, so no parser applies",
    )
  })
})

describe("renderPageImage", () => {
  it("draws a page through the backend in a thread", async () => {
    const png = await renderPageImage(file("ok.test"), 2, { backendModule })
    expect([...png]).toEqual([0x89, 0x50, 0x4e, 0x47, 2])
  })

  it("says so when the format has no page images (the real registry's text backend)", async () => {
    const e = await renderPageImage(file("notes.txt"), 1).catch((e: unknown) => e)
    expect(e).toBeInstanceOf(PageImageUnavailable)
  })
})
