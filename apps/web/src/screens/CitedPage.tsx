/**
 * A cited page: the page an extraction cites with its passage highlighted (the passage's bounding boxes over
 * the page image, or the passage marked in the page's text for documents without page images). Shown by the
 * result detail screen and the review screen, which also sizes it (zoom) and scrolls to the passage.
 */
import type {
  BoundingBoxesResponse as BoundingBoxes,
  DocumentPage,
  ExtractionResult as Extraction,
} from "@dxs/domain/Records"
import { useEffect, useRef, useState } from "react"
import { API_BASE, seg } from "../api.ts"
import { ErrorAlert, Loading } from "../components.tsx"
import { useApiQuery } from "../query.ts"

/** Document types whose pages have no image: their page text is shown instead. */
const TEXT_ONLY_TYPES = new Set(["Text", "Website", "Email", "Audio"])

export function PageViewer({
  base,
  extraction,
  documentType,
  width,
  scrollToPassage = false,
}: {
  readonly base: string
  readonly extraction: Extraction
  readonly documentType: string | undefined
  /** The page's width in CSS pixels; the width of its container when not given. */
  readonly width?: number | undefined
  /** Scroll the highlighted passage into view once it is drawn. */
  readonly scrollToPassage?: boolean
}) {
  if (extraction.document_id === null || extraction.page_number === null)
    return (
      <p className="muted">
        {extraction.source_type === "web"
          ? "This extraction comes from a web search: there is no page to show."
          : "This extraction has no page to show."}
      </p>
    )
  return (
    <CitedPage
      base={base}
      documentId={extraction.document_id}
      documentName={extraction.document_name ?? "the document"}
      documentType={documentType}
      pageNumber={extraction.page_number}
      extractionId={extraction.id}
      passage={extraction.relevant_passage}
      width={width}
      scrollToPassage={scrollToPassage}
    />
  )
}

/**
 * A page of a document, as an image or (types without page images) as text; with an extraction, its passage
 * highlighted on it.
 */
export function CitedPage({
  documentType,
  extractionId,
  ...page
}: PageProps & { readonly documentType: string | undefined; readonly extractionId?: string | undefined }) {
  return documentType !== undefined && TEXT_ONLY_TYPES.has(documentType) ? (
    <PageText {...page} />
  ) : (
    <PageImage {...page} extractionId={extractionId} />
  )
}

interface PageProps {
  readonly base: string
  readonly documentId: string
  readonly documentName: string
  readonly pageNumber: number
  readonly passage: string
  readonly width?: number | undefined
  readonly scrollToPassage?: boolean
}

/** Scrolls the element into view (centred) once `ready`, when asked to. */
function useScrollInto<E extends Element>(ready: boolean, enabled: boolean) {
  const ref = useRef<E | null>(null)
  useEffect(() => {
    if (ready && enabled) ref.current?.scrollIntoView({ block: "center", inline: "nearest" })
  }, [ready, enabled])
  return ref
}

/** The page as an image with the passage's bounding boxes over it; the page's text when it has no image. */
function PageImage({ extractionId, ...page }: PageProps & { readonly extractionId: string | undefined }) {
  const { base, documentId, documentName, pageNumber, width, scrollToPassage = false } = page
  const boxes = useApiQuery<BoundingBoxes>(
    extractionId === undefined ? null : `${base}/extractions/${seg(extractionId)}/bounding-boxes/`,
  )
  const [natural, setNatural] = useState<{ readonly width: number; readonly height: number } | undefined>(
    undefined,
  )
  const [failed, setFailed] = useState(false)
  const src = `${API_BASE}${base}/documents/${seg(documentId)}/pages/${pageNumber}/image/`

  const firstHighlight = useScrollInto<HTMLDivElement>(
    natural !== undefined && (boxes.data?.boxes.length ?? 0) > 0,
    scrollToPassage,
  )
  if (failed) return <PageText {...page} />

  const onImage = (img: HTMLImageElement | null) => {
    if (img?.complete && img.naturalWidth > 0 && !natural)
      setNatural({ width: img.naturalWidth, height: img.naturalHeight })
  }

  // page units → percentages of the rendered image (the image shows the whole page), so the boxes
  // follow the image at any size
  const b = boxes.data
  const pageWidth = b?.page_width ?? natural?.width
  const pageHeight = b?.page_height ?? natural?.height
  const highlights =
    natural && b && pageWidth && pageHeight
      ? b.boxes.map((box) => ({
          left: (box.x / pageWidth) * 100,
          top: (box.y / pageHeight) * 100,
          width: (box.width / pageWidth) * 100,
          height: (box.height / pageHeight) * 100,
          text: box.text,
        }))
      : []
  const located =
    boxes.data && natural
      ? boxes.data.boxes.length > 0
        ? ` · the passage is highlighted (${boxes.data.boxes.length} ${boxes.data.boxes.length === 1 ? "line" : "lines"})`
        : " · the passage could not be located on this page"
      : ""

  return (
    <figure className="page-figure" style={width === undefined ? undefined : { width: `${width}px` }}>
      <div className="page-frame">
        <img
          ref={onImage}
          src={src}
          alt={`Page ${pageNumber} of ${documentName}`}
          onLoad={(e) =>
            setNatural({ width: e.currentTarget.naturalWidth, height: e.currentTarget.naturalHeight })
          }
          onError={() => setFailed(true)}
        />
        {highlights.map((h, i) => (
          <div
            key={i}
            ref={i === 0 ? firstHighlight : undefined}
            className="highlight"
            data-testid="highlight"
            aria-hidden="true"
            title={h.text}
            style={{ left: `${h.left}%`, top: `${h.top}%`, width: `${h.width}%`, height: `${h.height}%` }}
          />
        ))}
      </div>
      <figcaption className="muted small">
        {documentName}, page {pageNumber}
        {located}
      </figcaption>
      <ErrorAlert message={boxes.error} />
    </figure>
  )
}

/** The page's text with the passage marked (documents without page images). */
function PageText({
  base,
  documentId,
  documentName,
  pageNumber,
  passage,
  width,
  scrollToPassage = false,
}: PageProps) {
  const page = useApiQuery<DocumentPage>(`${base}/documents/${seg(documentId)}/pages/${pageNumber}/`)
  const found = page.data === undefined ? null : findPassage(page.data.text, passage)
  const mark = useScrollInto<HTMLElement>(found !== null, scrollToPassage)
  if (page.data === undefined)
    return page.error ? <ErrorAlert message={page.error} /> : <Loading what="the page" />
  const text = page.data.text
  const at = found
  return (
    <figure className="page-figure" style={width === undefined ? undefined : { width: `${width}px` }}>
      <div className="page-text" data-testid="page-text">
        {at === null ? (
          text
        ) : (
          <>
            {text.slice(0, at.start)}
            <mark ref={mark} data-testid="highlight">
              {text.slice(at.start, at.end)}
            </mark>
            {text.slice(at.end)}
          </>
        )}
      </div>
      <figcaption className="muted small">
        Text of {documentName}, page {pageNumber} (no page image)
        {passage.trim() === ""
          ? ""
          : at === null
            ? " · the passage could not be located on this page"
            : " · the passage is marked"}
      </figcaption>
    </figure>
  )
}

/** Where `passage` is in `text`: exactly, else ignoring case. */
const findPassage = (text: string, passage: string): { start: number; end: number } | null => {
  const p = passage.trim()
  if (p === "") return null
  let start = text.indexOf(p)
  if (start < 0) start = text.toLowerCase().indexOf(p.toLowerCase())
  return start < 0 ? null : { start, end: start + p.length }
}
