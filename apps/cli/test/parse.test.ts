import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { onePagePdf } from "@dxs/pipeline/parsing/OnePagePdf"
import { Dxs, killSpawned } from "@dxs/testing/DxsProcess"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

/**
 * `dxs parse` as a process: documents converted offline. The environment names a database that does not
 * exist: the command must not need one.
 */

let dir = ""
const env = (): NodeJS.ProcessEnv => ({
  PATH: process.env.PATH,
  HOME: process.env.HOME,
  DATABASE_URL: "postgres://nobody@127.0.0.1:1/nothing",
  DATA_DIR: path.join(dir, "no-data-dir"),
  PARSE_THREADS: "2",
})

const run = async (args: ReadonlyArray<string>) => {
  const p = new Dxs(args, env())
  const exit = await p.waitForExit(120_000)
  return { code: exit.code, stdout: p.stdout, stderr: p.stderr }
}

const file = (name: string, content: string | Uint8Array) => {
  const at = path.join(dir, name)
  fs.writeFileSync(at, content)
  return at
}

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "dxs-parse-"))
  file(
    "rates.html",
    "<html><body><h1>Rates</h1><table><tr><th>Currency</th><th>Rate</th></tr><tr><td>EUR</td><td>1.00</td></tr></table></body></html>",
  )
  file("people.csv", "name,city\nAda,London\nGrace,New York\n")
  file("letter.pdf", new TextEncoder().encode(onePagePdf("Dear reader, the invoice is attached.")))
  file("archive.zip", "PK\u0003\u0004 not really")
  file(
    "statement.eml",
    [
      "From: billing@example.com",
      "To: ada@example.com",
      "Subject: Your statement",
      "Date: Fri, 01 Mar 2024 10:15:00 +0000",
      "MIME-Version: 1.0",
      'Content-Type: multipart/mixed; boundary="b1"',
      "",
      "--b1",
      "Content-Type: text/plain; charset=utf-8",
      "",
      "Dear Ada, your statement is attached.",
      "--b1",
      'Content-Type: text/csv; name="balance.csv"',
      'Content-Disposition: attachment; filename="balance.csv"',
      "",
      "account,balance",
      "current,42.00",
      "--b1--",
      "",
    ].join("\r\n"),
  )
})

afterAll(() => {
  killSpawned()
  fs.rmSync(dir, { recursive: true, force: true })
})

describe("dxs parse", () => {
  it("writes a document as Markdown to standard output, its tables as GitHub tables", async () => {
    const r = await run(["parse", path.join(dir, "rates.html")])
    expect(r.stderr).toBe("")
    expect(r.code).toBe(0)
    expect(r.stdout).toBe("# Rates\n\n| Currency | Rate |\n| --- | --- |\n| EUR | 1.00 |\n")
  })

  it("writes an e-mail's attachments after it, each under its file name", async () => {
    const r = await run(["parse", path.join(dir, "statement.eml")])
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).toContain("Dear Ada, your statement is attached.")
    expect(r.stdout).toContain(
      "## Attachment: balance.csv\n\n## Sheet: balance.csv (A1:B2)\n\n| account | balance |\n| --- | --- |\n| current | 42.00 |",
    )
  })

  it("writes several documents as one JSON array, in the order given", async () => {
    const r = await run([
      "parse",
      "--format",
      "json",
      path.join(dir, "people.csv"),
      path.join(dir, "letter.pdf"),
    ])
    expect(r.code, r.stderr).toBe(0)
    const documents = JSON.parse(r.stdout)
    expect(documents.map((d: any) => [d.file_name, d.type])).toEqual([
      ["people.csv", "Excel"],
      ["letter.pdf", "PDF"],
    ])
    const table = documents[0].pages[0].blocks.find((b: any) => b.kind === "table").table
    expect(table.rows).toEqual([
      ["name", "city"],
      ["Ada", "London"],
      ["Grace", "New York"],
    ])
    expect(documents[1].pages[0].blocks[0]).toMatchObject({ kind: "paragraph", page: 1 })
    expect(documents[1].pages[0].blocks[0].text).toContain("Dear reader")
  })

  it("writes one file per document into --out, goes on past files it cannot read and exits 1 naming them", async () => {
    const out = path.join(dir, "out")
    const r = await run([
      "parse",
      "--out",
      out,
      "-f",
      "text",
      path.join(dir, "rates.html"),
      path.join(dir, "missing.pdf"),
      path.join(dir, "archive.zip"),
      path.join(dir, "people.csv"),
    ])
    expect(r.code).toBe(1)
    expect(r.stderr).toContain(`${path.join(dir, "missing.pdf")}: no such file`)
    expect(r.stderr).toContain(`${path.join(dir, "archive.zip")}: no parser for .zip files`)
    expect(fs.readdirSync(out).sort()).toEqual(["people.txt", "rates.txt"])
    expect(fs.readFileSync(path.join(out, "rates.txt"), "utf8")).toContain("Currency | Rate\nEUR | 1.00")
  })

  it("refuses a missing file list or an unknown format with its usage (exit 2)", async () => {
    const none = await run(["parse"])
    expect(none.code).toBe(2)
    expect(none.stderr).toContain("missing FILE")
    const xml = await run(["parse", "--format", "xml", path.join(dir, "rates.html")])
    expect(xml.code).toBe(2)
    expect(xml.stderr).toContain("unknown format 'xml'")
    expect(xml.stderr).toContain("Usage: dxs parse FILE…")
  })
})
