import * as fs from "node:fs"
import { fileURLToPath } from "node:url"
import { buildMsg, directoryEntries, type MsgSpec } from "@dxs/testing/MsgFiles"
import fc from "fast-check"
import MailComposer from "nodemailer/lib/mail-composer/index.js"
import type Mail from "nodemailer/lib/mailer/index.js"
import { PDFDocument, StandardFonts } from "pdf-lib"
import { describe, expect, it } from "vitest"
import { ParseFailure, type ParseOutput } from "../../src/parsing/Backend.ts"
import { emailBackend } from "../../src/parsing/Email.ts"
import { MAX_NESTED_MESSAGES, outlookMessageBackend } from "../../src/parsing/Outlook.ts"
import { backendFor } from "../../src/parsing/Registry.ts"
import { runParse } from "../../src/parsing/Runner.ts"
import { pageChars } from "../../src/parsing/TextPages.ts"
import { parseWith } from "../support.ts"
import { expectGolden, expectTextPages, failureReason, input } from "../text/golden.ts"

const here = new URL("./", import.meta.url)
const docling = fileURLToPath(
  new URL("../../../../../shared/corpus/robustness/docling/email/sources/", import.meta.url),
)

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

const order: MsgSpec = {
  subject: "Purchase order 7781",
  senderName: "Carol Client",
  senderEmail: "carol@client.example",
  recipients: [{ name: "alice@example.com", email: "alice@example.com" }],
  date: new Date("2024-02-27T08:00:00Z"),
  messageId: "<po-7781@client.example>",
  body: "Please deliver 12 units by 15 March 2024.\n\nCarol",
  attachments: [{ fileName: "terms.txt", data: new TextEncoder().encode("Delivery terms: DAP Rotterdam.") }],
}

const body =
  "Hello Bob,\r\n\r\nattached is invoice 42 (EUR 1,234.56, due 31 March 2024).\r\n\r\nRegards,\r\nAlice  "
const html =
  '<p>Hello Bob,</p><p>attached is <b>invoice 42</b>.</p><img src="cid:logo@example.com" alt="Acme">'

/** The invoice message of the .eml tests, saved by Outlook: the same headers, body and attachments. */
const invoiceMessage = async () => {
  const pdf = await invoicePdf()
  const bytes = buildMsg({
    subject: "Rechnung Nr. 42 – Übersicht ✓ 請求書",
    senderName: "Ålice Exämple",
    senderEmail: "alice@example.com",
    recipients: [
      { name: "Bob Builder", email: "bob@example.com" },
      { name: "'carol@client.example'", email: "carol@client.example" },
      { name: "Dan", email: "dan@example.com", type: "cc" },
      { name: "Eve", email: "eve@example.com", type: "bcc" },
    ],
    date,
    messageId: "<invoice-42@example.com>",
    body,
    html,
    attachments: [
      { fileName: "invoice-42.pdf", data: pdf, mimeType: "application/pdf" },
      { data: pdf, mimeType: "application/pdf" },
      { displayName: "Purchase order 7781", message: order },
      {
        fileName: "logo.png",
        data: new TextEncoder().encode("\x89PNG fake logo"),
        mimeType: "image/png",
        contentId: "logo@example.com",
      },
    ],
  })
  return { bytes, pdf }
}

/** The same message as an Internet message. */
const invoiceEml = async (pdf: Uint8Array) =>
  new Uint8Array(
    await new MailComposer({
      from: '"Ålice Exämple" <alice@example.com>',
      to: ["Bob Builder <bob@example.com>", "carol@client.example"],
      cc: "Dan <dan@example.com>",
      subject: "Rechnung Nr. 42 – Übersicht ✓ 請求書",
      date,
      messageId: "<invoice-42@example.com>",
      text: body,
      html,
      attachments: [
        { filename: "invoice-42.pdf", content: Buffer.from(pdf), contentType: "application/pdf" },
        { content: Buffer.from(pdf), contentType: "application/pdf" },
        { filename: "Purchase order 7781", content: "Subject: x\r\n\r\nx", contentType: "message/rfc822" },
        {
          filename: "logo.png",
          content: Buffer.from("\x89PNG fake logo"),
          contentType: "image/png",
          cid: "logo@example.com",
        },
      ],
    } satisfies Mail.Options)
      .compile()
      .build(),
  )

