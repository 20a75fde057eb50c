/**
 * Parsed pages of processed documents: their text and layout, and page images. Images are drawn by the
 * format's backend in a worker thread (never in the API's own thread), under the parse limits, once per
 * document version and page: the drawing is stored beside the version's file and read from there after.
 */
import { BlobStore, type Conn, Db, type DocumentRow, withDb } from "@dxs/db"
import { attachmentTree, currentBlobKey } from "@dxs/db/repositories/Documents"
import { findPage as findPageRow, type PageContent, pagesOfDocuments } from "@dxs/db/repositories/Pages"
import {
  type ContentDocument,
  type ContentFormat,
  contentPageOf,
  renderContent,
  tableJson,
} from "@dxs/domain/Content"
import { pageImagesOf } from "@dxs/domain/DocumentType"
import type { DocumentPage, LayoutItem } from "@dxs/domain/Records"
import { ParseFailure } from "@dxs/pipeline/parsing/Backend"
import {
  PageImageUnavailable,
  parseSettings,
  type RunOptions,
  renderPageImage,
} from "@dxs/pipeline/parsing/Runner"
import { Context, Deferred, Effect, FiberId } from "effect"
import { CurrentOrganization } from "./CurrentOrganization.ts"
import { findDocument } from "./Documents.ts"
import { NotFound, problemType } from "./Errors.ts"
import { pageImageKey } from "./PageImageFiles.ts"

/** Parse limits and tools for work done on request (page images). Default: the pipeline's defaults. */
export class ParsingSettings extends Context.Reference<ParsingSettings>()("@dxs/services/ParsingSettings", {
  defaultValue: (): Omit<RunOptions, "signal"> => ({}),
}) {}

const notFound = (detail: string) =>
  new NotFound({ type: problemType("not-found"), title: "Not found", status: 404, detail })

let renderings = 0
/** How many page images this process has drawn (tests observe that a stored image is not drawn again). */
export const pageImageRenderings = (): number => renderings

