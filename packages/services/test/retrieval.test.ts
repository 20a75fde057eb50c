import { randomUUID } from "node:crypto"
import { type Database, makeKysely } from "@dxs/db"
import * as Retrieval from "@dxs/pipeline/retrieval/Retrieval"
import { keyTermsQuery, RANKED_PAGES } from "@dxs/pipeline/retrieval/Retrieval"
import { useTestDatabase } from "@dxs/testing/TestDatabase"
import { Effect } from "effect"
import { type Kysely, sql } from "kysely"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

const relevantPages = (...args: Parameters<typeof Retrieval.relevantPages>) =>
  Effect.runPromise(Retrieval.relevantPages(...args))
const pagesForExtraction = (...args: Parameters<typeof Retrieval.pagesForExtraction>) =>
  Effect.runPromise(Retrieval.pagesForExtraction(...args))

let db: Kysely<Database>
let projectId: string

beforeAll(async () => {
  db = makeKysely(await useTestDatabase(), 2)
  const org = await db
    .insertInto("organizations")
    .values({ name: "acme" })
    .returning("id")
    .executeTakeFirstOrThrow()
  projectId = (
    await db
      .insertInto("projects")
      .values({ organization_id: org.id, name: "P", project_modules: "{}", target_output_schema: null })
      .returning("id")
      .executeTakeFirstOrThrow()
  ).id
}, 120_000)

afterAll(async () => {
  await db?.destroy()
})

const addDocument = async (
  fileName: string,
  pages: ReadonlyArray<string>,
  options: { readonly status?: string; readonly archived?: boolean; readonly project?: string } = {},
) => {
  const doc = await db
    .insertInto("documents")
    .values({
      project_id: options.project ?? projectId,
      file_name: fileName,
      type: "PDF",
      status: options.status ?? "Processed",
      page_count: pages.length,
      blob_key: `test/${randomUUID()}`,
      content_type: "application/pdf",
      size_bytes: 10,
      sha256: "0".repeat(64),
      archive_requested_at: options.archived ? new Date() : null,
    })
    .returning("id")
    .executeTakeFirstOrThrow()
  if (pages.length > 0)
    await db
      .insertInto("pages")
      .values(pages.map((text, i) => ({ document_id: doc.id, number: i + 1, text })))
      .execute()
  return doc.id
}

const agent = (name: string, extractionInstructions = "", examples = "") => ({
  name,
  extractionInstructions,
  examples,
})

const filler = (n: number) =>
  Array.from(
    { length: n },
    (_, i) => `Section ${i} describes general terms and conditions of delivery.`,
  ).join("\n")

describe("keyTermsQuery", () => {
  it("ORs the distinct words of name, instructions and examples, prefix-matched, without stop-words", () => {
    expect(
      keyTermsQuery(agent("Total amount", "Extract the total amount due from the invoice.", "EUR 1,200.50")),
    ).toBe("total:* | amount:* | due:* | invoice:* | eur:* | 1:* | 200:* | 50:*")
  })

  it("strips every character that is not a letter or digit, so any input is a valid tsquery", async () => {
    const query = keyTermsQuery(agent("Parties' names (A & B)", "it's | !bad :* <-> input ()", "Müller GmbH"))
    expect(query).toBe("parties:* | names:* | bad:* | input:* | müller:* | gmbh:*")
    const parsed = await sql<{ q: string }>`select to_tsquery('english', ${query})::text as q`.execute(db)
    expect(parsed.rows[0]!.q).toContain("'parti':*")
  })

  it("is empty when nothing but stop-words remain", () => {
    expect(keyTermsQuery(agent("The", "extract it from the document", ""))).toBe("")
  })
})