const receipt: MsgSpec = {
  subject: "Your receipt",
  senderName: "billing@shop.example",
  senderEmail: "billing@shop.example",
  recipients: [{ name: "customer@example.com", email: "customer@example.com" }],
  date,
  messageId: "<receipt-1@shop.example>",
  html: `<html><head><meta charset="utf-8"><style>td { color: red }</style></head><body>
      <h1>Receipt</h1><p>Thank you for your order &amp; your trust.</p>
      <table><tr><th>Item</th><th>Price</th></tr><tr><td>Widget</td><td>$19.99</td></tr>
      <tr><td>Shipping</td><td>$4.00</td></tr></table><p><a href="https://shop.example/r/1">View online</a></p>
      <script>alert(1)</script></body></html>`,
}

const parseMsg = (name: string, bytes: Uint8Array) =>
  parseWith(outlookMessageBackend, input(name, bytes, { contentType: "application/vnd.ms-outlook" }))

/** Windows-1251 for the Russian alphabet (А–я at 0xC0–0xFF, Ё and ё apart), enough for the test. */
const cp1251 = (s: string): Uint8Array =>
  new Uint8Array(
    [...s].map((c) => {
      const code = c.charCodeAt(0)
      if (code >= 0x410 && code <= 0x44f) return code - 0x410 + 0xc0
      if (c === "Ё") return 0xa8
      if (c === "ё") return 0xb8
      if (code < 0x80) return code
      throw new Error(`not in the test's windows-1251: ${c}`)
    }),
  )