/** Page images drawn at once per process. */
const MAX_CONCURRENT_DRAWINGS = 2

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`

/** Why a document of this type has no page images, or undefined when it has. */
export const pageImageUnavailableReason = (type: string, libreOffice: boolean): string | undefined => {
  const drawn = pageImagesOf(type)
  if (drawn === "always" || (drawn === "with LibreOffice" && libreOffice)) return undefined
  return libreOffice
    ? `Page images are available for PDF, image, Word, PowerPoint and Excel documents, not for ${type} documents`
    : `Page images are available for PDF and image documents; install LibreOffice to render Word/PowerPoint/Excel pages (this is a ${type} document)`
}

/** A page image, or only its tag when the client's copy is current. */
export interface PageImage {
  /** A strong entity tag of the image: the document, its version and the page. */
  readonly etag: string
  /** The request named the document's current version: what it addresses never changes. */
  readonly immutable: boolean
  /** The PNG; undefined when the client's copy matched `etag` (nothing was read). */
  readonly png: Uint8Array | undefined
}

export interface PageImageRequest {
  /** The document version the client means (`?version=`); another than the current one is a 404. */
  readonly version?: number | undefined
  /** Whether the client already has the image of this entity tag (`If-None-Match`). */
  readonly notModified?: ((etag: string) => boolean) | undefined
}

/** A page row of the document as the API shows it. */
const toPage = (documentId: string, page: PageContent): DocumentPage => ({
  document_id: documentId,
  page_number: page.number,
  text: page.text,
  width: page.width,
  height: page.height,
  unit: page.unit,
  layout: page.layout as ReadonlyArray<LayoutItem>,
  tables: (page.tables ?? []).map(tableJson),
})

/** Attached messages nest: the content of a document takes in attachments this many levels down, this many in all. */
const CONTENT_ATTACHMENT_DEPTH = 5
const CONTENT_ATTACHMENTS = 100

/** The document and its attachments (those processed), as the content renderer reads them. */
const contentOf = (
  document: Pick<DocumentRow, "id" | "file_name" | "type">,
  attached: ReadonlyArray<{
    readonly id: string
    readonly parent_document_id: string | null
    readonly file_name: string
    readonly type: string
  }>,
  pages: ReadonlyMap<string, ReadonlyArray<PageContent>>,
): ContentDocument => ({
  file_name: document.file_name,
  type: document.type,
  pages: (pages.get(document.id) ?? []).map(contentPageOf),
  attachments: attached
    .filter((a) => a.parent_document_id === document.id)
    .map((a) => contentOf({ id: a.id, file_name: a.file_name, type: a.type }, attached, pages)),
})

/** The document of the project when it is Processed, else a NotFound that says why it has no pages. */
const processedDocument = (db: Conn, orgId: string, projectId: string, documentId: string) =>
  Effect.gen(function* () {
    const document = yield* findDocument(db, orgId, projectId, documentId)
    if (document.status === "Pending")
      return yield* notFound(
        `Document ${documentId} has no pages yet: it is Pending (parsing has not completed)`,
      )
    if (document.status === "Failed")
      return yield* notFound(
        `Document ${documentId} has no pages: parsing failed (${document.failure_reason ?? "no reason recorded"})`,
      )
    return document
  })

/**
 * The document (Processed, of `version` when given) and its page row, or a NotFound that says which is
 * missing.
 */
const findPage = (projectId: string, documentId: string, pageNumber: number, version?: number) =>
  Effect.gen(function* () {
    const org = yield* CurrentOrganization
    return yield* withDb((db) =>
      Effect.gen(function* () {
        const found = yield* findDocument(db, org.id, projectId, documentId)
        if (version !== undefined && version !== found.version)
          return yield* notFound(
            `Version ${version} of document ${documentId} is not its current version; the current version is ${found.version}`,
          )
        const document = yield* processedDocument(db, org.id, projectId, documentId)
        const page = yield* findPageRow(db, documentId, pageNumber)
        if (!page)
          return yield* notFound(
            `Document ${documentId} has no page ${pageNumber}; it has ${plural(document.page_count, "page")}`,
          )
        return { document, page }
      }),
    )
  })

/** The stored file at `key`, or undefined when there is none (or it was removed meanwhile). */
const readIfStored = (blobs: BlobStore["Type"], key: string) =>
  Effect.gen(function* () {
    if ((yield* blobs.size(key)) === undefined) return undefined
    return yield* blobs.read(key).pipe(Effect.catchTag("BlobNotFound", () => Effect.succeed(undefined)))
  })

/** What drawing page images takes in this process: the parse limits, and the drawings running. */
interface Drawing {
  readonly runOptions: Omit<RunOptions, "signal">
  /** Each drawing is a thread with its own heap: a burst of image requests waits instead of piling up. */
  readonly permits: Effect.Semaphore
  /** Drawings under way in this process, by image key: a request for a page being drawn waits for it. */
  readonly underWay: Map<string, Deferred.Deferred<Uint8Array, NotFound>>
}

/** Page `pageNumber` of the document's stored file drawn as a PNG; a NotFound when it cannot be. */
const draw = (runOptions: Omit<RunOptions, "signal">, document: DocumentRow, pageNumber: number) =>
  Effect.gen(function* () {
    const blobs = yield* BlobStore
    const bytes = yield* readIfStored(blobs, document.blob_key)
    if (bytes === undefined)
      return yield* notFound(`Document ${document.id} has just been replaced or deleted; ask again`)
    renderings++
    return yield* Effect.tryPromise({
      try: (signal) =>
        renderPageImage(
          { bytes, fileName: document.file_name, contentType: document.content_type },
          pageNumber,
          { ...runOptions, signal },
        ),
      catch: (e) => e,
    }).pipe(
      Effect.catchAll((e) =>
        e instanceof PageImageUnavailable
          ? Effect.fail(notFound(`Page images are not available for ${document.type} documents: ${e.reason}`))
          : e instanceof ParseFailure
            ? Effect.fail(
                notFound(`Page ${pageNumber} of document ${document.id} could not be drawn: ${e.reason}`),
              )
            : Effect.die(e),
      ),
    )
  })

/** The stored image of the page, else one drawing of it (shared by concurrent requests), stored. */
const storedOrDrawn = (drawing: Drawing, document: DocumentRow, pageNumber: number) =>
  Effect.gen(function* () {
    const blobs = yield* BlobStore
    const key = pageImageKey(document.blob_key, pageNumber)
    const stored = yield* readIfStored(blobs, key)
    if (stored !== undefined) return stored
    const running = drawing.underWay.get(key)
    if (running !== undefined) return yield* Deferred.await(running)
    const done = Deferred.unsafeMake<Uint8Array, NotFound>(FiberId.none)
    drawing.underWay.set(key, done)
    const drawAndStore = Effect.gen(function* () {
      // Drawn and stored by another process, or by a drawing here that has just ended.
      const again = yield* readIfStored(blobs, key)
      if (again !== undefined) return again
      const png = yield* drawing.permits.withPermits(1)(draw(drawing.runOptions, document, pageNumber))
      yield* blobs.put(key, png)
      // A replacement or deletion removes the version's images after its commit; one that committed
      // before this image was stored may have missed it, so it goes now.
      const current = yield* withDb((db) => currentBlobKey(db, document.id))
      if (current !== document.blob_key) yield* blobs.remove(key)
      return png
    })
    // Apart from the request: one that goes away does not cancel the drawing the others wait for.
    yield* drawAndStore.pipe(
      Effect.exit,
      Effect.flatMap((exit) =>
        Effect.sync(() => drawing.underWay.delete(key)).pipe(Effect.zipRight(Deferred.done(done, exit))),
      ),
      Effect.forkDaemon,
    )
    return yield* Deferred.await(done)
  })

/** The processed document and its processed attachments, rendered whole in `format`. */
const content = (projectId: string, documentId: string, format: ContentFormat) =>
  Effect.gen(function* () {
    const org = yield* CurrentOrganization
    return yield* withDb((db) =>
      Effect.gen(function* () {
        const document = yield* processedDocument(db, org.id, projectId, documentId)
        const attached = (yield* attachmentTree(
          db,
          projectId,
          documentId,
          CONTENT_ATTACHMENT_DEPTH,
          CONTENT_ATTACHMENTS,
        )).filter((a) => a.status === "Processed")
        const rows = yield* pagesOfDocuments(db, org.id, [document.id, ...attached.map((a) => a.id)])
        const pages = new Map<string, Array<PageContent>>()
        for (const row of rows) pages.set(row.document_id, [...(pages.get(row.document_id) ?? []), row])
        return renderContent(contentOf(document, attached, pages), format)
      }),
    )
  })

/** The pages of each of the documents that has pages and is the current organisation's, in page order. */
const pagesForDocuments = (documentIds: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const org = yield* CurrentOrganization
    const ids = [...new Set(documentIds)]
    if (ids.length === 0) return new Map<string, ReadonlyArray<DocumentPage>>()
    const rows = yield* withDb((db) => pagesOfDocuments(db, org.id, ids))
    const byDocument = new Map<string, Array<DocumentPage>>()
    for (const row of rows) {
      const list = byDocument.get(row.document_id) ?? []
      list.push(toPage(row.document_id, row))
      byDocument.set(row.document_id, list)
    }
    return byDocument as ReadonlyMap<string, ReadonlyArray<DocumentPage>>
  })

/** A page's image, or only its tag when the client's copy is current (`libreOffice`: whether it is installed). */
const pageImage = (
  drawing: Drawing,
  libreOffice: boolean,
  projectId: string,
  documentId: string,
  pageNumber: number,
  request: PageImageRequest,
) =>
  Effect.gen(function* () {
    const { document } = yield* findPage(projectId, documentId, pageNumber, request.version)
    const unavailable = pageImageUnavailableReason(document.type, libreOffice)
    if (unavailable !== undefined) return yield* notFound(unavailable)
    const etag = `"${documentId}.v${document.version}.p${pageNumber}"`
    const immutable = request.version !== undefined
    if (request.notModified?.(etag) === true) return { etag, immutable, png: undefined } as PageImage
    const png = yield* storedOrDrawn(drawing, document, pageNumber)
    return { etag, immutable, png } as PageImage
  })

export class Pages extends Effect.Service<Pages>()("@dxs/services/Pages", {
  effect: Effect.gen(function* () {
    const parsing = yield* ParsingSettings
    const settings = parseSettings(parsing)
    const drawing: Drawing = {
      runOptions: { ...parsing, ...settings },
      permits: yield* Effect.makeSemaphore(MAX_CONCURRENT_DRAWINGS),
      underWay: new Map(),
    }
    const storage = Context.make(Db, yield* Db).pipe(Context.add(BlobStore, yield* BlobStore))
    const provide = Effect.provide(storage)

    return {
      /**
       * The whole processed document in reading order, written as Markdown, JSON or text, with the content of
       * its processed attachments (an e-mail's) after it under their file names.
       */
      content: (projectId: string, documentId: string, format: ContentFormat) =>
        content(projectId, documentId, format).pipe(provide),

      /** Text, size and layout of page `pageNumber` (1-based) of a processed document. */
      get: (projectId: string, documentId: string, pageNumber: number) =>
        Effect.map(findPage(projectId, documentId, pageNumber), ({ page }) => toPage(documentId, page)).pipe(
          provide,
        ),

      /**
       * The pages of each of the documents, in page order, in one read: an entry for each document of the
       * current organisation's projects that has pages (the others are absent).
       */
      forDocuments: (documentIds: ReadonlyArray<string>) => pagesForDocuments(documentIds).pipe(provide),

      /**
       * The PNG image of a page: PDF pages drawn, images as they are, Word/PowerPoint/Excel pages when
       * LibreOffice is installed; otherwise a NotFound that says why. Drawn once per document version and
       * page, then read from the blob store; nothing is read when the client's copy is current.
       */
      image: (projectId: string, documentId: string, pageNumber: number, request: PageImageRequest = {}) =>
        pageImage(
          drawing,
          settings.libreOffice !== undefined,
          projectId,
          documentId,
          pageNumber,
          request,
        ).pipe(provide),
    }
  }),
}) {}
