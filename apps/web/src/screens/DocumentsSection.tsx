/**
 * The documents panel of a project: upload (file picker or drag and drop) with progress; a page of
 * documents at a time (`GET …/documents/page/`) with a name search, a status filter and the failure
 * reason of failed ones; e-mail attachments listed under their message on demand; per document open
 * (the viewer), replace the file, re-parse, archive and delete (confirmed); bulk delete and archive of
 * the selected documents with a summary of those refused. While a listed document is being parsed, the
 * page is asked for again until none is.
 */

import { type DocumentStatus, DocumentStatuses } from "@dxs/domain/Enums"
import type { DocumentBulkResponse } from "@dxs/domain/Records"
import { useCallback, useEffect, useRef, useState } from "react"
import { api, errorMessage, seg } from "../api.ts"
import { ConfirmDialog, confirmTitle, ErrorAlert, Loading, pluralize, SelectField } from "../components.tsx"
import { invalidateApi } from "../query.ts"
import { type ListedDocument, type PageOfDocuments, type RowActions, RowsOf } from "./DocumentRows.tsx"
import {
  type DocumentPage,
  type RowState,
  useConfirmation,
  useDocumentPage,
  useDocumentRows,
  useIdSet,
} from "./DocumentsState.ts"
import { UploadPanel, useUploads } from "./DocumentUploads.tsx"

export { documentRowId, focusDocumentRow } from "./DocumentRows.tsx"
export type { RowState } from "./DocumentsState.ts"

const PAGE_SIZES = [10, 25, 50, 100] as const

/** A bulk action's outcome, named for the user. */
interface BulkSummary {
  readonly text: string
  readonly failures: ReadonlyArray<string>
}

export function DocumentsSection({
  base,
  onChanged,
}: {
  readonly base: string
  /** The project's documents changed (an upload, a parse that ended, an action): other lists may follow. */
  readonly onChanged?: () => void
}) {
  const heading = useRef<HTMLHeadingElement>(null)
  const replaceInput = useRef<HTMLInputElement>(null)
  const replaceTarget = useRef<ListedDocument | null>(null)
  const [focusHeading, setFocusHeading] = useState(0)
  const [bulkSummary, setBulkSummary] = useState<BulkSummary | null>(null)
  const confirmation = useConfirmation()
  const selection = useIdSet()
  const expansion = useIdSet()
  const list = useDocumentPage(base, onChanged)
  const { page } = list
  const { setIds: setSelected } = selection

  // The selection holds only documents still listed on the page.
  useEffect(() => {
    if (page === undefined) return
    setSelected((all) => {
      const listed = new Set(page.results.map((d) => d.id))
      const kept = [...all].filter((id) => listed.has(id))
      return kept.length === all.size ? all : new Set(kept)
    })
  }, [page, setSelected])

  useEffect(() => {
    if (focusHeading > 0) heading.current?.focus()
  }, [focusHeading])

  const refresh = useCallback(() => invalidateApi(`${base}/documents/`), [base])
  const uploads = useUploads(base, refresh)
  const { rows, setRow, announcement, setAnnouncement, stillParsing, post, replace } = useDocumentRows(
    base,
    refresh,
  )

  const actions: RowActions = {
    replace: (d) => {
      // The API refuses a replacement while the current file is being parsed: said before a file is picked.
      if (stillParsing(d, "replace its file")) return
      setRow(d.id, {})
      replaceTarget.current = d
      replaceInput.current?.click()
    },
    reparse: async (d) => {
      if (stillParsing(d, "parse it again")) return
      await post(d, "reparse", "Re-parsing…", `${d.file_name} is being parsed again.`)
    },
    archive: (d) => post(d, "archive", "Archiving…", `${d.file_name} is being moved to the archive.`),
    remove: (d) => confirmation.ask({ kind: "delete", document: d }),
    toggleAttachments: (d) => expansion.flip(d.id),
    toggleSelected: (d, on) => selection.toggle(d.id, on),
  }

  const confirm = () =>
    confirmation.run(async (c) => {
      if (c.kind === "delete") {
        await api.del(`${base}/documents/${seg(c.document.id)}/`)
        setAnnouncement(`${c.document.file_name} deleted.`)
      } else {
        const answer = await api.post<DocumentBulkResponse>(`${base}/documents/bulk/`, {
          action: c.action,
          document_ids: c.ids,
        })
        setBulkSummary(bulkSummaryOf(c.action, answer, page?.results ?? []))
        setSelected(new Set())
      }
      confirmation.setConfirming(null)
      // The row or button that held the focus may be gone: it goes to the panel's heading.
      setFocusHeading((n) => n + 1)
      await refresh()
    })

  return (
    <section aria-labelledby="documents-heading" className="section" data-testid="documents-panel">
      <h2 id="documents-heading" ref={heading} tabIndex={-1}>
        Documents
      </h2>
      <UploadPanel uploads={uploads} />
      <DocumentFilters list={list} />

      <ErrorAlert message={list.documents.error ? errorMessage(list.documents.error) : undefined} />
      <p role="status" className="muted small doc-announcement">
        {announcement}
      </p>
      {bulkSummary && <BulkSummaryNote summary={bulkSummary} onDismiss={() => setBulkSummary(null)} />}

      {page === undefined ? (
        list.documents.error ? null : (
          <Loading what="documents" />
        )
      ) : page.count === 0 && !list.filtering ? (
        <p className="muted">No documents yet.</p>
      ) : (
        <DocumentsTable
          base={base}
          list={list}
          page={page}
          rows={rows}
          selected={selection.ids}
          setSelected={setSelected}
          expanded={expansion.ids}
          actions={actions}
          onBulk={(action) => confirmation.ask({ kind: "bulk", action, ids: [...selection.ids] })}
        />
      )}

      {/* One picker for every row's Replace button, which opens it. */}
      <input
        ref={replaceInput}
        type="file"
        hidden
        tabIndex={-1}
        data-testid="replace-file-input"
        onChange={(e) => {
          const file = e.target.files?.[0]
          const target = replaceTarget.current
          e.target.value = ""
          replaceTarget.current = null
          if (file && target) void replace(target, file)
        }}
      />

      <ConfirmDialogs confirmation={confirmation} onConfirm={() => void confirm()} />
    </section>
  )
}

