import { describe, expect, it } from "vitest"
import { columnLetters, csvRecords, detectDelimiter, excelBackend } from "../../src/parsing/Excel.ts"
import { parseWith } from "../support.ts"
import { atFixedTime, csvText, expectGolden, failureReason, inputOf, makeDocx, makeXlsx } from "./fixtures.ts"

const utf8 = (text: string) => new TextEncoder().encode(text)

describe("Excel backend", () => {
  it("reads one page per sheet with A1 references, ISO dates, formula results, merged cells once", async () => {
    const bytes = await atFixedTime(makeXlsx)
    const output = await parseWith(excelBackend, inputOf("invoices.xlsx", bytes))
    expect(output.parser).toBe("exceljs")
    expect(output.pages.map((p) => p.number)).toEqual([1, 2])
    const invoices = output.pages[0]?.text ?? ""
    expect(invoices.split("\n")[0]).toBe("Sheet: Invoices (A1:D6)")
    expect(invoices).toContain("\nA1: Invoices Q1\n")
    expect(invoices).toContain("A3: INV-001 | B3: 2024-01-15 | C3: Acme Corp | D3: 1250.5")
    expect(invoices).toContain("C4: Globex Ltd")
    expect(invoices).toContain("A5: Total | D5: 2230.5")
    expect(invoices).toContain("C6: 2024-04-30T14:05:00 | D6: 20%")
    expect(output.pages[1]?.text.split("\n")[0]).toBe("Sheet: Rates [hidden] (A1:B3)")
    expect(output.metadata).toMatchObject({ title: "Invoices 2024", author: "Ada Lovelace", sheet_count: 2 })
    await expectGolden("invoices.xlsx", output)
  })

  it("reads a CSV: delimiter and quoting detected, one page", async () => {
    const output = await parseWith(excelBackend, inputOf("invoices.csv", utf8(csvText)))
    expect(output.pages).toHaveLength(1)
    expect(output.metadata).toMatchObject({ delimiter: "semicolon", rows: 3, columns: 4, encoding: "utf-8" })
    await expectGolden("invoices.csv", output)
  })

  it("detects comma, tab and semicolon delimiters and keeps quoted line breaks", () => {
    expect(detectDelimiter('a,b,c\n1,"2,5",3\n')).toBe(",")
    expect(detectDelimiter("a\tb\tc\n1,5\t2\t3\n")).toBe("\t")
    expect(detectDelimiter("a;b\n1,5;2,5\n3,5;4\n")).toBe(";")
    expect(csvRecords('name,note\nAcme,"two\nlines, and ""quotes"""\r\n', ",")).toEqual([
      ["name", "note"],
      ["Acme", 'two\nlines, and "quotes"'],
    ])
  })

  it("reads a windows-1252 CSV", async () => {
    const bytes = new Uint8Array(Buffer.from("Name,Price\nCaf\xe9,\x804\n", "latin1"))
    const output = await parseWith(excelBackend, inputOf("menu.csv", bytes))
    expect(output.pages[0]?.text).toBe("Sheet: menu.csv (A1:B2)\nA1: Name | B1: Price\nA2: Café | B2: €4")
    expect(output.metadata).toMatchObject({ encoding: "windows-1252" })
  })

  it("cuts a very large sheet with a note", async () => {
    const rows = Array.from({ length: 5000 }, (_, r) => [1, 2, 3, 4, 5].map((c) => r * 10 + c).join(","))
    const output = await parseWith(excelBackend, inputOf("big.csv", utf8(`${rows.join("\n")}\n`)))
    const lines = output.pages[0]?.text.split("\n") ?? []
    expect(lines[0]).toBe("Sheet: big.csv (A1:E5000)")
    expect(lines[4000]).toBe("A4000: 39991 | B4000: 39992 | C4000: 39993 | D4000: 39994 | E4000: 39995")
    expect(lines.at(-1)).toBe(
      "[truncated: 5,000 more non-empty cells from row 4001 to row 5000 are not shown; the first 20,000 are]",
    )
    expect(output.metadata).toMatchObject({ rows: 5000, columns: 5, truncated: true })
  })

  it("names columns past Z", () => {
    expect([1, 26, 27, 52, 703, 16384].map(columnLetters)).toEqual(["A", "Z", "AA", "AZ", "AAA", "XFD"])
  })

  it("fails on a Word document named .xlsx", async () => {
    const bytes = await atFixedTime(makeDocx)
    expect(await failureReason(excelBackend, inputOf("report.xlsx", bytes))).toBe(
      "the file is a Word document, not an Excel workbook",
    )
  })

  it("needs LibreOffice for .xls and .ods", async () => {
    for (const ext of [".xls", ".ods"])
      expect(await failureReason(excelBackend, inputOf(`old${ext}`, new Uint8Array([1, 2, 3])))).toBe(
        `reading a ${ext} file needs LibreOffice, which is not installed`,
      )
  })
})
