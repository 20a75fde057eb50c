import * as fs from "node:fs"
import { fileURLToPath } from "node:url"
import MailComposer from "nodemailer/lib/mail-composer/index.js"
import type Mail from "nodemailer/lib/mailer/index.js"
import { PDFDocument, StandardFonts } from "pdf-lib"
import { describe, expect, it } from "vitest"
import { ParseFailure, type ParseOutput } from "../../src/parsing/Backend.ts"
import { emailBackend } from "../../src/parsing/Email.ts"
import { outlookMessageBackend } from "../../src/parsing/Outlook.ts"
import { backendFor } from "../../src/parsing/Registry.ts"
import { runParse } from "../../src/parsing/Runner.ts"
import { pageChars } from "../../src/parsing/TextPages.ts"
import { parseWith } from "../support.ts"
import { expectGolden, expectTextPages, failureReason, input } from "../text/golden.ts"

const here = new URL("./", import.meta.url)
const corpus = fileURLToPath(new URL("../../../../../shared/corpus/robustness/", import.meta.url))

const compose = async (mail: Mail.Options): Promise<Uint8Array> =>
  new Uint8Array(await new MailComposer(mail).compile().build())

const date = new Date("2024-03-01T10:15:00Z")

const invoicePdf = async (): Promise<Uint8Array> => {
  const doc = await PDFDocument.create({ updateMetadata: false })
  const page = doc.addPage([300, 120])
  page.drawText("Invoice 42 - total due EUR 1,234.56", {
    x: 20,
    y: 60,
    size: 12,
    font: await doc.embedFont(StandardFonts.Helvetica),
  })
  return doc.save({ useObjectStreams: false })
}

const forwarded = () =>
  compose({
    from: "Carol Client <carol@client.example>",
    to: "alice@example.com",
    subject: "Purchase order 7781",
    date: new Date("2024-02-27T08:00:00Z"),
    messageId: "<po-7781@client.example>",
    text: "Please deliver 12 units by 15 March 2024.\n\nCarol",
  })

/** A message with a text and an HTML body, a PDF, an unnamed PDF, an attached message and an inline logo. */
const invoiceMessage = async () => {
  const pdf = await invoicePdf()
  const inner = await forwarded()
  const bytes = await compose({
    from: '"Ålice Exämple" <alice@example.com>',
    to: ["Bob Builder <bob@example.com>", "carol@client.example"],
    cc: "Dan <dan@example.com>",
    subject: "Rechnung Nr. 42 – Übersicht ✓ 請求書",
    date,
    messageId: "<invoice-42@example.com>",
    text: "Hello Bob,\r\n\r\nattached is invoice 42 (EUR 1,234.56, due 31 March 2024).\r\n\r\nRegards,\r\nAlice  ",
    html: '<p>Hello Bob,</p><p>attached is <b>invoice 42</b>.</p><img src="cid:logo@example.com" alt="Acme">',
    attachments: [
      { filename: "invoice-42.pdf", content: Buffer.from(pdf), contentType: "application/pdf" },
      { content: Buffer.from(pdf), contentType: "application/pdf" },
      { content: Buffer.from(inner), contentType: "message/rfc822" },
      {
        filename: "logo.png",
        content: Buffer.from("\x89PNG fake logo"),
        contentType: "image/png",
        cid: "logo@example.com",
      },
    ],
  })
  return { bytes, pdf, inner }
}

const htmlOnlyMessage = () =>
  compose({
    from: "billing@shop.example",
    to: "customer@example.com",
    subject: "Your receipt",
    date,
    messageId: "<receipt-1@shop.example>",
    html: `<html><head><style>td { color: red }</style></head><body>
      <h1>Receipt</h1><p>Thank you for your order &amp; your trust.</p>
      <table><tr><th>Item</th><th>Price</th></tr><tr><td>Widget</td><td>$19.99</td></tr>
      <tr><td>Shipping</td><td>$4.00</td></tr></table><p><a href="https://shop.example/r/1">View online</a></p>
      <script>alert(1)</script></body></html>`,
  })

const longMessage = () =>
  compose({
    from: "Reporter <reporter@example.com>",
    to: "team@example.com",
    subject: "Weekly status",
    date,
    messageId: "<weekly@example.com>",
    text: Array.from(
      { length: 40 },
      (_, i) =>
        `Section ${i + 1}. ${"The project is on track and the budget is within the agreed limits. ".repeat(3)}`,
    ).join("\n\n"),
  })

const parseEml = (name: string, bytes: Uint8Array) =>
  parseWith(emailBackend, input(name, bytes, { contentType: "message/rfc822" }))

