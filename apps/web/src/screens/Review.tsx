/**
 * `/projects/:projectId/documents/:documentId/review`: a document reviewed by keyboard. The document's page
 * (zoomable, fit to width by default) beside every agent's value for it (one per agent and combination of
 * dimension values: the results grid's rows with `document_id`), each with its status, confidence and
 * review; the selected value's cited page is shown with its passage highlighted and scrolled into view.
 * Values are marked correct or wrong and edited in place; `n`/`p` follow the review queue
 * (`GET …/review/queue/`: documents requiring attention first, then the least confident), whose totals give
 * the progress. Keys: j/k, a, r, e (Enter saves, Escape cancels), n/p; none of them while typing in a field.
 */
import type { AgentValueType } from "@dxs/domain/Enums"
import type {
  Document as DocumentRecord,
  ExtractionsPage,
  Project,
  ResultsGridCell,
  ReviewQueue,
} from "@dxs/domain/Records"
import { useMutation } from "@tanstack/react-query"
import { type KeyboardEvent, useEffect, useRef, useState } from "react"
import { api, errorMessage, seg } from "../api.ts"
import {
  ConfidenceMark,
  ErrorAlert,
  formatValue,
  Loading,
  ProjectBreadcrumb,
  StatusBadge,
} from "../components.tsx"
import { useApiQuery } from "../query.ts"
import { Link, navigate, useTitle } from "../router.tsx"
import { CitedPage } from "./CitedPage.tsx"
import { isReviewed, type ReviewValue, reviewPath, reviewQueuePath, useReview } from "./ReviewState.ts"

const ZOOM_MIN = 50
const ZOOM_MAX = 200
const ZOOM_STEP = 25
/** The width of a page at 100 %, in CSS pixels. */
const PAGE_WIDTH_PX = 800

export { reviewPath, reviewQueuePath } from "./ReviewState.ts"

/** The words for a value's review state (never colour alone). */
const reviewText = (cell: ResultsGridCell): string =>
  cell.latest_review_status === "positive"
    ? "Marked correct"
    : cell.latest_review_status === "negative"
      ? "Marked wrong"
      : cell.is_overridden
        ? "Set by hand"
        : "Not reviewed"

const reviewMark = (cell: ResultsGridCell): string =>
  cell.latest_review_status === "positive"
    ? "✓"
    : cell.latest_review_status === "negative"
      ? "✗"
      : cell.is_overridden
        ? "✎"
        : "○"

export function ReviewScreen({
  projectId,
  documentId,
}: {
  readonly projectId: string
  readonly documentId: string
}) {
  const state = useReview(projectId, documentId)
  const { base, following, preceding, current, announcement, nextDoc, previousDoc } = state
  const project = useApiQuery<Project>(`${base}/`)
  const document = useApiQuery<DocumentRecord>(`${base}/documents/${seg(documentId)}/`)
  const d = document.data
  const [zoom, setZoom] = useState<number | "fit">("fit")
  useTitle(d === undefined ? "Review" : `Review ${d.file_name}`)

  const breadcrumb = (
    <ProjectBreadcrumb href={base} name={project.data?.name} current={`Review ${d?.file_name ?? ""}`} />
  )

  if (d === undefined)
    return document.error ? (
      <>
        {breadcrumb}
        <h1>Document not found</h1>
        <ErrorAlert message={document.error} />
      </>
    ) : (
      <Loading what="the document" />
    )

  return (
    <>
      {breadcrumb}
      <h1>Review {d.file_name}</h1>
      <QueueBar
        queue={following.data}
        error={following.error ?? preceding.error}
        previousHref={previousDoc ? reviewPath(projectId, previousDoc.document_id) : undefined}
        nextHref={nextDoc ? reviewPath(projectId, nextDoc.document_id) : undefined}
      />
      <p role="status" className="visually-hidden" data-testid="review-announcement">
        {announcement}
      </p>
      <div className="review-layout">
        <ValuesSection state={state} fileName={d.file_name} />
        <section aria-labelledby="review-page-heading" className="section review-page">
          <h2 id="review-page-heading">Page</h2>
          <ZoomControls zoom={zoom} onZoom={setZoom} />
          <DocumentPage
            base={base}
            document={d}
            value={current}
            width={zoom === "fit" ? undefined : (PAGE_WIDTH_PX * zoom) / 100}
          />
          <p className="small">
            <Link href={`${base}/documents/${seg(d.id)}`}>Open the document viewer</Link>
          </p>
        </section>
      </div>
    </>
  )
}