function DocumentFilters({ list }: { readonly list: DocumentPage }) {
  return (
    <search className="document-filters" aria-label="Filter documents">
      <div className="field">
        <label htmlFor="documents-search">Search documents</label>
        <input
          id="documents-search"
          type="search"
          value={list.search}
          maxLength={200}
          placeholder="Part of a file name"
          onChange={(e) => list.setSearch(e.target.value)}
        />
      </div>
      <div className="field">
        <SelectField
          id="documents-status"
          label="Document status"
          value={list.status}
          any="Any status"
          options={DocumentStatuses}
          onChange={(v) => list.setStatus(v as DocumentStatus | "")}
        />
      </div>
      <div className="field">
        <SelectField
          id="documents-page-size"
          label="Documents per page"
          value={list.pageSize}
          options={PAGE_SIZES}
          onChange={(v) => list.setPageSize(Number(v))}
        />
      </div>
    </search>
  )
}

function BulkSummaryNote({
  summary,
  onDismiss,
}: {
  readonly summary: BulkSummary
  readonly onDismiss: () => void
}) {
  return (
    <div
      className={summary.failures.length > 0 ? "alert bulk-summary" : "bulk-summary"}
      role={summary.failures.length > 0 ? "alert" : "status"}
      data-testid="bulk-summary"
    >
      <p>{summary.text}</p>
      {summary.failures.length > 0 && (
        <ul>
          {summary.failures.map((f) => (
            <li key={f}>{f}</li>
          ))}
        </ul>
      )}
      <button type="button" className="link-button" onClick={onDismiss}>
        Dismiss
      </button>
    </div>
  )
}

