/**
 * Helpers of the image backend's tests: inputs, where words are expected, and the golden-file check of the
 * non-OCR fields. The images themselves are drawn by `@dxs/testing/ImageFiles` (shared with the API's tests).
 */

import type { InkBox } from "@dxs/testing/ImageFiles"
import { expect } from "vitest"
import type { LayoutItem, ParseInput, ParseOutput } from "../../src/parsing/Backend.ts"
import { expectGoldenRecord, parseInput } from "../support.ts"

export { bmp, type InkBox, type TextImage, textImage } from "@dxs/testing/ImageFiles"

export const input = (fileName: string, bytes: Uint8Array, overrides: Partial<ParseInput> = {}): ParseInput =>
  parseInput(fileName, bytes, { tools: { libreOffice: undefined, tempDir: "/nonexistent" }, ...overrides })

/** Lower-case words of an OCR text, punctuation dropped. */
export const wordsOf = (text: string): ReadonlyArray<string> =>
  text
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((w) => w !== "")

/** The OCR word for `expected`, whose box must lie within `tolerance` px of where it was drawn. */
export const expectWordNear = (layout: ReadonlyArray<LayoutItem>, expected: InkBox, tolerance = 8): void => {
  const norm = (t: string) => wordsOf(t).join(" ")
  const want = norm(expected.text)
  const found =
    layout.find((w) => norm(w.text) === want) ??
    layout.find((w) => want.length > 3 && norm(w.text).includes(want))
  expect(found, `OCR word "${expected.text}"`).toBeDefined()
  const w = found!
  expect(Math.abs(w.x - expected.x)).toBeLessThanOrEqual(tolerance)
  expect(Math.abs(w.y - expected.y)).toBeLessThanOrEqual(tolerance)
  expect(Math.abs(w.x + w.width - (expected.x + expected.width))).toBeLessThanOrEqual(tolerance)
  expect(Math.abs(w.y + w.height - (expected.y + expected.height))).toBeLessThanOrEqual(tolerance)
  expect(w.confidence).toBeGreaterThan(50)
}

/** The fields of a parse that do not depend on OCR: compared with `golden/<name>.json`. */
const goldenRecord = (output: ParseOutput) => {
  const { confidence: _, ...metadata } = output.metadata
  return {
    parser: output.parser,
    metadata,
    pages: output.pages.map((p) => ({ number: p.number, width: p.width, height: p.height, unit: p.unit })),
  }
}

/** UPDATE_GOLDEN=1 rewrites the golden file; review the diff before committing it. */
export const expectGolden = (name: string, output: ParseOutput): Promise<void> =>
  expectGoldenRecord(new URL(`./golden/${name}.json`, import.meta.url), goldenRecord(output))