/** The document's values, the selected one current, with the document's progress and the keys. */
function ValuesSection({
  state,
  fileName,
}: {
  readonly state: ReturnType<typeof useReview>
  readonly fileName: string
}) {
  const { grid, values, current, editing, override, actionError, listRef, setSelected, setEditing } = state
  return (
    <section aria-labelledby="review-values-heading" className="section review-values">
      <h2 id="review-values-heading">Values</h2>
      <p className="muted small" data-testid="document-progress">
        {values.filter(isReviewed).length} of {values.length} values reviewed
      </p>
      <ErrorAlert message={grid.error} />
      <ErrorAlert message={actionError ? errorMessage(actionError) : undefined} />
      {grid.data === undefined ? (
        grid.error ? null : (
          <Loading what="the values" />
        )
      ) : values.length === 0 ? (
        <p className="muted">This document has no values yet: launch the agents first.</p>
      ) : (
        <ol className="review-list" aria-label={`Values of ${fileName}`} ref={listRef}>
          {values.map((v, i) => (
            <li key={v.key} data-index={i}>
              <ValueItem
                value={v}
                current={v === current}
                editing={editing && v === current}
                saving={override.isPending}
                showRow={new Set(values.map((v) => v.rowName)).size > 1}
                onSelect={() => setSelected(i)}
                onSave={(text) => override.mutate({ value: v, text })}
                onCancel={() => setEditing(false)}
              />
            </li>
          ))}
        </ol>
      )}
      <KeyLegend />
    </section>
  )
}

/** The queue's progress and the neighbours of this document in it. */
function QueueBar({
  queue,
  error,
  previousHref,
  nextHref,
}: {
  readonly queue: ReviewQueue | undefined
  readonly error: string | undefined
  readonly previousHref: string | undefined
  readonly nextHref: string | undefined
}) {
  return (
    <nav aria-label="Review queue" className="review-queue">
      <ErrorAlert message={error} />
      <p data-testid="review-progress" aria-live="polite">
        {queue === undefined
          ? "Loading the queue…"
          : `${queue.reviewed_documents} of ${queue.total_documents} reviewed`}
      </p>
      <p className="review-queue-links">
        {previousHref ? (
          <Link href={previousHref}>Previous document</Link>
        ) : (
          <span className="muted">No previous document</span>
        )}
        {nextHref ? (
          <Link href={nextHref}>Next document</Link>
        ) : (
          <span className="muted">No next document</span>
        )}
      </p>
    </nav>
  )
}

/** One value: its agent, value, status, confidence and review; the field that edits it in place. */
function ValueItem({
  value: v,
  current,
  editing,
  saving,
  showRow,
  onSelect,
  onSave,
  onCancel,
}: {
  readonly value: ReviewValue
  readonly current: boolean
  readonly editing: boolean
  readonly saving: boolean
  readonly showRow: boolean
  readonly onSelect: () => void
  readonly onSave: (text: string) => void
  readonly onCancel: () => void
}) {
  const c = v.cell
  const unit = v.column.unit && c.value !== null ? ` ${v.column.unit}` : ""
  return (
    <div
      className={`review-value${current ? " review-current" : ""}`}
      data-testid="review-value"
      data-review={c.latest_review_status ?? (c.is_overridden ? "manual" : "none")}
    >
      <button
        type="button"
        className="review-select"
        aria-current={current ? "true" : undefined}
        onClick={onSelect}
      >
        <span className="review-agent">
          {v.column.agent_name}
          {showRow ? <span className="muted"> · {v.rowName}</span> : null}
        </span>
        <span className="review-value-text" data-testid="review-value-text">
          {formatValue(c.value)}
          {unit}
        </span>
      </button>
      <span className="review-facts small">
        <StatusBadge status={c.resolution_status} />
        {c.confidence === null ? (
          <span className="muted">no confidence</span>
        ) : (
          <ConfidenceMark confidence={c.confidence} />
        )}
        <span className="review-state" data-testid="review-state">
          <span aria-hidden="true">{reviewMark(c)} </span>
          {reviewText(c)}
        </span>
      </span>
      {editing && (
        <EditField
          agentName={v.column.agent_name}
          valueType={v.column.value_type}
          initial={c.value === null ? "" : String(c.value)}
          saving={saving}
          onSave={onSave}
          onCancel={onCancel}
        />
      )}
    </div>
  )
}

/** The value's field: Enter saves, Escape cancels. */
function EditField({
  agentName,
  valueType,
  initial,
  saving,
  onSave,
  onCancel,
}: {
  readonly agentName: string
  readonly valueType: AgentValueType
  readonly initial: string
  readonly saving: boolean
  readonly onSave: (text: string) => void
  readonly onCancel: () => void
}) {
  const [text, setText] = useState(initial)
  const ref = useRef<HTMLInputElement | null>(null)
  useEffect(() => {
    ref.current?.focus()
    ref.current?.select()
  }, [])
  const onKeyDown = (e: KeyboardEvent<HTMLInputElement>) => {
    if (e.key === "Enter") {
      e.preventDefault()
      if (!saving) onSave(text)
    } else if (e.key === "Escape") {
      e.preventDefault()
      onCancel()
    }
  }
  return (
    <div className="review-edit">
      <label htmlFor="review-edit-value">New value of {agentName}</label>
      <input
        id="review-edit-value"
        ref={ref}
        value={text}
        inputMode={valueType === "number" ? "decimal" : undefined}
        aria-describedby="review-edit-hint"
        onChange={(e) => setText(e.target.value)}
        onKeyDown={onKeyDown}
      />
      <span id="review-edit-hint" className="muted small">
        Enter saves, Escape cancels
      </span>
    </div>
  )
}

