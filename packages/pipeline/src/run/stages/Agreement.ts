/**
 * An agent's resolved text values read by OCR, held against each other across the project's documents
 * (`@dxs/domain/Readings`): a value OCR misread by a character or two in one scan takes the reading its
 * document's twins agree on (a shop's address on its receipts), and its justification says so. Values
 * from a text layer, numbers, dates and values without a result stay as resolved (and the rule itself
 * leaves names, short values and readings with other numbers as read).
 */

import { metadataOfDocuments } from "@dxs/db/repositories/Documents"
import type { ResolvedRow } from "@dxs/db/repositories/Results"
import type { TaskDb } from "@dxs/db/TaskQueue"
import { readByOcr } from "@dxs/domain/DocumentType"
import { agreedReadings } from "@dxs/domain/Readings"
import { Effect } from "effect"

/** Whether every page the row cites was read by OCR. */
const citesOcrOnly = (row: ResolvedRow, metadata: ReadonlyMap<string, string>) =>
  row.sources.every((s) => readByOcr(metadata.get(s.document_id) ?? "", s.page_number))

/** The rows, those whose OCR reading the others of the project correct with their agreed value. */
export const agreeOcrReadings = (
  db: TaskDb,
  valueType: string,
  rows: ReadonlyArray<ResolvedRow>,
): Effect.Effect<ReadonlyArray<ResolvedRow>> =>
  Effect.gen(function* () {
    if (valueType !== "string") return rows
    const resolved = rows.filter(
      (r): r is ResolvedRow & { readonly value: string } =>
        r.status !== "No result" && typeof r.value === "string" && r.sources.length > 0,
    )
    // Fewer than three values cannot agree: nothing to read.
    if (resolved.length < 3) return rows
    const metadata = yield* metadataOfDocuments(db, [
      ...new Set(resolved.flatMap((r) => r.sources.map((s) => s.document_id))),
    ])
    const agreed = agreedReadings(
      resolved
        .filter((r) => citesOcrOnly(r, metadata))
        .map((r) => ({ key: r.atomicValueId, value: r.value })),
    )
    if (agreed.size === 0) return rows
    return rows.map((row) => {
      const a = agreed.get(row.atomicValueId)
      return a === undefined
        ? row
        : {
            ...row,
            value: a.value,
            justification: [
              row.justification,
              `OCR read "${String(row.value)}"; ${a.readings} readings across the project's documents, within a tenth of its characters of each other, agree on "${a.value}".`,
            ]
              .filter((part) => part !== "")
              .join(" "),
          }
    })
  })
