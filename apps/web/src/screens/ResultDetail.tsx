import type { AgentValueType as ValueType } from "@dxs/domain/Enums"
import type {
  Document as DocumentRecord,
  ExtractionResult as Extraction,
  ExtractionsPage,
  Project,
  ResultDetail,
} from "@dxs/domain/Records"
import { useMutation } from "@tanstack/react-query"
import { type FormEvent, useState } from "react"
import { api, errorMessage, seg } from "../api.ts"
import {
  ConfidenceMark,
  ErrorAlert,
  formatDate,
  formatValue,
  Loading,
  ProjectBreadcrumb,
  StatusBadge,
} from "../components.tsx"
import type { Resource } from "../hooks.ts"
import { useApiQuery } from "../query.ts"
import { Link, projectReturnHref, useTitle } from "../router.tsx"
import { overrideValue } from "../values.ts"
import { PageViewer } from "./CitedPage.tsx"

const EXTRACTIONS_LIMIT = 50

/**
 * The extractions behind a result (the first `EXTRACTIONS_LIMIT`) and the one whose page is shown: the one
 * chosen, else the first with a cited page, else the first; with the cited document alone (its type decides
 * how its page is shown), not the project's every document.
 */
function useCitedExtraction(base: string, resultId: string) {
  const extractions = useApiQuery<ExtractionsPage>(
    `${base}/results/${seg(resultId)}/extractions/?limit=${EXTRACTIONS_LIMIT}`,
  )
  const [selectedId, setSelectedId] = useState<string | undefined>(undefined)
  const list = extractions.data?.data ?? []
  const selected =
    list.find((x) => x.id === selectedId) ??
    list.find((x) => x.document_id !== null && x.page_number !== null) ??
    list[0]
  const citedDocument = useApiQuery<DocumentRecord>(
    selected?.document_id ? `${base}/documents/${seg(selected.document_id)}/` : null,
  )
  return { extractions, list, selected, select: setSelectedId, citedDocument }
}

/**
 * `/projects/:p/agents/:a/:rr`: one resolved value with its status and justification, the extractions
 * behind it, the cited page with the passage highlighted, and a form to override the value.
 */
export function ResultDetailScreen({
  projectId,
  agentId,
  resultId,
}: {
  readonly projectId: string
  readonly agentId: string
  readonly resultId: string
}) {
  const base = `/projects/${seg(projectId)}`
  const projectHref = projectReturnHref(projectId)
  const project = useApiQuery<Project>(`${base}/`)
  const result = useApiQuery<ResultDetail>(`${base}/results/${seg(resultId)}/`)
  const { extractions, list, selected, select, citedDocument } = useCitedExtraction(base, resultId)
  useTitle(result.data?.agent_name ?? "Result")

  const breadcrumb = (
    <ProjectBreadcrumb
      href={projectHref}
      name={project.data?.name}
      current={result.data?.agent_name ?? "Result"}
    />
  )

  if (result.data === undefined)
    return result.error ? (
      <>
        {breadcrumb}
        <h1>Result not found</h1>
        <ErrorAlert message={result.error} />
        <p>
          <Link href={projectHref}>Back to project</Link>
        </p>
      </>
    ) : (
      <Loading what="the result" />
    )

  const r = result.data
  const reviewDocument = r.dimension_instances.find((i) => i.document_id !== null)?.document_id
  return (
    <>
      {breadcrumb}
      <div className="heading-row">
        <h1>{r.agent_name}</h1>
        {reviewDocument ? (
          <Link href={`${base}/documents/${seg(reviewDocument)}/review`} className="heading-link">
            Review this document
          </Link>
        ) : null}
      </div>
      {r.agent_id !== agentId && (
        <p className="muted small">This result belongs to the agent “{r.agent_name}”.</p>
      )}
      <div className="detail-layout">
        <div className="detail-main">
          <CurrentValue base={base} detail={r} onSaved={(detail) => result.setData(detail)} />
          <ExtractionsSection
            extractions={extractions}
            list={list}
            selectedId={selected?.id}
            onSelect={select}
          />
          <p>
            <Link href={projectHref}>Back to project</Link>
          </p>
        </div>

        <section aria-labelledby="page-heading" className="section detail-page">
          <h2 id="page-heading">Cited page</h2>
          {selected ? (
            citedDocument.data === undefined && citedDocument.loading ? (
              <Loading what="the page" />
            ) : (
              <PageViewer
                key={selected.id}
                base={base}
                extraction={selected}
                documentType={citedDocument.data?.type}
              />
            )
          ) : (
            <p className="muted">Select an extraction to see its page.</p>
          )}
        </section>
      </div>
    </>
  )
}