describe("Outlook .msg backend", () => {
  it("reads a message with attachments like its golden output, with the pages of the same .eml", async () => {
    const { bytes, pdf } = await invoiceMessage()
    const output = await parseMsg("invoice.msg", bytes)
    expectTextPages(output)
    await expectGolden(here, "invoice.msg", output)
    const eml = await parseWith(emailBackend, input("invoice.eml", await invoiceEml(pdf)))
    expect(
      output.pages.map((p) => p.text.replace("Purchase order 7781.msg", "Purchase order 7781.eml")),
    ).toEqual(eml.pages.map((p) => p.text))
    expect(output.parser).toBe("msgreader")
    expect(output.metadata).toEqual({
      ...eml.metadata,
      attachment_names: ["invoice-42.pdf", "attachment-2.pdf", "Purchase order 7781.msg"],
      message_class: "IPM.Note",
    })
    const attachments = output.attachments ?? []
    expect(attachments.map((a) => [a.fileName, a.contentType])).toEqual([
      ["invoice-42.pdf", "application/pdf"],
      ["attachment-2.pdf", "application/pdf"],
      ["Purchase order 7781.msg", "application/vnd.ms-outlook"],
    ])
    expect(Buffer.from(attachments[0]!.bytes).equals(Buffer.from(pdf))).toBe(true)
    expect(Buffer.from(attachments[1]!.bytes).equals(Buffer.from(pdf))).toBe(true)
  })

  it("hands an attached message back as a .msg file that is read again, with its own attachment", async () => {
    const { bytes } = await invoiceMessage()
    const attached = (await parseMsg("invoice.msg", bytes)).attachments?.find((a) =>
      a.fileName.endsWith(".msg"),
    )
    expect(attached).toBeDefined()
    expect(backendFor(attached!.fileName)).toBe(outlookMessageBackend)
    const output = await parseMsg(attached!.fileName, attached!.bytes)
    await expectGolden(here, "attached-order.msg", output)
    expect(output.metadata).toMatchObject({
      subject: "Purchase order 7781",
      from: "Carol Client <carol@client.example>",
      to: ["alice@example.com"],
      date: "2024-02-27T08:00:00.000Z",
      attachment_names: ["terms.txt"],
    })
    expect(output.pages[0]!.text).toContain("Please deliver 12 units by 15 March 2024.")
    expect(new TextDecoder().decode(output.attachments![0]!.bytes)).toBe("Delivery terms: DAP Rotterdam.")
  })

  it("converts an HTML-only body to text, like the .eml's golden output", async () => {
    const output = await parseMsg("receipt.msg", buildMsg(receipt))
    await expectGolden(here, "receipt.msg", output)
    const eml = JSON.parse(fs.readFileSync(new URL("golden/receipt.eml.json", here), "utf8"))
    expect(output.pages.map((p) => p.text)).toEqual(eml.pages.map((p: { text: string }) => p.text))
    expect(output.parser).toBe("msgreader+html-to-text")
    expect(output.metadata.body_format).toBe("html")
    expect(output.pages[0]!.text).toContain("Widget | $19.99")
    expect(output.pages[0]!.text).not.toMatch(/alert|color: red|https:/)
  })

  it("continues a long body on further pages, the headers on page 1", async () => {
    const text = Array.from(
      { length: 40 },
      (_, i) =>
        `Section ${i + 1}. ${"The project is on track and the budget is within the agreed limits. ".repeat(3)}`,
    ).join("\n\n")
    const output = await parseMsg(
      "weekly.msg",
      buildMsg({
        subject: "Weekly status",
        senderName: "Reporter",
        senderEmail: "reporter@example.com",
        body: text,
      }),
    )
    expect(output.pages.length).toBeGreaterThan(2)
    expect(output.pages[0]!.text).toMatch(
      /^From: Reporter <reporter@example.com>\nSubject: Weekly status\n\nSection 1\./,
    )
    for (const page of output.pages.slice(1)) {
      expect(page.text).toMatch(/^Section \d+\./)
      expect(page.text.length).toBeLessThanOrEqual(pageChars)
    }
    expect(output.metadata.page_source).toBe(`headers, then the body in chunks of ${pageChars} characters`)
  })

  it("reads 8-bit strings in the message's code page", async () => {
    const output = await parseMsg(
      "russian.msg",
      buildMsg({
        subject: "Счёт 17",
        senderName: "Иван Петров",
        senderEmail: "ivan@example.ru",
        body: "Добрый день! Сумма: 12 400 руб.",
        ansi: { codepage: 1251, encode: cp1251 },
      }),
    )
    expect(output.pages[0]!.text).toBe(
      "From: Иван Петров <ivan@example.ru>\nSubject: Счёт 17\n\nДобрый день! Сумма: 12 400 руб.",
    )
  })

  it("skips what is not a document: inline images, links, OLE objects, empty attachments", async () => {
    const data = new TextEncoder().encode("some data")
    const output = await parseMsg(
      "mixed.msg",
      buildMsg({
        subject: "mixed",
        body: "see attached",
        html: '<p>see attached</p><img src="cid:sig">',
        attachments: [
          { fileName: "scan.pdf", data, mimeType: "application/pdf" },
          { fileName: "SCAN.pdf", data },
          { fileName: "../../etc/passwd", data, mimeType: "text/plain" },
          { fileName: "report", data, mimeType: "application/vnd.ms-excel" },
          { fileName: "signature.png", data, mimeType: "image/png", contentId: "<sig>" },
          { fileName: "photo.jpg", data, contentId: "unused" },
          { fileName: "\\\\server\\share\\budget.xlsx", method: 2 },
          { fileName: "chart", data, method: 6 },
          { fileName: "empty.txt", data: new Uint8Array(0) },
          { displayName: "", message: { body: "a note without a subject" } },
        ],
      }),
    )
    expect(output.attachments?.map((a) => [a.fileName, a.contentType])).toEqual([
      ["scan.pdf", "application/pdf"],
      ["SCAN (2).pdf", "application/pdf"],
      ["passwd.txt", "text/plain"],
      ["report.xls", "application/vnd.ms-excel"],
      ["photo.jpg", "image/jpeg"],
      ["attachment-6.msg", "application/vnd.ms-outlook"],
    ])
    expect(output.metadata.skipped_attachments).toEqual([
      { name: "signature.png", reason: "image shown inside the message body" },
      { name: "budget.xlsx", reason: "a link to a file, not the file itself" },
      { name: "chart", reason: "an embedded OLE object" },
      { name: "empty.txt", reason: "empty" },
    ])
  })

  it("reads a plain Internet message saved as .msg, and an Outlook message saved as .eml", async () => {
    const eml = new TextEncoder().encode("From: a@example.com\r\nSubject: saved as msg\r\n\r\nbody\r\n")
    expect((await parseMsg("saved.msg", eml)).pages[0]!.text).toBe(
      "From: a@example.com\nSubject: saved as msg\n\nbody",
    )
    const { bytes } = await invoiceMessage()
    const renamed = await parseWith(emailBackend, input("renamed.eml", bytes))
    expect(renamed.parser).toBe("msgreader")
    expect(renamed.metadata.subject).toBe("Rechnung Nr. 42 – Übersicht ✓ 請求書")
  })

  it("works in the parse thread: attachments come back intact", async () => {
    const { bytes, pdf } = await invoiceMessage()
    const output = await runParse({
      bytes,
      fileName: "invoice.msg",
      contentType: "application/vnd.ms-outlook",
    })
    expect(output.pages[0]!.text).toContain("Subject: Rechnung Nr. 42")
    expect(Buffer.from(output.attachments![0]!.bytes).equals(Buffer.from(pdf))).toBe(true)
    expect(output.attachments![2]!.fileName).toBe("Purchase order 7781.msg")
  })
})

