import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import { makeKysely } from "@dxs/db"
import { onePagePdf } from "@dxs/testing/Documents"
import { type Client, createProject, expectProblem } from "@dxs/testing/RestClient"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startTestApi, type TestApi } from "./harness.ts"
import { multipartBody, type Part, type RawOutcome, rawRequest } from "./rawHttp.ts"

const MAX_UPLOAD = 64 * 1024

let api: TestApi
let key: string
let a: Client
let db: ReturnType<typeof makeKysely>
let port: number
let spoolRoot: string
let projectId: string

beforeAll(async () => {
  spoolRoot = await fs.mkdtemp(path.join(os.tmpdir(), "dxs-spool-test-"))
  api = await startTestApi({ maxUploadBytes: MAX_UPLOAD, spoolRoot })
  key = await api.newKey("acme")
  a = api.client(key)
  db = makeKysely(api.dbUrl, 2)
  port = Number(new URL(api.origin).port)
  projectId = await createProject(a)
})

afterAll(async () => {
  await db?.destroy()
  await fs.rm(spoolRoot, { recursive: true, force: true })
})

/** The answer of a raw request; its body parsed as JSON when it is JSON. */
const json = (r: RawOutcome) => ({
  status: r.status ?? 0,
  headers: new Headers(r.headers),
  body: /json/.test(r.headers["content-type"] ?? "") ? JSON.parse(r.body) : r.body,
})

const send = async (
  target: string,
  body: Uint8Array,
  contentType: string,
  extra: { readonly sendBytes?: number; readonly timeoutMs?: number; readonly cutAfterMs?: number } = {},
) =>
  rawRequest({
    port,
    method: target.endsWith("/file/") ? "PUT" : "POST",
    path: `/api/v1${target}`,
    headers: { "X-API-Key": key, "Content-Type": contentType, "Content-Length": String(body.length) },
    body,
    ...extra,
  })

const uploadParts = async (parts: ReadonlyArray<Part>, target = `/projects/${projectId}/documents/`) => {
  const { body, contentType } = multipartBody(parts)
  return json(await send(target, body, contentType))
}

const pdfPart = (filename: string): Part => ({
  name: "file",
  filename,
  contentType: "application/pdf",
  body: onePagePdf(),
})

const spoolEntries = async () => fs.readdir(spoolRoot).catch(() => [] as Array<string>)

/** Bounded wait until the spool root is empty (requests cut off finish their clean-up meanwhile). */
const spoolEmptied = async () => {
  for (let i = 0; i < 100; i++) {
    if ((await spoolEntries()).length === 0) return []
    await new Promise((r) => setTimeout(r, 50))
  }
  return spoolEntries()
}