/** The result's value with its status, confidence and justification; the forms to override and review it. */
function CurrentValue({
  base,
  detail: r,
  onSaved,
}: {
  readonly base: string
  readonly detail: ResultDetail
  readonly onSaved: (detail: ResultDetail) => void
}) {
  return (
    <section aria-labelledby="value-heading" className="section card">
      <h2 id="value-heading">Current value</h2>
      <dl className="facts">
        <dt>Value</dt>
        <dd>
          <span className="result-value" data-testid="result-value">
            {formatValue(r.value)}
          </span>
          {r.unit && r.value !== null ? <span className="muted"> {r.unit}</span> : null}
        </dd>
        <dt>For</dt>
        <dd>{r.dimension_instances.length === 0 ? "All documents" : r.result_name}</dd>
        <dt>Status</dt>
        <dd>
          <StatusBadge status={r.resolution_status} />
        </dd>
        <dt>Confidence</dt>
        <dd data-testid="result-confidence">
          {r.confidence === null ? "—" : <ConfidenceMark confidence={r.confidence} />}
        </dd>
        <dt>Justification</dt>
        <dd className="justification">{r.justification_for_resolution_status || "—"}</dd>
        {r.is_overridden && (
          <>
            <dt>Set by hand</dt>
            <dd>
              {r.updated_by_email ?? "someone"} on {formatDate(r.updated_at)}
            </dd>
          </>
        )}
      </dl>
      <OverrideForm
        key={r.id}
        path={`${base}/results/${seg(r.id)}/`}
        valueType={r.value_type}
        current={r.value === null ? "" : String(r.value)}
        onSaved={onSaved}
      />
      <ReviewForm
        key={`review-${r.id}`}
        path={`${base}/results/${seg(r.id)}/review/`}
        detail={r}
        onSaved={onSaved}
      />
    </section>
  )
}

/** The extractions behind the value, each a button that shows its cited page. */
function ExtractionsSection({
  extractions,
  list,
  selectedId,
  onSelect,
}: {
  readonly extractions: Resource<ExtractionsPage>
  readonly list: ReadonlyArray<Extraction>
  readonly selectedId: string | undefined
  readonly onSelect: (id: string) => void
}) {
  return (
    <section aria-labelledby="extractions-heading" className="section">
      <h2 id="extractions-heading">Extractions</h2>
      <ErrorAlert message={extractions.error} />
      {extractions.data === undefined ? (
        extractions.error ? null : (
          <Loading what="extractions" />
        )
      ) : list.length === 0 ? (
        <p className="muted">No extractions behind this value.</p>
      ) : (
        <>
          {extractions.data.total_count > list.length && (
            <p className="muted small">
              The first {list.length} of {extractions.data.total_count} extractions.
            </p>
          )}
          <ol className="extraction-list">
            {list.map((x) => (
              <li key={x.id}>
                <ExtractionButton extraction={x} pressed={selectedId === x.id} onSelect={onSelect} />
              </li>
            ))}
          </ol>
        </>
      )}
    </section>
  )
}

/** One extraction: its value, passage and source, and whether it is grounded and how confident. */
function ExtractionButton({
  extraction: x,
  pressed,
  onSelect,
}: {
  readonly extraction: Extraction
  readonly pressed: boolean
  readonly onSelect: (id: string) => void
}) {
  return (
    <button
      type="button"
      className="extraction"
      aria-pressed={pressed}
      data-testid="extraction"
      onClick={() => onSelect(x.id)}
    >
      <span className="extraction-value">{x.value || "—"}</span>
      {x.relevant_passage && <q className="passage">{x.relevant_passage}</q>}
      <span className="extraction-source muted small">{sourceText(x)}</span>
      {(!x.grounded || x.confidence !== null) && (
        <span className="extraction-checks small">
          {!x.grounded && (
            <span
              className="badge status-requires-attention"
              data-testid="not-grounded"
              title="The quoted passage is not on the cited page, or does not state the value"
            >
              not grounded
            </span>
          )}
          {x.confidence !== null && <ConfidenceMark confidence={x.confidence} />}
        </span>
      )}
    </button>
  )
}

