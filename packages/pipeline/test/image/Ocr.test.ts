import { existsSync, statSync } from "node:fs"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { ParseFailure } from "../../src/parsing/Backend.ts"
import { ocrPng, ocrWorkerOptions, terminateOcr } from "../../src/parsing/Ocr.ts"
import { runParsing } from "../support.ts"
import { expectWordNear, textImage, wordsOf } from "./fixtures.ts"

afterAll(() => terminateOcr())

const invoice = textImage(["Invoice number 4711", "Acme Widgets Limited", "Total due 1250 EUR"])

describe("ocrPng", () => {
  it("loads the engine and the English model from node_modules only", () => {
    const options = ocrWorkerOptions()
    for (const value of Object.values(options)) {
      if (typeof value === "string") expect(value).not.toMatch(/^[a-z][a-z0-9+.-]*:\/\//i)
    }
    expect(options).toMatchObject({ gzip: true, cacheMethod: "none" })
    expect(statSync(join(options.langPath!, "eng.traineddata.gz")).size).toBeGreaterThan(1_000_000)
    expect(existsSync(options.workerPath!)).toBe(true)
    expect(existsSync(join(options.corePath!, "tesseract-core-simd-lstm.wasm"))).toBe(true)
    expect(options.langPath).toContain("node_modules")
  })

  it("reads the text, line by line, with word boxes in pixels where the words were drawn", async () => {
    const result = await runParsing(ocrPng(invoice.png))
    expect(result.width).toBe(invoice.width)
    expect(result.height).toBe(invoice.height)
    const lines = result.text.split("\n").map(wordsOf)
    expect(lines).toEqual([
      ["invoice", "number", "4711"],
      ["acme", "widgets", "limited"],
      ["total", "due", "1250", "eur"],
    ])
    for (const word of invoice.words) expectWordNear(result.words, word)
    expect(result.confidence).toBeGreaterThan(80)
  })

  it("divides boxes and size by the scale (a page rendered at 2 px per point comes back in points)", async () => {
    const [pixels, points] = await Promise.all([
      runParsing(ocrPng(invoice.png)),
      runParsing(ocrPng(invoice.png, { scale: 2 })),
    ])
    expect(points.width).toBe(invoice.width / 2)
    expect(points.words.map((w) => w.text)).toEqual(pixels.words.map((w) => w.text))
    points.words.forEach((w, i) => {
      const p = pixels.words[i]!
      expect(w.x).toBeCloseTo(p.x / 2, 1)
      expect(w.width).toBeCloseTo(p.width / 2, 1)
    })
  })

  it("serialises concurrent calls through the one worker, each getting its own result", async () => {
    const images = ["alpha bravo", "charlie delta", "echo foxtrot"].map((t) => textImage([t]))
    const results = await Promise.all(images.map((i) => runParsing(ocrPng(i.png))))
    expect(results.map((r) => wordsOf(r.text).join(" "))).toEqual([
      "alpha bravo",
      "charlie delta",
      "echo foxtrot",
    ])
  })

  it("finds no words in a blank image", async () => {
    const blank = textImage([], { width: 300, height: 200 })
    const result = await runParsing(ocrPng(blank.png))
    expect(result).toMatchObject({ text: "", words: [], confidence: 0, width: 300, height: 200 })
  })

  it("fails with a ParseFailure on bytes that are not a PNG, or a PNG it cannot decode, and keeps working", async () => {
    await expect(runParsing(ocrPng(new TextEncoder().encode("not an image")))).rejects.toBeInstanceOf(
      ParseFailure,
    )
    const broken = Buffer.from(invoice.png)
    broken.fill(7, 40)
    await expect(runParsing(ocrPng(broken))).rejects.toThrow(/OCR failed/)
    expect(wordsOf((await runParsing(ocrPng(invoice.png))).text)).toContain("acme")
  })

  it("starts a fresh worker after terminateOcr", async () => {
    await terminateOcr()
    await terminateOcr()
    expect(wordsOf((await runParsing(ocrPng(invoice.png))).text)).toContain("widgets")
  })
})