describe("relevantPages", () => {
  it("ranks the project's live processed pages by the agent's key terms, with a short one-line snippet", async () => {
    const invoice = await addDocument("invoice.pdf", [
      "Invoice 42\nBill to: Globex\nDelivery address: Springfield",
      `${filler(3)}\nTotal amount due: EUR 1,234.50\nPayment within 30 days`,
    ])
    const other = await addDocument("letter.pdf", ["Dear customer, the amount of your order is attached."])
    await addDocument("pending.pdf", ["Total amount due: 5"], { status: "Pending" })
    await addDocument("archived.pdf", ["Total amount due: 7"], { archived: true })
    const pages = await relevantPages(db, {
      projectId,
      agent: agent("Total amount due", "The total amount due on the invoice"),
    })
    expect(pages.map((p) => [p.documentName, p.pageNumber])).toEqual([
      ["invoice.pdf", 2],
      ["invoice.pdf", 1],
      ["letter.pdf", 1],
    ])
    expect(pages[0]).toMatchObject({ documentId: invoice, pageNumber: 2 })
    expect(pages[0]!.snippet).toContain("Total amount due: EUR 1,234.50")
    expect(pages[0]!.snippet).not.toContain("\n")
    expect(pages[0]!.snippet.length).toBeLessThan(400)
    expect(pages[0]!.score).toBeGreaterThan(pages[2]!.score)
    expect(pages.every((p) => p.score > 0 && p.score < 1)).toBe(true)

    const onlyLetter = await relevantPages(db, {
      projectId,
      agent: agent("Total amount due"),
      documentId: other,
    })
    expect(onlyLetter.map((p) => p.documentId)).toEqual([other])
    const one = await relevantPages(db, { projectId, agent: agent("Total amount due"), limit: 1 })
    expect(one).toHaveLength(1)
    expect(await relevantPages(db, { projectId, agent: agent("the") })).toEqual([])
    expect(await relevantPages(db, { projectId, agent: agent("Zebra crossing") })).toEqual([])
  })
})

describe("pagesForExtraction", () => {
  it("gives a small document whole, in page order, with full text", async () => {
    const texts = ["Cover page", "Governing law: the laws of the State of New York", "Signatures"]
    const id = await addDocument("nda.pdf", texts)
    const pages = await pagesForExtraction(db, {
      agent: agent("Governing law"),
      documentId: id,
      documentName: "nda.pdf",
    })
    expect(pages).toEqual(
      texts.map((text, i) => ({ documentId: id, documentName: "nda.pdf", pageNumber: i + 1, text })),
    )
  })

  it("gives a long document's best pages plus the first and the last, in page order", async () => {
    const texts = Array.from({ length: 30 }, (_, i) => `Page ${i + 1}\n${filler(4)}`)
    for (const n of [7, 12, 19, 23]) texts[n - 1] = `${texts[n - 1]}\nThe effective date of this agreement`
    const id = await addDocument("contract.pdf", texts)
    const pages = await pagesForExtraction(db, {
      agent: agent("Effective date", "When the agreement takes effect"),
      documentId: id,
      documentName: "contract.pdf",
    })
    const numbers = pages.map((p) => p.pageNumber)
    for (const n of [1, 7, 12, 19, 23, 30]) expect(numbers).toContain(n)
    expect(numbers).toEqual([...numbers].sort((a, b) => a - b))
    expect(numbers.length).toBeLessThanOrEqual(RANKED_PAGES + 2)
    expect(pages.find((p) => p.pageNumber === 12)!.text).toBe(texts[11])
  })

  it("does not give a few very long pages whole", async () => {
    const long = (marker: string) => `${marker}\n${"lorem ipsum dolor ".repeat(1_500)}`
    const texts = Array.from({ length: 10 }, (_, i) => long(`Part ${i + 1}`))
    texts[5] = `${texts[5]}\nRenewal term: 24 months`
    const id = await addDocument("big.pdf", texts)
    const pages = await pagesForExtraction(db, {
      agent: agent("Renewal term"),
      documentId: id,
      documentName: "big.pdf",
    })
    const numbers = pages.map((p) => p.pageNumber)
    expect(numbers).toContain(6)
    expect(numbers).toContain(1)
    expect(numbers).toContain(10)
    expect(numbers.length).toBeLessThanOrEqual(RANKED_PAGES + 2)
  })

  it("gives nothing for a document without pages", async () => {
    const id = await addDocument("empty.pdf", [])
    expect(
      await pagesForExtraction(db, { agent: agent("Anything"), documentId: id, documentName: "empty.pdf" }),
    ).toEqual([])
  })
})