const sourceText = (x: Extraction): string => {
  if (x.source_type === "web") return "Web search"
  if (x.source_type === "derived") return "Derived from other agents"
  const doc = x.document_name ?? "Unknown document"
  return x.page_number === null ? doc : `${doc}, page ${x.page_number}`
}

function OverrideForm({
  path,
  valueType,
  current,
  onSaved,
}: {
  readonly path: string
  readonly valueType: ValueType
  readonly current: string
  readonly onSaved: (detail: ResultDetail) => void
}) {
  const [value, setValue] = useState(current)
  const [saved, setSaved] = useState(false)
  const override = useMutation({
    mutationFn: async (text: string) =>
      api.patch<ResultDetail>(path, { value: overrideValue(text, valueType) }),
    onSuccess: (detail) => {
      onSaved(detail)
      setValue(detail.value === null ? "" : String(detail.value))
      setSaved(true)
    },
  })
  const busy = override.isPending
  const error = override.error ? errorMessage(override.error) : undefined

  const save = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault()
    setSaved(false)
    override.mutate(value)
  }

  return (
    <form className="inline-form override-form" onSubmit={save}>
      <div className="field">
        <label htmlFor="override-value">New value</label>
        <input
          id="override-value"
          name="value"
          inputMode={valueType === "number" ? "decimal" : undefined}
          value={value}
          onChange={(e) => {
            setValue(e.target.value)
            setSaved(false)
          }}
        />
      </div>
      <button type="submit" disabled={busy}>
        Save value
      </button>
      <p role="status" className="saved-note">
        {saved ? "Saved." : ""}
      </p>
      <ErrorAlert message={error} />
    </form>
  )
}

/** A person's review of the value: looks right, looks wrong (with a comment), or none. */
function ReviewForm({
  path,
  detail,
  onSaved,
}: {
  readonly path: string
  readonly detail: ResultDetail
  readonly onSaved: (detail: ResultDetail) => void
}) {
  const [comment, setComment] = useState(detail.latest_review_comment ?? "")
  const reviewMutation = useMutation({
    mutationFn: (status: "positive" | "negative" | "none") =>
      api.post<ResultDetail>(path, { status, comment }),
    onSuccess: onSaved,
  })
  const busy = reviewMutation.isPending
  const error = reviewMutation.error ? errorMessage(reviewMutation.error) : undefined
  const review = (status: "positive" | "negative" | "none") =>
    reviewMutation.mutateAsync(status).catch(() => undefined)

  const current = detail.latest_review_status
  return (
    <form className="review-form" onSubmit={(e) => e.preventDefault()} aria-labelledby="review-heading">
      <h3 id="review-heading">Review</h3>
      <p role="status" data-testid="review-status">
        {current === "positive" || current === "negative"
          ? `Reviewed ${current === "positive" ? "as correct" : "as wrong"} by ${detail.latest_review_by ?? "someone"}`
          : "Not reviewed"}
      </p>
      <div className="field">
        <label htmlFor="review-comment">Review comment</label>
        <input id="review-comment" value={comment} onChange={(e) => setComment(e.target.value)} />
      </div>
      <div className="actions">
        <button type="button" disabled={busy} onClick={() => review("positive")}>
          Mark correct
        </button>
        <button type="button" disabled={busy} onClick={() => review("negative")}>
          Mark wrong
        </button>
        {current === "positive" || current === "negative" ? (
          <button type="button" disabled={busy} onClick={() => review("none")}>
            Clear review
          </button>
        ) : null}
      </div>
      <ErrorAlert message={error} />
    </form>
  )
}