function ZoomControls({
  zoom,
  onZoom,
}: {
  readonly zoom: number | "fit"
  readonly onZoom: (zoom: number | "fit") => void
}) {
  const level = zoom === "fit" ? 100 : zoom
  return (
    <fieldset className="zoom-controls">
      <legend className="visually-hidden">Zoom</legend>
      <button
        type="button"
        className="secondary compact"
        aria-label="Zoom out"
        disabled={zoom !== "fit" && zoom <= ZOOM_MIN}
        onClick={() => onZoom(Math.max(ZOOM_MIN, level - ZOOM_STEP))}
      >
        −
      </button>
      <output aria-live="polite" data-testid="zoom-level">
        {zoom === "fit" ? "Fit width" : `${zoom} %`}
      </output>
      <button
        type="button"
        className="secondary compact"
        aria-label="Zoom in"
        disabled={zoom !== "fit" && zoom >= ZOOM_MAX}
        onClick={() => onZoom(Math.min(ZOOM_MAX, level + ZOOM_STEP))}
      >
        +
      </button>
      <button
        type="button"
        className="secondary compact"
        aria-pressed={zoom === "fit"}
        onClick={() => onZoom("fit")}
      >
        Fit width
      </button>
    </fieldset>
  )
}

/**
 * The page to show: the selected value's cited page of this document with its passage highlighted and
 * scrolled to, else the document's first page.
 */
function DocumentPage({
  base,
  document: d,
  value,
  width,
}: {
  readonly base: string
  readonly document: DocumentRecord
  readonly value: ReviewValue | undefined
  readonly width: number | undefined
}) {
  const extractions = useApiQuery<ExtractionsPage>(
    value === undefined
      ? null
      : `${base}/results/${seg(value.cell.resolution_result_id)}/extractions/?limit=50`,
  )
  const list = value === undefined ? [] : (extractions.data?.data ?? [])
  const cited =
    list.find((x) => x.document_id === d.id && x.page_number !== null && x.grounded) ??
    list.find((x) => x.document_id === d.id && x.page_number !== null)
  if (d.status !== "Processed" || d.page_count === 0)
    return <p className="muted">This document has no pages to show yet.</p>
  return (
    <section
      className="review-page-scroll"
      data-testid="review-page"
      data-page={cited?.page_number ?? 1}
      aria-label={`Page ${cited?.page_number ?? 1} of ${d.file_name}`}
      // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolled region is reached by keyboard to scroll it
      tabIndex={0}
    >
      {value !== undefined && extractions.data !== undefined && cited === undefined && (
        <p className="muted small">This value cites no page of this document: its first page is shown.</p>
      )}
      <CitedPage
        key={cited?.id ?? "first"}
        base={base}
        documentId={d.id}
        documentName={d.file_name}
        documentType={d.type}
        pageNumber={cited?.page_number ?? 1}
        extractionId={cited?.id}
        passage={cited?.relevant_passage ?? ""}
        width={width}
        scrollToPassage
      />
    </section>
  )
}

/** The keys of the screen, always shown. */
function KeyLegend() {
  const keys: ReadonlyArray<readonly [string, string]> = [
    ["j / k", "next / previous value"],
    ["a", "mark correct"],
    ["r", "mark wrong"],
    ["e", "edit the value (Enter saves, Escape cancels)"],
    ["n / p", "next / previous document of the queue"],
  ]
  return (
    <section aria-labelledby="review-keys-heading" className="review-keys">
      <h3 id="review-keys-heading">Keys</h3>
      <dl>
        {keys.map(([k, what]) => (
          <div key={k}>
            <dt>
              {k.split(" / ").map((part, i) => (
                <span key={part}>
                  {i > 0 ? " / " : ""}
                  <kbd>{part}</kbd>
                </span>
              ))}
            </dt>
            <dd>{what}</dd>
          </div>
        ))}
      </dl>
      <p className="muted small">The keys do nothing while typing in a field.</p>
    </section>
  )
}

/** "Start review": opens the first document of the review queue (or says there is none to review). */
export function StartReview({ projectId }: { readonly projectId: string }) {
  const [message, setMessage] = useState("")
  const start = useMutation({
    mutationFn: () => api.get<ReviewQueue>(reviewQueuePath(projectId)),
    onSuccess: (queue) => {
      const first = queue.documents[0]
      if (first === undefined) setMessage("No document has values to review yet: launch the agents first.")
      else navigate(reviewPath(projectId, first.document_id))
    },
  })
  return (
    <span className="start-review">
      <button type="button" className="secondary" disabled={start.isPending} onClick={() => start.mutate()}>
        Start review
      </button>
      <span role="status" className="muted small">
        {start.error ? errorMessage(start.error) : message}
      </span>
    </span>
  )
}
