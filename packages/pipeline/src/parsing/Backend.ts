import { isMainThread, parentPort } from "node:worker_threads"
import type { PageBlock } from "@dxs/domain/Content"
import type { Table } from "@dxs/domain/Tables"
import { Data, Effect } from "effect"

/**
 * The contract every document-format backend implements (one file per format, one row of the format table).
 * Backends run inside a worker thread under time and memory limits (thread.ts runs their Effects), and
 * turn bytes into 1-based pages. A failure is a ParseFailure in the error channel, with a reason a user can
 * act on; anything else that goes wrong is a defect, which the thread reports by its message.
 */

/** A positioned piece of text: top-left origin, in the page's unit (PDF points, image pixels). */
export interface LayoutItem {
  readonly text: string
  readonly x: number
  readonly y: number
  readonly width: number
  readonly height: number
  /** OCR confidence 0–100, when the text came from OCR. */
  readonly confidence?: number
}

export interface ParsedPage {
  /** 1-based. */
  readonly number: number
  readonly text: string
  readonly width: number | null
  readonly height: number | null
  readonly unit: "pt" | "px" | null
  /** Empty for formats without coordinates (Word, e-mail, text…). */
  readonly layout: ReadonlyArray<LayoutItem>
  /** The page's tables as cells (boxes in the page's unit when it has coordinates). */
  readonly tables?: ReadonlyArray<Table> | undefined
  /**
   * The page's blocks in reading order (headings, paragraphs, list items, tables, figures, captions,
   * running headers and footers); absent when the format records none (they are then read from the text).
   */
  readonly blocks?: ReadonlyArray<PageBlock> | undefined
}

/** A file found inside another (an e-mail attachment): it becomes a document of its own. */
export interface ExtractedAttachment {
  readonly fileName: string
  readonly contentType: string
  readonly bytes: Uint8Array
}

export interface ParseOutput {
  /** Which parser produced the pages, e.g. "pdfium", "pdfium+tesseract.js", "pdfjs-dist", "mammoth". */
  readonly parser: string
  readonly pages: ReadonlyArray<ParsedPage>
  /** Title, author, dates, page size, e-mail headers…: stored as the document's `metadata` JSON string. */
  readonly metadata: Readonly<Record<string, unknown>>
  readonly attachments?: ReadonlyArray<ExtractedAttachment>
}

export interface ParseLimits {
  /** More pages than this → ParseFailure. */
  readonly maxPages: number
  /** Largest total uncompressed size of an OOXML (zip) container → ParseFailure beyond it. */
  readonly maxDecompressedBytes: number
  /** Most attachments of one message that become documents (default 100); the rest are listed as skipped. */
  readonly maxAttachments?: number
  /**
   * How deeply attachments nest through attached messages (default 5): the attachments of a message that is
   * itself an attachment this many levels deep do not become documents.
   */
  readonly maxAttachmentDepth?: number
}

export interface ParseTools {
  /** Path of the LibreOffice `soffice` binary when installed (detected at start), else undefined. */
  readonly libreOffice: string | undefined
  /** A private scratch directory for this parse (removed afterwards). */
  readonly tempDir: string
  /** An OpenAI-compatible `/v1/audio/transcriptions` endpoint (TRANSCRIPTION_URL) when configured. */
  readonly transcription?: { readonly url: string; readonly model: string; readonly apiKey?: string }
  /** Which engine reads PDFs; unset: PDF_ENGINE (see Pdf.ts), else PDFium. */
  readonly pdfEngine?: PdfEngine
}

/** PDFium (the default), or pdf.js alone. PDFium falls back to pdf.js for files it cannot read. */
export type PdfEngine = "pdfium" | "pdfjs"
export const pdfEngines: ReadonlyArray<PdfEngine> = ["pdfium", "pdfjs"]

export interface ParseInput {
  readonly bytes: Uint8Array
  readonly fileName: string
  readonly contentType: string
  readonly limits: ParseLimits
  readonly tools: ParseTools
}

/**
 * Parsing cannot complete; `reason` is shown on the Failed document (and is the error's message). A
 * backend's failure; the parsing thread passes its reason back (Runner.ts rejects with it again).
 */
export class ParseFailure extends Data.TaggedError("ParseFailure")<{ readonly reason: string }> {
  override get message(): string {
    return this.reason
  }
}

/** A ParseFailure, also one made by another copy of this module (a backend module loaded by path). */
export const isParseFailure = (e: unknown): e is ParseFailure =>
  e instanceof ParseFailure ||
  (e instanceof Error &&
    (e as { _tag?: unknown })._tag === "ParseFailure" &&
    typeof (e as { reason?: unknown }).reason === "string")

/**
 * A library's promise (pdf.js, mammoth, sharp, a fetch…) as a step of a parse: a ParseFailure it rejects
 * with is the step's failure, anything else a defect (reported by its message, as the library said it).
 */
export const fromPromise = <A>(run: () => Promise<A>): Effect.Effect<A, ParseFailure> =>
  Effect.tryPromise({ try: run, catch: (e) => e }).pipe(
    Effect.catchAll((e) => (isParseFailure(e) ? Effect.fail(e) : Effect.die(e))),
  )

/**
 * A synchronous parser kernel's work as a step of a parse: the kernel stops at the first fault it finds,
 * however deep in its walk, by raising a ParseFailure (through the one documented helper each such kernel
 * has); that becomes the step's failure here, and anything else it throws a defect.
 */
export const fromKernel = <A>(run: () => A): Effect.Effect<A, ParseFailure> =>
  Effect.try({ try: run, catch: (e) => e }).pipe(
    Effect.catchAll((e) => (isParseFailure(e) ? Effect.fail(e) : Effect.die(e))),
  )

export interface Backend {
  /** The name the format table (`@dxs/domain/DocumentType`) gives the backend, which says what it reads. */
  readonly name: string
  readonly parse: (input: ParseInput) => Effect.Effect<ParseOutput, ParseFailure>
  /** The PNG image of one page (1-based), for formats that can render one. */
  readonly renderPage?: (input: ParseInput, pageNumber: number) => Effect.Effect<Uint8Array, ParseFailure>
}

export const defaultLimits = {
  maxPages: 2000,
  maxDecompressedBytes: 500 * 1024 * 1024,
  maxAttachments: 100,
  maxAttachmentDepth: 5,
} as const satisfies Required<ParseLimits>

/** Joins lines of text into a page text, normalising line ends and trailing spaces. */
export const pageText = (lines: ReadonlyArray<string>): string =>
  lines
    .map((l) => l.replace(/[ \t]+$/u, ""))
    .join("\n")
    .replace(/\n{3,}/g, "\n\n")
    .trim()

/** The message a parsing thread posts after each slow step (an OCR'd page); see `reportSlowStep`. */
export const SLOW_STEP = "slow-step"

/**
 * Tells the runner that one slow step (an OCR'd page) completed, so the parse gets more time: a
 * 300-page scan legitimately takes longer than a 3-page one. A no-op outside a parsing thread.
 */
export const reportSlowStep = (): void => {
  if (!isMainThread) parentPort?.postMessage({ kind: SLOW_STEP })
}
