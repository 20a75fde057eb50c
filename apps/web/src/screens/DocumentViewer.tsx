/**
 * `/projects/:projectId/documents/:documentId`: a document's pages, one at a time, with page navigation
 * (previous, next, a page number) and zoom (50 to 200 %). PDFs and images show the page image; other
 * types, or a page whose image is refused, show the page's text laid out from its layout boxes (scaled to
 * the page's size), or as plain text when it has none. "Show tables" draws the page's detected tables over
 * it; the text view reads the page block by block, its tables as tables (PageTables.tsx).
 */

import type { DocumentPage, Document as DocumentRecord } from "@dxs/domain/Records"
import { useQuery } from "@tanstack/react-query"
import { type FormEvent, type ReactNode, useEffect, useState } from "react"
import { API_BASE, errorMessage, seg } from "../api.ts"
import { ErrorAlert, Loading } from "../components.tsx"
import { apiQuery } from "../query.ts"
import { Link, projectReturnHref, useTitle } from "../router.tsx"
import { documentPathOf, PageBlocks, TablesOverlay } from "./PageTables.tsx"

const ZOOM_MIN = 50
const ZOOM_MAX = 200
const ZOOM_STEP = 25
/** The width of a page at 100 %, in CSS pixels. */
const PAGE_WIDTH_PX = 800
const IMAGE_TYPES = new Set(["PDF", "Image"])
const PARSING_POLL_MS = 2000

export function DocumentViewerScreen({
  projectId,
  documentId,
}: {
  readonly projectId: string
  readonly documentId: string
}) {
  const base = `/projects/${seg(projectId)}`
  const document = useQuery({
    ...apiQuery<DocumentRecord>(`${base}/documents/${seg(documentId)}/`),
    refetchInterval: (q) => (q.state.data?.status === "Pending" ? PARSING_POLL_MS : false),
  })
  // a link to a cited page opens at that page (`?page=3`)
  const [pageNumber, setPageNumber] = useState(() => {
    const asked = Number(new URLSearchParams(window.location.search).get("page"))
    return Number.isInteger(asked) && asked > 1 ? asked : 1
  })
  const [zoom, setZoom] = useState(100)
  const [view, setView] = useState<View>("page")
  const [showTables, setShowTables] = useState(false)
  const d = document.data
  useTitle(d?.file_name ?? "Document")

  const back = (
    <p>
      <Link href={projectReturnHref(projectId)}>Back to the project</Link>
    </p>
  )

  if (d === undefined)
    return document.error ? (
      <>
        <h1>Document not found</h1>
        <ErrorAlert message={errorMessage(document.error)} />
        {back}
      </>
    ) : (
      <Loading what="the document" />
    )

  const pages = d.page_count
  return (
    <>
      {back}
      <h1>{d.file_name}</h1>
      <p className="muted small">
        {d.type} · version {d.version} ·{" "}
        <span className={`doc-status doc-${d.status.toLowerCase()}`}>{d.status}</span>
        {d.status === "Processed" && ` · ${pages} ${pages === 1 ? "page" : "pages"}`}
      </p>
      {d.status === "Pending" && (
        <p role="status">The document is being parsed; its pages show once it is done.</p>
      )}
      {d.status === "Failed" && (
        <p role="alert" className="alert">
          Parsing failed: {d.failure_reason ?? "no reason was given"}
        </p>
      )}
      {d.status === "Processed" && pages > 0 && (
        <>
          <div className="viewer-toolbar">
            <PageNavigation pageNumber={pageNumber} pages={pages} onChange={setPageNumber} />
            <fieldset className="zoom-controls">
              <legend className="visually-hidden">Zoom</legend>
              <button
                type="button"
                className="secondary compact"
                disabled={zoom <= ZOOM_MIN}
                onClick={() => setZoom((z) => Math.max(ZOOM_MIN, z - ZOOM_STEP))}
              >
                Zoom out
              </button>
              <output aria-live="polite" data-testid="zoom-level">
                {zoom} %
              </output>
              <button
                type="button"
                className="secondary compact"
                disabled={zoom >= ZOOM_MAX}
                onClick={() => setZoom((z) => Math.min(ZOOM_MAX, z + ZOOM_STEP))}
              >
                Zoom in
              </button>
            </fieldset>
            <ViewControls view={view} onView={setView} showTables={showTables} onShowTables={setShowTables} />
          </div>
          {view === "text" ? (
            <PageBlocks
              key={`${d.version}/${pageNumber}`}
              documentPath={documentPathOf(base, d.id)}
              pageNumber={pageNumber}
              label={`Text of page ${pageNumber} of ${d.file_name}`}
            />
          ) : (
            <PageView
              key={`${d.version}/${pageNumber}`}
              base={base}
              document={d}
              pageNumber={pageNumber}
              width={(PAGE_WIDTH_PX * zoom) / 100}
              showTables={showTables}
            />
          )}
        </>
      )}
    </>
  )
}

type View = "page" | "text"