describe("email backend", () => {
  it("parses a message with attachments like its golden output", async () => {
    const { bytes, pdf, inner } = await invoiceMessage()
    const output = await parseEml("invoice.eml", bytes)
    expectTextPages(output)
    await expectGolden(here, "invoice.eml", output)
    expect(output.pages[0]!.text).toMatch(/^From: Ålice Exämple <alice@example.com>\nTo: Bob Builder/)
    expect(output.metadata).toMatchObject({
      subject: "Rechnung Nr. 42 – Übersicht ✓ 請求書",
      date: "2024-03-01T10:15:00.000Z",
      message_id: "<invoice-42@example.com>",
      body_format: "text",
      attachment_count: 3,
      skipped_attachments: [{ name: "logo.png", reason: "image shown inside the message body" }],
    })
    const attachments = output.attachments ?? []
    expect(attachments.map((a) => [a.fileName, a.contentType])).toEqual([
      ["invoice-42.pdf", "application/pdf"],
      ["attachment-2.pdf", "application/pdf"],
      ["attachment-3.eml", "message/rfc822"],
    ])
    expect(Buffer.from(attachments[0]!.bytes).equals(Buffer.from(pdf))).toBe(true)
    expect(Buffer.from(attachments[1]!.bytes).equals(Buffer.from(pdf))).toBe(true)
    expect(Buffer.from(attachments[2]!.bytes).equals(Buffer.from(inner))).toBe(true)
  })

  it("parses an attached message again as a document of its own", async () => {
    const { bytes } = await invoiceMessage()
    const attached = (await parseEml("invoice.eml", bytes)).attachments?.find((a) =>
      a.fileName.endsWith(".eml"),
    )
    expect(attached).toBeDefined()
    expect(backendFor(attached!.fileName)?.name).toBe("email")
    const output = await parseEml(attached!.fileName, attached!.bytes)
    expect(output.metadata).toMatchObject({
      subject: "Purchase order 7781",
      from: "Carol Client <carol@client.example>",
    })
    expect(output.pages[0]!.text).toContain("Please deliver 12 units by 15 March 2024.")
  })

  it("converts an HTML-only body to text, like its golden output", async () => {
    const output = await parseEml("receipt.eml", await htmlOnlyMessage())
    await expectGolden(here, "receipt.eml", output)
    expect(output.parser).toBe("mailparser+html-to-text")
    expect(output.metadata.body_format).toBe("html")
    expect(output.pages[0]!.text).toContain("Widget | $19.99")
    expect(output.pages[0]!.text).not.toMatch(/alert|color: red|https:/)
  })

  it("continues a long body on further pages, the headers on page 1", async () => {
    const output = await parseEml("weekly.eml", await longMessage())
    await expectGolden(here, "weekly.eml", output)
    expect(output.pages.length).toBeGreaterThan(2)
    expect(output.pages[0]!.text).toMatch(/^From: Reporter <reporter@example.com>\n/)
    for (const page of output.pages.slice(1)) {
      expect(page.text).toMatch(/^Section \d+\./)
      expect(page.text.length).toBeLessThanOrEqual(pageChars)
    }
    expect(output.metadata.page_source).toBe(`headers, then the body in chunks of ${pageChars} characters`)
  })

  it("names attachments safely and uniquely, from the content type when they have no name", async () => {
    const bytes = await compose({
      from: "a@example.com",
      subject: "names",
      text: "see attached",
      attachments: [
        { filename: "scan.pdf", content: "one", contentType: "application/pdf" },
        { filename: "SCAN.pdf", content: "two", contentType: "application/pdf" },
        { filename: "../../etc/passwd", content: "three", contentType: "text/plain" },
        { filename: "report", content: "four", contentType: "application/vnd.ms-excel" },
        { filename: "Fwd: meeting", content: "Subject: x\r\n\r\nbody", contentType: "message/rfc822" },
        { content: "BEGIN:VCALENDAR", contentType: "text/calendar" },
        { content: "?", contentType: "application/x-unknown" },
        { filename: "empty.txt", content: "", contentType: "text/plain" },
      ],
    })
    const output = await parseEml("names.eml", bytes)
    expect(output.attachments?.map((a) => a.fileName)).toEqual([
      "scan.pdf",
      "SCAN (2).pdf",
      "passwd.txt",
      "report.xls",
      "Fwd: meeting.eml",
      "attachment-6.ics",
      "attachment-7.bin",
    ])
    expect(output.metadata.skipped_attachments).toEqual([{ name: "empty.txt", reason: "empty" }])
  })

  it("leaves out an unreadable date rather than inventing one", async () => {
    const bytes = new TextEncoder().encode(
      "From: a@example.com\r\nDate: someday soon\r\nSubject: s\r\n\r\nbody\r\n",
    )
    const output = await parseEml("nodate.eml", bytes)
    expect(output.metadata).not.toHaveProperty("date")
    expect(output.pages[0]!.text).toBe("From: a@example.com\nSubject: s\n\nbody")
  })

  it("refuses what is not an e-mail message", async () => {
    const random = new Uint8Array(8192).map((_, i) => (i * 7919 + 13) % 256)
    const notMail =
      "the file is not an e-mail message (it has no e-mail headers such as From, To, Subject or Date)"
    for (const bytes of [
      random,
      new TextEncoder().encode("just some notes\nno headers here\n"),
      new Uint8Array(0),
    ]) {
      expect(await failureReason(emailBackend, input("x.eml", bytes))).toBe(notMail)
    }
    const cfb = new Uint8Array([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1, 0, 0, 0, 0])
    expect(await failureReason(emailBackend, input("renamed.eml", cfb))).toMatch(
      /^this is an Outlook \.msg file/,
    )
    expect(await failureReason(outlookMessageBackend, input("x.msg", cfb))).toBe(
      "the Outlook message is damaged: the file is cut short (12 bytes, less than a 512-byte header)",
    )
  })

  it("reads what it can of a truncated message", async () => {
    const { bytes } = await invoiceMessage()
    const output = await parseEml("cut.eml", bytes.subarray(0, Math.floor(bytes.length * 0.6)))
    expect(output.metadata.subject).toBe("Rechnung Nr. 42 – Übersicht ✓ 請求書")
  })

  it("works in the parse thread: attachments come back intact, HTML is converted", async () => {
    const { bytes, pdf } = await invoiceMessage()
    const output = await runParse({ bytes, fileName: "invoice.eml", contentType: "message/rfc822" })
    expect(output.pages[0]!.text).toContain("Subject: Rechnung Nr. 42")
    expect(Buffer.from(output.attachments![0]!.bytes).equals(Buffer.from(pdf))).toBe(true)
    const receipt = await runParse({
      bytes: await htmlOnlyMessage(),
      fileName: "receipt.eml",
      contentType: "",
    })
    expect(receipt.pages[0]!.text).toContain("Widget | $19.99")
  })
})

