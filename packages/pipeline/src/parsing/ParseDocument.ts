/**
 * The parse stage: one `parse` task ({document_id, version}) turns the stored original into pages. The
 * parse itself runs in a worker thread under the limits (Runner.ts); its outcome is written in ONE
 * transaction together with the task's completion: the pages (replacing any), the document's status
 * (Processed or Failed with the reason), page_count, last_parsed_at, summary and metadata, and one new
 * document per extracted attachment (each with its own parse task).
 *
 * A parse that cannot complete (bad content, encryption, limits) is an outcome, not an error: the document
 * becomes Failed and the task succeeds. Anything else (database or storage trouble, defects) fails the
 * attempt, so the task is retried; when its last attempt fails, the document is set Failed before the
 * failure propagates, so it is never left Pending. An outage (storage or the database out of reach) is no cause in the document: the
 * task is retried for the retry window without counting, and the document stays Pending meanwhile (past
 * the window, the sweep of abandoned parses sets it Failed).
 */
import { createHash, randomUUID } from "node:crypto"
import {
  type BlobStoreShape,
  type Database,
  type DocumentRow,
  documentBlobKey,
  type TaskRow,
  transactionOn,
} from "@dxs/db"
import { logLine } from "@dxs/db/Log"
import { parsedPages, parseSeconds } from "@dxs/db/Metrics"
import { outageInCause } from "@dxs/db/Outage"
import * as Documents from "@dxs/db/repositories/Documents"
import { replacePages } from "@dxs/db/repositories/Pages"
import * as ParseTasks from "@dxs/db/repositories/ParseTasks"
import { lockProject } from "@dxs/db/repositories/Projects"
import { DocumentEvent, transitionDocument } from "@dxs/domain/DocumentState"
import { documentTypeFromFileName, extensionOfMimeType } from "@dxs/domain/DocumentType"
import { Cause, Effect, Either } from "effect"
import type { Kysely, Transaction } from "kysely"
import { hasQueuedRunStart, wakeQueuedRun } from "../run/Wake.ts"
import {
  defaultLimits,
  type ExtractedAttachment,
  type ParsedPage,
  ParseFailure,
  type ParseOutput,
} from "./Backend.ts"
import { type RunOptions, runParse } from "./Runner.ts"

export const PARSE_TASK = ParseTasks.PARSE_TASK

/** The idempotency key of the parse task of one document version. */
export const parseTaskKey = ParseTasks.parseTaskKey

/** What a parse handler gets besides its task (a structural subset of the worker's TaskContext). */
export interface ParseTaskContext {
  readonly workerId: string
  readonly db: Kysely<Database>
  /** Completes the task inside the given transaction (rejects when the lease is lost). */
  readonly complete: (trx: Transaction<Database>) => Promise<void>
}

export interface ParseStageOptions {
  readonly blobs: BlobStoreShape
  /** Limits, LibreOffice, and (tests only) a backend module; see Runner.ts. */
  readonly run?: Omit<RunOptions, "signal"> | undefined
}

