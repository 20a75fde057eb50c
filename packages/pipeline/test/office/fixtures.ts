import type { ParseOutput } from "../../src/parsing/Backend.ts"
import { expectGoldenRecord, parseInput } from "../support.ts"

/**
 * The golden-output check of the office backends; the generated files themselves are shared with the API's
 * tests (`@dxs/testing/OfficeFiles`).
 */
export { atFixedTime, csvText, fixedNow, makeDocx, makePptx, makeXlsx } from "@dxs/testing/OfficeFiles"

const goldenDir = new URL("./golden/", import.meta.url)

/** Compares the output with golden/<name>.json (see ../support.ts). */
export const expectGolden = (name: string, output: ParseOutput): Promise<void> =>
  expectGoldenRecord(new URL(`${name}.json`, goldenDir), {
    parser: output.parser,
    metadata: output.metadata,
    pages: output.pages.map((p) => ({ number: p.number, text: p.text })),
  })

export { failureReason } from "../support.ts"

export const inputOf = parseInput