describe("file names", () => {
  it.each([
    ["Greek", "Έκθεση προόδου.pdf"],
    ["CJK", "文件.pdf"],
    ["emoji", "📄 report 🚀.pdf"],
    ["combining marks", "Re\u0301sume\u0301 n\u0303.pdf"],
    ["Latin-1", "Übersicht café.pdf"],
  ])("keeps a raw UTF-8 %s name exactly as sent", async (_what, name) => {
    const r = await uploadParts([pdfPart(name)])
    expect(r.status).toBe(201)
    expect(r.body.file_name).toBe(name)
    const got = await a.get(`/projects/${projectId}/documents/${r.body.id}/`)
    expect(got.body.file_name).toBe(name)
    // The download names it too (RFC 5987 form).
    const file = await fetch(`${api.base}/projects/${projectId}/documents/${r.body.id}/file/`, {
      headers: { "x-api-key": key },
    })
    expect(file.headers.get("content-disposition")).toContain(`filename*=UTF-8''${encodeURIComponent(name)}`)
    await file.arrayBuffer()
  })

  it("takes filename* (RFC 5987), preferred over filename when both are sent", async () => {
    const name = "合同 – Vertrag ✓.pdf"
    const star = `filename*=UTF-8''${encodeURIComponent(name)}`
    const only = await uploadParts([
      {
        name: "file",
        disposition: `form-data; name="file"; ${star}`,
        contentType: "application/pdf",
        body: onePagePdf(),
      },
    ])
    expect(only.status).toBe(201)
    expect(only.body.file_name).toBe(name)
    const both = await uploadParts([
      {
        name: "file",
        disposition: `form-data; name="file"; filename="fallback.pdf"; ${star}`,
        contentType: "application/pdf",
        body: onePagePdf(),
      },
    ])
    expect(both.status).toBe(201)
    expect(both.body.file_name).toBe(name)
  })

  it("drops directory parts", async () => {
    for (const [sent, kept] of [
      ["C:\\Users\\x\\a.pdf", "a.pdf"],
      ["../a.pdf", "a.pdf"],
      ["../../etc/報告.pdf", "報告.pdf"],
      ["/abs/path/b.pdf", "b.pdf"],
    ]) {
      const r = await uploadParts([pdfPart(sent!)])
      expect(r.status, sent).toBe(201)
      expect(r.body.file_name, sent).toBe(kept)
    }
  })

  it.each([["."], [".."], ["../"], ["C:\\x\\.."], ["dir/"], ["   "]])(
    "refuses the name %j with 400 (no name left), never a 500",
    async (name) => {
      const r = await uploadParts([pdfPart(name)])
      expectProblem(r, 400)
      expect(r.body.detail).toContain("name")
    },
  )

  it("refuses an empty file name with 400", async () => {
    const r = await uploadParts([
      { name: "file", filename: "", contentType: "application/pdf", body: onePagePdf() },
    ])
    expectProblem(r, 400)
    expect(r.body.errors.map((e: any) => e.path)).toContain("file")
  })

  it("refuses names longer than 255 characters, and control characters, with 400", async () => {
    const long = await uploadParts([pdfPart(`${"文".repeat(252)}.pdf`)])
    expectProblem(long, 400)
    expect(long.body.detail).toContain("255")
    const fine = await uploadParts([pdfPart(`${"文".repeat(251)}.pdf`)])
    expect(fine.status).toBe(201)
    for (const encoded of ["a%00b.pdf", "a%07b.pdf", "a%0Ab.pdf", "a%C2%85b.pdf"]) {
      const r = await uploadParts([
        {
          name: "file",
          disposition: `form-data; name="file"; filename*=UTF-8''${encoded}`,
          contentType: "application/pdf",
          body: onePagePdf(),
        },
      ])
      expectProblem(r, 400)
      expect(r.body.detail, encoded).toContain("control character")
    }
  })

  it("applies the same rules to a replacement file and to /extract/", async () => {
    const doc = await uploadParts([pdfPart("first.pdf")])
    await db.updateTable("documents").set({ status: "Processed" }).where("id", "=", doc.body.id).execute()
    const replaced = await uploadParts(
      [pdfPart("../第二版.pdf")],
      `/projects/${projectId}/documents/${doc.body.id}/file/`,
    )
    expect(replaced.status).toBe(200)
    expect(replaced.body).toMatchObject({ file_name: "第二版.pdf", version: 2 })
    expectProblem(
      await uploadParts([pdfPart("..")], `/projects/${projectId}/documents/${doc.body.id}/file/`),
      400,
    )

    const schema = JSON.stringify({ type: "object", properties: { total: { type: "number" } } })
    const extracted = await uploadParts(
      [
        { ...pdfPart("Σύμβαση.pdf"), name: "files" },
        { ...pdfPart("../请求.pdf"), name: "files" },
        { name: "schema", body: schema },
        { name: "auto_map", body: "false" },
      ],
      "/extract/",
    )
    expect(extracted.status).toBe(202)
    const docs = await a.get(`/projects/${extracted.body.project_id}/documents/`)
    expect(docs.body.map((d: any) => d.file_name).sort()).toEqual(["Σύμβαση.pdf", "请求.pdf"].sort())
    const refused = await uploadParts(
      [
        { ...pdfPart("."), name: "files" },
        { name: "schema", body: schema },
        { name: "auto_map", body: "false" },
      ],
      "/extract/",
    )
    expectProblem(refused, 400)
    expect(refused.body.errors.map((e: any) => e.path)).toContain("files")
  })
})