const SUMMARY_LENGTH = 300

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`

/**
 * A short summary: the start of the text (about 300 characters, cut at a sentence end, else at a word
 * boundary) and the page count.
 */
export const summarize = (
  pages: ReadonlyArray<Pick<ParsedPage, "text">>,
  pageCount = pages.length,
): string => {
  const text = pages
    .map((p) => p.text)
    .join(" ")
    .replace(/\s+/g, " ")
    .trim()
  const count = `(${plural(pageCount, "page")})`
  if (text === "") return `No text found ${count}`
  if (text.length <= SUMMARY_LENGTH) return `${text} ${count}`
  const head = text.slice(0, SUMMARY_LENGTH + 1)
  const minimum = SUMMARY_LENGTH / 3
  let sentenceEnd = -1
  for (const m of head.matchAll(/[.!?…](?=\s)/g)) if (m.index >= minimum) sentenceEnd = m.index + 1
  if (sentenceEnd > 0) return `${head.slice(0, sentenceEnd)} ${count}`
  const space = head.lastIndexOf(" ")
  const cut = space >= minimum ? head.slice(0, space) : head.slice(0, SUMMARY_LENGTH)
  return `${cut.replace(/[\s,;:–-]+$/u, "")}… ${count}`
}

/** PostgreSQL text and jsonb cannot hold NUL characters. */
const clean = (s: string) => (s.includes("\u0000") ? s.replaceAll("\u0000", "") : s)

const finite = (n: unknown): number | null => (typeof n === "number" && Number.isFinite(n) ? n : null)

/** The metadata as a JSON string: backend metadata plus `parser`; values JSON cannot hold are described. */
const metadataJson = (output: ParseOutput) =>
  clean(
    JSON.stringify({ ...output.metadata, parser: output.parser }, (_key, value: unknown) =>
      typeof value === "bigint"
        ? value.toString()
        : ArrayBuffer.isView(value)
          ? `(${value.byteLength} bytes)`
          : value,
    ),
  )

/** Page numbers as given when they are distinct integers from 1, else 1..n in the order given. */
const numbered = (pages: ReadonlyArray<ParsedPage>): ReadonlyArray<ParsedPage> => {
  const numbers = new Set(pages.map((p) => p.number))
  const valid =
    numbers.size === pages.length && pages.every((p) => Number.isSafeInteger(p.number) && p.number >= 1)
  return valid ? pages : pages.map((p, i) => ({ ...p, number: i + 1 }))
}

/** A box with four finite numbers, else null. */
const box = (b: unknown): [number, number, number, number] | null =>
  Array.isArray(b) && b.length === 4 && b.every((n) => finite(n) !== null)
    ? (b as [number, number, number, number])
    : null

/** The page's tables as stored: texts without NUL, boxes of finite numbers. */
const tablesJson = (p: ParsedPage) =>
  JSON.stringify(
    (p.tables ?? []).map((t) => ({
      bbox: box(t.bbox),
      cells: t.cells.map((c) => ({ ...c, text: clean(c.text), bbox: box(c.bbox) })),
      continued: t.continued === true,
    })),
  )

const blocksJson = (p: ParsedPage) =>
  JSON.stringify(
    (p.blocks ?? []).map((b) => ({
      ...b,
      text: clean(b.text),
      bbox: box(b.bbox),
    })),
  )

const pageRows = (documentId: string, pages: ReadonlyArray<ParsedPage>) =>
  pages.map((p) => ({
    document_id: documentId,
    number: p.number,
    text: clean(p.text ?? ""),
    layout: JSON.stringify(
      (p.layout ?? []).map((item) => ({
        text: clean(item.text),
        x: finite(item.x) ?? 0,
        y: finite(item.y) ?? 0,
        width: finite(item.width) ?? 0,
        height: finite(item.height) ?? 0,
        ...(finite(item.confidence) === null ? {} : { confidence: item.confidence }),
      })),
    ),
    tables: tablesJson(p),
    blocks: blocksJson(p),
    width: finite(p.width),
    height: finite(p.height),
    unit: p.unit ?? null,
  }))

/** The attachment's own name (last path segment), given the extension of its content type when it has no known one. */
const attachmentName = (a: ExtractedAttachment, i: number) => {
  const name = clean((a.fileName ?? "").split(/[\\/]/).pop()?.trim() ?? "") || `attachment-${i + 1}`
  if (documentTypeFromFileName(name) !== undefined) return name
  const ext = extensionOfMimeType(a.contentType ?? "")
  return ext === undefined ? name : `${name}.${ext}`
}

interface StoredAttachment {
  readonly id: string
  readonly fileName: string
  readonly type: string | undefined
  readonly contentType: string
  readonly key: string
  readonly size: number
  readonly sha256: string
}

type Outcome =
  | { readonly _tag: "Parsed"; readonly output: ParseOutput; readonly pages: ReadonlyArray<ParsedPage> }
  | { readonly _tag: "Failed"; readonly reason: string }

const messageOf = (e: unknown) => (e instanceof Error ? e.message : String(e)) || "unknown error"

const payloadOf = (task: TaskRow): { readonly documentId: string; readonly version: number } | undefined => {
  const p = task.payload as { readonly document_id?: unknown; readonly version?: unknown }
  return typeof p.document_id === "string" && typeof p.version === "number" && Number.isSafeInteger(p.version)
    ? { documentId: p.document_id, version: p.version }
    : undefined
}

/** True when the row is the version this task parses and still waits for it. */
const awaitsThisParse = (row: DocumentRow | undefined, version: number): row is DocumentRow =>
  row !== undefined && row.version === version && row.status === "Pending"

/**
 * Sets a still Pending document version Failed with `reason`, only while this worker holds the task (a
 * worker that lost its lease must not write).
 */
export const markParseFailed = (
  db: Kysely<Database>,
  task: Pick<TaskRow, "id">,
  workerId: string,
  documentId: string,
  version: number,
  reason: string,
): Effect.Effect<boolean> => ParseTasks.markParseFailed(db, task.id, workerId, documentId, version, reason)

/**
 * Sets Failed every Pending document whose current version's parse task has failed for good without its
 * handler saying so: its lease expired during the last attempt (the worker died, e.g. killed by the OS).
 * Returns how many documents changed.
 */
export const failAbandonedParses = (db: Kysely<Database>): Effect.Effect<number> =>
  ParseTasks.failAbandonedParses(db)

/** Parses in a thread of the pool (cancelled when interrupted); a `ParseFailure` is a Failed outcome. */
const parseOutcome = (
  row: DocumentRow,
  bytes: Uint8Array,
  options: ParseStageOptions,
): Effect.Effect<Outcome> => {
  const limits = options.run?.limits ?? defaultLimits
  return Effect.tryPromise({
    try: (signal) =>
      runParse({ bytes, fileName: row.file_name, contentType: row.content_type }, { ...options.run, signal }),
    catch: (e) => e,
  }).pipe(
    Effect.map((output): Outcome => {
      const pages = numbered(output.pages)
      if (pages.length > limits.maxPages)
        return {
          _tag: "Failed",
          reason: `the document has ${pages.length} pages, more than the limit of ${limits.maxPages}`,
        }
      return { _tag: "Parsed", output, pages }
    }),
    Effect.catchAll((e) =>
      e instanceof ParseFailure
        ? Effect.succeed<Outcome>({ _tag: "Failed", reason: clean(e.reason) || "parsing failed" })
        : Effect.die(e),
    ),
  )
}

interface AttachmentBounds {
  /** The message's own level (see `attachmentLevel` of the documents repository). */
  readonly level: number
  readonly maxAttachments: number
  readonly maxDepth: number
}

/** Stores each attachment's bytes under a key of its own (before the transaction that records them). */
const storeAttachments = (
  blobs: BlobStoreShape,
  projectId: string,
  attachments: ReadonlyArray<ExtractedAttachment>,
  bounds: AttachmentBounds,
  stored: Array<StoredAttachment>,
) =>
  Effect.gen(function* () {
    const skipped: Array<{ file_name: string; reason: string }> = []
    for (const [i, a] of attachments.entries()) {
      const id = randomUUID()
      const fileName = attachmentName(a, i)
      // Like an upload, an attachment of a type dxs cannot read (or an empty one) is not made a document:
      // it would only sit Failed and block launches. The message's metadata lists it instead. Messages
      // attached inside attached messages, or thousands of attachments, are bounded the same way.
      const refused =
        bounds.level >= bounds.maxDepth
          ? `attached more than ${bounds.maxDepth} levels deep (in attached messages)`
          : documentTypeFromFileName(fileName) === undefined
            ? "unsupported file type"
            : a.bytes.byteLength === 0
              ? "the attachment is empty"
              : stored.length >= bounds.maxAttachments
                ? `the message has more than ${bounds.maxAttachments} attachments`
                : undefined
      if (refused !== undefined) {
        skipped.push({ file_name: fileName, reason: refused })
        continue
      }
      const key = documentBlobKey(projectId, id, 1, fileName)
      yield* blobs.put(key, a.bytes)
      stored.push({
        id,
        fileName,
        type: documentTypeFromFileName(fileName),
        contentType: clean(a.contentType ?? "").trim() || "application/octet-stream",
        key,
        size: a.bytes.byteLength,
        sha256: createHash("sha256").update(a.bytes).digest("hex"),
      })
    }
    return skipped
  })

const writeOutcome = (
  trx: Transaction<Database>,
  row: DocumentRow,
  outcome: Outcome,
  attachments: ReadonlyArray<StoredAttachment>,
) =>
  Effect.gen(function* () {
    const event =
      outcome._tag === "Parsed"
        ? DocumentEvent.ParseSucceeded({ version: row.version })
        : DocumentEvent.ParseFailed({ version: row.version })
    const next = transitionDocument({ status: row.status as "Pending", version: row.version }, event)
    // The row was locked as this version's Pending one: a refused transition is a bug.
    if (Either.isLeft(next)) return yield* Effect.dieMessage(next.left.message)

    if (outcome._tag === "Failed") {
      yield* replacePages(trx, row.id, [])
      yield* ParseTasks.recordParseOutcome(trx, row.id, {
        _tag: "Failed",
        status: next.right.status,
        failure_reason: outcome.reason,
      })
      return
    }
    yield* replacePages(trx, row.id, pageRows(row.id, outcome.pages))
    const pageCount = outcome.pages.reduce((n, p) => Math.max(n, p.number), 0)
    yield* ParseTasks.recordParseOutcome(trx, row.id, {
      _tag: "Parsed",
      status: next.right.status,
      page_count: pageCount,
      summary: clean(summarize(outcome.pages, pageCount)),
      metadata: metadataJson(outcome.output),
    })

    for (const a of attachments)
      yield* Documents.insertDocumentAndEnqueueParse(trx, {
        id: a.id,
        project_id: row.project_id,
        file_name: a.fileName,
        type: a.type!,
        blob_key: a.key,
        content_type: a.contentType,
        size_bytes: a.size,
        sha256: a.sha256,
        parent_document_id: row.id,
      })
  })

/**
 * Runs one parse task. Succeeds when the task is done (including "nothing to do": the document was
 * deleted, replaced by a newer version, or already has its outcome); fails (a defect) to have it retried.
 * Interrupted (lease lost, worker stopping), it cancels the parse and keeps nothing.
 */
export const runParseTask = (
  options: ParseStageOptions,
  task: TaskRow,
  ctx: ParseTaskContext,
): Effect.Effect<void> =>
  Effect.gen(function* () {
    const payload = payloadOf(task)
    if (payload === undefined) return
    const { documentId, version } = payload
    const { db } = ctx
    const row = yield* Documents.findDocument(db, documentId)
    if (!awaitsThisParse(row, version)) return

    const started = Date.now()
    const bytes = yield* options.blobs
      .read(row.blob_key)
      .pipe(Effect.catchTag("BlobNotFound", () => Effect.succeed(undefined)))
    const outcome: Outcome =
      bytes === undefined
        ? { _tag: "Failed", reason: "the stored file is missing" }
        : yield* parseOutcome(row, bytes, options)

    const stored: Array<StoredAttachment> = []
    let keep = false
    yield* Effect.gen(function* () {
      let written = outcome
      const attachments = outcome._tag === "Parsed" ? (outcome.output.attachments ?? []) : []
      if (outcome._tag === "Parsed" && attachments.length > 0) {
        const limits = options.run?.limits
        const maxDepth = limits?.maxAttachmentDepth ?? defaultLimits.maxAttachmentDepth
        const bounds: AttachmentBounds = {
          level: yield* Documents.attachmentLevel(db, row.parent_document_id, maxDepth),
          maxAttachments: limits?.maxAttachments ?? defaultLimits.maxAttachments,
          maxDepth,
        }
        const skipped = yield* storeAttachments(options.blobs, row.project_id, attachments, bounds, stored)
        if (skipped.length > 0)
          written = {
            ...outcome,
            output: {
              ...outcome.output,
              metadata: { ...outcome.output.metadata, skipped_attachments: skipped },
            },
          }
      }
      yield* transactionOn(db, (trx) =>
        Effect.gen(function* () {
          // A queued run waits for the project's parses: the project is locked first (the order the run's
          // start takes), so of parses finishing together the last to commit sees that it is the last.
          const runWaits = yield* hasQueuedRunStart(trx, row.project_id)
          if (runWaits) yield* lockProject(trx, row.project_id)
          // Locked, then checked again: the document may have been deleted or replaced while parsing.
          const locked = yield* Documents.lockDocument(trx, documentId)
          if (awaitsThisParse(locked, version)) {
            yield* writeOutcome(trx, locked, written, stored)
            keep = true
          }
          yield* Effect.promise(() => ctx.complete(trx))
          // The project's last parse: its queued run starts now rather than at its next look.
          if (runWaits && !(yield* ParseTasks.parseInFlight(trx, row.project_id, task.id)))
            yield* wakeQueuedRun(trx, row.project_id)
        }),
      )
    }).pipe(
      Effect.ensuring(
        Effect.suspend(() =>
          keep
            ? Effect.void
            : Effect.forEach(
                stored,
                (a) => Effect.catchAllDefect(options.blobs.remove(a.key), () => Effect.void),
                {
                  discard: true,
                },
              ),
        ),
      ),
    )
    if (keep) yield* reportParse(row, outcome, stored.length, Date.now() - started)
  })

/** One log line and the parse metrics for a committed outcome. */
const reportParse = (row: DocumentRow, outcome: Outcome, attachments: number, ms: number) => {
  const status = outcome._tag === "Parsed" ? "Processed" : "Failed"
  const pages = outcome._tag === "Parsed" ? outcome.pages.length : 0
  return Effect.zipRight(
    Effect.sync(() => {
      parseSeconds.observe({ type: row.type, outcome: status }, ms / 1000)
      if (pages > 0) parsedPages.inc({ type: row.type }, pages)
    }),
    logLine(outcome._tag === "Parsed" ? "info" : "warning", "document parsed", {
      project_id: row.project_id,
      document_id: row.id,
      version: row.version,
      type: row.type,
      outcome: status,
      pages,
      attachments,
      ms,
      reason: outcome._tag === "Failed" ? outcome.reason : undefined,
    }),
  )
}

/**
 * The `parse` task handler: `runParseTask`, and on the last attempt a failure leaves the document Failed
 * with the failure as its reason (then propagates, so the task records it as well). Neither an
 * interruption nor an outage (storage or the database out of reach: retried for the retry window) does.
 */
export const parseTaskHandler =
  (options: ParseStageOptions) =>
  (task: TaskRow, ctx: ParseTaskContext): Effect.Effect<void> =>
    runParseTask(options, task, ctx).pipe(
      Effect.tapErrorCause((cause) => {
        const payload = payloadOf(task)
        if (
          payload === undefined ||
          Cause.isInterrupted(cause) ||
          task.attempts < task.max_attempts ||
          outageInCause(cause) !== undefined
        )
          return Effect.void
        return markParseFailed(
          ctx.db,
          task,
          ctx.workerId,
          payload.documentId,
          payload.version,
          `parsing could not complete after ${plural(task.attempts, "attempt")}: ${clean(messageOf(Cause.squash(cause)))}`,
        ).pipe(Effect.catchAllCause(() => Effect.void))
      }),
    )
