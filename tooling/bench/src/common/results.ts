/**
 * A project with results, written the way the pipeline writes them (its repositories' set-based paths):
 * processed documents split by the Document dimension, each agent's extractions and extraction records per
 * document (`ensureAtomicValues`, `replaceDocumentExtractionsOfAgents`, as the extraction stage commits),
 * then each agent's resolution (`writeResults`, as the resolution stage commits). Nothing is run: the point
 * is the state a large project reaches, fast enough for a million results.
 */
import { randomUUID } from "node:crypto"
import {
  ensureAtomicValues,
  replaceDocumentExtractionsOfAgents,
  writeResults,
} from "@dxs/db/repositories/Results"
import { dimensionsKey as dimensionsKeyOf } from "@dxs/domain/LaunchPlanner"
import { Effect } from "effect"
import { sql } from "kysely"
import { type Db, seedProject } from "./project.ts"

export interface ResultsField {
  readonly name: string
  readonly valueType: string
  readonly unit?: string
}

const FIELDS: ReadonlyArray<ResultsField> = [
  { name: "Invoice number", valueType: "string" },
  { name: "Total amount", valueType: "number", unit: "EUR" },
  { name: "Invoice date", valueType: "date" },
  { name: "Supplier", valueType: "string" },
  { name: "Region", valueType: "string" },
]

/** `count` agents named after invoice fields (a second "Total amount 2" after the first five, and so on). */
export const invoiceAgents = (count: number): ReadonlyArray<ResultsField> =>
  Array.from({ length: count }, (_, k) => {
    const field = FIELDS[k % FIELDS.length]!
    return k < FIELDS.length
      ? field
      : { ...field, name: `${field.name} ${Math.floor(k / FIELDS.length) + 1}` }
  })

/** The supplier of document `i` (1-based): 97 suppliers, so a supplier's name picks about 1 % of the rows. */
export const supplierOf = (i: number) => `Supplier ${i % 97} GmbH`

/** The one page of document `i`: the values its agents find. */
export const invoiceText = (i: number) =>
  [
    `Invoice number: INV-${String(i).padStart(7, "0")}`,
    `Invoice date: 2024-${String((i % 12) + 1).padStart(2, "0")}-${String((i % 28) + 1).padStart(2, "0")}`,
    `Supplier: ${supplierOf(i)}`,
    `Region: ${["EU", "US", "APAC"][i % 3]}`,
    `Total amount: EUR ${(100 + (i % 5000)).toLocaleString("en-US")}.00`,
  ].join("\n")

/** What an agent of `field`'s kind finds in document `i`, as the line of `invoiceText` that states it. */
const found = (field: ResultsField, i: number): { readonly value: string; readonly line: string } => {
  const line = invoiceText(i)
    .split("\n")
    .find((l) => field.name.startsWith(l.split(":")[0]!))!
  const text = line.slice(line.indexOf(":") + 2)
  return { value: field.valueType === "number" ? text.replace(/[^0-9.]/g, "") : text, line }
}

/** The status a result of document `i` and agent `k` gets: mostly resolved, some to check, some not found. */
const statusOf = (i: number, k: number) =>
  (i * 31 + k * 7) % 100 < 4 ? "Requires attention" : (i * 17 + k * 3) % 100 < 3 ? "No result" : "Resolved"

/**
 * Seeds a project of `documents` processed one-page documents and `agents` agents split by the Document
 * dimension, with every agent's extractions and resolved results: documents × agents results, then
 * vacuumed and analyzed. Progress goes to `log` every tenth of the way.
 */
