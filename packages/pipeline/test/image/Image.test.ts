import sharp from "sharp"
import { afterAll, describe, expect, it } from "vitest"
import { ParseFailure, type ParseInput, type ParseOutput } from "../../src/parsing/Backend.ts"
import { imageBackend, maxPixels } from "../../src/parsing/Image.ts"
import { ocrPng, terminateOcr } from "../../src/parsing/Ocr.ts"
import { backendFor } from "../../src/parsing/Registry.ts"
import { parseWith, renderWith, runParsing } from "../support.ts"
import { bmp, expectGolden, expectWordNear, input, type TextImage, textImage, wordsOf } from "./fixtures.ts"

/** OCR throughput over this file's fixtures, printed at the end. */
const timing = { pages: 0, ms: 0 }

afterAll(async () => {
  await terminateOcr()
  const rssMb = Math.round(process.resourceUsage().maxRSS / 1024)
  const perSecond = timing.ms === 0 ? 0 : (timing.pages / timing.ms) * 1000
  console.info(
    `image OCR: ${timing.pages} pages in ${(timing.ms / 1000).toFixed(1)} s = ${perSecond.toFixed(2)} pages/s, peak RSS ${rssMb} MB`,
  )
})

const parse = async (parseInput: ParseInput): Promise<ParseOutput> => {
  const started = performance.now()
  const output = await parseWith(imageBackend, parseInput)
  timing.ms += performance.now() - started
  timing.pages += output.pages.length
  return output
}

const failure = async (parseInput: ParseInput): Promise<string> => {
  const error = await parseWith(imageBackend, parseInput).then(
    () => undefined,
    (e: unknown) => e,
  )
  expect(error).toBeInstanceOf(ParseFailure)
  return (error as ParseFailure).reason
}

const invoice = textImage(["Invoice number 4711", "Acme Widgets Limited", "Total due 1250 EUR"])
const invoiceWords = [
  "invoice",
  "number",
  "4711",
  "acme",
  "widgets",
  "limited",
  "total",
  "due",
  "1250",
  "eur",
]

/** The fixture parsed as one page, its words read and boxed where they were drawn. */
const expectInvoicePage = (output: ParseOutput, image: TextImage = invoice, tolerance = 8) => {
  expect(output.pages).toHaveLength(1)
  const page = output.pages[0]!
  expect(page).toMatchObject({ number: 1, width: image.width, height: image.height, unit: "px" })
  expect(wordsOf(page.text)).toEqual(expect.arrayContaining(invoiceWords))
  expect(page.text.split("\n").length).toBe(3)
  for (const word of image.words) expectWordNear(page.layout, word, tolerance)
  expect(output.metadata.confidence).toBeGreaterThan(75)
}

