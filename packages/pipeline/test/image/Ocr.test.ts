import { existsSync, statSync } from "node:fs"
import { join } from "node:path"
import type Tesseract from "tesseract.js"
import { afterAll, describe, expect, it } from "vitest"
import { ParseFailure } from "../../src/parsing/Backend.ts"
import {
  consistentReadings,
  ocrPng,
  ocrWorkerOptions,
  terminateOcr,
  withoutSpecks,
} from "../../src/parsing/Ocr.ts"
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

describe("specks at a line's ends", () => {
  /** A word as tesseract gives it: its text, its box from x0 to x1 on a line 100–135 px down, its confidence. */
  const word = (text: string, x0: number, x1: number, confidence = 90, y0 = 100, y1 = 135) =>
    ({ text, bbox: { x0, x1, y0, y1 }, confidence }) as Tesseract.Word
  const texts = (line: ReadonlyArray<Tesseract.Word>) => withoutSpecks(line).map((w) => w.text)
  const line = [word("Jalan", 312, 400), word("Ipoh,", 421, 490), word("51200", 511, 600)]

  it.each([
    ["a dot of dirt read as a digit, far before the line", [word("1", 24, 37, 63, 106, 117), ...line]],
    ["a sliver of a border read with no confidence", [word("©", 6, 10, 15), ...line]],
    ["marks at both ends", [word("‘", 6, 12, 0, 120, 126), ...line, word("g", 880, 888, 0)]],
  ])("drops %s", (_, words) => {
    expect(texts(words)).toEqual(["Jalan", "Ipoh,", "51200"])
  })

  it.each([
    ["a quantity of the line's height in a column of its own", [word("1", 24, 40, 91), ...line]],
    ["a small mark close to its word (a space away)", [word("-", 290, 300, 10, 115, 120), ...line]],
    ["a small letter of the print (x-height), apart", [word("x", 24, 40, 95, 114, 135), ...line]],
    ["a word of three letters or more read with no confidence", [word("Tel", 6, 60, 5), ...line]],
  ])("keeps %s", (_, words) => {
    expect(texts(words)).toEqual(words.map((w) => w.text))
  })

  it("keeps a line's only word, however small", () => {
    expect(texts([word("1", 24, 37, 63, 106, 117)])).toEqual(["1"])
  })
})

describe("a page's readings of one word made consistent", () => {
  const read = (...words: ReadonlyArray<readonly [string, number]>) =>
    consistentReadings(words.map(([text, confidence]) => ({ text, confidence })))

  it("reads a word a letter of like shape off as the page's surer reading of it, in its case and marks", () => {
    expect(
      read(["AEON", 78], ["AEOM", 61], ["MALURT", 43], ["TAMAN", 95], ["MALURI,", 87], ["Aeon", 70]),
    ).toEqual(["AEON", "AEON", "MALURI", "TAMAN", "MALURI,", "Aeon"])
    // The summed readings decide: two unsure readings of one form outweigh one of the other.
    expect(read(["(AFON", 60], ["AEON", 80], ["AFON)", 55])).toEqual(["(AFON", "AFON", "AFON)"])
  })

  it("keeps a sure reading, a reading not surer by a clear margin, words of other shapes and short words", () => {
    // Two real words a letter of like shape apart, each read surely.
    expect(read(["night", 95], ["might", 96], ["might", 93])).toEqual(["night", "might", "might"])
    expect(read(["MALURT", 80], ["MALURI", 85])).toEqual(["MALURT", "MALURI"])
    // R and J are of no like shape; three letters are too few to tell a misreading.
    expect(read(["RAYA", 40], ["JAYA", 95], ["FLR", 30], ["FLA", 95])).toEqual(["RAYA", "JAYA", "FLR", "FLA"])
    expect(read(["5100", 10], ["5700", 95], ["GST:", 20])).toEqual(["5100", "5700", "GST:"])
  })
})