export const seedResults = async (
  db: Db,
  options: {
    readonly organization: string
    readonly documents: number
    readonly agents: number
    readonly log?: (line: string) => void
  },
) => {
  const fields = invoiceAgents(options.agents)
  const { organizationId, projectId } = await seedProject(db, {
    organization: options.organization,
    documents: options.documents,
    agents: fields,
    text: invoiceText,
  })
  const dimension = await db
    .selectFrom("dimensions")
    .select("id")
    .where("project_id", "=", projectId)
    .where("source", "=", "DOCUMENT")
    .executeTakeFirstOrThrow()
  const agents = await db
    .selectFrom("agents")
    .select(["id", "name", "config_version"])
    .where("project_id", "=", projectId)
    .orderBy("created_at")
    .orderBy("id")
    .execute()
  const fieldOf = new Map(fields.map((f) => [f.name, f]))
  // The key the extraction stage records for an agent split by the Document dimension alone.
  const dimensionsKey = dimensionsKeyOf([
    { dimensionId: dimension.id, areValuesDynamic: false, source: "DOCUMENT", values: [] },
  ])
  const documents = await db
    .selectFrom("documents")
    .select(["id", "file_name", "version"])
    .where("project_id", "=", projectId)
    .execute()
  const numberOf = (name: string) => Number(/(\d+)/.exec(name)?.[1] ?? 0)
  // Per agent, its results in the making: one per document.
  const rowsOf = new Map(
    agents.map((a) => [a.id, [] as Array<Parameters<typeof writeResults>[1]["rows"][number]>]),
  )
  const BATCH = 250
  let done = 0
  for (let from = 0; from < documents.length; from += BATCH) {
    const batch = documents.slice(from, from + BATCH)
    const requests = batch.flatMap((d) =>
      agents.map((a) => ({
        agentId: a.id,
        instances: [{ dimensionId: dimension.id, name: "Document", value: d.file_name, documentId: d.id }],
      })),
    )
    const atomics = await Effect.runPromise(ensureAtomicValues(db, projectId, requests))
    // Documents of a batch committed side by side, as workers do.
    await Promise.all(
      batch.map((d, j) => {
        const i = numberOf(d.file_name)
        return Effect.runPromise(
          replaceDocumentExtractionsOfAgents(db, {
            projectId,
            documentId: d.id,
            documentVersion: d.version,
            agents: agents.map((a, k) => {
              const atomic = atomics[j * agents.length + k]!
              const field = fieldOf.get(a.name)!
              const status = statusOf(i, k)
              const { value, line } = found(field, i)
              const rows = rowsOf.get(a.id)!
              const extractionId = randomUUID()
              rows.push({
                atomicValueId: atomic.id,
                resultName: d.file_name,
                value: status === "No result" ? null : field.valueType === "number" ? Number(value) : value,
                status,
                justification: status === "Requires attention" ? "The documents disagree." : "",
                references: status === "No result" ? {} : { [extractionId]: [d.file_name, 1] },
                sources:
                  status === "No result"
                    ? []
                    : [
                        {
                          document_name: d.file_name,
                          page_number: 1,
                          document_id: d.id,
                          atomic_value_ids: [atomic.id],
                        },
                      ],
                sourceType: "document",
                webSupplement: null,
                verdicts: [],
                summary: null,
                confidence: status === "No result" ? null : 0.5 + ((i * 13 + k) % 50) / 100,
              })
              return {
                agentId: a.id,
                agentConfigVersion: a.config_version,
                dimensionsKey,
                extractions:
                  status === "No result"
                    ? []
                    : [
                        {
                          atomicValueId: atomic.id,
                          value,
                          relevantPassage: line,
                          reasoning: "",
                          pageNumber: 1,
                        },
                      ],
              }
            }),
          }),
        )
      }),
    )
    done += batch.length
    if (
      options.log &&
      Math.floor((10 * done) / documents.length) > Math.floor((10 * (done - batch.length)) / documents.length)
    )
      options.log(`  extractions of ${done} of ${documents.length} documents written`)
  }
  for (const a of agents)
    await Effect.runPromise(
      writeResults(db, {
        projectId,
        agentId: a.id,
        configVersion: a.config_version,
        rows: rowsOf.get(a.id)!,
      }),
    )
  options.log?.(`  ${agents.length} agents resolved`)
  // Written in a minute, the rows are read as they are after autovacuum's next round (its naptime is a
  // minute): vacuumed and analyzed, without waiting for it.
  await sql`vacuum analyze`.execute(db)
  return { organizationId, projectId, agents: agents.map((a) => a.id) }
}