/** The bulk actions on the selection, the page of documents and the pager. */
function DocumentsTable({
  base,
  list,
  page,
  rows,
  selected,
  setSelected,
  expanded,
  actions,
  onBulk,
}: {
  readonly base: string
  readonly list: DocumentPage
  readonly page: PageOfDocuments
  readonly rows: Readonly<Record<string, RowState>>
  readonly selected: ReadonlySet<string>
  readonly setSelected: (ids: ReadonlySet<string>) => void
  readonly expanded: ReadonlySet<string>
  readonly actions: RowActions
  readonly onBulk: (action: "delete" | "archive") => void
}) {
  const { offset, setOffset, pageSize } = list
  const listed = page.results
  const allSelected = listed.length > 0 && listed.every((d) => selected.has(d.id))
  const last = Math.min(offset + listed.length, page.count)
  return (
    <>
      <div className="bulk-bar">
        <span className="muted small" data-testid="documents-range">
          {page.count === 0
            ? "No document matches the filters."
            : `${offset + 1}–${last} of ${pluralize(page.count, "document")}`}
        </span>
        <span className="small">{selected.size > 0 ? `${selected.size} selected` : ""}</span>
        <button
          type="button"
          className="secondary compact"
          disabled={selected.size === 0}
          onClick={() => onBulk("archive")}
        >
          Archive selected
        </button>
        <button
          type="button"
          className="danger"
          disabled={selected.size === 0}
          onClick={() => onBulk("delete")}
        >
          Delete selected
        </button>
      </div>
      <div className="table-wrap">
        <table className="data-table" data-testid="documents-table">
          <caption className="visually-hidden">Documents</caption>
          <thead>
            <tr>
              <th scope="col" className="select-cell">
                <input
                  type="checkbox"
                  aria-label="Select all documents on this page"
                  checked={allSelected}
                  disabled={listed.length === 0}
                  onChange={(e) =>
                    setSelected(e.target.checked ? new Set(listed.map((d) => d.id)) : new Set())
                  }
                />
              </th>
              <th scope="col">Name</th>
              <th scope="col">Type</th>
              <th scope="col" className="num">
                Pages
              </th>
              <th scope="col">Status</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            <RowsOf
              base={base}
              documents={listed}
              parent={undefined}
              rows={rows}
              selected={selected}
              expanded={expanded}
              actions={actions}
            />
          </tbody>
        </table>
      </div>
      <nav className="pager" aria-label="Pages of documents">
        <button
          type="button"
          className="secondary compact"
          disabled={offset === 0}
          onClick={() => setOffset(Math.max(0, offset - pageSize))}
        >
          Previous page
        </button>
        <span className="small">
          Page {Math.floor(offset / pageSize) + 1} of {Math.max(1, Math.ceil(page.count / pageSize))}
        </span>
        <button
          type="button"
          className="secondary compact"
          disabled={page.next === null}
          onClick={() => setOffset(offset + pageSize)}
        >
          Next page
        </button>
      </nav>
    </>
  )
}

function ConfirmDialogs({
  confirmation,
  onConfirm,
}: {
  readonly confirmation: ReturnType<typeof useConfirmation>
  readonly onConfirm: () => void
}) {
  const { confirming, busy, error, setConfirming, asked } = confirmation
  if (confirming?.kind === "delete")
    return (
      <ConfirmDialog
        key={asked}
        title={confirmTitle({ thing: "document", name: confirming.document.file_name })}
        confirmLabel="Delete"
        busyLabel="Deleting…"
        busy={busy}
        error={error}
        onConfirm={onConfirm}
        onCancel={() => setConfirming(null)}
      >
        <p>The document, its file and its pages are removed from the project. This cannot be undone.</p>
        <AttachmentsNote count={confirming.document.attachment_count} />
      </ConfirmDialog>
    )
  if (confirming?.kind === "bulk")
    return (
      <ConfirmDialog
        key={asked}
        title={`${confirming.action === "delete" ? "Delete" : "Archive"} ${pluralize(confirming.ids.length, "document")}?`}
        confirmLabel={confirming.action === "delete" ? "Delete" : "Archive"}
        busyLabel={confirming.action === "delete" ? "Deleting…" : "Archiving…"}
        busy={busy}
        error={error}
        onConfirm={onConfirm}
        onCancel={() => setConfirming(null)}
      >
        {confirming.action === "delete" ? (
          <p>The selected documents, their files and their pages are removed. This cannot be undone.</p>
        ) : (
          <p>The selected documents move into the project's archive project.</p>
        )}
      </ConfirmDialog>
    )
  return null
}

const bulkSummaryOf = (
  action: "delete" | "archive",
  answer: DocumentBulkResponse,
  listed: ReadonlyArray<ListedDocument>,
): BulkSummary => {
  const nameOf = (id: string) => listed.find((d) => d.id === id)?.file_name ?? id
  const done = action === "delete" ? "Deleted" : "Archived"
  const text =
    answer.failed.length === 0
      ? `${done} ${pluralize(answer.succeeded.length, "document")}.`
      : `${done} ${pluralize(answer.succeeded.length, "document")}; ${answer.failed.length} could not be ${action === "delete" ? "deleted" : "archived"}:`
  return { text, failures: answer.failed.map((f) => `${nameOf(f.document_id)}: ${f.detail}`) }
}

/** What a deletion leaves of an e-mail's attachments. */
function AttachmentsNote({ count }: { readonly count: number }) {
  if (count === 0) return null
  return (
    <p>
      {count === 1
        ? "Its attachment stays in the project as a document of its own."
        : `Its ${count} attachments stay in the project as documents of their own.`}
    </p>
  )
}