const corpusFolders = ["mailparser", "postal-mime", "docling/email"]
const corpusPresent = fs.existsSync(corpus)

const filesUnder = (dir: string): Array<string> =>
  fs.existsSync(dir)
    ? fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
        const path = `${dir}/${e.name}`
        return e.isDirectory() ? filesUnder(path) : [path]
      })
    : []

describe.skipIf(!corpusPresent)("email backend over the shared corpus", () => {
  it("ends every .eml and .msg, and every message attached to them, in pages or a ParseFailure within 30 s", async () => {
    const files = corpusFolders
      .flatMap((folder) => filesUnder(`${corpus}${folder}`))
      .filter((f) => /\.(eml|msg)$/i.test(f))
    expect(files.length).toBeGreaterThan(0)
    const queue = files.map((file) => ({
      label: file.slice(corpus.length),
      fileName: file,
      bytes: fs.readFileSync(file),
    }))
    const counts = { parsed: 0, failed: 0, attachedMessages: 0 }
    const failures: Array<string> = []
    for (let item = queue.shift(); item !== undefined; item = queue.shift()) {
      const { label, fileName, bytes } = item
      const backend = backendFor(fileName)!
      let timer: NodeJS.Timeout | undefined
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${label}: still parsing after 30 s`)), 30_000)
      })
      const outcome = await Promise.race([parseWith(backend, input(fileName, bytes)), timeout])
        .then((output: ParseOutput) => {
          expect(output.pages.length).toBeGreaterThan(0)
          for (const a of output.attachments ?? []) {
            const backend = backendFor(a.fileName)
            if (backend !== emailBackend && backend !== outlookMessageBackend) continue
            counts.attachedMessages++
            queue.push({
              label: `${label} > ${a.fileName}`,
              fileName: a.fileName,
              bytes: Buffer.from(a.bytes),
            })
          }
          return "parsed" as const
        })
        .catch((error: unknown) => {
          if (!(error instanceof ParseFailure)) throw new Error(`${label}: ${String(error)}`)
          failures.push(`${label}: ${error.reason}`)
          return "failed" as const
        })
        .finally(() => clearTimeout(timer))
      counts[outcome]++
    }
    console.info(
      `e-mail corpus: ${files.length} files + ${counts.attachedMessages} attached messages: ` +
        `${counts.parsed} parsed, ${counts.failed} ParseFailure`,
    )
    for (const failure of failures) console.info(`  ${failure}`)
    expect(counts.parsed + counts.failed).toBe(files.length + counts.attachedMessages)
  })
})

if (!corpusPresent) {
  describe("email backend over the shared corpus", () => {
    it.skip(`skipped: the shared corpus is absent (looked in ${corpus})`, () => {})
  })
}