/** The page as drawn (its image or laid-out text) or read as text; tables drawn over the page or not. */
function ViewControls({
  view,
  onView,
  showTables,
  onShowTables,
}: {
  readonly view: View
  readonly onView: (view: View) => void
  readonly showTables: boolean
  readonly onShowTables: (show: boolean) => void
}) {
  return (
    <fieldset className="view-controls">
      <legend className="visually-hidden">View</legend>
      {(["page", "text"] as const).map((v) => (
        <label key={v}>
          <input type="radio" name="viewer-view" checked={view === v} onChange={() => onView(v)} />
          {v === "page" ? "Page view" : "Text view"}
        </label>
      ))}
      <label>
        <input
          type="checkbox"
          checked={showTables}
          disabled={view !== "page"}
          onChange={(e) => onShowTables(e.target.checked)}
        />
        Show tables
      </label>
    </fieldset>
  )
}

function PageNavigation({
  pageNumber,
  pages,
  onChange,
}: {
  readonly pageNumber: number
  readonly pages: number
  readonly onChange: (n: number) => void
}) {
  const [typed, setTyped] = useState(String(pageNumber))
  useEffect(() => setTyped(String(pageNumber)), [pageNumber])
  const go = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault()
    const n = Number(typed)
    if (Number.isInteger(n) && n >= 1 && n <= pages) onChange(n)
    else setTyped(String(pageNumber))
  }
  return (
    <form className="page-navigation" onSubmit={go} aria-label="Page navigation">
      <button
        type="button"
        className="secondary compact"
        disabled={pageNumber <= 1}
        onClick={() => onChange(pageNumber - 1)}
      >
        Previous page
      </button>
      <label htmlFor="viewer-page-number">Page</label>
      <input
        id="viewer-page-number"
        type="number"
        min={1}
        max={pages}
        value={typed}
        onChange={(e) => setTyped(e.target.value)}
        onBlur={(e) => e.currentTarget.form?.requestSubmit()}
      />
      <span>of {pages}</span>
      <button
        type="button"
        className="secondary compact"
        disabled={pageNumber >= pages}
        onClick={() => onChange(pageNumber + 1)}
      >
        Next page
      </button>
    </form>
  )
}

/** One page: its image when the type has images and the image loads, else its text; its tables over it. */
function PageView({
  base,
  document: d,
  pageNumber,
  width,
  showTables,
}: {
  readonly base: string
  readonly document: DocumentRecord
  readonly pageNumber: number
  readonly width: number
  readonly showTables: boolean
}) {
  const [imageFailed, setImageFailed] = useState(false)
  const label = `Page ${pageNumber} of ${d.file_name}`
  const overlay = showTables ? (
    <TablesOverlay documentPath={documentPathOf(base, d.id)} pageNumber={pageNumber} width={width} />
  ) : null
  if (IMAGE_TYPES.has(d.type) && !imageFailed)
    return (
      <figure className="viewer-page viewer-image" data-testid="viewer-page" data-page={pageNumber}>
        <img
          src={`${API_BASE}${base}/documents/${seg(d.id)}/pages/${pageNumber}/image/?version=${d.version}`}
          alt={label}
          width={Math.round(width)}
          style={{ width: `${width}px`, height: "auto" }}
          onError={() => setImageFailed(true)}
        />
        {overlay}
      </figure>
    )
  return (
    <PageText
      base={base}
      document={d}
      pageNumber={pageNumber}
      width={width}
      label={label}
      overlay={overlay}
    />
  )
}

/** A page's text: laid out from its layout boxes when it has a size and boxes, else as plain text. */
function PageText({
  base,
  document: d,
  pageNumber,
  width,
  label,
  overlay,
}: {
  readonly base: string
  readonly document: DocumentRecord
  readonly pageNumber: number
  readonly width: number
  readonly label: string
  readonly overlay: ReactNode
}) {
  const page = useQuery(apiQuery<DocumentPage>(`${base}/documents/${seg(d.id)}/pages/${pageNumber}/`))
  if (page.data === undefined)
    return page.error ? (
      <ErrorAlert message={errorMessage(page.error)} />
    ) : (
      <Loading what={`page ${pageNumber}`} />
    )
  const p = page.data
  if (p.width && p.height && p.layout.length > 0) {
    const scale = width / p.width
    return (
      <figure
        className="viewer-page viewer-layout"
        data-testid="viewer-page"
        data-page={pageNumber}
        aria-label={label}
        style={{ width: `${width}px`, height: `${p.height * scale}px` }}
      >
        {p.layout.map((item, i) => (
          <span
            key={i}
            className="layout-box"
            style={{
              left: `${item.x * scale}px`,
              top: `${item.y * scale}px`,
              width: `${item.width * scale}px`,
              height: `${item.height * scale}px`,
              fontSize: `${Math.max(1, item.height * scale * 0.8)}px`,
            }}
          >
            {item.text}
          </span>
        ))}
        {overlay}
      </figure>
    )
  }
  return (
    <figure className="viewer-page" data-testid="viewer-page" data-page={pageNumber} aria-label={label}>
      <pre
        className="page-text"
        style={{ width: `${width}px`, fontSize: `${(0.9 * width) / PAGE_WIDTH_PX}rem` }}
      >
        {p.text}
      </pre>
    </figure>
  )
}
