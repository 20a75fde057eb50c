import { describe, expect, it } from "vitest"
import { powerPointBackend } from "../../src/parsing/PowerPoint.ts"
import { parseWith } from "../support.ts"
import { atFixedTime, expectGolden, failureReason, inputOf, makePptx, makeXlsx } from "./fixtures.ts"

describe("PowerPoint backend", () => {
  it("reads one page per slide, in order, the slide's text then its notes", async () => {
    const bytes = await atFixedTime(makePptx)
    const output = await parseWith(powerPointBackend, inputOf("review.pptx", bytes))
    expect(output.parser).toBe("officeparser")
    expect(output.pages.map((p) => p.number)).toEqual([1, 2, 3])
    expect(output.pages[0]?.text).toBe(
      "Quarterly Review\nQ1 2024\nPrepared by Finance\n\nNotes:\nWelcome everyone. Mention the record quarter.",
    )
    expect(output.pages[1]?.text).toContain("Region | Revenue\nEMEA | 1,200,000")
    // The third slide has no notes: its notes page's slide-number placeholder is not a note.
    expect(output.pages[2]?.text).toBe("Next steps\n- Hire two engineers\n- Open Berlin office")
    expect(output.metadata).toMatchObject({
      title: "Quarterly Review",
      author: "Ada Lovelace",
      slide_count: 3,
    })
    await expectGolden("review.pptx", output)
  })

  it("fails on a workbook named .pptx", async () => {
    const bytes = await atFixedTime(makeXlsx)
    expect(await failureReason(powerPointBackend, inputOf("numbers.pptx", bytes))).toBe(
      "the file is an Excel workbook, not a PowerPoint presentation",
    )
  })

  it("fails over the page limit", async () => {
    const bytes = await atFixedTime(makePptx)
    const limits = { maxPages: 2, maxDecompressedBytes: 500 * 1024 * 1024 }
    expect(await failureReason(powerPointBackend, inputOf("review.pptx", bytes, { limits }))).toBe(
      "the presentation has 3 slides, more than the limit of 2 pages per document",
    )
  })

  it("needs LibreOffice for .ppt and .odp", async () => {
    for (const ext of [".ppt", ".odp"])
      expect(await failureReason(powerPointBackend, inputOf(`old${ext}`, new Uint8Array([1, 2, 3])))).toBe(
        `reading a ${ext} file needs LibreOffice, which is not installed`,
      )
  })
})