describe("image backend", () => {
  it("is registered for the image extensions", () => {
    for (const name of ["a.png", "b.JPG", "c.jpeg", "d.tif", "e.tiff", "f.webp", "g.gif", "h.bmp"]) {
      expect(backendFor(name)?.name).toBe("image")
    }
  })

  it("OCRs a PNG", async () => {
    const output = await parse(input("invoice.png", invoice.png))
    expectInvoicePage(output)
    expect(output.metadata).toMatchObject({ format: "png", width: 1240, height: 288, pages: 1 })
    await expectGolden("invoice.png", output)
  })

  it("OCRs a JPEG and reports its resolution", async () => {
    const jpeg = await sharp(invoice.png).jpeg({ quality: 85 }).withDensity(300).toBuffer()
    const output = await parse(input("invoice.jpg", jpeg))
    expectInvoicePage(output)
    expect(output.metadata).toMatchObject({ format: "jpeg", dpi: 300 })
    await expectGolden("invoice.jpg", output)
  })

  it("OCRs a WebP", async () => {
    const webp = await sharp(invoice.png).webp({ quality: 80 }).toBuffer()
    const output = await parse(input("invoice.webp", webp))
    expectInvoicePage(output)
    await expectGolden("invoice.webp", output)
  })

  it("applies the EXIF orientation: boxes are in the upright image", async () => {
    // Stored turned a quarter left; orientation 6 says "turn right to display".
    const jpeg = await sharp(invoice.png)
      .rotate(-90)
      .jpeg({ quality: 90 })
      .withMetadata({ orientation: 6 })
      .toBuffer()
    expect((await sharp(jpeg).metadata()).width).toBe(invoice.height)
    const output = await parse(input("rotated.jpeg", jpeg))
    expectInvoicePage(output)
    expect(output.metadata).toMatchObject({ width: invoice.width, height: invoice.height })
    await expectGolden("rotated.jpeg", output)
  })

  it("reads black text on a transparent background (flattened on white)", async () => {
    const clear = textImage(["Invoice number 4711", "Acme Widgets Limited", "Total due 1250 EUR"], {
      transparent: true,
    })
    expectInvoicePage(await parse(input("transparent.png", clear.png)), clear)
  })

  it("makes one page per frame of a multi-page TIFF", async () => {
    const frames = [["Page one alpha"], ["Page two bravo"], ["Page three charlie"]].map((l) => textImage(l))
    const tiff = await sharp(
      frames.map((f) => f.png),
      { join: { animated: true } },
    )
      .tiff({ compression: "lzw" })
      .toBuffer()
    const output = await parse(input("pages.tiff", tiff))
    expect(output.pages.map((p) => p.number)).toEqual([1, 2, 3])
    expect(output.pages.map((p) => wordsOf(p.text))).toEqual([
      ["page", "one", "alpha"],
      ["page", "two", "bravo"],
      ["page", "three", "charlie"],
    ])
    output.pages.forEach((page, i) => {
      for (const word of frames[i]!.words) expectWordNear(page.layout, word)
    })
    expect(output.metadata).toMatchObject({ format: "tiff", pages: 3 })
    await expectGolden("pages.tiff", output)

    const second = await renderWith(imageBackend, input("pages.tiff", tiff), 2)
    expect(await sharp(second).metadata()).toMatchObject({ format: "png", width: 1240, height: 144 })
    expect(
      await sharp(second)
        .stats()
        .then((s) => s.channels[0]!.min),
    ).toBeLessThan(50)
    await expect(renderWith(imageBackend, input("pages.tiff", tiff), 4)).rejects.toThrow(
      /page 4 does not exist/,
    )

    const reason = await failure(
      input("pages.tiff", tiff, { limits: { maxPages: 2, maxDecompressedBytes: 1e9 } }),
    )
    expect(reason).toBe("the image has 3 pages, more than the limit of 2")
  })

  it("takes only the first frame of an animated GIF as the page", async () => {
    const frames = [["first frame text"], ["second frame text"]].map((l) => textImage(l))
    const gif = await sharp(
      frames.map((f) => f.png),
      { join: { animated: true } },
    )
      .gif()
      .toBuffer()
    const output = await parse(input("anim.gif", gif))
    expect(output.pages.map((p) => wordsOf(p.text))).toEqual([["first", "frame", "text"]])
    expect(output.metadata).toMatchObject({ format: "gif", pages: 1, animationFrames: 2 })
    await expectGolden("anim.gif", output)
  })

  it("reads BMP (decoded by Skia, which libvips cannot)", async () => {
    const { data, info } = await sharp(invoice.png).removeAlpha().raw().toBuffer({ resolveWithObject: true })
    const output = await parse(input("invoice.bmp", bmp(data, info.width, info.height)))
    expectInvoicePage(output)
    expect(output.metadata).toMatchObject({ format: "bmp", dpi: 300 })
    await expectGolden("invoice.bmp", output)
    const png = await renderWith(imageBackend, input("invoice.bmp", bmp(data, info.width, info.height)), 1)
    expect(await sharp(png).metadata()).toMatchObject({ format: "png", width: 1240, height: 288 })
  })

  it("upscales a small low-resolution image for OCR, keeping boxes in its own pixels", async () => {
    const small = textImage(["Invoice number 4711", "Acme Widgets Limited", "Total due 1250 EUR"], {
      fontSize: 13,
      width: 400,
      left: 20,
    })
    const output = await parse(input("small.png", small.png))
    expect(output.pages[0]).toMatchObject({ width: small.width, height: small.height })
    expect(wordsOf(output.pages[0]!.text)).toEqual(expect.arrayContaining(invoiceWords))
    for (const word of small.words) expectWordNear(output.pages[0]!.layout, word, 4)
    expect(output.metadata).not.toHaveProperty("downscaled")
  })

  it("downscales a frame beyond the pixel cap, says so, and keeps boxes in the original pixels", async () => {
    const big = textImage(["Oversized scan of a poster", "Acme Widgets Limited"], {
      width: 6000,
      height: 3600,
      fontSize: 120,
    })
    const output = await parse(input("big.png", big.png))
    const scale = Math.sqrt(maxPixels / (6000 * 3600))
    expect(output.metadata).toMatchObject({
      width: 6000,
      height: 3600,
      maxPixels,
      downscaled: [{ page: 1, width: Math.floor(6000 * scale), height: Math.floor(3600 * scale) }],
    })
    expect(output.pages[0]).toMatchObject({ width: 6000, height: 3600 })
    for (const word of big.words) expectWordNear(output.pages[0]!.layout, word, 12)
    const png = await renderWith(imageBackend, input("big.png", big.png), 1)
    const rendered = await sharp(png).metadata()
    expect(rendered.width * rendered.height).toBeLessThanOrEqual(maxPixels)
    await expectGolden("big.png", output)
  })

  const framed = textImage(["SPEED MART (519537-X)", "JALAN KAPAR, MUKIM KAPAR", "Total Sales RM 82.80"], {
    width: 880,
    height: 1600,
    fontSize: 28,
    left: 180,
    top: 300,
    ink: "#aaaaaa",
    darkBands: 40,
  })

  it("reads a faint page framed by black bands again without them when nothing was read", async () => {
    // As it is, tesseract finds no text on it at all.
    expect((await runParsing(ocrPng(framed.png))).words).toEqual([])
    const output = await parse(input("framed.png", framed.png))
    expect(output.pages[0]).toMatchObject({ width: 880, height: 1600 })
    expect(wordsOf(output.pages[0]!.text)).toEqual(expect.arrayContaining(["speed", "mart", "kapar", "82"]))
    // Boxes are in the page's own pixels, not in the cropped image's.
    for (const word of framed.words.filter((w) => ["SPEED", "JALAN", "MUKIM", "Sales"].includes(w.text)))
      expectWordNear(output.pages[0]!.layout, word, 6)
  })

  it("reads a framed page again without its bands when only a speck was read, and keeps the fuller reading", async () => {
    const speck = textImage(["Hok4p98"], { width: 200, height: 80, fontSize: 28, left: 10, top: 50 })
    const png = await sharp(framed.png)
      .composite([{ input: speck.png, left: 600, top: 60 }])
      .png()
      .toBuffer()
    // As it is, tesseract reads the speck and nothing of the text.
    expect((await runParsing(ocrPng(png))).words.map((w) => w.text)).toEqual(["Hok4p98"])
    const output = await parse(input("specks.png", png))
    expect(wordsOf(output.pages[0]!.text)).toEqual(expect.arrayContaining(["speed", "mart", "kapar", "82"]))
    for (const word of framed.words.filter((w) => ["SPEED", "JALAN", "MUKIM", "Sales"].includes(w.text)))
      expectWordNear(output.pages[0]!.layout, word, 6)
  })

  it("gives a page with no text for a blank image", async () => {
    const blank = await sharp({ create: { width: 800, height: 600, channels: 3, background: "#ffffff" } })
      .png()
      .toBuffer()
    const output = await parse(input("blank.png", blank))
    expect(output.pages).toEqual([{ number: 1, text: "", width: 800, height: 600, unit: "px", layout: [] }])
    expect(output.metadata).toMatchObject({ confidence: 0 })
  })

  it("fails clearly on files that are not images", async () => {
    const text = new TextEncoder().encode("Dear customer,\nthis is a text file named like a picture.\n")
    expect(await failure(input("letter.png", text))).toMatch(/^not a valid image: /)
    expect(await failure(input("empty.jpg", new Uint8Array()))).toBe("not a valid image: the file is empty")
    const svg = new TextEncoder().encode('<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"/>')
    expect(await failure(input("drawing.png", svg))).toBe(
      "not a valid image: svg is not a supported image format",
    )
    const badBmp = Buffer.concat([Buffer.from("BM"), Buffer.alloc(60, 0x41)])
    expect(await failure(input("broken.bmp", badBmp))).toMatch(/^not a valid image: unreadable BMP/)
    await expect(renderWith(imageBackend, input("letter.png", text), 1)).rejects.toBeInstanceOf(ParseFailure)
  })

  it("reads what is left of a truncated image and flags the page, or fails cleanly", async () => {
    const jpeg = await sharp(invoice.png).jpeg().toBuffer()
    const output = await parse(input("truncated.jpg", jpeg.subarray(0, Math.floor(jpeg.length * 0.7))))
    expect(output.metadata).toMatchObject({ damagedPages: [1] })
    expect(wordsOf(output.pages[0]!.text)).toEqual(expect.arrayContaining(["invoice", "number", "4711"]))
    for (const bytes of [invoice.png.subarray(0, 200), jpeg.subarray(0, 400)]) {
      const outcome = await parseWith(imageBackend, input("truncated.png", bytes)).then(
        (o) => o.pages.length,
        (e: unknown) => e,
      )
      if (typeof outcome !== "number") expect(outcome).toBeInstanceOf(ParseFailure)
    }
  })
})
