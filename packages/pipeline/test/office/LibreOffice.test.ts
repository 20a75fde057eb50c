import { execFileSync } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { convertBytesWithLibreOffice } from "../../src/parsing/LibreOffice.ts"
import { backendFor } from "../../src/parsing/Registry.ts"
import { wordBackend } from "../../src/parsing/Word.ts"
import { parseWith, runParsing } from "../support.ts"
import { atFixedTime, inputOf, makeDocx } from "./fixtures.ts"

const soffice = (() => {
  try {
    return execFileSync("which", ["soffice"], { encoding: "utf8" }).trim() || undefined
  } catch {
    return undefined
  }
})()
if (soffice === undefined)
  console.warn("LibreOffice (soffice) is not installed: its conversion tests are skipped")

describe.skipIf(soffice === undefined)("LibreOffice conversions", () => {
  // Made when the suite runs, not when it is collected: a skipped suite's afterAll does not run.
  const tools = { libreOffice: soffice, tempDir: "" }
  beforeAll(() => {
    tools.tempDir = mkdtempSync(join(tmpdir(), "dxs-office-test-"))
  })
  afterAll(() => rmSync(tools.tempDir, { recursive: true, force: true }))

  it("converts a .docx to PDF, twice at once (own profile and output directory each)", async () => {
    const docx = await atFixedTime(makeDocx)
    const [a, b] = await Promise.all([
      runParsing(convertBytesWithLibreOffice(tools, docx, ".docx", "pdf")),
      runParsing(convertBytesWithLibreOffice(tools, docx, ".docx", "pdf")),
    ])
    for (const pdf of [a, b]) expect(Buffer.from(pdf.subarray(0, 5)).toString("latin1")).toBe("%PDF-")
  })

  it("reads a .docx through LibreOffice: true pages from the PDF backend, else mammoth", async () => {
    const docx = await atFixedTime(makeDocx)
    const output = await parseWith(wordBackend, inputOf("agreement.docx", docx, { tools }))
    if (backendFor("x.pdf")) {
      expect(output.metadata).toMatchObject({ page_source: "libreoffice", title: "Supply Agreement" })
      expect(output.pages.length).toBeGreaterThanOrEqual(4)
    } else expect(output.metadata).toMatchObject({ page_source: "page-breaks" })
    expect(output.pages.map((p) => p.text).join("\n")).toContain("Governing law")
  })

  it("reads a legacy .doc made by LibreOffice from the .docx", async () => {
    const doc = await runParsing(
      convertBytesWithLibreOffice(tools, await atFixedTime(makeDocx), ".docx", "doc"),
    )
    const output = await parseWith(wordBackend, inputOf("agreement.doc", doc, { tools }))
    expect(output.parser).toMatch(/^libreoffice\+/u)
    expect(output.pages.map((p) => p.text).join("\n")).toContain("Governing law")
  })
})
