import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { PDFDocument, StandardFonts } from "pdf-lib"
import { afterAll, describe, expect, it } from "vitest"
import { ParseFailure } from "../../src/parsing/Backend.ts"
import { convertBytesWithLibreOffice, convertWithLibreOffice } from "../../src/parsing/LibreOffice.ts"
import { backendFor } from "../../src/parsing/Registry.ts"
import { wordBackend } from "../../src/parsing/Word.ts"
import { parseWith, runParsing } from "../support.ts"
import { atFixedTime, inputOf, makeDocx } from "./fixtures.ts"

/**
 * The LibreOffice wrapper against a stand-in `soffice` (a shell script that answers as soffice does),
 * so its arguments, profiles, output lookup, failures and time limit are tested without LibreOffice.
 */

const root = mkdtempSync(join(tmpdir(), "dxs-fake-soffice-"))
afterAll(() => rmSync(root, { recursive: true, force: true }))

/** A stand-in soffice: logs its profile and output directory, then does `behaviour` (ok, fail, hang). */
const fakeSoffice = (name: string, behaviour: "ok" | "fail" | "hang", source = "/dev/null"): string => {
  const script = join(root, name)
  writeFileSync(
    script,
    `#!/bin/sh
outdir=""; target=""; input=""; profile=""
while [ $# -gt 0 ]; do
  case "$1" in
    --outdir) outdir="$2"; shift 2;;
    --convert-to) target="$2"; shift 2;;
    -env:UserInstallation=*) profile="\${1#-env:UserInstallation=}"; shift;;
    --*) shift;;
    *) input="$1"; shift;;
  esac
done
echo "$profile $outdir $target" >> "${script}.log"
case "${behaviour}" in
  hang) sleep 30;;
  fail) echo "Error: source file could not be loaded"; exit 0;;
esac
base=$(basename "$input"); base="\${base%.*}"
cp "${source}" "$outdir/$base.\${target%%:*}"
echo "convert $input as a Writer document -> $outdir/$base.\${target%%:*} using filter : x"
`,
  )
  chmodSync(script, 0o755)
  return script
}

const makePdf = async (pages: ReadonlyArray<string>): Promise<Uint8Array> => {
  const pdf = await PDFDocument.create()
  const font = await pdf.embedFont(StandardFonts.Helvetica)
  for (const text of pages) pdf.addPage([595, 842]).drawText(text, { x: 72, y: 760, size: 12, font })
  return pdf.save()
}

describe("convertWithLibreOffice (stand-in soffice)", () => {
  it("gives every conversion its own profile and output directory", async () => {
    const soffice = fakeSoffice("ok", "ok", "/etc/hostname")
    const input = join(root, "input.docx")
    writeFileSync(input, "x")
    const outputs = await Promise.all(
      [1, 2, 3].map(() => runParsing(convertWithLibreOffice(soffice, input, "pdf", root))),
    )
    expect(outputs.every((o) => o.endsWith("/out/input.pdf"))).toBe(true)
    const lines = readFileSync(`${soffice}.log`, "utf8").trim().split("\n")
    const profiles = lines.map((l) => l.split(" ")[0])
    const outDirs = lines.map((l) => l.split(" ")[1])
    expect(new Set(profiles).size).toBe(3)
    expect(new Set(outDirs).size).toBe(3)
    for (const profile of profiles) expect(profile).toMatch(/^file:\/\/\/.+\/libreoffice-[^/]+\/profile$/u)
  })

  it("fails with LibreOffice's own message when it writes nothing", async () => {
    const input = join(root, "broken.doc")
    writeFileSync(input, "x")
    const error = await runParsing(
      convertWithLibreOffice(fakeSoffice("fail", "fail"), input, "pdf", root),
    ).catch((e) => e)
    expect(error).toBeInstanceOf(ParseFailure)
    expect(error.reason).toBe(
      "LibreOffice could not convert the file (Error: source file could not be loaded)",
    )
  })

  it("stops a conversion past its time limit", async () => {
    const input = join(root, "slow.doc")
    writeFileSync(input, "x")
    const started = Date.now()
    const error = await runParsing(
      convertWithLibreOffice(fakeSoffice("hang", "hang"), input, "pdf", root, 1000),
    ).catch((e) => e)
    expect(error).toBeInstanceOf(ParseFailure)
    expect(error.reason).toBe("LibreOffice did not finish converting the file within 1 s")
    expect(Date.now() - started).toBeLessThan(10_000)
  })

  it("fails when soffice cannot be started", async () => {
    const tools = { libreOffice: join(root, "missing-soffice"), tempDir: root }
    const error = await runParsing(
      convertBytesWithLibreOffice(tools, new Uint8Array([1]), ".doc", "pdf"),
    ).catch((e) => e)
    expect(error).toBeInstanceOf(ParseFailure)
    expect(error.reason).toMatch(/^LibreOffice could not be started/u)
  })
})

describe("Word through LibreOffice (stand-in soffice)", () => {
  it.skipIf(backendFor("x.pdf") === undefined)(
    "reads the converted PDF with the PDF backend: its pages, the document's properties",
    async () => {
      const pdfFile = join(root, "converted.pdf")
      writeFileSync(pdfFile, await makePdf(["Supply Agreement page one", "Page two", "Page three"]))
      const tools = { libreOffice: fakeSoffice("pdf", "ok", pdfFile), tempDir: root }
      const output = await parseWith(
        wordBackend,
        inputOf("agreement.docx", await atFixedTime(makeDocx), { tools }),
      )
      expect(output.parser).toBe("libreoffice+pdfium")
      expect(output.pages.map((p) => p.text)).toEqual(["Supply Agreement page one", "Page two", "Page three"])
      expect(output.metadata).toMatchObject({ page_source: "libreoffice", title: "Supply Agreement" })
    },
  )

  it("falls back to mammoth when the conversion of a .docx fails", async () => {
    const tools = { libreOffice: fakeSoffice("failing", "fail"), tempDir: root }
    const output = await parseWith(
      wordBackend,
      inputOf("agreement.docx", await atFixedTime(makeDocx), { tools }),
    )
    expect(output.parser).toBe("mammoth")
    expect(output.pages).toHaveLength(4)
  })

  it.skipIf(backendFor("x.pdf") === undefined)("reads a .doc converted to PDF", async () => {
    const pdfFile = join(root, "legacy.pdf")
    writeFileSync(pdfFile, await makePdf(["Legacy document"]))
    const tools = { libreOffice: fakeSoffice("legacy", "ok", pdfFile), tempDir: root }
    const output = await parseWith(
      wordBackend,
      inputOf("old.doc", new Uint8Array([0xd0, 0xcf, 0x11, 0xe0]), { tools }),
    )
    expect(output.pages.map((p) => p.text)).toEqual(["Legacy document"])
    expect(output.metadata).toMatchObject({ page_source: "libreoffice" })
  })
})