describe("malformed bodies", () => {
  const target = () => `/projects/${projectId}/documents/`

  it("answers 400 at once to multipart/form-data without a boundary", async () => {
    const { body } = multipartBody([pdfPart("a.pdf")])
    const r = json(await send(target(), body, "multipart/form-data", { timeoutMs: 10_000 }))
    expectProblem(r, 400)
    expect(r.body.detail).toContain("boundary")
    const empty = json(await send(target(), body, "multipart/form-data; boundary=", { timeoutMs: 10_000 }))
    expectProblem(empty, 400)
  })

  it("answers 400 at once to a body that ends without its closing boundary", async () => {
    const { body, contentType } = multipartBody([pdfPart("a.pdf")])
    const closing = body.lastIndexOf("--b")
    for (const cut of [closing, 115, 40, 0]) {
      const r = json(await send(target(), body.subarray(0, cut), contentType, { timeoutMs: 10_000 }))
      expect(r.status, `body of ${cut} bytes`).toBe(400)
      expectProblem(r, 400)
    }
    expect(await spoolEmptied()).toEqual([])
  })

  it("answers 400 to many truncated bodies at once, none left waiting", async () => {
    const { body, contentType } = multipartBody([pdfPart("a.pdf")])
    const answers = await Promise.all(
      Array.from({ length: 50 }, () =>
        send(target(), body.subarray(0, 115), contentType, { timeoutMs: 15_000 }),
      ),
    )
    expect(answers.map((r) => r.status)).toEqual(answers.map(() => 400))
  })

  it("answers 400 to malformed part headers, parts without a disposition and garbage", async () => {
    const boundary = "XyZ"
    const contentType = `multipart/form-data; boundary=${boundary}`
    const bodies = [
      `--${boundary}\r\nContent-Disposition form-data name\r\n\r\nhello\r\n--${boundary}--\r\n`,
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a\u0001.pdf"\r\n\r\nx\r\n--${boundary}--\r\n`,
      `--${boundary}\r\nX-Other: 1\r\n\r\nhello\r\n--${boundary}--\r\n`,
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.pdf"\r\nX: ${"a".repeat(20_000)}\r\n\r\nx\r\n--${boundary}--\r\n`,
      "just some bytes",
    ]
    for (const text of bodies) {
      const r = json(await send(target(), Buffer.from(text, "latin1"), contentType, { timeoutMs: 10_000 }))
      expectProblem(r, 400)
    }
  })

  it("takes a body right at the limits of parts and text fields", async () => {
    const fields = Array.from({ length: 8 }, (_, i) => ({ name: `f${i}`, body: "x" }))
    expect((await uploadParts([pdfPart("a.pdf"), ...fields])).status).toBe(201)
    const ignoredFiles = Array.from({ length: 7 }, (_, i) => ({ ...pdfPart(`x${i}.pdf`), name: `other${i}` }))
    expect((await uploadParts([pdfPart("a.pdf"), ...fields, ...ignoredFiles])).status).toBe(201)
    const ninth = await uploadParts([pdfPart("a.pdf"), ...fields, { name: "f8", body: "x" }])
    expectProblem(ninth, 400)
    expect(ninth.body.detail).toContain("8 text fields")
    const seventeenth = await uploadParts([
      pdfPart("a.pdf"),
      ...fields,
      ...ignoredFiles,
      { ...pdfPart("y.pdf"), name: "y" },
    ])
    expectProblem(seventeenth, 400)
    expect(seventeenth.body.detail).toContain("16 parts")
  })

  it("names the limit: parts, text fields, a field's size, the file's size", async () => {
    const many = await uploadParts([
      pdfPart("a.pdf"),
      ...Array.from({ length: 20 }, (_, i) => ({ name: `f${i}`, body: "x" })),
    ])
    expectProblem(many, 400)
    expect(many.body.detail).toMatch(/\d+ (parts|text fields)/)
    const bigTags = await uploadParts([pdfPart("a.pdf"), { name: "tags", body: "x".repeat(1024 * 1024 + 1) }])
    expectProblem(bigTags, 413)
    expect(bigTags.body.detail).toContain("tags")
    expect(bigTags.body.detail).toContain(String(1024 * 1024))
    const bigFile = await uploadParts([
      {
        name: "file",
        filename: "big.txt",
        contentType: "text/plain",
        body: new Uint8Array(MAX_UPLOAD + 1).fill(65),
      },
    ])
    expectProblem(bigFile, 413)
    expect(bigFile.body.detail).toContain(String(MAX_UPLOAD))
    const two = await uploadParts([pdfPart("a.pdf"), pdfPart("b.pdf")])
    expectProblem(two, 400)
    const asText = await uploadParts([{ name: "file", body: "not a file" }])
    expectProblem(asText, 400)
    expect(asText.body.errors.map((e: any) => e.path)).toContain("file")
    expect(await spoolEmptied()).toEqual([])
  })
})

describe("spooling", () => {
  it("leaves no spool folder behind a client that disconnects mid-body", async () => {
    const { body, contentType } = multipartBody([
      {
        name: "file",
        filename: "big.txt",
        contentType: "text/plain",
        body: new Uint8Array(MAX_UPLOAD - 10).fill(66),
      },
    ])
    const before = await db.selectFrom("documents").select("id").where("project_id", "=", projectId).execute()
    await Promise.all(
      [0.25, 0.5, 0.9, 0.99].map((share) =>
        send(`/projects/${projectId}/documents/`, body, contentType, {
          sendBytes: Math.floor(body.length * share),
          cutAfterMs: 100,
        }),
      ),
    )
    expect(await spoolEmptied()).toEqual([])
    const after = await db.selectFrom("documents").select("id").where("project_id", "=", projectId).execute()
    expect(after.length).toBe(before.length)
  })

  it("spools under names of its own, inside a folder of this process, removed after the answer", async () => {
    const r = await uploadParts([pdfPart("../../../../tmp/escape.pdf")])
    expect(r.status).toBe(201)
    expect(r.body.file_name).toBe("escape.pdf")
    expect(await spoolEmptied()).toEqual([])
    await expect(fs.stat(path.join(os.tmpdir(), "escape.pdf"))).rejects.toThrow()
  })
})