describe("hostile .msg files end in a ParseFailure with a reason", () => {
  const simple = () =>
    buildMsg({ subject: "s", senderName: "a", body: "hello", attachments: order.attachments })
  const entry = (bytes: Uint8Array, name: string) => {
    const found = directoryEntries(bytes).find((e) => e.name === name)
    if (found === undefined) throw new Error(`no entry ${name}`)
    return found
  }
  const patched = (bytes: Uint8Array, at: number, value: number) => {
    const copy = new Uint8Array(bytes)
    new DataView(copy.buffer).setUint32(at, value, true)
    return copy
  }
  const reason = (bytes: Uint8Array) => failureReason(outlookMessageBackend, input("x.msg", bytes))

  it("what is not a compound file", async () => {
    const notOutlook =
      "the file is not an Outlook .msg message (an Outlook message is a compound file, which starts with the bytes D0 CF 11 E0)"
    const random = new Uint8Array(8192).map((_, i) => (i * 7919 + 13) % 256)
    expect(await reason(random)).toBe(notOutlook)
    expect(await reason(new TextEncoder().encode("just some notes\n"))).toBe(notOutlook)
    expect(await reason(new Uint8Array(0))).toBe(notOutlook)
  })

  it("a compound file that is not a message", async () => {
    const container = await import("cfb")
    const doc = container.utils.cfb_new()
    container.utils.cfb_add(doc, "/WordDocument", Buffer.from("not a message"))
    const bytes = new Uint8Array(container.write(doc, { type: "buffer" }) as Buffer)
    expect(await reason(bytes)).toMatch(/^the file is a compound file but not an Outlook message/)
  })

  it("a truncated message", async () => {
    const bytes = simple()
    for (const size of [12, 511, 512, 1024, Math.floor(bytes.length * 0.6)]) {
      expect(await reason(bytes.subarray(0, size))).toMatch(/^the Outlook message is damaged: /)
    }
    // Only the unused end of the last sector is missing: what is there is read.
    expect((await parseMsg("cut.msg", bytes.subarray(0, bytes.length - 1))).metadata.subject).toBe("s")
  })

  it("a property stream that claims to be huge", async () => {
    const bytes = simple()
    const body = entry(bytes, "__substg1.0_1000001F")
    expect(await reason(patched(bytes, body.offset + 120, 0x7fffffff))).toBe(
      `the Outlook message is damaged: the stream __substg1.0_1000001F claims 2147483647 bytes, more than the whole file (${bytes.length} bytes)`,
    )
    expect(await reason(patched(bytes, body.offset + 120, 0xfffffff0))).toMatch(/claims 4294967280 bytes/)
    // Streams that each fit, but that together claim more than the file: they overlap.
    const twice = patched(
      patched(bytes, body.offset + 120, bytes.length - 600),
      entry(bytes, "__substg1.0_0037001F").offset + 120,
      bytes.length - 600,
    )
    expect(await reason(twice)).toMatch(
      /^the Outlook message is damaged: (its streams claim more|the stream)/,
    )
  })

  it("chains and directories that loop", async () => {
    const bytes = simple()
    const view = new DataView(bytes.buffer, bytes.byteOffset)
    const firstDirectorySector = view.getUint32(48, true)
    const fatSector = view.getUint32(76, true)
    // The directory's chain points back to itself.
    const looping = patched(bytes, (fatSector + 1) * 512 + 4 * firstDirectorySector, firstDirectorySector)
    expect(await reason(looping)).toMatch(/^the Outlook message is damaged: the directory loops/)
    // An entry names the root as its sibling.
    const attach = entry(bytes, "__attach_version1.0_#00000000")
    expect(await reason(patched(bytes, attach.offset + 68, 0))).toBe(
      "the Outlook message is damaged: its directory loops",
    )
    expect(await reason(patched(bytes, attach.offset + 76, 100_000))).toBe(
      "the Outlook message is damaged: its directory points outside itself",
    )
  })

  it("attached messages nested too deeply", async () => {
    let spec: MsgSpec = { subject: "innermost", body: "deep" }
    for (let i = 0; i < MAX_NESTED_MESSAGES + 1; i++)
      spec = { subject: `level ${i}`, attachments: [{ displayName: `level ${i}`, message: spec }] }
    expect(await reason(buildMsg(spec))).toBe(
      `the Outlook message nests attached messages more than ${MAX_NESTED_MESSAGES} levels deep`,
    )
  })

  it("any corrupted byte: a message or a ParseFailure, never another error, within 5 s", async () => {
    const { bytes } = await invoiceMessage()
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.nat(bytes.length - 1), fc.integer({ min: 0, max: 255 })), {
          minLength: 1,
          maxLength: 8,
        }),
        async (changes) => {
          const copy = new Uint8Array(bytes)
          for (const [at, value] of changes) copy[at] = value
          const started = Date.now()
          const outcome = await parseMsg("fuzz.msg", copy).then(
            (output) => output,
            (e: unknown) => e,
          )
          if (outcome instanceof Error && !(outcome instanceof ParseFailure)) throw outcome
          if (!(outcome instanceof ParseFailure))
            expect((outcome as ParseOutput).pages.length).toBeGreaterThan(0)
          expect(Date.now() - started).toBeLessThan(5000)
        },
      ),
      { seed: 20241125, numRuns: 300 },
    )
  })
})

const doclingPresent = fs.existsSync(docling)

describe.skipIf(!doclingPresent)("Outlook .msg files of the shared corpus (docling, MIT)", () => {
  for (const name of ["msg_simple.msg", "msg_with_attachment.msg"]) {
    it(`reads ${name} like its golden output`, async () => {
      const output = await parseMsg(name, fs.readFileSync(`${docling}${name}`))
      expectTextPages(output)
      await expectGolden(here, name, output)
    })
  }
})

if (!doclingPresent) {
  describe("Outlook .msg files of the shared corpus (docling, MIT)", () => {
    it.skip(`skipped: the shared corpus is absent (looked in ${docling})`, () => {})
  })
}
